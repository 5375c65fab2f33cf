//! skblab-core: a deterministic, sans-IO model of how Linux builds and recycles sk_buffs and
//! pages, before and after four kernel patches.
//!
//! Scenario in, trace out: no clock, no files, no unseeded randomness, no hash-ordered output.
//! The same scenario gives a byte-identical trace natively and in wasm.

pub mod consts;
pub mod error;
pub mod kernel_fn;
pub mod limits;
pub mod mptcp;
pub mod page;
pub mod page_frag;
pub mod replay;
pub mod rx;
pub mod scenario;
pub mod send;
pub mod size_goal;
pub mod skb;
pub mod trace;
pub mod walkthrough;

pub use error::Error;
pub use scenario::{RunOptions, Scenario};
pub use trace::Trace;

/// A CPU number. The receive side models two CPUs (BH and application).
pub type Cpu = u8;
/// The number of CPUs the model tracks.
pub const NR_CPUS: usize = 2;

/// Parses and runs scenario text; the single entry point the wasm ABI exposes.
pub fn run_text(text: &str, opts: &RunOptions) -> Result<Trace, Error> {
    Scenario::parse(text)?.run(opts)
}

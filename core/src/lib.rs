//! skblab-core: a deterministic, sans-IO model of how Linux builds and recycles sk_buffs and
//! pages, before and after four kernel patches.
//!
//! Scenario in, trace out: no clock, no files, no unseeded randomness, no hash-ordered output.
//! The same scenario gives a byte-identical trace natively and in wasm.

#![forbid(unsafe_code)]
// A mechanism's module docs are a code map of its crate-private files, for the core's
// developers (`cargo doc --document-private-items`); hosts see only the re-exports.
#![allow(rustdoc::private_intra_doc_links)]

/// A list of compiled-in TOML files in `core/DIR/NAME.toml`: their names in order (`NAMES`)
/// and, with the `embedded` feature (on by default), their texts (`TEXTS`). The playground
/// leaves the texts out of its bundle and fetches each file by name instead.
macro_rules! toml_files {
    ($dir:literal: $($name:literal),* $(,)?) => {
        /// The files' names, in the order a learner should take them.
        pub const NAMES: &[&str] = &[$($name),*];
        /// The files' texts, in the order of [`NAMES`].
        #[cfg(feature = "embedded")]
        pub const TEXTS: &[&str] = &[$(include_str!(concat!("../", $dir, "/", $name, ".toml"))),*];
    };
}

pub mod call_path;
pub mod capture;
pub mod challenge;
pub mod consts;
pub(crate) mod counters;
pub mod error;
pub mod events;
pub(crate) mod field_path;
pub mod freed;
pub mod input;
pub mod kernel_fn;
pub mod kernel_report;
pub mod limits;
pub mod lint;
pub mod mechanism;
pub mod mptcp;
pub(crate) mod names;
pub mod page;
pub(crate) mod page_alloc;
pub(crate) mod page_frag;
pub mod patches;
pub mod permalink;
pub mod query;
pub mod question;
pub mod quiz;
pub mod replay;
pub mod rx;
pub mod scenario;
pub mod send;
pub mod size_goal;
pub mod skb;
pub(crate) mod task_frag;
mod toml_value;
pub mod trace;
pub(crate) mod trace_read;
pub mod walkthrough;

pub use error::Error;
pub use mechanism::RunOptions;
pub use scenario::Scenario;
pub use trace::Trace;

pub use events::Cpu;
/// The number of CPUs the model tracks.
pub const NR_CPUS: usize = 2;

/// Parses and runs scenario text; the single entry point the wasm ABI exposes.
pub fn run_text(text: &str, opts: &RunOptions) -> Result<Trace, Error> {
    Scenario::parse(text)?.run(opts)
}

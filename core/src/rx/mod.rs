//! Seeds 001 and 002: the receive side on two CPUs.
//!
//! Frames arrive on the BH CPU (softirq, CPU 0), get a buffer from that CPU's frag cache
//! ([`frag_cache`], seed 001), become skbs ([`driver`]), are merged by GRO ([`gro`]) and
//! delivered to one TCP socket, which the application reads with recvmsg on its own CPU
//! (CPU 1 by default); where consumed skbs are freed is the rx cache axis ([`socket`],
//! seed 002, and [`defer`]). Every allocation and free records its CPU.
//!
//! Two independent variant axes ([`variant`]; see `docs/scenario-format.md`):
//! - allocator: `pre-2012` and `duyck-2012` (v3.5 constants), `duyck-3.6` (v3.6), `modern`
//!   (v6.12);
//! - rx cache: `none`, `dumazet-2019` (the seed as merged for 5.2-rc1), `defer-free` (v6.12).
//!
//! Layers, each using only those above it: [`variant`] -> [`scenario`] (the format and the
//! checked [`RxParams`]) -> [`kernel`] (pages and skb lifetimes, [`Mem`]) -> the stages
//! ([`frag_cache`], [`driver`], [`gro`], [`defer`], [`coalesce`], [`socket`]) -> [`machine`],
//! which owns them all and lends each stage only what it touches. The skbs, pages and cursors
//! are the machine's [`Live`](crate::replay::Live) state: a stage reads it and changes it only
//! by emitting events through a [`Log`](crate::replay::Log), which applies each at once.
//!
//! A host that feeds real packets (the TAP runner) calls [`RxScenario::receive`], one batch
//! per interrupt's worth; one that sets a run beside the kernel's reads it with
//! [`received`] ([`delivered`], [`copied`], [`consumed`]).

pub(crate) mod coalesce;
pub(crate) mod counters;
pub(crate) mod defer;
pub(crate) mod driver;
pub(crate) mod frag_cache;
pub(crate) mod gro;
pub(crate) mod kernel;
pub(crate) mod machine;
pub(crate) mod received;
pub(crate) mod scenario;
pub(crate) mod socket;
pub(crate) mod variant;

pub use counters::RxCounters;
pub use driver::{fragsz, head_source, HeadSource};
pub use kernel::Mem;
pub use machine::RxMachine;
pub use received::{consumed, copied, delivered, napi_frag_stride, napi_frags_per_page, Packet};
pub use scenario::{
    AppParams, DriverStyle, NicParams, Proto, RxOp, RxParams, RxScenario, SocketParams, BH_CPU,
};
pub use variant::{Allocator, Variant, ALLOCATORS, CACHES, VARIANTS};

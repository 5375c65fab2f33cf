//! The comparison: the model's skbs beside the kernel's, field by field, with a verdict for
//! each. The report's format and how it is judged are the core's
//! (`skblab_core::kernel_report`), so the report the runner writes is the one the playground
//! reads; what is the runner's own is a trace that cannot be judged.

pub use skblab_core::kernel_report::{compare, judged, Row, Side, SkbView, Verdict};

/// Why a trace cannot be judged: what must hold of it does not (bytes missing, a foreign
/// flow, a mapping seen twice). The comparison is not made: no "agree", no "differ".
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Inconclusive(pub String);
/// How an error starts when the kernel was too slow for the run, not wrong: on a busy
/// machine (other tasks on every core, another sender) a push, a handshake or a softirq may
/// be late. Such a run is untrusted, as a spoiled trace is: retried, then inconclusive.
pub const TOO_SLOW: &str = "too slow under load";

/// The error of a run that waited `what` in vain.
pub fn too_slow(what: &str) -> String {
    format!("{TOO_SLOW}: {what}")
}

/// A run's error: a trace that cannot be trusted (the kernel too slow, bpftrace's buffers
/// overflowed) as [`Inconclusive`], any other error (a setup that failed) as it is.
pub fn untrusted(e: String) -> Result<Inconclusive, String> {
    if e.starts_with(TOO_SLOW) || e.starts_with(super::probe::LOST_EVENTS) {
        Ok(Inconclusive(e))
    } else {
        Err(e)
    }
}

//! The comparison: the model's skbs beside the kernel's, field by field, with a verdict for
//! each. The report's format and how it is judged are the core's
//! (`skblab_core::kernel_report`), so the report the runner writes is the one the playground
//! reads; what is the runner's own is a run that cannot be judged.

pub use skblab_core::kernel_report::{compare, judged, Row, Side, SkbView, Verdict};

/// Why a trace cannot be judged: what must hold of it does not (bytes missing, a foreign
/// flow, a mapping seen twice, bpftrace's buffers overflowed, the kernel too slow). The
/// comparison is not made: no "agree", no "differ".
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Inconclusive(pub String);

/// Why a kernel run gave nothing to compare.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RunError {
    /// A trace that cannot be trusted: the run is retried, then inconclusive.
    Untrusted(Inconclusive),
    /// Anything else (a setup that failed): the comparison ends.
    Failed(String),
}

impl From<String> for RunError {
    fn from(e: String) -> RunError {
        RunError::Failed(e)
    }
}

impl From<Inconclusive> for RunError {
    fn from(e: Inconclusive) -> RunError {
        RunError::Untrusted(e)
    }
}

/// The error of a run that waited `what` in vain. On a busy machine (other tasks on every
/// core, another sender) a push, a handshake or a softirq may be late: the kernel was too
/// slow for the run, not wrong, so the run is untrusted, as a spoiled trace is.
pub fn too_slow(what: &str) -> RunError {
    Inconclusive(format!("too slow under load: {what}")).into()
}

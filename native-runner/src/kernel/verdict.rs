//! The comparison: the model's skbs beside the kernel's, field by field, with a verdict for
//! each. The report's format and how it is judged are the core's
//! (`skblab_core::kernel_report`), so the report the runner writes is the one the playground
//! reads; what is the runner's own is a trace that cannot be judged.

pub use skblab_core::kernel_report::{compare, judged, verdict, Row, Side, SkbView};

/// Why a trace cannot be judged: what must hold of it does not (bytes missing, a foreign
/// flow, a mapping seen twice). The comparison is not made: no "agree", no "differ".
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Inconclusive(pub String);

//! The properties the fuzz targets check, as plain functions of the input bytes.
//!
//! Each function panics, with a message naming the broken property, on an input that breaks
//! one; anything else returns. `fuzz/fuzz_targets/*.rs` hand them libFuzzer's inputs (nightly,
//! cargo-fuzz), and `tests/corpus.rs` replays the committed corpus through them on stable.

pub mod permalink;
pub mod scenario;
#[cfg(feature = "runner")]
pub mod tap;

pub use permalink::permalink;
pub use scenario::{scenario_struct, scenario_text};
#[cfg(feature = "runner")]
pub use tap::tap_frames;

/// Every target, by the name of its corpus directory (`fuzz/corpus/NAME`).
pub const TARGETS: &[(&str, fn(&[u8]))] = &[
    ("scenario_text", scenario_text),
    ("scenario_struct", scenario_struct),
    ("permalink", permalink),
    #[cfg(feature = "runner")]
    ("tap_frames", tap_frames),
];

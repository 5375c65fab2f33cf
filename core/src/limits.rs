//! Scenario size caps. A scenario is data a stranger can hand us (a file, a permalink): every
//! size in it is bounded so a run finishes quickly and a browser tab never freezes. The caps are
//! documented in `docs/scenario-format.md`.

use crate::Error;

/// At most this many operations in one scenario (one trace step each).
pub const MAX_OPS: usize = 10_000;
/// At most this many bytes in one write / one burst of frames.
pub const MAX_OP_BYTES: u64 = 16 << 20;
/// At most this many payload bytes over the whole scenario.
pub const MAX_TOTAL_BYTES: u64 = 256 << 20;
/// At most this many iovecs in one sendmsg.
pub const MAX_IOVECS: usize = 1024;
/// At most this many bytes of scenario text (TOML or JSON).
pub const MAX_SCENARIO_TEXT: usize = 1 << 20;

/// Checks `lo <= value <= hi`, naming `field` in the error.
pub fn check_range(field: &str, value: u64, lo: u64, hi: u64) -> Result<u64, Error> {
    if (lo..=hi).contains(&value) {
        Ok(value)
    } else {
        Err(Error::Range {
            field: field.to_string(),
            value: value.to_string(),
            allowed: format!("{lo}..={hi}"),
        })
    }
}

/// Sums per-op byte counts against [`MAX_TOTAL_BYTES`].
#[derive(Default)]
pub struct ByteBudget(u64);

impl ByteBudget {
    pub fn take(&mut self, field: &str, bytes: u64) -> Result<(), Error> {
        check_range(field, bytes, 0, MAX_OP_BYTES)?;
        self.0 += bytes;
        if self.0 > MAX_TOTAL_BYTES {
            return Err(Error::Range {
                field: field.to_string(),
                value: format!("{} (running total)", self.0),
                allowed: format!("a scenario total of at most {MAX_TOTAL_BYTES} bytes"),
            });
        }
        Ok(())
    }
}

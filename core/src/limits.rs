//! Scenario size caps. A scenario is data a stranger can hand us (a file, a permalink): every
//! size in it is bounded so a run finishes quickly and a browser tab never freezes. The caps are
//! documented in `docs/scenario-format.md`, a lesson's in `docs/quiz.md`.

use crate::error::is_hidden;
use crate::Error;

/// At most this many operations in one scenario (one trace step each).
pub(crate) const MAX_OPS: usize = 10_000;
/// At most this many bytes in one write / one burst of frames.
pub const MAX_OP_BYTES: u64 = 16 << 20;
/// At most this many payload bytes over the whole scenario.
pub const MAX_TOTAL_BYTES: u64 = 256 << 20;
/// At most this many iovecs in one sendmsg.
pub(crate) const MAX_IOVECS: usize = 1024;
/// At most this many bytes of scenario text (TOML or JSON).
pub const MAX_SCENARIO_TEXT: usize = 1 << 20;

/// At most this many bytes in one line of quiz answers (`--answers FILE`): an answer is a
/// number, a letter or an object's name; a longer line (`/dev/zero`) is refused unread.
pub const MAX_ANSWER_LINE: usize = 4 << 10;
/// At most this many bytes of quiz answers in all.
pub const MAX_ANSWERS_TEXT: usize = 64 << 10;

/// At most this many sendmsg calls over a whole scenario (`count`s summed).
pub const MAX_WRITES: u64 = 1_000_000;

/// At most this many frames over a whole receive scenario (`frames` summed). Every frame costs
/// an skb and a buffer, kept while unread: 1,000,000 header-split frames nobody reads take
/// about 0.25 GB and 1 s natively (6.2 million, all the byte cap allowed, took 1.4 GB).
pub const MAX_TOTAL_FRAMES: u64 = 1_000_000;

/// At most this many skbs alive at once on the MPTCP subflows. MPTCP's socket has no send
/// buffer limit in the model (sendmsg's does: `socket.sndbuf`), so this bounds its memory:
/// a million 64-byte skbs take about 0.2 GB.
pub const MAX_LIVE_SKBS: u64 = 1_000_000;

/// At most this many skbs on a side of a `skblab kernel` report (the playground draws one
/// table row each). Derived from the report's text cap (`kernel_report::MAX_REPORT_TEXT`): the
/// least text the runner writes for one skb is a one-field object on one side plus its `len`
/// row, 137 bytes pretty-printed (`kernel_report`'s tests measure it), so no report the
/// runner writes under the text cap holds more than 30,615; a compact hand-made one could
/// hold 400,000 (43 s in the playground, issue 25).
pub const MAX_REPORT_SKBS: usize = 32_000;

/// A traced run keeps a full state per step, so its size grows with steps x state. This caps
/// the events, skbs, frags and pages summed over all steps (a browser tab must never freeze).
pub const MAX_TRACE_OBJECTS: usize = 250_000;

/// At most this many variants in a walkthrough: it compares the kernel before a patch with
/// the kernel after it, and each variant is a whole traced run (the page draws a lane each).
pub(crate) const MAX_LESSON_VARIANTS: usize = 2;

/// At most this many events, skbs, frags and pages over all of a walkthrough's traced runs
/// together: a lesson holds no more than one traced scenario may
/// ([`MAX_TRACE_OBJECTS`]), however many variants share it. 200 variants of a
/// scenario just under one run's cap took the page's wasm out of memory (issue 38).
pub const MAX_LESSON_TRACE_OBJECTS: usize = MAX_TRACE_OBJECTS;

/// At most this many `[[check]]`s in a walkthrough. Each is read once the step it reads is
/// built (once for all checks of that step), so this bounds the lookups, not the building.
pub const MAX_CHECKS: usize = 1_000;

/// At most this many `[[question]]`s in a walkthrough. Every answer is read when the lesson
/// opens, each a query on its step's state: 3,000 questions on a 79,167-skb step held the
/// page for 27 s (issue 38), and a question per step of a long lesson is far fewer.
pub const MAX_QUESTIONS: usize = 100;

/// At most this many `choices` in a question: the learner answers with a letter, `a` to `z`.
pub const MAX_CHOICES: usize = 26;

/// At most this many conditions in a challenge's `require`. Each is tested on every step
/// until one fails: 32,757 conditions took 83 s to check (issue 38).
pub const MAX_CONDITIONS: usize = 64;

/// A field's name for an error message. A closure builds it only when the error happens, so
/// checking 10,000 ops formats no names when all of them are in range.
pub trait Field {
    fn name(self) -> String;
}

impl Field for &str {
    fn name(self) -> String {
        self.to_string()
    }
}

impl Field for &String {
    fn name(self) -> String {
        self.clone()
    }
}

impl<F: FnOnce() -> String> Field for F {
    fn name(self) -> String {
        self()
    }
}

/// Checks `lo <= value <= hi`, naming `field` in the error.
pub(crate) fn check_range(field: impl Field, value: u64, lo: u64, hi: u64) -> Result<u64, Error> {
    if (lo..=hi).contains(&value) {
        Ok(value)
    } else {
        Err(Error::Range {
            field: field.name(),
            value: value.to_string(),
            allowed: format!("{lo}..={hi}"),
        })
    }
}

/// Refuses `text`, the value of `field`, when it holds a hidden character
/// ([`crate::error::is_hidden`]) other than those in `allowed`: what a stranger wrote reaches
/// a terminal or a page as text.
pub fn plain(field: impl Field, text: &str, allowed: &[char]) -> Result<(), Error> {
    match text
        .chars()
        .find(|&c| is_hidden(c) && !allowed.contains(&c))
    {
        Some(c) => Err(Error::invalid(
            field.name(),
            format!(
                "holds the control or format character U+{:04X}: write plain text",
                c as u32
            ),
        )),
        None => Ok(()),
    }
}

/// Refuses a string anywhere in `v` (a scenario or a lesson read into a value) holding a
/// hidden character other than `\n` and `\t`, naming its field (`say[0]`, `scenario.title`):
/// an escape sequence would drive the learner's terminal, a bidi override reorder what the
/// page shows.
pub(crate) fn plain_values(v: &serde_json::Value) -> Result<(), Error> {
    plain_under(v, &mut String::new())
}

fn plain_under(v: &serde_json::Value, at: &mut String) -> Result<(), Error> {
    use serde_json::Value;
    let len = at.len();
    let r = match v {
        Value::String(s) => plain(&*at, s, &['\n', '\t']),
        Value::Array(items) => items.iter().enumerate().try_for_each(|(i, item)| {
            at.truncate(len);
            at.push_str(&format!("[{i}]"));
            plain_under(item, at)
        }),
        Value::Object(m) => m.iter().try_for_each(|(k, item)| {
            at.truncate(len);
            if len > 0 {
                at.push('.');
            }
            at.push_str(k);
            plain_under(item, at)
        }),
        _ => Ok(()),
    };
    at.truncate(len);
    r
}

/// Checks that a list holds `lo..=hi` items, `n` of them, naming `field` and counting in
/// `unit` (`variants`, `checks`).
pub(crate) fn check_count(
    field: impl Field,
    n: usize,
    (lo, hi): (usize, usize),
    unit: &str,
) -> Result<(), Error> {
    if (lo..=hi).contains(&n) {
        return Ok(());
    }
    Err(count_error(field.name(), n, (lo, hi), unit))
}

/// [`check_count`]'s error, built once for every kind of field name.
fn count_error(field: String, n: usize, (lo, hi): (usize, usize), unit: &str) -> Error {
    Error::Range {
        field,
        value: format!("{n} {unit}"),
        allowed: format!("{lo}..={hi} {unit}"),
    }
}

/// Sums a scenario's payload bytes against [`MAX_TOTAL_BYTES`] and its sendmsg calls against
/// [`MAX_WRITES`].
#[derive(Default)]
pub(crate) struct ByteBudget {
    bytes: u64,
    writes: u64,
}

impl ByteBudget {
    /// Takes one op's `bytes` (at most [`MAX_OP_BYTES`]).
    pub fn take(&mut self, field: impl Field + Copy, bytes: u64) -> Result<(), Error> {
        check_range(field, bytes, 0, MAX_OP_BYTES)?;
        add_capped(&mut self.bytes, bytes, (MAX_TOTAL_BYTES, "bytes"), field)
    }

    /// Takes `count` sendmsg calls of `bytes` each; `bytes_field` and `count_field` name the
    /// op's fields.
    pub fn writes(
        &mut self,
        (bytes_field, bytes): (impl Field + Copy, u64),
        (count_field, count): (impl Field + Copy, u64),
    ) -> Result<(), Error> {
        check_range(bytes_field, bytes, 0, MAX_OP_BYTES)?;
        check_range(count_field, count, 1, MAX_WRITES)?;
        add_capped(&mut self.writes, count, (MAX_WRITES, "writes"), count_field)?;
        // At most MAX_OP_BYTES x MAX_WRITES (2^44): no overflow.
        let all = bytes * count;
        add_capped(
            &mut self.bytes,
            all,
            (MAX_TOTAL_BYTES, "bytes"),
            bytes_field,
        )
    }
}

/// Adds `n` to a scenario-wide `total`, refusing past `cap` (counted in `unit`).
pub(crate) fn add_capped(
    total: &mut u64,
    n: u64,
    (cap, unit): (u64, &str),
    field: impl Field,
) -> Result<(), Error> {
    *total += n;
    if *total > cap {
        return Err(Error::Range {
            field: field.name(),
            value: format!("{total} (running total)"),
            allowed: format!("a scenario total of at most {cap} {unit}"),
        });
    }
    Ok(())
}

//! Permalinks: the URL fragment that names what the playground shows and where in it.
//!
//! A link names a built-in walkthrough (`w=NAME`) or carries a whole scenario (`s=TEXT`, with
//! `cmp=VARIANT` for the split view), each base64url, plus a [`Position`]: `step=N` and,
//! inside that step, `event=E`. Links come from strangers, so [`Link::decode`] is a plain
//! function (fuzzed in `fuzz/`) that turns every malformed or oversized fragment into an
//! error saying what is wrong.

use crate::limits::MAX_SCENARIO_TEXT;
use crate::trace::Trace;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use base64::Engine;

/// The longest fragment read: a scenario of [`MAX_SCENARIO_TEXT`] bytes in base64 (4 characters
/// per 3 bytes) and room for the other parts. Longer ones are refused before any decoding.
pub const MAX_FRAGMENT: usize = MAX_SCENARIO_TEXT / 3 * 4 + 256;

/// Where in a trace: `step` 0 is before the first operation, `step` N after `ops[N-1]`;
/// `event` E, when present, is the E-th (from 0) of the events step N made.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Position {
    pub step: usize,
    pub event: Option<usize>,
}

impl Position {
    /// A whole step (no event within it).
    pub fn step(step: usize) -> Position {
        Position { step, event: None }
    }

    /// The nearest position that exists in `trace`: the last step past the end, no event
    /// where the step has none (step 0 has none), the step's last event past its end.
    pub fn clamp(self, trace: &Trace) -> Position {
        let step = self.step.min(trace.steps.len());
        let events = step
            .checked_sub(1)
            .map_or(0, |i| trace.steps[i].events.len());
        let event = self
            .event
            .filter(|_| step == self.step && events > 0)
            .map(|e| e.min(events - 1));
        Position { step, event }
    }
}

/// What a permalink names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Link {
    /// A built-in walkthrough, by name.
    Walk { name: String, at: Position },
    /// The learner's scenario text, and the variant shown beside it, if any.
    Custom {
        text: String,
        compare: Option<String>,
        at: Position,
    },
}

impl Link {
    pub fn at(&self) -> Position {
        match self {
            Link::Walk { at, .. } | Link::Custom { at, .. } => *at,
        }
    }

    /// The fragment (without `#`): `w=NAME&step=N` or `s=TEXT&cmp=VARIANT&step=N`, each name
    /// and text base64url without padding, then `&event=E` for a position within a step.
    pub fn encode(&self) -> String {
        let (head, at) = match self {
            Link::Walk { name, at } => (format!("w={}", B64.encode(name)), at),
            Link::Custom { text, compare, at } => {
                let cmp = compare
                    .as_ref()
                    .map(|c| format!("&cmp={}", B64.encode(c)))
                    .unwrap_or_default();
                (format!("s={}{cmp}", B64.encode(text)), at)
            }
        };
        let event = at.event.map(|e| format!("&event={e}")).unwrap_or_default();
        format!("{head}&step={}{event}", at.step)
    }

    /// Reads a fragment (with or without `#`). `Ok(None)` when there is none. Parts may come
    /// in any order, each at most once; `step` defaults to 0. Base64 padding is accepted.
    pub fn decode(fragment: &str) -> Result<Option<Link>, String> {
        let f = fragment.strip_prefix('#').unwrap_or(fragment);
        if f.is_empty() {
            return Ok(None);
        }
        if f.len() > MAX_FRAGMENT {
            return Err(format!(
                "the link is {} bytes long: too long (at most {MAX_FRAGMENT})",
                f.len()
            ));
        }
        let mut parts = Parts::default();
        for pair in f.split('&') {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            match k {
                "w" => once(k, &mut parts.w, text64(k, v)?)?,
                "s" => once(k, &mut parts.s, text64(k, v)?)?,
                "cmp" => once(k, &mut parts.cmp, text64(k, v)?)?,
                "step" => once(k, &mut parts.step, number(k, v)?)?,
                "event" => once(k, &mut parts.event, number(k, v)?)?,
                _ => return Err(format!("the link has an unknown part `{k:.40}`")),
            }
        }
        let at = Position {
            step: parts.step.unwrap_or(0),
            event: parts.event,
        };
        match (parts.w, parts.s, parts.cmp) {
            (Some(name), None, None) => Ok(Some(Link::Walk { name, at })),
            (Some(_), None, Some(_)) => {
                Err("the link's `cmp` goes with a scenario (s=), not a walkthrough".into())
            }
            (None, Some(text), compare) => Ok(Some(Link::Custom { text, compare, at })),
            _ => Err("the link must name either a walkthrough (w=) or a scenario (s=)".into()),
        }
    }
}

/// The parts of a fragment read so far.
#[derive(Default)]
struct Parts {
    w: Option<String>,
    s: Option<String>,
    cmp: Option<String>,
    step: Option<usize>,
    event: Option<usize>,
}

/// Stores part `k`'s value, refusing a second one (which of two would be meant?).
fn once<T>(k: &str, slot: &mut Option<T>, v: T) -> Result<(), String> {
    match slot.replace(v) {
        None => Ok(()),
        Some(_) => Err(format!("the link has `{k}` twice")),
    }
}

fn number(part: &str, v: &str) -> Result<usize, String> {
    v.parse()
        .map_err(|_| format!("the link's {part} `{v:.40}` is not a number"))
}

fn text64(part: &str, v: &str) -> Result<String, String> {
    let bytes = B64
        .decode(v.trim_end_matches('='))
        .map_err(|e| format!("the link's `{part}` is not base64url: {e}"))?;
    String::from_utf8(bytes).map_err(|_| format!("the link's `{part}` is not UTF-8 text"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(step: usize, event: Option<usize>) -> Position {
        Position { step, event }
    }

    #[test]
    fn links_round_trip() {
        let links = [
            Link::Walk {
                name: "linear-area".into(),
                at: at(3, None),
            },
            Link::Walk {
                name: "anatomy".into(),
                at: at(2, Some(5)),
            },
            Link::Custom {
                text: "mechanism = \"sendmsg\"\n# ünïcode & = #\n".into(),
                compare: Some("modern".into()),
                at: at(0, None),
            },
            Link::Custom {
                text: "{}".into(),
                compare: None,
                at: at(12, Some(0)),
            },
        ];
        for l in links {
            assert_eq!(Link::decode(&format!("#{}", l.encode())), Ok(Some(l)));
        }
        assert_eq!(Link::decode("#"), Ok(None));
        assert_eq!(Link::decode(""), Ok(None));
    }

    /// Links the playground wrote before positions had events (and by hand) still open.
    #[test]
    fn old_links_decode_unchanged() {
        let cases: &[(&str, Link)] = &[
            (
                "#w=YW5hdG9teQ&step=3",
                Link::Walk {
                    name: "anatomy".into(),
                    at: at(3, None),
                },
            ),
            (
                "s=e30&cmp=bW9kZXJu&step=7",
                Link::Custom {
                    text: "{}".into(),
                    compare: Some("modern".into()),
                    at: at(7, None),
                },
            ),
            // No step: the start. Padding, as other encoders write it, is accepted.
            (
                "#s=e30=",
                Link::Custom {
                    text: "{}".into(),
                    compare: None,
                    at: at(0, None),
                },
            ),
            (
                "#step=1&event=4&w=YQ",
                Link::Walk {
                    name: "a".into(),
                    at: at(1, Some(4)),
                },
            ),
        ];
        for (frag, want) in cases {
            assert_eq!(
                Link::decode(frag).as_ref(),
                Ok(&Some(want.clone())),
                "{frag}"
            );
        }
        // The exact text old links had: a step-only position encodes as before.
        let l = Link::Walk {
            name: "anatomy".into(),
            at: Position::step(3),
        };
        assert_eq!(l.encode(), "w=YW5hdG9teQ&step=3");
    }

    #[test]
    fn hostile_links_are_errors() {
        let huge = "s=".to_string() + &"A".repeat(MAX_SCENARIO_TEXT * 2);
        let long_key = "k".repeat(1000);
        let cases: &[(&str, &str)] = &[
            ("#s=!!!", "not base64url"),
            ("#s=__8", "not UTF-8"),
            ("#w=YQ&step=-1", "step `-1` is not a number"),
            ("#w=YQ&step=99999999999999999999999", "not a number"),
            ("#w=YQ&step=1&event=x", "event `x` is not a number"),
            ("#x=1", "unknown part `x`"),
            (&long_key, "unknown part `kkkk"),
            ("#step=2", "either a walkthrough"),
            ("#w=YQ&s=YQ", "either a walkthrough"),
            ("#w=YQ&cmp=YQ", "`cmp` goes with a scenario"),
            ("#w=YQ&step=1&step=2", "`step` twice"),
            ("#s=YQ&s=YQ", "`s` twice"),
            (&huge, "too long"),
        ];
        for (frag, want) in cases {
            let err = Link::decode(frag).unwrap_err();
            assert!(err.contains(want), "{frag:.40}: {err}");
            assert!(
                err.len() < 200,
                "{frag:.40}: an error quotes at most 40 characters of the input: {err}"
            );
        }
    }

    #[test]
    fn positions_clamp_to_the_trace() {
        let text = "mechanism = \"sendmsg\"\n[[ops]]\nop = \"sendmsg\"\nbytes = 100\n";
        let t = crate::run_text(text, &Default::default()).unwrap();
        let events = t.steps[0].events.len();
        assert!(events > 1, "{:?}", t.steps[0].events);
        let cases = [
            (at(0, None), at(0, None)),
            (at(0, Some(3)), at(0, None)), // before the first op there are no events
            (at(1, None), at(1, None)),
            (at(1, Some(1)), at(1, Some(1))),
            (at(1, Some(usize::MAX)), at(1, Some(events - 1))),
            (at(9, Some(0)), at(1, None)), // past the end: the last step, whole
        ];
        for (pos, want) in cases {
            assert_eq!(pos.clamp(&t), want, "{pos:?}");
        }
    }
}

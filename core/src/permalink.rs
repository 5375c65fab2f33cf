//! Permalinks: the URL fragment that names what the playground shows and where in it.
//!
//! A link names a built-in walkthrough (`w=NAME`) or challenge (`c=NAME`), or carries a whole
//! scenario (`s=TEXT`, with `cmp=VARIANT` for the split view) or a teacher's walkthrough or
//! challenge file (`l=TEXT`), each base64url, plus a [`Position`]: `step=N` and,
//! inside that step, `event=E`. Links come from strangers, so [`Link::decode`] is a plain
//! function (fuzzed in `fuzz/`) that turns every malformed or oversized fragment into an
//! error saying what is wrong.

use crate::limits::MAX_SCENARIO_TEXT;
use crate::trace::Trace;

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
    /// A built-in challenge, by name: the stage on its start, its goal and check beside.
    Challenge { name: String, at: Position },
    /// A walkthrough or challenge file's whole text (a lesson of one's own).
    Lesson { text: String, at: Position },
}

impl Link {
    pub fn at(&self) -> Position {
        match self {
            Link::Walk { at, .. }
            | Link::Custom { at, .. }
            | Link::Challenge { at, .. }
            | Link::Lesson { at, .. } => *at,
        }
    }

    /// The same link at another position.
    pub fn moved(mut self, to: Position) -> Link {
        match &mut self {
            Link::Walk { at, .. }
            | Link::Custom { at, .. }
            | Link::Challenge { at, .. }
            | Link::Lesson { at, .. } => *at = to,
        }
        self
    }

    /// The fragment (without `#`): `w=NAME&step=N` or `s=TEXT&cmp=VARIANT&step=N`, each name
    /// and text base64url without padding, then `&event=E` for a position within a step.
    pub fn encode(&self) -> String {
        let (head, at) = match self {
            Link::Walk { name, at } => (format!("w={}", b64::encode(name)), at),
            Link::Challenge { name, at } => (format!("c={}", b64::encode(name)), at),
            Link::Lesson { text, at } => (format!("l={}", b64::encode(text)), at),
            Link::Custom { text, compare, at } => {
                let cmp = compare
                    .as_ref()
                    .map(|c| format!("&cmp={}", b64::encode(c)))
                    .unwrap_or_default();
                (format!("s={}{cmp}", b64::encode(text)), at)
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
                "c" => once(k, &mut parts.c, text64(k, v)?)?,
                "l" => once(k, &mut parts.l, text64(k, v)?)?,
                "cmp" => once(k, &mut parts.cmp, text64(k, v)?)?,
                "step" => once(k, &mut parts.step, number(k, v)?)?,
                "event" => once(k, &mut parts.event, number(k, v)?)?,
                _ => return Err(format!("the link has an unknown part `{}`", shown(k))),
            }
        }
        let at = Position {
            step: parts.step.unwrap_or(0),
            event: parts.event,
        };
        let link = match (parts.w, parts.s, parts.c, parts.l) {
            (Some(name), None, None, None) => Link::Walk { name, at },
            (None, Some(text), None, None) => {
                let compare = parts.cmp.take();
                Link::Custom { text, compare, at }
            }
            (None, None, Some(name), None) => Link::Challenge { name, at },
            (None, None, None, Some(text)) => Link::Lesson { text, at },
            _ => {
                return Err("the link must name one walkthrough (w=), scenario (s=), \
                     challenge (c=) or lesson file (l=)"
                    .into())
            }
        };
        match parts.cmp {
            Some(_) => Err("the link's `cmp` goes with a scenario (s=) only".into()),
            None => Ok(Some(link)),
        }
    }
}

/// The parts of a fragment read so far.
#[derive(Default)]
struct Parts {
    w: Option<String>,
    s: Option<String>,
    c: Option<String>,
    l: Option<String>,
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
        .map_err(|_| format!("the link's {part} `{}` is not a number", shown(v)))
}

/// A stranger's text for a one-line message: at most 40 characters of it, control characters
/// shown as `?` (not `escape_debug`: its Unicode tables cost the web bundle 3 KiB).
fn shown(s: &str) -> String {
    let plain = |c: char| if c.is_control() { '?' } else { c };
    s.chars().take(40).map(plain).collect()
}

fn text64(part: &str, v: &str) -> Result<String, String> {
    let bytes = b64::decode(v.trim_end_matches('='))
        .map_err(|e| format!("the link's `{part}` is not base64url: {e}"))?;
    String::from_utf8(bytes).map_err(|_| format!("the link's `{part}` is not UTF-8 text"))
}

/// base64url without padding (RFC 4648, section 5), as a permalink carries text. Written out
/// here: the `base64` crate cost the playground's bundle 2 KiB gzip, most of it for engines
/// never used.
mod b64 {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

    pub fn encode(text: impl AsRef<[u8]>) -> String {
        let bytes = text.as_ref();
        let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
        for chunk in bytes.chunks(3) {
            // Three bytes make four 6-bit symbols; a short chunk makes one more than its bytes.
            let n = (chunk.iter().enumerate())
                .fold(0u32, |n, (i, &b)| n | u32::from(b) << (16 - 8 * i));
            for i in 0..=chunk.len() {
                out.push(char::from(ALPHABET[(n >> (18 - 6 * i) & 63) as usize]));
            }
        }
        out
    }

    fn value(c: u8) -> Option<u32> {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'-' => 62,
            b'_' => 63,
            _ => return None,
        };
        Some(u32::from(v))
    }

    pub fn decode(text: &str) -> Result<Vec<u8>, String> {
        let mut out = Vec::with_capacity(text.len() / 4 * 3 + 2);
        let (mut acc, mut bits) = (0u32, 0);
        for (i, c) in text.bytes().enumerate() {
            let v = value(c)
                .ok_or_else(|| format!("invalid symbol {:?} at offset {i}", char::from(c)))?;
            acc = (acc << 6 | v) & 0xfff;
            bits += 6;
            if bits >= 8 {
                bits -= 8;
                out.push((acc >> bits) as u8);
            }
        }
        // One symbol past a whole group carries 6 bits: less than a byte.
        if bits == 6 {
            return Err(format!("{} symbols is not a valid length", text.len()));
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64url_matches_rfc_4648() {
        // RFC 4648's test vectors (section 10) without padding, and the two URL-safe symbols.
        for (plain, coded) in [
            ("", ""),
            ("f", "Zg"),
            ("fo", "Zm8"),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg"),
            ("fooba", "Zm9vYmE"),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(b64::encode(plain), coded);
            assert_eq!(b64::decode(coded).unwrap(), plain.as_bytes());
        }
        assert_eq!(b64::encode([0xfb, 0xff]), "-_8");
        assert_eq!(b64::decode("-_8").unwrap(), [0xfb, 0xff]);
        assert!(b64::decode("Zm9vY")
            .unwrap_err()
            .contains("not a valid length"));
        assert!(b64::decode("Zm+v")
            .unwrap_err()
            .contains("invalid symbol '+' at offset 2"));
    }

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
            Link::Challenge {
                name: "duyck-reuse".into(),
                at: at(0, None),
            },
            Link::Lesson {
                text: "name = \"mine\"\nintro = \"ünïcode & = #\"\n".into(),
                at: at(4, Some(2)),
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
            // Found by fuzzing (fuzz/regressions/permalink): the message took two lines.
            ("hGG93\n", "unknown part `hGG93?`"),
            ("#step=2", "must name one walkthrough"),
            ("#w=YQ&s=YQ", "must name one walkthrough"),
            ("#c=YQ&l=YQ", "must name one walkthrough"),
            ("#w=YQ&cmp=YQ", "`cmp` goes with a scenario"),
            ("#l=YQ&cmp=YQ", "`cmp` goes with a scenario"),
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
            assert!(
                !err.contains('\n'),
                "{frag:.40}: an error is one line: {err}"
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

//! Permalinks: the URL fragment that names what the playground shows and where in it.
//!
//! A link names a built-in walkthrough (`w=NAME`) or challenge (`c=NAME`), or carries a whole
//! scenario (`s=TEXT`, with `cmp=VARIANT` for the split view) or a teacher's walkthrough or
//! challenge file (`l=TEXT`), each base64url; a challenge's link may carry the learner's
//! scenario too (`c=NAME&s=TEXT`, `l=TEXT&s=TEXT`: homework handed in by a link); plus a [`Position`]: `lead=L` (the lane the keys
//! step), `step=N` and, inside that step, each lane's event (`event=E` for the left lane,
//! `event1=E` for the right). Links come from strangers, so [`Link::decode`] is a plain
//! function (fuzzed in `fuzz/`) that turns every malformed or oversized fragment into an
//! error saying what is wrong.

use crate::limits::MAX_SCENARIO_TEXT;
use crate::trace::Trace;

/// The longest fragment read: a scenario of [`MAX_SCENARIO_TEXT`] bytes in base64 (4 characters
/// per 3 bytes) and room for the other parts. Longer ones are refused before any decoding.
pub const MAX_FRAGMENT: usize = MAX_SCENARIO_TEXT / 3 * 4 + 256;

/// The lanes a position names: the split view's traces, left (0) and right (1).
pub const LANES: usize = 2;

/// Where in a trace: `step` 0 is before the first operation, `step` N after `ops[N-1]`;
/// `events[L]`, when present, is the E-th (from 0) of the events step N made in lane L, whose
/// state that lane shows (else the whole step). `lead` is the lane stepped by event (`None`:
/// the host's default, the lane where the walkthrough's patch acts); [`Position::clamp`]
/// drops one naming no lane shown.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Position {
    pub step: usize,
    pub lead: Option<usize>,
    pub events: [Option<usize>; LANES],
}

impl Position {
    /// A whole step (no event within it).
    pub fn step(step: usize) -> Position {
        Position {
            step,
            ..Position::default()
        }
    }

    /// The nearest position that exists in `traces` (one per lane): the last step past the
    /// end, no event where the lane's step has none (step 0 has none) or the lane is not
    /// shown, the step's last event past its end; a lead only among the lanes shown.
    pub fn clamp(self, traces: &[Trace]) -> Position {
        let step = self.step.min(traces.first().map_or(0, |t| t.steps.len()));
        let mut events = [None; LANES];
        for ((slot, e), t) in events.iter_mut().zip(self.events).zip(traces) {
            let n = step.checked_sub(1).map_or(0, |i| t.steps[i].events.len());
            *slot = e
                .filter(|_| step == self.step && n > 0)
                .map(|e| e.min(n - 1));
        }
        Position {
            step,
            lead: self.lead.filter(|&l| l < traces.len().min(LANES)),
            events,
        }
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
    /// A built-in challenge, by name: the stage on its start, or on the learner's scenario
    /// (`work`), its goal and check beside.
    Challenge {
        name: String,
        work: Option<String>,
        at: Position,
    },
    /// A walkthrough or challenge file's whole text (a lesson of one's own), and for a
    /// challenge the learner's scenario (`work`).
    Lesson {
        text: String,
        work: Option<String>,
        at: Position,
    },
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

    /// The same link carrying the learner's scenario `text` when it is a challenge's (a
    /// built-in one or a file's); any other link is left as it is.
    pub fn with_work(mut self, text: &str) -> Link {
        if let Link::Challenge { work, .. } | Link::Lesson { work, .. } = &mut self {
            *work = Some(text.to_string());
        }
        self
    }

    /// The fragment (without `#`): `w=NAME` or `s=TEXT&cmp=VARIANT` (a challenge: `c=NAME` or
    /// `l=TEXT`, then `&s=TEXT` with the learner's scenario), each name and text
    /// base64url without padding, then `&lead=L` when the position names its lead,
    /// `&step=N`, and `&event=E` and `&event1=E` for the lanes at an event within the step.
    pub fn encode(&self) -> String {
        let s = |work: &Option<String>| {
            let work = work.as_ref().map(|w| format!("&s={}", b64::encode(w)));
            work.unwrap_or_default()
        };
        let (head, at) = match self {
            Link::Walk { name, at } => (format!("w={}", b64::encode(name)), at),
            Link::Challenge { name, work, at } => {
                (format!("c={}{}", b64::encode(name), s(work)), at)
            }
            Link::Lesson { text, work, at } => (format!("l={}{}", b64::encode(text), s(work)), at),
            Link::Custom { text, compare, at } => {
                let cmp = compare
                    .as_ref()
                    .map(|c| format!("&cmp={}", b64::encode(c)))
                    .unwrap_or_default();
                (format!("s={}{cmp}", b64::encode(text)), at)
            }
        };
        let part = |k: &str, v: Option<usize>| v.map(|v| format!("&{k}={v}")).unwrap_or_default();
        let [left, right] = at.events;
        format!(
            "{head}{}&step={}{}{}",
            part("lead", at.lead),
            at.step,
            part("event", left),
            part("event1", right)
        )
    }

    /// Reads a fragment (with or without `#`). `Ok(None)` when there is none. Parts may come
    /// in any order, each at most once; `step` defaults to 0. Base64 padding is accepted.
    /// Links written before either lane could be stepped name the left lane's `event` and no
    /// `lead`: the left lane led then, and leads here.
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
                "event" => once(k, &mut parts.events[0], number(k, v)?)?,
                "event1" => once(k, &mut parts.events[1], number(k, v)?)?,
                "lead" => once(k, &mut parts.lead, number(k, v)?)?,
                _ => return Err(format!("the link has an unknown part `{}`", shown(k))),
            }
        }
        // An old link: the left lane's event alone, and no lead.
        let old = matches!(parts.events, [Some(_), None]);
        let at = Position {
            step: parts.step.unwrap_or(0),
            lead: parts.lead.or(old.then_some(0)),
            events: parts.events,
        };
        let link = match (parts.w, parts.s, parts.c, parts.l) {
            (Some(name), None, None, None) => Link::Walk { name, at },
            (None, Some(text), None, None) => {
                let compare = parts.cmp.take();
                Link::Custom { text, compare, at }
            }
            (None, work, Some(name), None) => Link::Challenge { name, work, at },
            (None, work, None, Some(text)) => Link::Lesson { text, work, at },
            _ => {
                return Err("the link must name one walkthrough (w=), scenario (s=), \
                     challenge (c=) or lesson file (l=); a scenario may go with a challenge \
                     or a lesson file"
                    .into())
            }
        };
        match parts.cmp {
            Some(_) => Err("the link's `cmp` goes with a scenario (s=) alone".into()),
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
    lead: Option<usize>,
    events: [Option<usize>; LANES],
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

/// A stranger's text for a one-line message: at most 40 characters of it, hidden characters
/// ([`crate::error::is_hidden`]) shown as `?`.
fn shown(s: &str) -> String {
    let plain = |c: char| if crate::error::is_hidden(c) { '?' } else { c };
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

    /// A position led by the left lane when it names an event, as old links are read.
    fn at(step: usize, event: Option<usize>) -> Position {
        Position {
            step,
            lead: event.map(|_| 0),
            events: [event, None],
        }
    }

    fn lanes(step: usize, lead: Option<usize>, events: [Option<usize>; LANES]) -> Position {
        Position { step, lead, events }
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
            // Either lane may lead, each at its own event (or the whole step).
            Link::Walk {
                name: "rx-page-reuse".into(),
                at: lanes(3, Some(1), [Some(2), Some(7)]),
            },
            Link::Walk {
                name: "rx-page-reuse".into(),
                at: lanes(3, Some(1), [None, Some(0)]),
            },
            Link::Walk {
                name: "rx-page-reuse".into(),
                at: lanes(1, Some(0), [None, None]),
            },
            Link::Walk {
                name: "rx-page-reuse".into(),
                at: lanes(1, None, [None, Some(4)]),
            },
            Link::Challenge {
                name: "duyck-reuse".into(),
                work: None,
                at: at(0, None),
            },
            Link::Lesson {
                text: "name = \"mine\"\nintro = \"ünïcode & = #\"\n".into(),
                work: None,
                at: at(4, Some(2)),
            },
            // Homework: a challenge with the learner's scenario.
            Link::Challenge {
                name: "reuse-a-page".into(),
                work: Some("mechanism = \"rx\"\n# mine & = #\n".into()),
                at: at(2, None),
            },
            Link::Lesson {
                text: "name = \"mine\"\ngoal = \"g\"\n".into(),
                work: Some("{}".into()),
                at: at(0, None),
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
        // And an old link's left event, read as led by the left lane, writes the same step
        // and event (and the lead it implied).
        let old = Link::decode("w=YW5hdG9teQ&step=3&event=4")
            .unwrap()
            .unwrap();
        assert_eq!(old.encode(), "w=YW5hdG9teQ&lead=0&step=3&event=4");
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
            ("#w=YQ&step=1&event1=-2", "event1 `-2` is not a number"),
            ("#w=YQ&lead=x", "lead `x` is not a number"),
            ("#w=YQ&lead=0&lead=1", "`lead` twice"),
            ("#x=1", "unknown part `x`"),
            (&long_key, "unknown part `kkkk"),
            // Found by fuzzing (fuzz/regressions/permalink): the message took two lines.
            ("hGG93\n", "unknown part `hGG93?`"),
            ("#step=2", "must name one walkthrough"),
            ("#w=YQ&s=YQ", "must name one walkthrough"),
            ("#c=YQ&l=YQ", "must name one walkthrough"),
            ("#w=YQ&cmp=YQ", "`cmp` goes with a scenario"),
            ("#l=YQ&cmp=YQ", "`cmp` goes with a scenario"),
            ("#c=YQ&s=YQ&cmp=YQ", "`cmp` goes with a scenario (s=) alone"),
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
        let t = std::slice::from_ref(&t);
        let cases = [
            (at(0, None), at(0, None)),
            // Before the first op there are no events (the lead stays).
            (at(0, Some(3)), lanes(0, Some(0), [None, None])),
            (at(1, None), at(1, None)),
            (at(1, Some(1)), at(1, Some(1))),
            (at(1, Some(usize::MAX)), at(1, Some(events - 1))),
            // Past the end: the last step, whole.
            (at(9, Some(0)), lanes(1, Some(0), [None, None])),
        ];
        for (pos, want) in cases {
            assert_eq!(pos.clamp(t), want, "{pos:?}");
        }
        // A lead on no lane shown is dropped, like an event past the end (a link may say
        // anything): with one lane, the right lane's event and a lead on it.
        assert_eq!(
            lanes(1, Some(7), [None, None]).clamp(t),
            lanes(1, None, [None, None])
        );
        let right = lanes(1, Some(1), [Some(0), Some(1)]);
        assert_eq!(right.clamp(t), lanes(1, None, [Some(0), None]));
        // Two: each lane's event is clamped to its own step's events.
        let long = crate::run_text(&text.replace("100", "9000"), &Default::default()).unwrap();
        let two = [t[0].clone(), long];
        let n = two.each_ref().map(|t| t.steps[0].events.len());
        assert_ne!(n[0], n[1], "lanes with steps of different lengths");
        let far = lanes(1, Some(1), [Some(usize::MAX), Some(usize::MAX)]);
        assert_eq!(
            far.clamp(&two),
            lanes(1, Some(1), [Some(n[0] - 1), Some(n[1] - 1)])
        );
    }
}

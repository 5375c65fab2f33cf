//! What the playground shows: a walkthrough or the learner's own scenario, run in one or two
//! variants, and the permalink that names it. Pure Rust (no DOM), so it is tested natively.
//!
//! Everything the page displays comes from the core's [`Trace`]s held here; this module only
//! chooses what to run and remembers where the learner is.

use skblab_core::limits::MAX_SCENARIO_TEXT;
use skblab_core::walkthrough::Walkthrough;
use skblab_core::{RunOptions, Scenario, Trace};

/// A loaded scenario: its traces (one per variant shown) and its text for the editor.
#[derive(Clone, Debug)]
pub struct Session {
    pub title: String,
    /// The walkthrough, when the session is one (narration, default variants).
    pub walk: Option<Walkthrough>,
    /// The scenario as text (what the editor and the permalink hold).
    pub text: String,
    /// One trace per variant shown: the first is the left/only one.
    pub traces: Vec<Trace>,
}

impl Session {
    /// Steps in each trace (all variants run the same operations).
    pub fn len(&self) -> usize {
        self.traces[0].steps.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The narration for position `pos` (0 = before the first operation).
    pub fn narration(&self, pos: usize) -> Option<(&str, Option<&str>)> {
        let w = self.walk.as_ref()?;
        let main = match pos {
            0 => w.intro.as_str(),
            p => w.say.get(p - 1).map(String::as_str).unwrap_or(""),
        };
        let outro = (pos == self.len()).then_some(w.outro.as_str());
        Some((main, outro))
    }

    /// The link to this session at `pos`.
    pub fn link(&self, pos: usize) -> Link {
        match &self.walk {
            Some(w) => Link::Walk {
                name: w.name.clone(),
                step: pos,
            },
            None => Link::Custom {
                text: self.text.clone(),
                compare: self.traces.get(1).map(|t| t.variant.clone()),
                step: pos,
            },
        }
    }
}

/// Runs a walkthrough in each of its variants.
pub fn load_walkthrough(w: &Walkthrough) -> Result<Session, String> {
    let traces = w
        .variants
        .iter()
        .map(|v| run(&w.scenario, Some(v)))
        .collect::<Result<Vec<_>, _>>()?;
    if traces.is_empty() {
        return Err(format!("walkthrough {} names no variant", w.name));
    }
    Ok(Session {
        title: w.title.clone(),
        walk: Some(w.clone()),
        text: scenario_text(&w.scenario),
        traces,
    })
}

/// Checks scenario text the way the editor does as the learner types: parse and every cap.
/// Cheap: the core runs it with tracing off. (The traced run has one more cap, on the trace's
/// size; [`load_custom`] reports it.)
pub fn check(text: &str) -> Result<Scenario, String> {
    let s = Scenario::parse(text).map_err(|e| e.to_string())?;
    s.validate().map_err(|e| e.to_string())?;
    Ok(s)
}

/// Runs the learner's scenario, and a second variant beside it when `compare` names one.
pub fn load_custom(text: &str, compare: Option<&str>) -> Result<Session, String> {
    let s = check(text)?;
    let mut traces = vec![run(&s, None)?];
    if let Some(v) = compare.filter(|v| *v != traces[0].variant) {
        traces.push(run(&s, Some(v))?);
    }
    // Every mechanism's scenario may carry a `title`.
    let v: serde_json::Value = serde_json::from_str(&s.to_json()).expect("scenario JSON");
    let title = v["title"].as_str().unwrap_or("Your scenario").to_string();
    Ok(Session {
        title,
        walk: None,
        text: text.to_string(),
        traces,
    })
}

fn run(s: &Scenario, variant: Option<&str>) -> Result<Trace, String> {
    s.run(&RunOptions {
        variant: variant.map(str::to_string),
        counters_only: false,
    })
    .map_err(|e| e.to_string())
}

/// A scenario as text for the editor: the core's JSON (the editor reads TOML and JSON alike;
/// a TOML writer would cost the download more than the 300 KiB budget leaves).
pub fn scenario_text(s: &Scenario) -> String {
    s.to_json()
}

/// What a permalink names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Link {
    Walk {
        name: String,
        step: usize,
    },
    Custom {
        text: String,
        compare: Option<String>,
        step: usize,
    },
}

impl Link {
    pub fn step(&self) -> usize {
        match self {
            Link::Walk { step, .. } | Link::Custom { step, .. } => *step,
        }
    }

    /// The URL fragment (without `#`): `w=NAME&step=N` or `s=BASE64URL&cmp=VARIANT&step=N`.
    pub fn encode(&self) -> String {
        match self {
            Link::Walk { name, step } => format!("w={}&step={step}", b64::encode(name)),
            Link::Custom {
                text,
                compare,
                step,
            } => {
                let cmp = compare
                    .as_ref()
                    .map(|c| format!("&cmp={}", b64::encode(c)))
                    .unwrap_or_default();
                format!("s={}{cmp}&step={step}", b64::encode(text))
            }
        }
    }

    /// Reads a fragment (with or without `#`). `Ok(None)` when there is none; every malformed
    /// or oversized fragment is an error that says what is wrong.
    pub fn decode(fragment: &str) -> Result<Option<Link>, String> {
        let f = fragment.strip_prefix('#').unwrap_or(fragment);
        if f.is_empty() {
            return Ok(None);
        }
        if f.len() > MAX_SCENARIO_TEXT / 3 * 4 + 256 {
            return Err(format!("the link is {} bytes long: too long", f.len()));
        }
        let (mut w, mut s, mut cmp, mut step) = (None, None, None, 0);
        for pair in f.split('&') {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            match k {
                "w" => w = Some(text64("w", v)?),
                "s" => s = Some(text64("s", v)?),
                "cmp" => cmp = Some(text64("cmp", v)?),
                "step" => {
                    step = v
                        .parse()
                        .map_err(|_| format!("the link's step `{v}` is not a number"))?
                }
                _ => return Err(format!("the link has an unknown part `{k}`")),
            }
        }
        match (w, s) {
            (Some(name), None) => Ok(Some(Link::Walk { name, step })),
            (None, Some(text)) => Ok(Some(Link::Custom {
                text,
                compare: cmp,
                step,
            })),
            _ => Err("the link must name either a walkthrough (w=) or a scenario (s=)".into()),
        }
    }
}

fn text64(part: &str, v: &str) -> Result<String, String> {
    let bytes = b64::decode(v.trim_end_matches('='))
        .map_err(|e| format!("the link's `{part}` is not base64url: {e}"))?;
    String::from_utf8(bytes).map_err(|_| format!("the link's `{part}` is not UTF-8 text"))
}

/// base64url without padding (RFC 4648, section 5), as a permalink carries text. Written out
/// here: the `base64` crate cost the bundle 2 KiB gzip, most of it for engines never used.
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
    fn links_round_trip() {
        let links = [
            Link::Walk {
                name: "linear-area".into(),
                step: 3,
            },
            Link::Custom {
                text: "mechanism = \"sendmsg\"\n# ünïcode & = #\n".into(),
                compare: Some("modern".into()),
                step: 0,
            },
            Link::Custom {
                text: "{}".into(),
                compare: None,
                step: 12,
            },
        ];
        for l in links {
            assert_eq!(Link::decode(&format!("#{}", l.encode())), Ok(Some(l)));
        }
        assert_eq!(Link::decode("#"), Ok(None));
    }

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

    #[test]
    fn hostile_links_are_errors() {
        let huge = "s=".to_string() + &"A".repeat(MAX_SCENARIO_TEXT * 2);
        let cases: &[(&str, &str)] = &[
            ("#s=!!!", "not base64url"),
            ("#s=__8", "not UTF-8"),
            ("#w=YQ&step=-1", "not a number"),
            ("#w=YQ&step=99999999999999999999999", "not a number"),
            ("#x=1", "unknown part"),
            ("#step=2", "either a walkthrough"),
            ("#w=YQ&s=YQ", "either a walkthrough"),
            (&huge, "too long"),
        ];
        for (frag, want) in cases {
            let err = Link::decode(frag).unwrap_err();
            assert!(err.contains(want), "{frag:.40}: {err}");
        }
    }

    #[test]
    fn bad_scenarios_name_the_problem() {
        let cases: &[(&str, &str)] = &[
            ("mechanism = ", "TOML parse error"),
            ("mechanism = \"nope\"\nops = []", "unknown mechanism `nope`"),
            ("{\"mechanism\": 3}", "unknown mechanism"),
        ];
        for (text, want) in cases {
            let err = check(text).unwrap_err();
            assert!(err.contains(want), "{text}: {err}");
        }
    }
}

//! What the playground shows: a walkthrough or the learner's own scenario, run in one or two
//! variants, and the permalink that names it. Pure Rust (no DOM), so it is tested natively.
//!
//! Everything the page displays comes from the core's [`Trace`]s held here; this module only
//! chooses what to run and remembers where the learner is.

pub use skblab_core::permalink::{Link, Position};
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

    /// The link to this session at `at`.
    pub fn link(&self, at: Position) -> Link {
        match &self.walk {
            Some(w) => Link::Walk {
                name: w.name.clone(),
                at,
            },
            None => Link::Custom {
                text: self.text.clone(),
                compare: self.traces.get(1).map(|t| t.variant.clone()),
                at,
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

#[cfg(test)]
mod tests {
    use super::*;

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

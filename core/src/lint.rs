//! The checks a walkthrough or challenge file must pass, for the built-in ones and for a
//! teacher's own: `core/tests` runs them on every built-in file and `skblab lint` on any file,
//! so there is one implementation.
//!
//! A walkthrough: each variant runs, the runs together within the lesson's budget
//! ([`crate::limits::MAX_LESSON_TRACE_OBJECTS`]), every `[[check]]` holds, every `[[moment]]`
//! is made by a variant, every question's query resolves on its step and its answer is not
//! visible before it is asked ([`crate::question`]). A challenge: its seed is the one its
//! variant models, every `keep` names a field of its
//! start, its start runs and does not meet the goal, every condition can be read on the
//! start, and a solution, when given, keeps every kept field and meets the goal.

use crate::challenge::{self, Challenge};
use crate::error::escape_controls;
use crate::walkthrough::{self, Walkthrough};
use crate::{Error, RunOptions};
use std::fmt;

/// One thing wrong with a file: the field, the step it was seen at (1-based), and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    pub field: String,
    pub step: Option<usize>,
    pub message: String,
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        if !self.field.is_empty() {
            write!(f, "`{}`", escape_controls(&self.field))?;
            if let Some(s) = self.step {
                write!(f, " at step {s}")?;
            }
            f.write_str(": ")?;
        }
        f.write_str(&escape_controls(&self.message))
    }
}

fn finding(field: impl Into<String>, step: Option<usize>, message: impl Into<String>) -> Finding {
    Finding {
        field: field.into(),
        step,
        message: message.into(),
    }
}

/// An error as a finding: the error names its field itself.
impl From<Error> for Finding {
    fn from(e: Error) -> Finding {
        finding("", None, e.to_string())
    }
}

/// What a file holds, told by its fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// It has `say`.
    Walkthrough,
    /// It has `require`.
    Challenge,
    /// It has `mechanism`: a scenario (after a challenge, that challenge's solution).
    Scenario,
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(match self {
            Kind::Walkthrough => "walkthrough",
            Kind::Challenge => "challenge",
            Kind::Scenario => "scenario",
        })
    }
}

/// What `text` holds. An error is a text that is not TOML, or is none of the three.
pub fn kind(text: &str) -> Result<Kind, Error> {
    let v: serde_json::Value = crate::toml_value::parse(text)?;
    let has = |k: &str| v.get(k).is_some();
    Ok(if has("say") {
        Kind::Walkthrough
    } else if has("require") {
        Kind::Challenge
    } else if has("mechanism") {
        Kind::Scenario
    } else {
        return Err(Error::invalid(
            "",
            "neither a walkthrough (it has `say`), a challenge (`require`) nor a scenario \
             (`mechanism`)",
        ));
    })
}

/// Every finding in a walkthrough or challenge file's `text` (a challenge's `solution`, when
/// given, checked too); `Err` when the text is not a lesson at all (see [`kind`]).
pub fn file(text: &str, solution: Option<&str>) -> Result<Vec<Finding>, Error> {
    Ok(match kind(text)? {
        Kind::Walkthrough => {
            walkthrough::parse(text).map_or_else(|e| vec![e.into()], |w| lesson(&w))
        }
        Kind::Challenge => {
            challenge::parse(text).map_or_else(|e| vec![e.into()], |c| goal(&c, solution))
        }
        Kind::Scenario => vec![finding(
            "mechanism",
            None,
            "a scenario, not a lesson: lint reads walkthroughs and challenges (a scenario \
             right after a challenge is checked as its solution)",
        )],
    })
}

/// Every finding in walkthrough `w`. A variant that does not run, or runs over the lesson's
/// budget, is the only finding: the checks and questions read the runs.
pub fn lesson(w: &Walkthrough) -> Vec<Finding> {
    let run = |i: usize, opts: &RunOptions| {
        let t = w.scenario.run(opts);
        t.map_err(|e| finding(format!("variants[{i}]"), None, e.to_string()))
    };
    let traces = match w.traces(run) {
        Ok(traces) => traces,
        Err(f) => return vec![f],
    };
    let mut out = Vec::new();
    for (i, (c, read)) in w.checks.iter().zip(w.read_checks(&traces)).enumerate() {
        let step = (c.step > 0).then_some(c.step);
        match read {
            None => {
                let listed = w.variants.join(", ");
                let why = format!("`{}` is not one of the variants ({listed})", c.variant);
                out.push(finding(format!("check[{i}].variant"), None, why));
            }
            Some(Ok(v)) if v == c.equals => {}
            Some(Ok(v)) => out.push(finding(
                format!("check[{i}].equals"),
                step,
                format!("{} reads {v} in {}, not {}", c.what(), c.variant, c.equals),
            )),
            Some(Err(why)) => out.push(finding(format!("check[{i}]"), step, why)),
        }
    }
    // The counter charted first must be one the runs count.
    if let Some(c) = &w.chart {
        let names: Vec<&str> = traces[0].counters.names().collect();
        if !names.contains(&c.as_str()) {
            let why = format!(
                "`{c}` is no counter of this scenario: one of {}",
                names.join(", ")
            );
            out.push(finding("chart".to_string(), None, why));
        }
    }
    // A moment no variant makes would point at nothing.
    match w.moments() {
        Err(e) => out.push(e.into()),
        Ok(ms) => out.extend(ms.iter().enumerate().filter_map(|(i, m)| {
            let made = traces.iter().any(|t| !m.events(t).is_empty());
            let why = format!("no {} event in {}", m.kind, w.variants.join(" or "));
            (!made).then(|| finding(format!("moment[{i}]"), Some(m.step), why))
        })),
    }
    match w.questions() {
        Err(e) => out.push(e.into()),
        Ok(qs) => {
            for (i, q) in qs.iter().enumerate() {
                let Ok(t) = w.trace_for(q, &traces) else {
                    continue;
                };
                let at = Some(q.step);
                match q.answer(t) {
                    Err(why) => out.push(finding(
                        format!("question[{i}].query"),
                        at,
                        format!("does not resolve in {}: {why}", q.variant),
                    )),
                    Ok(_) => out.extend(q.visible(t).map(|why| {
                        let why = format!("the answer is visible before it is asked: {why}");
                        finding(format!("question[{i}]"), at, why)
                    })),
                }
            }
        }
    }
    out
}

/// Every finding in challenge `c`, and in `solution` (scenario text) when given.
pub fn goal(c: &Challenge, solution: Option<&str>) -> Vec<Finding> {
    let mut out = Vec::new();
    let seeds = walkthrough::seeds(&c.scenario, [c.variant.as_str()]);
    if !seeds.contains(&c.seed.as_str()) {
        let why = format!(
            "`{}`, but {} in variant {} models seed {}",
            c.seed,
            c.scenario.mechanism(),
            c.variant,
            seeds.join("+")
        );
        out.push(finding("seed", None, why));
    }
    // A kept name the scenario does not have would keep nothing.
    let start: serde_json::Value = serde_json::from_str(&c.start()).unwrap_or_default();
    let fields = start
        .as_object()
        .map(|m| m.keys().cloned().collect::<Vec<_>>());
    let fields = fields.unwrap_or_default();
    for (i, k) in c.keep.iter().enumerate() {
        if !fields.contains(k) && !challenge::ALWAYS_KEPT.contains(&k.as_str()) {
            let why = format!(
                "`{k}` is no field of the start: keep one of {}",
                fields.join(", ")
            );
            out.push(finding(format!("keep[{i}]"), None, why));
        }
    }
    match c.check(&c.start()) {
        Err(e) => out.push(finding("scenario", None, e.to_string())),
        Ok(v) => {
            if let Some(s) = v.solved_at {
                let why = "the start already meets the goal: the learner has nothing to do";
                out.push(finding("scenario", Some(s), why));
            }
            for (i, seen) in v.conditions.iter().enumerate() {
                if !seen.readable {
                    let why = format!("cannot be read on the start: {}", seen.saw);
                    out.push(finding(format!("require[{i}]"), None, why));
                }
            }
        }
    }
    let Some(text) = solution else { return out };
    match c.check(text) {
        Err(e) => out.push(finding("", None, format!("the solution: {e}"))),
        Ok(v) if v.solved_at.is_some() => {}
        Ok(v) => out.extend(
            v.conditions
                .iter()
                .enumerate()
                .filter(|(_, s)| !s.holds)
                .map(|(i, s)| {
                    let why = format!("the solution does not meet it: {}", s.saw);
                    finding(format!("require[{i}]"), None, why)
                }),
        ),
    }
    out
}

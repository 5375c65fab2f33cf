//! Challenges: goal states to reach by editing a scenario, two or more per seed. A goal is a
//! list of conditions on the trace (`queue write_queue pages == 1`), each a [`Query`] compared
//! with a number or with a multiple of another query; the core runs the learner's scenario in
//! the challenge's variant and checks them. Each lives in `core/challenges/NAME.toml`,
//! compiled in; `core/tests/challenges.rs` holds a reference solution for each.

use crate::limits::{check_count, MAX_CONDITIONS};
use crate::query::{Query, Value};
use crate::scenario::Scenario;
use crate::trace::{Step, Trace};
use crate::{Error, RunOptions};
use serde::{Deserialize, Deserializer, Serialize};
use std::str::FromStr;

toml_files!("challenges": "one-page-queue", "no-linear-before-2010", "reuse-a-page", "twice-the-pages", "cache-frees-nothing", "bh-frees-three", "full-size-before-2020", "collapse-to-full-size");

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Challenge {
    pub name: String,
    /// The seed (patch) it is about: `000` to `003`.
    pub seed: String,
    pub title: String,
    /// The goal in words.
    pub goal: String,
    pub hint: String,
    /// Every run is of this variant, whatever the scenario says.
    pub variant: String,
    /// Top-level scenario fields that must stay as in the start (the device, the socket),
    /// besides [`ALWAYS_KEPT`]: what the lesson depends on, so no other knob reaches the goal.
    #[serde(default)]
    pub keep: Vec<String>,
    /// Every condition must hold after one same step (after the last one when `at_end`).
    #[serde(rename = "require")]
    pub conditions: Vec<Condition>,
    #[serde(default)]
    pub at_end: bool,
    /// The starting scenario, which does not reach the goal.
    pub scenario: Scenario,
}

/// Fields every challenge keeps as in its start: the kernel is the challenge's, its mechanism,
/// its variant on either rx axis and its era's constants (a `[consts]` override, a bigger
/// `shinfo_size`, reaches most goals without the patch).
pub(crate) const ALWAYS_KEPT: [&str; 4] = ["mechanism", "variant", "cache", "consts"];

/// The fields of [`ALWAYS_KEPT`] that name the kernel a challenge runs as (its mechanism and
/// its variant on either rx axis): [`Challenge::variant`] says them.
const VARIANT_FIELDS: [&str; 3] = ["mechanism", "variant", "cache"];

/// `QUERY OP RHS`: OP is one of `== != >= <= > <`; RHS a number, a query, or `N * QUERY`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Condition {
    /// As written, for the report.
    pub text: String,
    pub left: Query,
    pub op: Cmp,
    pub right: Rhs,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cmp {
    Eq,
    Ne,
    Ge,
    Le,
    Gt,
    Lt,
}

const CMPS: [(&str, Cmp); 6] = [
    ("==", Cmp::Eq),
    ("!=", Cmp::Ne),
    (">=", Cmp::Ge),
    ("<=", Cmp::Le),
    (">", Cmp::Gt),
    ("<", Cmp::Lt),
];

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Rhs {
    Number(u64),
    Times(u64, Query),
}

/// The outcome of checking a scenario against a challenge.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Verdict {
    /// The step (1-based) after which every condition held, if one did.
    pub solved_at: Option<usize>,
    /// Each condition with the values it saw, at that step or else after the last.
    pub conditions: Vec<Seen>,
    /// The same, one line each: `✓ counter bytes_read >= 4096: 4096 >= 4096`.
    #[serde(skip)]
    pub report: Vec<String>,
}

/// One condition as checked: whether it held, and the values it compared (or why it could
/// not be read).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Seen {
    pub condition: String,
    pub holds: bool,
    /// `l OP r` with the values, or why a query could not be read.
    pub saw: String,
    /// Whether its queries could be read (a counter the mechanism has, a live page, ...).
    pub readable: bool,
}

impl std::fmt::Display for Seen {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        let mark = if self.holds { HELD } else { '✗' };
        write!(f, "{mark} {}: {}", self.condition, self.saw)
    }
}

/// The mark of a report line whose condition held (a host reads [`Seen::holds`], not it).
const HELD: char = '✓';

impl FromStr for Condition {
    type Err = String;
    fn from_str(s: &str) -> Result<Condition, String> {
        let words: Vec<&str> = s.split_whitespace().collect();
        let (at, op) = words
            .iter()
            .enumerate()
            .find_map(|(i, w)| CMPS.iter().find(|(t, _)| t == w).map(|(_, c)| (i, *c)))
            .ok_or(format!(
                "`{s}`: expected QUERY OP VALUE, OP one of == != >= <= > <"
            ))?;
        let left = words[..at].join(" ").parse()?;
        let right = match words[at + 1..] {
            [n] if n.parse::<u64>().is_ok() => Rhs::Number(n.parse().unwrap_or_default()),
            [n, "*", ref q @ ..] => Rhs::Times(
                n.parse().map_err(|_| format!("`{n}` is not a factor"))?,
                q.join(" ").parse()?,
            ),
            ref q => Rhs::Times(1, q.join(" ").parse()?),
        };
        Ok(Condition {
            text: words.join(" "),
            left,
            op,
            right,
        })
    }
}

impl<'de> Deserialize<'de> for Condition {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Condition, D::Error> {
        crate::query::from_text(d)
    }
}

impl Condition {
    /// Whether it holds after `step`, with what it saw, or why it could not be read.
    fn test(&self, step: &Step) -> Result<(bool, String), String> {
        let num = |q: &Query| match q.eval(Some(step))? {
            Value::Number(n) => Ok(n),
            v => Err(format!("{v} is not a number")),
        };
        let l = num(&self.left)?;
        let r = match &self.right {
            Rhs::Number(n) => *n,
            Rhs::Times(k, q) => k.saturating_mul(num(q)?),
        };
        let holds = match self.op {
            Cmp::Eq => l == r,
            Cmp::Ne => l != r,
            Cmp::Ge => l >= r,
            Cmp::Le => l <= r,
            Cmp::Gt => l > r,
            Cmp::Lt => l < r,
        };
        let op = CMPS
            .iter()
            .find(|(_, c)| *c == self.op)
            .map_or("", |(t, _)| t);
        Ok((holds, format!("{l} {op} {r}")))
    }

    fn holds(&self, step: &Step) -> bool {
        matches!(self.test(step), Ok((true, _)))
    }
}

impl Challenge {
    /// What must stay as in the start besides the variant it runs as: its `keep`, then the
    /// rest of [`ALWAYS_KEPT`] (the era's constants).
    pub fn kept_besides_variant(&self) -> Vec<&str> {
        let always = ALWAYS_KEPT.iter().filter(|f| !VARIANT_FIELDS.contains(f));
        let keep = self.keep.iter().map(String::as_str);
        keep.chain(always.copied()).collect()
    }

    /// Runs scenario `text` in this challenge's variant and checks the goal.
    pub fn check(&self, text: &str) -> Result<Verdict, Error> {
        let t = self.run(&Scenario::parse(text)?)?;
        let steps: &[Step] = if self.at_end {
            &t.steps[t.steps.len().saturating_sub(1)..]
        } else {
            &t.steps
        };
        // The condition that failed last is tested first: a goal is mostly unmet for one
        // reason over many steps, so a step costs one test, not one per condition before it.
        let unmet = |s: &Step, last: usize| {
            if self.conditions.get(last).is_some_and(|c| !c.holds(s)) {
                return Some(last);
            }
            self.conditions.iter().position(|c| !c.holds(s))
        };
        let mut failing = 0;
        let hit = steps.iter().position(|s| match unmet(s, failing) {
            Some(i) => {
                failing = i;
                false
            }
            None => true,
        });
        let solved_at = hit.map(|i| i + t.steps.len() - steps.len() + 1);
        let shown = hit.map(|i| &steps[i]).or(t.steps.last());
        let conditions: Vec<Seen> = self
            .conditions
            .iter()
            .map(|c| {
                let ((holds, saw), readable) = match shown.map(|s| c.test(s)) {
                    Some(Ok(seen)) => (seen, true),
                    Some(Err(why)) => ((false, why), false),
                    None => ((false, "the scenario has no steps".into()), false),
                };
                let condition = c.text.clone();
                Seen {
                    condition,
                    holds,
                    saw,
                    readable,
                }
            })
            .collect();
        let report = conditions.iter().map(Seen::to_string).collect();
        Ok(Verdict {
            solved_at,
            conditions,
            report,
        })
    }

    /// The starting scenario as text the learner edits (the core's JSON).
    pub fn start(&self) -> String {
        self.scenario.to_json()
    }

    /// Runs `s`, refusing a change to a kept field or the mechanism.
    fn run(&self, s: &Scenario) -> Result<Trace, Error> {
        // Through the JSON text every host already links (`to_value` would build a second
        // serializer of every mechanism's scenario into the web bundle).
        let value = |s: &Scenario| serde_json::from_str::<serde_json::Value>(&s.to_json());
        let (mine, start) = (value(s), value(&self.scenario));
        let (mine, start) = (mine.unwrap_or_default(), start.unwrap_or_default());
        let kept = ALWAYS_KEPT.iter().copied();
        // The run is on the challenge's own variant: a text that names it (as the page's
        // variant picker writes it) keeps the variant as well as the start's own text does.
        let own = serde_json::Value::String(self.variant.clone());
        let named_own = |field: &str| field == "variant" && mine.get(field) == Some(&own);
        for field in kept.chain(self.keep.iter().map(String::as_str)) {
            if mine.get(field) != start.get(field) && !named_own(field) {
                let was = start.get(field).map_or("absent".into(), |v| v.to_string());
                return Err(Error::invalid(
                    field,
                    format!(
                        "challenge {} keeps it as in the start ({was}): put it back and \
                         change something else",
                        self.name
                    ),
                ));
            }
        }
        s.run(&RunOptions::traced(Some(&self.variant)))
    }
}

/// Every challenge, parsed (a parse error is a bug the test suite catches).
#[cfg(feature = "embedded")]
pub fn all() -> Result<Vec<Challenge>, Error> {
    TEXTS.iter().map(|text| parse(text)).collect()
}

/// Reads one challenge file, of at most [`MAX_CONDITIONS`] conditions.
pub fn parse(text: &str) -> Result<Challenge, Error> {
    let c: Challenge = crate::walkthrough::from_toml(text)?;
    let n = c.conditions.len();
    check_count("require", n, (0, MAX_CONDITIONS), "conditions")?;
    Ok(c)
}

/// The challenge called `name`.
#[cfg(feature = "embedded")]
pub fn find(name: &str) -> Result<Challenge, Error> {
    crate::walkthrough::find_named(all()?, "challenge", name, |c| &c.name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_challenge_is_an_error_naming_its_field() {
        let text = |fields: &str| {
            format!(
                "name = \"c\"\nseed = \"000\"\ntitle = \"t\"\ngoal = \"g\"\nhint = \"h\"\n\
                 variant = \"kumar-2010\"\n{fields}\n\
                 [scenario]\nmechanism = \"sendmsg\"\nops = [{{ op = \"close\" }}]\n"
            )
        };
        let cases = [
            (
                "require = [\"pages live == 1\", \"skb 0 colour == 1\"]",
                "at `require[1]`",
            ),
            (
                "require = []\nkeep = [\"socket\", 3]",
                "at `keep[1]`: invalid type",
            ),
            ("require = []\nat_end = 1", "at `at_end`: invalid type"),
            ("require = []\nrequires = 1", "at `requires`: unknown field"),
            ("", "at ``: missing field `require`"),
        ];
        for (fields, want) in cases {
            let err = parse(&text(fields)).unwrap_err().to_string();
            assert!(err.contains(want), "{fields}: {err}");
        }
        let bad_op = text("require = []").replace("close", "closed");
        let err = parse(&bad_op).unwrap_err().to_string();
        assert!(err.contains("at `scenario`"), "{err}");
        parse(&text("require = [\"pages live == 1\"]")).expect("a good challenge");
    }

    /// Besides the variant, a challenge keeps its own fields and the era's constants.
    #[test]
    fn kept_besides_the_variant_is_keep_then_the_constants() {
        let c = parse(
            "name = \"c\"\nseed = \"000\"\ntitle = \"t\"\ngoal = \"g\"\nhint = \"h\"\n\
             variant = \"kumar-2010\"\nrequire = []\nkeep = [\"socket\", \"device\"]\n\
             [scenario]\nmechanism = \"sendmsg\"\nops = [{ op = \"close\" }]\n",
        )
        .unwrap();
        assert_eq!(c.kept_besides_variant(), ["socket", "device", "consts"]);
    }
}

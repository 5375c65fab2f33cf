//! Predict, then see: a walkthrough's `[[question]]`s. A question is asked before its step is
//! shown; its answer is a [`Query`] evaluated on that step of the trace, never a number typed
//! into the file.
//!
//! **Visible** (what `core/tests/questions.rs` forbids): before answering, the learner sees
//! the previous step (its state, events and counters; before step 1, nothing). An answer is
//! visible when the same query evaluated on that previous step already gives it. A pick
//! question's object must be drawn in that previous state, so the learner can point at it.

use crate::query::{Query, Value};
use crate::trace::{State, Trace};
use serde::Deserialize;

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Question {
    /// The step (1-based) this question comes before.
    pub step: usize,
    /// The variant whose trace answers it (the walkthrough's first when left out).
    #[serde(default)]
    pub variant: String,
    pub ask: String,
    pub query: Query,
    /// A choice question's options; the answer must be one of their values.
    #[serde(default)]
    pub choices: Vec<Choice>,
    /// It asks the key point of the walkthrough's patch (linear area gone, page reused, free
    /// on the other CPU, skb grown to the full size goal).
    #[serde(default)]
    pub key: bool,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Choice {
    pub value: u64,
    pub label: String,
}

/// How the learner answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Types a number.
    Number,
    /// Picks one of the choices.
    Choice,
    /// Points at an skb, a frag or a page in the diagram.
    Pick,
}

impl Question {
    pub fn kind(&self) -> Kind {
        if !self.choices.is_empty() {
            Kind::Choice
        } else if self.query.names_object() {
            Kind::Pick
        } else {
            Kind::Number
        }
    }

    /// The answer, read from `t` (the trace of the question's variant).
    pub fn answer(&self, t: &Trace) -> Result<Value, String> {
        let at = self.step.checked_sub(1).and_then(|i| t.steps.get(i));
        let step = at.ok_or(format!(
            "step {} is not in 1..={}",
            self.step,
            t.steps.len()
        ))?;
        let v = self.query.eval(Some(step))?;
        match (self.kind(), v) {
            (Kind::Choice, Value::Number(n)) if !self.choices.iter().any(|c| c.value == n) => {
                Err(format!("the answer {n} is none of the choices"))
            }
            (Kind::Choice | Kind::Number, Value::Number(_)) | (Kind::Pick, _) => Ok(v),
            _ => Err(format!("a choice needs a number, the query gives {v}")),
        }
    }

    /// Why the answer can be seen before the learner answers, if it can (see the module doc).
    pub fn visible(&self, t: &Trace) -> Option<String> {
        let answer = self.answer(t).ok()?;
        let prev = self.step.checked_sub(2).map(|i| &t.steps[i]);
        if self.query.eval(prev) == Ok(answer) {
            return Some(format!("the step before already gives {answer}"));
        }
        let empty = State::default();
        let shown = prev.map_or(&empty, |s| &s.state);
        (answer.is_object() && !shown.draws(answer))
            .then(|| format!("{answer} is not drawn before the step, so it cannot be picked"))
    }

    /// The learner's `input` judged against `answer`: right or wrong, or why the input is not
    /// an answer to this question (then ask again).
    pub fn judge(&self, input: &str, answer: Value) -> Result<bool, String> {
        let want = match self.kind() {
            Kind::Choice => return Ok(Value::Number(self.choice(input)?.value) == answer),
            Kind::Number => "give a whole number",
            Kind::Pick => "name an object: skb N, page N or skb N frag I",
        };
        match input.parse::<Value>() {
            Ok(given) if given.is_object() == answer.is_object() => Ok(given == answer),
            _ => Err(format!("`{}`: {want}", input.trim())),
        }
    }

    /// The choice `input` names: its letter (`a`, `b`, ...) or its label.
    fn choice(&self, input: &str) -> Result<&Choice, String> {
        let input = input.trim();
        self.choices
            .iter()
            .zip(letters())
            .find(|(c, l)| input.eq_ignore_ascii_case(l) || input.eq_ignore_ascii_case(&c.label))
            .map(|(c, _)| c)
            .ok_or_else(|| {
                let last = letters().nth(self.choices.len() - 1).unwrap_or_default();
                format!("`{input}`: answer with a letter from a to {last}, or a choice's words")
            })
    }

    /// The choices as the learner sees them: `a) CPU 0`, `b) CPU 1`.
    pub fn options(&self) -> Vec<String> {
        self.choices
            .iter()
            .zip(letters())
            .map(|(c, l)| format!("{l}) {}", c.label))
            .collect()
    }

    /// The answer in the question's own words (a choice's label).
    pub fn say(&self, answer: Value) -> String {
        let label = self
            .choices
            .iter()
            .find(|c| Value::Number(c.value) == answer);
        label.map_or(answer.to_string(), |c| c.label.clone())
    }
}

fn letters() -> impl Iterator<Item = String> {
    ('a'..='z').map(String::from)
}

impl State {
    /// Every object the diagram of this state draws, in drawing order: each skb on a queue or
    /// chained on one, then its frags, then the live pages. What a learner can pick.
    pub fn drawn(&self) -> Vec<Value> {
        let skbs = self
            .queues
            .iter()
            .flat_map(|q| &q.skbs)
            .flat_map(|b| std::iter::once(b).chain(&b.frag_list));
        let mut out = Vec::new();
        for b in skbs {
            out.push(Value::Skb(b.id));
            out.extend((0..b.frags.len() as u32).map(|idx| Value::Frag { skb: b.id, idx }));
        }
        out.extend(self.pages.iter().map(|p| Value::Page(p.id)));
        out
    }

    /// Whether the diagram of this state draws `v` (see [`State::drawn`]).
    pub fn draws(&self, v: Value) -> bool {
        v.is_object() && self.drawn().contains(&v)
    }
}

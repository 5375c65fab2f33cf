//! Predict, then see: a walkthrough's `[[question]]`s. A question is asked before its step is
//! shown; its answer is a [`Query`] evaluated on that step of the trace, never a number typed
//! into the file.
//!
//! **Visible** (what `core/tests/questions.rs` forbids): before answering, the learner sees
//! the previous step (its state, events and counters; before step 1, nothing). An answer is
//! visible when the same query evaluated on that previous step already gives it, unless the
//! query reads the asked step's own events (`events KIND`, `event KIND FIELD`): the step
//! before has events of its own, which say nothing of the next step's. A pick
//! question's object must be drawn in that previous state, so the learner can point at it,
//! beside another of its kind (with one frag drawn, "which frag?" answers itself).

use crate::query::{PageField, Query, SkbField, Value};
use crate::trace::{State, Trace};
use serde::Deserialize;
use std::fmt::Write;

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
        if !self.query.reads_events() && self.query.eval(prev) == Ok(answer) {
            return Some(format!("the step before already gives {answer}"));
        }
        let empty = State::default();
        let shown = prev.map_or(&empty, |s| &s.state);
        if answer.is_object() && !shown.draws(answer) {
            return Some(format!(
                "{answer} is not drawn before the step, so it cannot be picked"
            ));
        }
        let alike = shown.alike(answer).len();
        (answer.is_object() && alike == 1).then(|| {
            format!("{answer} is the only one of its kind drawn, so there is nothing to pick")
        })
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

impl Question {
    /// How the answer is made up, read from the question's step of `t` (its variant's
    /// trace), in the query's own terms: a sum's parts, a count's members, a counter before
    /// and after. `None` for a query that is one fact with no parts.
    pub fn why(&self, t: &Trace) -> Option<String> {
        #[cfg(test)]
        WHYS_BUILT.with(|n| n.set(n.get() + 1));
        let n = self.step;
        let step = t.steps.get(n.checked_sub(1)?)?;
        let s = &step.state;
        let skbs = (s.queues.iter().flat_map(|q| &q.skbs))
            .flat_map(|b| std::iter::once(b).chain(&b.frag_list));
        let mut out = String::new();
        match &self.query {
            Query::Skb { id, field } => {
                let b = skbs.clone().find(|b| b.id == *id)?;
                match field {
                    SkbField::Len | SkbField::LinearLen | SkbField::DataLen => write!(
                        out,
                        "skb {id}: len {} = linear_len {} (bytes in its head) + data_len {} (bytes in frags and frag_list)",
                        b.len, b.linear_len, b.data_len
                    ),
                    SkbField::NrFrags => write!(out, "skb {id} has {} frags:", b.frags.len()),
                    _ => return None,
                }
                .ok()?;
                if *field == SkbField::NrFrags {
                    let frag = |k| {
                        Value::Frag {
                            skb: *id,
                            idx: k as u32,
                        }
                        .to_string()
                    };
                    list(&mut out, b.frags.len(), &frag);
                }
            }
            Query::Page {
                id,
                field: PageField::Count,
            } => {
                let mut refs = Vec::new();
                for b in skbs {
                    let head = b.head_frag.iter().filter(|f| f.page == *id);
                    refs.extend(head.map(|_| format!("skb {}'s head", b.id)));
                    let frags = b.frags.iter().enumerate().filter(|(_, f)| f.page == *id);
                    refs.extend(frags.map(|(k, _)| {
                        Value::Frag {
                            skb: b.id,
                            idx: k as u32,
                        }
                        .to_string()
                    }));
                }
                let count = s.pages.iter().find(|p| p.id == *id)?.count;
                let other = count.saturating_sub(refs.len() as u32);
                let _ = write!(
                    out,
                    "page {id}'s count {count}: {} held by skbs:",
                    refs.len()
                );
                list(&mut out, refs.len(), &|k| refs[k].clone());
                let _ = write!(out, "; {other} held elsewhere (not by an skb)");
                for c in s.cursors.iter().filter(|c| c.page == Some(*id)) {
                    let _ = write!(out, "; the {} cursor is on it", c.name);
                }
            }
            Query::QueueLen(q) => {
                let q = s.queues.iter().find(|x| &x.name == q)?;
                let _ = write!(out, "queue {} holds {} skbs:", q.name, q.skbs.len());
                list(&mut out, q.skbs.len(), &|k| {
                    Value::Skb(q.skbs[k].id).to_string()
                });
            }
            Query::PagesLive => {
                let _ = write!(out, "{} live pages:", s.pages.len());
                list(&mut out, s.pages.len(), &|k| {
                    Value::Page(s.pages[k].id).to_string()
                });
            }
            Query::Events(kind) => {
                let k = step
                    .events
                    .iter()
                    .filter(|e| e.kind().name() == kind)
                    .count();
                let _ = write!(
                    out,
                    "step {n} made {k} {kind} of its {} events",
                    step.events.len()
                );
            }
            Query::Counter(name) => {
                let before = n.checked_sub(2).and_then(|i| t.steps.get(i));
                let was = before.map_or(Some(0), |b| b.counters.get(name))?;
                let now = step.counters.get(name)?;
                let _ = write!(out, "{name}: {was} before step {n}, {now} after it");
            }
            _ => return None,
        }
        Some(out)
    }
}

#[cfg(test)]
thread_local! {
    /// How many explanations [`Question::why`] built on this thread: the quiz's tests count
    /// that opening one builds none.
    pub(crate) static WHYS_BUILT: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// At most this many objects named in one explanation: a lesson's step may hold tens of
/// thousands (issue 38: 3,000 explanations listing 79,167 skbs froze the page for 27 s).
pub(crate) const MAX_LISTED: usize = 16;

/// Appends ` a, b, c` (or ` none`) to `out`: the first [`MAX_LISTED`] of `n` items (`item(k)`
/// is the k-th), then how many more; one copy of the code for every list.
fn list(out: &mut String, n: usize, item: &dyn Fn(usize) -> String) {
    if n == 0 {
        out.push_str(" none");
    }
    for k in 0..n.min(MAX_LISTED) {
        out.push_str(if k == 0 { " " } else { ", " });
        out.push_str(&item(k));
    }
    if n > MAX_LISTED {
        let _ = write!(out, " and {} more", n - MAX_LISTED);
    }
}

/// Whether `a` and `b` are objects of one kind (skbs, frags or pages).
fn letters() -> impl Iterator<Item = String> {
    ('a'..='z').map(String::from)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::walkthrough;

    fn question(step: usize, query: &str) -> Question {
        Question {
            step,
            variant: String::new(),
            ask: String::new(),
            query: query.parse().unwrap(),
            choices: Vec::new(),
            key: false,
        }
    }

    /// The anatomy walkthrough: after sendmsg(1000) page 0 holds skb 0's frag and the
    /// socket's page-frag cursor; after sendmsg(3000) skb 0 holds 4000 bytes, all in frags.
    #[test]
    fn why_shows_how_the_answer_is_made_up() {
        let w = walkthrough::find("anatomy").unwrap();
        let t = w.scenario.run(&Default::default()).unwrap();
        let why = question(1, "page 0 count").why(&t).unwrap();
        assert!(
            why.starts_with("page 0's count 2: 1 held by skbs: skb 0 frag 0; 1 held elsewhere (not by an skb); the "),
            "{why}"
        );
        let why = question(2, "skb 0 len").why(&t).unwrap();
        assert_eq!(why, "skb 0: len 4000 = linear_len 0 (bytes in its head) + data_len 4000 (bytes in frags and frag_list)");
        let why = question(1, "counter pages_allocated").why(&t).unwrap();
        assert_eq!(why, "pages_allocated: 0 before step 1, 1 after it");
        assert_eq!(question(1, "skb 0 truesize").why(&t), None);
    }

    /// Every walkthrough question's explanation of a number names it: the parts add up to it.
    #[test]
    fn every_why_names_its_answer() {
        for w in walkthrough::all().unwrap() {
            let traces: Vec<Trace> = (w.variants.iter())
                .map(|v| w.scenario.run(&crate::RunOptions::traced(Some(v))).unwrap())
                .collect();
            for q in w.questions().unwrap() {
                let t = w.trace_for(&q, &traces).unwrap();
                let (answer, why) = (q.answer(t).unwrap(), q.why(t));
                // An object an event names is shown in the event's own words (`skb=0 idx=0`).
                if let (Some(why), Value::Number(_)) = (why, answer) {
                    assert!(
                        why.contains(&answer.to_string()),
                        "{} {:?}: {why} lacks {answer}",
                        w.name,
                        q.query
                    );
                }
            }
        }
    }
}

//! Predict, then see, as every host runs it: a walkthrough's questions with the answers read
//! from its traces, which are asked before which step, the learner's input judged, and each
//! step revealed with its questions' outcomes, answers and how each answer is made up. The
//! terminal (`skblab walkthrough --quiz`) and the playground's predict mode only present it.

use crate::query::Value;
use crate::question::Question;
use crate::walkthrough::Walkthrough;
use crate::Trace;
use std::cell::OnceCell;

/// What the learner did with a question.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Right,
    Wrong,
    Skipped,
}

/// A question, its place in the walkthrough's list (a record's key) and its answer.
#[derive(Clone, Debug)]
pub struct Item {
    pub n: usize,
    pub q: Question,
    pub answer: Value,
    /// Which of the walkthrough's traces answers it (its variant's).
    pub trace: usize,
    pub outcome: Option<Outcome>,
    /// Its explanation, once built ([`Item::why`]).
    why: OnceCell<Option<String>>,
}

impl Item {
    /// The answer in the question's own words (a choice's label).
    pub fn said(&self) -> String {
        self.q.say(self.answer)
    }

    /// How the answer is made up ([`Question::why`]), read from `traces` (the quiz's), shown
    /// with it. Built when first shown, not with the quiz: a lesson may ask a hundred
    /// questions on a step of tens of thousands of skbs, and the learner sees the few of one
    /// step; then kept, so a page redrawing the revealed step builds nothing again.
    pub fn why(&self, traces: &[Trace]) -> Option<&str> {
        let built = || traces.get(self.trace).and_then(|t| self.q.why(t));
        self.why.get_or_init(built).as_deref()
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Phase {
    #[default]
    Idle,
    /// Asking the questions of `step`; the learner sees the step before. `error` says why
    /// the last input was not an answer.
    Ask { step: usize, error: Option<String> },
    /// `step` is shown with its questions' outcomes and answers.
    Reveal { step: usize },
}

/// Right answers out of questions answered (a skipped one is not counted).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Score {
    pub right: usize,
    pub asked: usize,
}

#[derive(Clone, Debug, Default)]
pub struct Quiz {
    pub items: Vec<Item>,
    pub phase: Phase,
}

impl Quiz {
    /// The questions of `w`, answered from `traces` (its variants' runs, in its order).
    pub fn new(w: &Walkthrough, traces: &[Trace]) -> Result<Quiz, String> {
        let mut items = Vec::new();
        for (n, q) in (w.questions().map_err(|e| e.to_string())?)
            .into_iter()
            .enumerate()
        {
            let on = |e| format!("{}: question on step {}: {e}", w.name, q.step);
            let answer = w.answer(&q, traces).map_err(on)?;
            items.push(Item {
                n,
                trace: w.trace_index(&q).unwrap_or_default(),
                q,
                answer,
                outcome: None,
                why: OnceCell::new(),
            });
        }
        Ok(Quiz {
            items,
            phase: Phase::Idle,
        })
    }

    /// The first step in `from + 1..=to` with a question not yet asked (the file's questions
    /// need not be in step order).
    pub fn stop_in(&self, from: usize, to: usize) -> Option<usize> {
        self.open(None)
            .map(|i| i.q.step)
            .filter(|s| (from + 1..=to).contains(s))
            .min()
    }

    /// Asks the questions of `step` not yet asked, if it has any.
    pub fn ask(&mut self, step: usize) {
        if self.open(Some(step)).next().is_some() {
            self.phase = Phase::Ask { step, error: None };
        }
    }

    /// The question being asked.
    pub fn current(&self) -> Option<&Item> {
        let Phase::Ask { step, .. } = self.phase else {
            return None;
        };
        self.open(Some(step)).next()
    }

    /// Why the last input was not an answer to the question asked.
    pub fn error(&self) -> Option<&str> {
        match &self.phase {
            Phase::Ask { error, .. } => error.as_deref(),
            _ => None,
        }
    }

    /// The questions of the step revealed, with their outcomes.
    pub fn revealed(&self) -> impl Iterator<Item = &Item> {
        let step = match self.phase {
            Phase::Reveal { step } => step,
            _ => 0,
        };
        self.items.iter().filter(move |i| i.q.step == step)
    }

    /// Judges `input` by the question; a judged answer is recorded and returned (the
    /// question's number and whether it was right), an input that is no answer leaves the
    /// question asked with [`Quiz::error`] saying why. The step is revealed once all its
    /// questions are.
    pub fn answer(&mut self, input: &str) -> Option<(usize, bool)> {
        let (step, i) = self.asked()?;
        let item = &self.items[i];
        match item.q.judge(input, item.answer) {
            Ok(right) => Some(self.judged(step, i, right)),
            Err(why) => {
                self.phase = Phase::Ask {
                    step,
                    error: Some(why),
                };
                None
            }
        }
    }

    /// Counts the question asked wrong without an answer (a file of answers whose line was
    /// none cannot be asked again); returns its number.
    pub fn count_wrong(&mut self) -> Option<usize> {
        let (step, i) = self.asked()?;
        Some(self.judged(step, i, false).0)
    }

    /// Skips the step's questions left and reveals it.
    pub fn skip(&mut self) {
        if let Phase::Ask { step, .. } = self.phase {
            for i in self.items.iter_mut().filter(|i| i.q.step == step) {
                i.outcome.get_or_insert(Outcome::Skipped);
            }
            self.phase = Phase::Reveal { step };
        }
    }

    /// Right answers out of questions answered.
    pub fn score(&self) -> Score {
        let count = |o| self.items.iter().filter(|i| i.outcome == Some(o)).count();
        let right = count(Outcome::Right);
        Score {
            right,
            asked: right + count(Outcome::Wrong),
        }
    }

    /// The questions of `step` (any step, for `None`) not yet asked.
    fn open(&self, step: Option<usize>) -> impl Iterator<Item = &Item> {
        (self.items.iter())
            .filter(move |i| i.outcome.is_none() && step.is_none_or(|s| s == i.q.step))
    }

    /// The step being asked and its question's place in `items`.
    fn asked(&self) -> Option<(usize, usize)> {
        let Phase::Ask { step, .. } = self.phase else {
            return None;
        };
        let open = |i: &Item| i.q.step == step && i.outcome.is_none();
        Some((step, self.items.iter().position(open)?))
    }

    /// Records question `i` of `step` as right or wrong, then asks the step's next question
    /// or reveals the step when none is left.
    fn judged(&mut self, step: usize, i: usize, right: bool) -> (usize, bool) {
        let item = &mut self.items[i];
        item.outcome = Some(if right {
            Outcome::Right
        } else {
            Outcome::Wrong
        });
        let n = item.n;
        let left = self.open(Some(step)).next().is_some();
        self.phase = match left {
            true => Phase::Ask { step, error: None },
            false => Phase::Reveal { step },
        };
        (n, right)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::limits::MAX_QUESTIONS;
    use crate::question::{MAX_LISTED, WHYS_BUILT};
    use crate::walkthrough::{self, Walkthrough};
    use std::cell::Cell;

    /// A lesson of one sendmsg of `bytes` on a held queue, asking `n` times how many pages
    /// are live after it; and its trace.
    fn lesson(bytes: u64, n: usize) -> (Walkthrough, Vec<Trace>) {
        let asks = "[[question]]\nstep = 1\nask = \"a\"\nquery = \"pages live\"\n".repeat(n);
        let text = format!(
            "name = \"many\"\ntitle = \"t\"\nintro = \"i\"\nvariants = [\"kumar-2010\"]\n\
             say = [\"s\"]\noutro = \"o\"\n{asks}[scenario]\nmechanism = \"sendmsg\"\n\
             device = {{ sg = true, gso = true, csum = true, mtu = 1500, drain = false }}\n\
             ops = [{{ op = \"sendmsg\", bytes = {bytes} }}]\n"
        );
        let w = walkthrough::parse(&text).unwrap();
        let opts = crate::RunOptions {
            variant: Some(w.variants[0].clone()),
            counters_only: false,
        };
        let t = w.scenario.run(&opts).unwrap();
        (w, vec![t])
    }

    fn built() -> usize {
        WHYS_BUILT.with(Cell::get)
    }

    /// Opening a lesson of many questions builds none of their explanations; revealing a
    /// step builds those shown (issue 38: all 3,000 were built when a lesson opened).
    #[test]
    fn an_explanation_is_built_only_when_shown() {
        let (w, traces) = lesson(1000, MAX_QUESTIONS);
        let before = built();
        let mut quiz = Quiz::new(&w, &traces).unwrap();
        assert_eq!(quiz.items.len(), MAX_QUESTIONS);
        assert_eq!(built(), before, "opening the quiz built explanations");
        quiz.ask(1);
        quiz.skip();
        let why = quiz.revealed().next().unwrap().why(&traces).unwrap();
        assert_eq!(why, "1 live pages: page 0");
        assert_eq!(built(), before + 1);
    }

    /// A step revealed shows its explanations on every redraw of the page: the second
    /// showing builds none (they were rebuilt on each, ~1 s a redraw for thousands).
    #[test]
    fn an_explanation_shown_again_is_not_built_again() {
        let (w, traces) = lesson(1000, 50);
        let mut quiz = Quiz::new(&w, &traces).unwrap();
        quiz.ask(1);
        quiz.skip();
        let show = |quiz: &Quiz| quiz.revealed().filter_map(|i| i.why(&traces)).count();
        let before = built();
        assert_eq!(show(&quiz), 50);
        assert_eq!(built(), before + 50);
        assert_eq!(show(&quiz), 50);
        assert_eq!(
            built(),
            before + 50,
            "the second showing built explanations"
        );
    }

    /// An explanation names at most [`MAX_LISTED`] objects, then says how many more.
    #[test]
    fn an_explanation_lists_a_bounded_number_of_objects() {
        let (w, traces) = lesson(40 * 4096, 1);
        let quiz = Quiz::new(&w, &traces).unwrap();
        let item = &quiz.items[0];
        let Value::Number(live) = item.answer else {
            panic!("{:?}", item.answer)
        };
        let live = live as usize;
        assert!(live > MAX_LISTED, "{live} pages");
        let why = item.why(&traces).unwrap();
        let last = MAX_LISTED - 1;
        let more = live - MAX_LISTED;
        assert!(
            why.ends_with(&format!(", page {last} and {more} more")),
            "{why}"
        );
        assert_eq!(why.matches("page ").count(), MAX_LISTED, "{why}");
    }
}

//! Predict mode and the learner's record, without the DOM (tested natively).
//!
//! [`Quiz`] holds a walkthrough's questions with the answers the core read from its traces,
//! and where the learner is: asking the questions of a step (its state still hidden) or
//! revealing them. [`Record`] is what the playground keeps in localStorage: per walkthrough
//! one letter per question (`y` right, `n` wrong, anything else not asked) and the challenges
//! solved. Stored text may be anything (an old version, another page's junk): it is read
//! defensively, and what cannot be read counts as nothing.

use serde_json::{Map, Value as Json};
use skblab_core::query::Value;
use skblab_core::question::Question;
use skblab_core::walkthrough::Walkthrough;
use skblab_core::Trace;

/// What the learner did with a question.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Right,
    Wrong,
    Skipped,
}

/// A question, its place in the walkthrough's list (the record's key) and its answer.
#[derive(Clone, Debug)]
pub struct Item {
    pub n: usize,
    pub q: Question,
    pub answer: Value,
    /// How the answer is made up ([`Question::why`]), shown with it.
    pub why: Option<String>,
    pub outcome: Option<Outcome>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Phase {
    #[default]
    Idle,
    /// Asking the questions of `step`; the position rests on the step before. `error` says
    /// why the last input was not an answer.
    Ask { step: usize, error: Option<String> },
    /// `step` is shown with its questions' outcomes and answers.
    Reveal { step: usize },
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
        for (n, q) in w
            .questions()
            .map_err(|e| e.to_string())?
            .into_iter()
            .enumerate()
        {
            let answer = w.answer(&q, traces)?;
            let why = q.why(w.trace_for(&q, traces)?);
            items.push(Item {
                n,
                q,
                answer,
                why,
                outcome: None,
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
        let open = self.items.iter().filter(|i| i.outcome.is_none());
        open.map(|i| i.q.step)
            .filter(|s| (from + 1..=to).contains(s))
            .min()
    }

    /// The question being asked.
    pub fn current(&self) -> Option<&Item> {
        let Phase::Ask { step, .. } = self.phase else {
            return None;
        };
        (self.items.iter()).find(|i| i.q.step == step && i.outcome.is_none())
    }

    /// The questions of the step revealed, with their outcomes.
    pub fn revealed(&self) -> impl Iterator<Item = &Item> {
        let step = match self.phase {
            Phase::Reveal { step } => step,
            _ => 0,
        };
        self.items.iter().filter(move |i| i.q.step == step)
    }

    /// Judges `input` by the core; a judged answer is recorded and returned (the question's
    /// number and whether it was right). The step is revealed once all its questions are.
    pub fn answer(&mut self, input: &str) -> Option<(usize, bool)> {
        let Phase::Ask { step, .. } = self.phase else {
            return None;
        };
        let item = (self.items.iter_mut()).find(|i| i.q.step == step && i.outcome.is_none())?;
        match item.q.judge(input, item.answer) {
            Ok(right) => {
                item.outcome = Some(if right {
                    Outcome::Right
                } else {
                    Outcome::Wrong
                });
                let n = item.n;
                self.next(step);
                Some((n, right))
            }
            Err(why) => {
                self.phase = Phase::Ask {
                    step,
                    error: Some(why),
                };
                None
            }
        }
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

    /// Asks the step's next question, or reveals the step when none is left.
    fn next(&mut self, step: usize) {
        let left = (self.items.iter()).any(|i| i.q.step == step && i.outcome.is_none());
        self.phase = match left {
            true => Phase::Ask { step, error: None },
            false => Phase::Reveal { step },
        };
    }
}

/// The localStorage keys.
pub const SCORES: &str = "skblab-scores";
pub const SOLVED: &str = "skblab-solved";

/// The learner's record (see the module doc).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Record {
    /// Walkthrough name → one letter per question.
    scores: Map<String, Json>,
    /// Challenge name → true.
    solved: Map<String, Json>,
}

impl Record {
    /// The record in the stored texts (`None`: nothing stored or no storage).
    pub fn parse(scores: Option<&str>, solved: Option<&str>) -> Record {
        let object = |text: Option<&str>| match text.map(serde_json::from_str::<Json>) {
            Some(Ok(Json::Object(m))) => m,
            _ => Map::new(),
        };
        Record {
            scores: object(scores),
            solved: object(solved),
        }
    }

    /// The texts to store under [`SCORES`] and [`SOLVED`].
    pub fn texts(&self) -> [String; 2] {
        [&self.scores, &self.solved].map(|m| Json::Object(m.clone()).to_string())
    }

    /// Questions of walkthrough `walk` answered right, and answered (`None`: none yet).
    pub fn score(&self, walk: &str) -> Option<(usize, usize)> {
        let marks = self.scores.get(walk)?.as_str()?;
        let right = marks.chars().filter(|c| *c == 'y').count();
        let asked = right + marks.chars().filter(|c| *c == 'n').count();
        (asked > 0).then_some((right, asked))
    }

    /// Records question `n` of `walk` as answered, right or not (the last answer counts).
    pub fn mark(&mut self, walk: &str, n: usize, right: bool) {
        let old = self.scores.get(walk).and_then(Json::as_str).unwrap_or("");
        let mut marks: Vec<char> = old.chars().collect();
        if marks.len() <= n {
            marks.resize(n + 1, '.');
        }
        marks[n] = if right { 'y' } else { 'n' };
        let text = marks.into_iter().collect::<String>();
        self.scores.insert(walk.to_string(), Json::String(text));
    }

    pub fn reset_scores(&mut self) {
        self.scores.clear();
    }

    pub fn solve(&mut self, challenge: &str) {
        self.solved.insert(challenge.to_string(), Json::Bool(true));
    }

    pub fn solved(&self, challenge: &str) -> bool {
        self.solved.get(challenge) == Some(&Json::Bool(true))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session;
    use skblab_core::walkthrough;

    fn quiz(name: &str) -> Quiz {
        let w = walkthrough::find(name).unwrap();
        let s = session::load_walkthrough(&w).unwrap();
        Quiz::new(&w, &s.traces).unwrap()
    }

    /// anatomy asks before steps 1, 2 and 5: a move from 0 to the end stops before step 1;
    /// answering reveals it; the next stop is step 2, and after a skip, step 5.
    #[test]
    fn a_quiz_stops_asks_and_reveals() {
        let mut q = quiz("anatomy");
        let steps: Vec<usize> = q.items.iter().map(|i| i.q.step).collect();
        // In the file's order, which is the steps' here.
        assert_eq!(steps, [1, 2, 5]);
        assert_eq!(q.stop_in(0, 7), Some(1));
        q.phase = Phase::Ask {
            step: 1,
            error: None,
        };
        // page 0's count after sendmsg(1000): the page's own reference and frag 0's.
        assert_eq!(q.current().unwrap().answer, Value::Number(2));
        assert_eq!(q.answer("skb 1"), None);
        let Phase::Ask { error: Some(e), .. } = &q.phase else {
            panic!("{:?}", q.phase)
        };
        assert!(e.contains("give a whole number"), "{e}");
        assert_eq!(q.answer("2"), Some((0, true)));
        assert_eq!(q.phase, Phase::Reveal { step: 1 });
        assert_eq!(q.revealed().count(), 1);
        assert_eq!(q.stop_in(0, 7), Some(2));
        q.phase = Phase::Ask {
            step: 2,
            error: None,
        };
        q.skip();
        assert_eq!(q.revealed().next().unwrap().outcome, Some(Outcome::Skipped));
        assert_eq!(q.stop_in(2, 7), Some(5));
        assert_eq!(q.stop_in(2, 4), None);
    }

    #[test]
    fn the_record_reads_junk_as_nothing_and_keeps_the_last_answer() {
        for junk in ["{", "[1,2]", "null", "\"y\"", "{\"anatomy\": 3}", "\u{0}"] {
            let r = Record::parse(Some(junk), Some(junk));
            assert_eq!(r.score("anatomy"), None, "{junk}");
            assert!(!r.solved("one-page-queue"), "{junk}");
        }
        let mut r = Record::parse(None, None);
        r.mark("anatomy", 2, true);
        r.mark("anatomy", 0, false);
        assert_eq!(r.score("anatomy"), Some((1, 2)));
        r.mark("anatomy", 0, true);
        assert_eq!(r.score("anatomy"), Some((2, 2)));
        r.solve("one-page-queue");
        let [scores, solved] = r.texts();
        assert_eq!(scores, r#"{"anatomy":"y.y"}"#);
        let back = Record::parse(Some(&scores), Some(&solved));
        assert_eq!(back, r);
        assert!(back.solved("one-page-queue"));
        r.reset_scores();
        assert_eq!(r.score("anatomy"), None);
        // Letters other than y and n (a newer format, junk) are not counted.
        let odd = Record::parse(Some(r#"{"anatomy":"yxnéy"}"#), None);
        assert_eq!(odd.score("anatomy"), Some((2, 3)));
    }
}

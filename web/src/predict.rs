//! Predict mode's record, without the DOM (tested natively). What is asked, judged and
//! revealed is the core's [`Quiz`]. [`Record`] is what the playground keeps in localStorage: per walkthrough
//! one letter per question (`y` right, `n` wrong, anything else not asked) and the challenges
//! solved, each under its [`Source`]'s key. Stored text may be anything (an old version, another page's junk): it is read
//! defensively, and what cannot be read counts as nothing.

use serde_json::{Map, Value as Json};
use skblab_core::query::Value;
pub use skblab_core::quiz::{Outcome, Phase, Quiz};
use skblab_core::trace::State;

/// The localStorage keys.
pub const SCORES: &str = "skblab-scores";
pub const SOLVED: &str = "skblab-solved";

/// At most this many objects in a pick question's list: a lesson's step may draw tens of
/// thousands, and a list of them all costs a node each and cannot be read.
pub const MAX_PICKS: usize = 50;

/// A pick question's list: the first [`MAX_PICKS`] objects of the answer's kind drawn in
/// `before` (the state the learner sees, [`State::alike`]), and how many more there are.
pub fn picks(before: Option<&State>, answer: Value) -> (Vec<Value>, usize) {
    let mut alike = before.map(|s| s.alike(answer)).unwrap_or_default();
    let more = alike.len().saturating_sub(MAX_PICKS);
    alike.truncate(MAX_PICKS);
    (alike, more)
}

/// The learner's record (see the module doc).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Record {
    /// Walkthrough name → one letter per question.
    scores: Map<String, Json>,
    /// Challenge key ([`Source::key`]) → true.
    solved: Map<String, Json>,
}

/// Where a challenge came from. A built-in one's solved mark is kept under its name (as marks
/// always were), a lesson file's under its name and its file's hash: a lesson's challenge
/// named like a built-in one marks only itself (issue 38).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    BuiltIn,
    Lesson(u64),
}

impl Source {
    /// A lesson file's, by the FNV-1a hash of its text (std's hasher may change between
    /// releases; a stored mark should not).
    pub fn lesson(text: &str) -> Source {
        let fnv = |h: u64, b: u8| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
        Source::Lesson(text.bytes().fold(0xcbf2_9ce4_8422_2325, fnv))
    }

    /// The key of challenge `name`'s mark.
    fn key(self, name: &str) -> String {
        match self {
            Source::BuiltIn => name.to_string(),
            Source::Lesson(hash) => format!("lesson {hash:016x} {name}"),
        }
    }
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

    pub fn solve(&mut self, challenge: &str, from: Source) {
        self.solved.insert(from.key(challenge), Json::Bool(true));
    }

    pub fn solved(&self, challenge: &str, from: Source) -> bool {
        self.solved.get(&from.key(challenge)) == Some(&Json::Bool(true))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_record_reads_junk_as_nothing_and_keeps_the_last_answer() {
        for junk in ["{", "[1,2]", "null", "\"y\"", "{\"anatomy\": 3}", "\u{0}"] {
            let r = Record::parse(Some(junk), Some(junk));
            assert_eq!(r.score("anatomy"), None, "{junk}");
            assert!(!r.solved("one-page-queue", Source::BuiltIn), "{junk}");
        }
        let mut r = Record::parse(None, None);
        r.mark("anatomy", 2, true);
        r.mark("anatomy", 0, false);
        assert_eq!(r.score("anatomy"), Some((1, 2)));
        r.mark("anatomy", 0, true);
        assert_eq!(r.score("anatomy"), Some((2, 2)));
        r.solve("one-page-queue", Source::BuiltIn);
        let [scores, solved] = r.texts();
        assert_eq!(scores, r#"{"anatomy":"y.y"}"#);
        let back = Record::parse(Some(&scores), Some(&solved));
        assert_eq!(back, r);
        assert!(back.solved("one-page-queue", Source::BuiltIn));
        r.reset_scores();
        assert_eq!(r.score("anatomy"), None);
        // Letters other than y and n (a newer format, junk) are not counted.
        let odd = Record::parse(Some(r#"{"anatomy":"yxnéy"}"#), None);
        assert_eq!(odd.score("anatomy"), Some((2, 3)));
    }

    /// A pick lists the objects of the answer's kind, at most [`MAX_PICKS`] of them, and
    /// says how many more are drawn (every object drawn was listed).
    #[test]
    fn a_pick_lists_a_bounded_number_of_its_kind() {
        let page = |id| skblab_core::page::Page {
            id,
            order: 0,
            size: 4096,
            count: 1,
            cpu: 0,
            cpu_unread: false,
            used: 0,
        };
        let state = State {
            pages: (0..500).map(page).collect(),
            ..State::default()
        };
        let (listed, more) = picks(Some(&state), Value::Page(7));
        assert_eq!(listed.len(), MAX_PICKS);
        assert_eq!(listed[0], Value::Page(0));
        assert_eq!(more, 500 - MAX_PICKS);
        // An skb is asked for and none is drawn: nothing to list.
        assert_eq!(picks(Some(&state), Value::Skb(0)), (vec![], 0));
        assert_eq!(picks(None, Value::Page(0)), (vec![], 0));
    }

    /// A lesson's challenge named like a built-in one is solved on its own: the built-in
    /// one stays unsolved, and another lesson file of that name too (issue 38).
    #[test]
    fn a_solved_mark_is_kept_by_source() {
        let lesson = Source::lesson("name = \"one-page-queue\"\ntitle = \"Homework\"");
        let mut r = Record::parse(None, None);
        r.solve("one-page-queue", lesson);
        assert!(r.solved("one-page-queue", lesson));
        assert!(!r.solved("one-page-queue", Source::BuiltIn));
        assert!(!r.solved(
            "one-page-queue",
            Source::lesson("name = \"one-page-queue\"")
        ));
        let [scores, solved] = r.texts();
        assert!(Record::parse(Some(&scores), Some(&solved)).solved("one-page-queue", lesson));
        // The hash is FNV-1a's, the same in every build: "a" hashes to af63dc4c8601ec8c.
        assert_eq!(Source::lesson("a"), Source::Lesson(0xaf63_dc4c_8601_ec8c));
    }
}

//! Predict mode's work: the answers the core judges to the questions a step asks before it
//! shows (a move stops before it: [`super::stepping`]), the challenge goal checked, and the
//! learner's record kept.

use super::{emit_some, quiz, App};
use crate::dom;
use crate::predict::{self, Outcome, Phase, Record};
use crate::session::Session;
use skblab_core::trace::State;
use wasm_bindgen::JsCast;
use yew::prelude::*;

impl App {
    /// The learner answered or skipped: the core judges, and a step whose questions are all
    /// answered is shown; only then does the record (the picker's score) take their outcomes,
    /// so the score gives away nothing of a step still hidden.
    pub(super) fn ask(&mut self, a: quiz::Ask) {
        match a {
            quiz::Ask::Answer(input) => {
                self.quiz.answer(&input);
            }
            quiz::Ask::Skip => self.quiz.skip(),
        }
        if let Phase::Reveal { step } = self.quiz.phase {
            if let Some(w) = self.session.as_ref().and_then(|s| s.walk.as_ref()) {
                for i in self.quiz.revealed() {
                    if let Some(o @ (Outcome::Right | Outcome::Wrong)) = i.outcome {
                        self.record.mark(&w.name, i.n, o == Outcome::Right);
                    }
                }
                save(&self.record);
            }
            self.nav.go(step);
        }
        self.focus_card = true;
    }

    /// The state the learner sees before answering: the question's variant's at the
    /// position (the step before the one asked; none before step 1).
    pub(super) fn shown_state<'a>(&self, s: &'a Session) -> Option<&'a State> {
        let item = self.quiz.current()?;
        let t = s.walk.as_ref()?.trace_for(&item.q, &s.traces).ok()?;
        t.steps
            .get(self.nav.pos.checked_sub(1)?)
            .map(|st| &st.state)
    }

    /// A click in the diagram answers a pick question with the object clicked.
    pub(super) fn on_pick_click(&self) -> Callback<MouseEvent> {
        emit_some(&self.on_ask, |e: MouseEvent| {
            let el = e.target()?.dyn_into::<web_sys::Element>().ok()?;
            quiz::picked(&el).map(quiz::Ask::Answer)
        })
    }

    /// Checks the open challenge's goal on `text` by the core; a goal met is kept as solved.
    pub(super) fn check(&mut self, text: &str) {
        let Some(open) = &mut self.challenge else {
            return;
        };
        let (c, from) = &self.challenges[open.i];
        let v = c.check(text).map_err(|e| e.to_string());
        if matches!(&v, Ok(v) if v.solved_at.is_some()) {
            self.record.solve(&c.name, *from);
            save(&self.record);
        }
        open.verdict = Some(v);
        // The link keeps the challenge with the scenario checked (written again after this
        // render): a reload, or the link handed in, shows this verdict again.
        open.work = Some(text.to_string());
        self.linked = None;
    }
}

/// Keeps the learner's record in localStorage.
pub(super) fn save(r: &Record) {
    let [scores, solved] = r.texts();
    dom::store(dom::Kept::Site, predict::SCORES, &scores);
    dom::store(dom::Kept::Site, predict::SOLVED, &solved);
}

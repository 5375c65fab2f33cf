//! Moving through the trace, as the app wires it: the keys that ask for moves, the play
//! timer, and each move made by the session's [`Navigation`] with predict mode's gate (a
//! move forward stops before a step with questions left, which the app then asks).

use super::{App, Msg};
use crate::navigation::{Asks, Nav, Navigation};
use crate::predict::Phase;
use crate::session::Session;
use gloo_timers::callback::Interval;
use wasm_bindgen::JsCast;
use web_sys::KeyboardEvent;
use yew::prelude::*;

/// ←/→ step, ↑/↓ (or Shift+←/→) move by event (in the leading lane), Home/End jump, space
/// plays; ignored while typing or with a modifier other than Shift held. (Esc, which skips a
/// question, is the listener's.)
pub(super) fn key_nav(e: &KeyboardEvent) -> Option<Nav> {
    let tag = shortcut_target(e)?;
    match e.key().as_str() {
        "ArrowDown" => Some(Nav::Event(1)),
        "ArrowUp" => Some(Nav::Event(-1)),
        "ArrowRight" if e.shift_key() => Some(Nav::Event(1)),
        "ArrowLeft" if e.shift_key() => Some(Nav::Event(-1)),
        "ArrowRight" => Some(Nav::Step(1)),
        "ArrowLeft" => Some(Nav::Step(-1)),
        "Home" => Some(Nav::Go(0)),
        "End" => Some(Nav::Last),
        // A focused button already answers space with a click.
        " " if tag != "button" => Some(Nav::TogglePlay),
        _ => None,
    }
}

/// The tag of a key's target when the key is a shortcut: not typed into a field, and no
/// modifier other than Shift held.
pub(super) fn shortcut_target(e: &KeyboardEvent) -> Option<String> {
    if e.ctrl_key() || e.alt_key() || e.meta_key() {
        return None;
    }
    let el = e
        .target()
        .and_then(|t| t.dyn_into::<web_sys::Element>().ok());
    let tag = el.as_ref().map_or(String::new(), |el| {
        // A checkbox (the predict toggle), like a button, answers space itself and leaves
        // arrows.
        match el.get_attribute("type").as_deref() {
            Some("checkbox") => "button".into(),
            _ => el.tag_name().to_ascii_lowercase(),
        }
    });
    (!matches!(tag.as_str(), "input" | "textarea" | "select")).then_some(tag)
}

impl App {
    pub(super) fn stop(&mut self) {
        self.play = None;
    }

    pub(super) fn start(&mut self, ctx: &Context<Self>) {
        let link = ctx.link().clone();
        self.play = Some(Interval::new(1000 / self.nav.speed, move || {
            link.send_message(Msg::Tick)
        }));
    }

    /// Makes move `nav`, and starts, stops or restarts play as it asks. A question asked
    /// holds the position: a move back gives it up (it is asked again next time), a move
    /// forward waits for the answer. A revealed step closes on any move.
    pub(super) fn nav(&mut self, ctx: &Context<Self>, nav: Nav) {
        if let Phase::Ask { .. } = self.quiz.phase {
            if !nav.gives_up_question(self.nav.pos) {
                return;
            }
        }
        if !matches!(nav, Nav::Speed(_)) {
            self.quiz.phase = Phase::Idle;
        }
        let playing = self.play.is_some();
        self.moving(|n, s, asks| n.apply(s, nav, playing, asks));
        match nav {
            Nav::TogglePlay if playing => self.stop(),
            Nav::TogglePlay => self.start(ctx),
            Nav::Speed(_) if playing => self.start(ctx),
            _ => {}
        }
    }

    /// Play's move; play stops where it can go no further.
    pub(super) fn tick(&mut self) {
        if self.moving(Navigation::tick) != Some(true) {
            self.stop();
        }
    }

    /// Lets `f` move the navigation in the session shown, through predict mode's gate; a
    /// move that stopped before a step with questions left stops play, and the step asks.
    fn moving<R>(&mut self, f: impl FnOnce(&mut Navigation, &Session, Asks) -> R) -> Option<R> {
        let s = self.session.as_ref()?;
        let (quiz, predict) = (&self.quiz, self.predict);
        let r = f(&mut self.nav, s, &|from, to| {
            predict.then(|| quiz.stop_in(from, to)).flatten()
        });
        if let Some(step) = self.nav.asked.take() {
            self.stop();
            self.quiz.phase = Phase::Ask { step, error: None };
            self.focus_card = true;
        }
        Some(r)
    }

    /// Selects the link's position `at` within its step ([`Navigation::restore`]). Says that
    /// the link was opened.
    pub(super) fn restore_event(&mut self, at: crate::session::Position) -> bool {
        if let Some(s) = &self.session {
            self.nav.restore(s, at);
        }
        true
    }

    /// The operation that made the current step.
    pub(super) fn op(&self, s: &Session) -> AttrValue {
        match self.nav.pos.checked_sub(1) {
            Some(p) => s.traces[0].steps[p].op.clone().into(),
            None => "before the first operation".into(),
        }
    }
}

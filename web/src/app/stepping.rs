//! Moving through the trace: by step and by event, playing, and the keys that ask for the
//! same moves. In predict mode a move forward stops before a step with questions left.

use super::controls::Nav;
use super::{events_in, events_in_opt, App, Msg};
use crate::predict::Phase;
use crate::session::Session;
use gloo_timers::callback::Interval;
use wasm_bindgen::JsCast;
use web_sys::KeyboardEvent;
use yew::prelude::*;

/// ←/→ step, ↑/↓ (or Shift+←/→) move by event, Home/End jump, space plays; ignored while
/// typing or with a modifier other than Shift held. (Esc, which skips a question, is the
/// listener's.)
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
    pub(super) fn len(&self) -> usize {
        self.session.as_ref().map_or(0, |s| s.len())
    }

    pub(super) fn stop(&mut self) {
        self.play = None;
    }

    pub(super) fn start(&mut self, ctx: &Context<Self>) {
        let link = ctx.link().clone();
        self.play = Some(Interval::new(1000 / self.speed, move || {
            link.send_message(Msg::Tick)
        }));
    }

    pub(super) fn nav(&mut self, ctx: &Context<Self>, nav: Nav) {
        let len = self.len();
        // A question asked holds the position: a move back gives it up (it is asked again
        // next time), a move forward waits for the answer. A revealed step closes on any move.
        if let Phase::Ask { .. } = self.quiz.phase {
            let back = match nav {
                Nav::Step(d) | Nav::Event(d) => d < 0,
                Nav::Go(p) | Nav::At { pos: p, .. } => p <= self.pos,
                // The speed changes nothing shown.
                Nav::Speed(_) => true,
                Nav::Last | Nav::TogglePlay => false,
            };
            if !back {
                return;
            }
        }
        if !matches!(nav, Nav::Speed(_)) {
            self.quiz.phase = Phase::Idle;
        }
        match nav {
            Nav::Go(p) => self.advance(p.min(len)),
            Nav::Step(d) => self.advance(self.pos.saturating_add_signed(d).min(len)),
            Nav::Last => self.advance(len),
            Nav::Event(d) => {
                self.step_event(d);
            }
            Nav::At { pos, k } => {
                self.pos = pos.min(len);
                self.event = Some(k.min(events_in_opt(&self.session, self.pos)));
            }
            Nav::TogglePlay => {
                if self.play.is_some() {
                    self.stop();
                } else {
                    if self.pos >= len && self.event.is_none() {
                        self.go(0);
                    }
                    self.start(ctx);
                }
            }
            Nav::Speed(s) => {
                self.speed = s;
                if self.play.is_some() {
                    self.start(ctx);
                }
            }
        }
    }

    /// To the whole of step `to`, unless predict mode asks first (see [`App::asks_before`]).
    pub(super) fn advance(&mut self, to: usize) {
        if !self.asks_before(to) {
            self.go(to);
        }
    }

    /// To the whole of step `pos`.
    pub(super) fn go(&mut self, pos: usize) {
        self.pos = pos;
        self.event = None;
    }

    /// Moves one event forward (`d > 0`) or back, across steps (a step without events is
    /// passed over); says whether it moved.
    pub(super) fn step_event(&mut self, d: isize) -> bool {
        let Some(s) = &self.session else {
            return false;
        };
        let n = |p: usize| events_in(s, p);
        let (pos, k) = (self.pos, self.event.unwrap_or(n(self.pos)));
        let to = if d > 0 {
            match k < n(pos) {
                true => Some((pos, k + 1)),
                false => (pos + 1..=s.len()).find(|&p| n(p) > 0).map(|p| (p, 1)),
            }
        } else if k > 1 {
            Some((pos, k - 1))
        } else {
            (1..pos).rev().find(|&p| n(p) > 0).map(|p| (p, n(p)))
        };
        match to {
            Some((p, _)) if self.asks_before(p) => false,
            Some((p, k)) => {
                self.pos = p;
                self.event = Some(k);
                true
            }
            None => false,
        }
    }

    /// The operation that made the current step.
    pub(super) fn op(&self, s: &Session) -> AttrValue {
        match self.pos.checked_sub(1) {
            Some(p) => s.traces[0].steps[p].op.clone().into(),
            None => "before the first operation".into(),
        }
    }
}

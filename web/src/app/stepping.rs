//! Moving through the trace: by step and by event in either lane, playing, and the keys that
//! ask for the same moves. In predict mode a move forward stops before a step with questions
//! left.

use super::controls::Nav;
use super::{App, Msg};
use crate::predict::Phase;
use crate::session::{Position, Session, LANES};
use gloo_timers::callback::Interval;
use skblab_core::input::Counterpart;
use wasm_bindgen::JsCast;
use web_sys::KeyboardEvent;
use yew::prelude::*;

/// Stepping by event, lane by lane (the split view's left and right traces).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Lanes {
    /// The lane the keys step (`None`: the session's patched lane).
    pub lead: Option<usize>,
    /// Per lane, the state after event `k` (1-based) of the step; `None`: the whole step.
    pub at: [Option<usize>; LANES],
    /// The leading lane rests past its step's last event: the next ↓ moves on to the next
    /// step, so a step's end is never crossed unseen.
    pub end: bool,
    /// The other lane does not follow the leading one (lockstep off; on by default).
    pub apart: bool,
    /// Per lane, the one kind of event it lists and steps through.
    pub filter: [Option<&'static str>; LANES],
    /// The last ↓/↑ found no event of the filter's kind left in its step (the leading lane
    /// says so: it crossed into another step, or had nowhere to go).
    pub crossed: Option<Crossed>,
}

/// A move by event, with a filter on, that left step `from`: to step `to` (`None`: no event
/// of the kind is left that way), going forward or back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Crossed {
    pub from: usize,
    pub to: Option<usize>,
    pub forward: bool,
}

impl Crossed {
    /// What the leading lane says of it, for events of `kind`.
    pub fn say(&self, kind: &str) -> String {
        let (more, steps) = match self.forward {
            true => ("more", (self.from + 1, self.to.map(|t| t - 1))),
            false => (
                "earlier",
                (self.to.map_or(1, |t| t + 1), self.from.checked_sub(1)),
            ),
        };
        let head = format!("No {more} {kind} events in step {}", self.from);
        match (self.to, steps) {
            (None, _) => format!(
                "{head}, nor any step {}.",
                if self.forward {
                    "after it"
                } else {
                    "before it"
                }
            ),
            (Some(t), (a, Some(b))) if a < b => {
                format!("{head}, nor in steps {a}–{b}: now at step {t}.")
            }
            (Some(t), (a, Some(b))) if a == b => {
                format!("{head}, nor in step {a}: now at step {t}.")
            }
            (Some(t), _) => format!("{head}: now at step {t}."),
        }
    }
}

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
                Nav::Step(d) | Nav::Event(d) | Nav::Moment(d) => d < 0,
                Nav::Go(p) => p <= self.pos,
                // These change nothing shown of a later step.
                Nav::Speed(_) | Nav::At { .. } | Nav::Lead(_) | Nav::Filter(..) | Nav::Lockstep => {
                    true
                }
                Nav::Last | Nav::TogglePlay => false,
            };
            if !back {
                return;
            }
        }
        if !matches!(nav, Nav::Speed(_)) {
            self.quiz.phase = Phase::Idle;
            self.lanes.crossed = None;
        }
        match nav {
            Nav::Go(p) => self.advance(p.min(len)),
            Nav::Step(d) => self.advance(self.pos.saturating_add_signed(d).min(len)),
            Nav::Last => self.advance(len),
            Nav::Event(d) => {
                self.step_event(d);
            }
            Nav::At { lane, k } => self.select(lane, self.pos, k),
            Nav::Moment(d) => self.seek_moment(d),
            Nav::Lead(l) => {
                self.lanes.lead = Some(l.min(self.lanes() - 1));
                self.lanes.end = false;
                self.follow();
            }
            Nav::Filter(lane, k) => self.lanes.filter[lane] = self.kind_at(lane, k),
            Nav::Lockstep => {
                self.lanes.apart = !self.lanes.apart;
                self.follow();
            }
            Nav::TogglePlay => {
                if self.play.is_some() {
                    self.stop();
                } else {
                    if self.pos >= len && self.lanes.at[self.lead()].is_none() {
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

    /// To the whole of step `pos`, in every lane.
    pub(super) fn go(&mut self, pos: usize) {
        self.pos = pos;
        self.lanes.at = [None; LANES];
        self.lanes.end = false;
        self.reveal = true;
    }

    /// The kind of event `k` (1-based) of the step in lane `lane`.
    fn kind_at(&self, lane: usize, k: Option<usize>) -> Option<&'static str> {
        let events = self.session.as_ref()?.events(lane, self.pos);
        events.get(k?.checked_sub(1)?).map(|e| e.kind().name())
    }

    /// The lanes shown (one or two).
    pub(super) fn lanes(&self) -> usize {
        self.session
            .as_ref()
            .map_or(1, |s| s.traces.len().min(LANES))
    }

    /// The lane the keys step: the learner's choice, else where the patch acts.
    pub(super) fn lead(&self) -> usize {
        let patched = self.session.as_ref().map_or(0, |s| s.patched_lane());
        self.lanes.lead.unwrap_or(patched).min(self.lanes() - 1)
    }

    /// The lanes as a new session starts them: the patched lane leads, in lockstep.
    pub(super) fn reset_lanes(&mut self) {
        self.lanes = Lanes::default();
    }

    /// The position a permalink records: the lead where two lanes are shown, each lane's event.
    pub(super) fn position(&self) -> Position {
        Position {
            step: self.pos,
            lead: (self.lanes() > 1).then(|| self.lead()),
            // (A lane in lockstep before its step's first event is found again on opening.)
            events: self.lanes.at.map(|k| k.and_then(|k| k.checked_sub(1))),
        }
    }

    /// Selects the link's position within its step, where the step has it (an event past the
    /// step's end selects its last). Says that the link was opened.
    pub(super) fn restore_event(&mut self, at: Position) -> bool {
        if let Some(s) = &self.session {
            let at = at.clamp(&s.traces);
            if at.step == self.pos {
                for (k, e) in self.lanes.at.iter_mut().zip(at.events) {
                    *k = e.map(|e| e + 1);
                }
            }
            self.lanes.lead = at.lead;
            if at.lead.is_some() && at.events.contains(&None) {
                self.follow();
            }
        }
        true
    }

    /// Lane `lane` leads, at event `k` of step `pos`; lockstep moves the other lane with it.
    fn select(&mut self, lane: usize, pos: usize, k: usize) {
        if pos != self.pos {
            self.lanes.at = [None; LANES];
        }
        self.pos = pos;
        let n = self
            .session
            .as_ref()
            .map_or(0, |s| s.events(lane, pos).len());
        self.lanes.lead = Some(lane);
        self.lanes.at[lane] = Some(k.min(n)).filter(|&k| k > 0);
        self.lanes.end = false;
        self.reveal = true;
        self.follow();
    }

    /// Lockstep: the other lane to where it stands at the leading lane's input (its list
    /// says when it makes no such event there; 0: before its step's first event).
    fn follow(&mut self) {
        let (lead, Some(s)) = (self.lead(), &self.session) else {
            return;
        };
        let (other, k) = (1 - lead, self.lanes.at[lead]);
        if let (false, 2, Some(k)) = (self.lanes.apart, s.traces.len(), k) {
            if let Some(c) = s.counterpart(lead, other, self.pos, k) {
                self.lanes.at[other] = Some(match c {
                    Counterpart::Same(j) | Counterpart::Nearest { at: j, .. } => j,
                });
            }
        }
    }

    /// To the next (`d > 0`) or previous key moment, in the lane that makes it, the other
    /// lane in lockstep beside it; unless predict mode asks first.
    fn seek_moment(&mut self, d: isize) {
        let Some(s) = &self.session else {
            return;
        };
        let to = s.moment(&s.moments(), self.lead(), (self.pos, self.lanes.at), d);
        if let Some((lane, p, k)) = to.filter(|&(_, p, _)| !self.asks_before(p)) {
            self.select(lane, p, k);
        }
    }

    /// Moves the leading lane one event forward (`d > 0`) or back, across steps (a step
    /// without events is passed over), keeping to the lane's filter: the next or previous
    /// event of that kind. Forward from a
    /// step's last event it first rests at the step's end. Says whether it moved.
    pub(super) fn step_event(&mut self, d: isize) -> bool {
        let Some(s) = self.session.clone() else {
            return false;
        };
        let l = self.lead();
        let (cur, end) = (self.lanes.at[l], self.lanes.end);
        if end && d < 0 {
            self.lanes.end = false;
            return true;
        }
        let kind = self.lanes.filter[l];
        let to = s.seek(l, (self.pos, cur), d, &|e| {
            kind.is_none_or(|k| e.kind().name() == k)
        });
        if d > 0 && cur.is_some() && !end && to.is_none_or(|(p, _)| p != self.pos) {
            self.lanes.end = true;
            self.reveal = true;
            return true;
        }
        let from = self.pos;
        let crossed = kind.is_some() && to.is_none_or(|(p, _)| p != from);
        let moved = match to {
            Some((p, _)) if self.asks_before(p) => false,
            Some((p, k)) => {
                self.select(l, p, k);
                true
            }
            None => false,
        };
        if crossed && (moved || to.is_none()) {
            self.lanes.crossed = Some(Crossed {
                from,
                to: to.map(|(p, _)| p),
                forward: d > 0,
            });
        }
        moved
    }

    /// The operation that made the current step.
    pub(super) fn op(&self, s: &Session) -> AttrValue {
        match self.pos.checked_sub(1) {
            Some(p) => s.traces[0].steps[p].op.clone().into(),
            None => "before the first operation".into(),
        }
    }
}

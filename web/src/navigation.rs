//! Where the learner stands in a [`Session`] and the moves that change it: the step, the
//! event each lane shows when stepping by event, which lane leads, lockstep, the kind of
//! event each lane keeps to, where the panels stand, the play speed. Plain Rust (no Yew, no
//! DOM), tested natively; the app keeps the play timer, the keys and the drawing, and asks
//! this struct every move ([`Navigation::apply`], [`Navigation::tick`]).
//!
//! A move forward first asks predict mode's gate ([`Asks`]) whether a step on the way has
//! questions left; if one has, the move rests on the step before it and says which step
//! asks ([`Navigation::asked`]), for the app to ask it.

use crate::session::{Position, Session, LANES};
use skblab_core::capture::Partner;
use skblab_core::input::Counterpart;

/// A move the stepper, the keyboard or a click in the lists asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Nav {
    Go(usize),
    Step(isize),
    Last,
    TogglePlay,
    Speed(u32),
    /// One kernel event forward or back in the leading lane, across steps.
    Event(isize),
    /// Event `k` (1-based) of the step in lane `lane`, which leads: the state after it.
    At {
        lane: usize,
        k: usize,
    },
    /// Lane `l` leads: the keys step it.
    Lead(usize),
    /// Lane `l` lists, and steps through, only events of the kind of its event `k` (1-based;
    /// `None`: every kind).
    Filter(usize, Option<usize>),
    /// Lockstep on or off.
    Lockstep,
    /// The next (1) or previous (-1) key moment of the walkthrough, in whichever lane makes
    /// it, the other lane beside it.
    Moment(isize),
}

impl Nav {
    /// Whether, made at step `pos` while a question is asked, the move gives the question up
    /// (it is asked again next time) rather than wait for its answer: a move back, or one
    /// that changes nothing shown of a later step.
    pub fn gives_up_question(self, pos: usize) -> bool {
        match self {
            Nav::Step(d) | Nav::Event(d) | Nav::Moment(d) => d < 0,
            Nav::Go(p) => p <= pos,
            Nav::Speed(_) | Nav::At { .. } | Nav::Lead(_) | Nav::Filter(..) | Nav::Lockstep => true,
            Nav::Last | Nav::TogglePlay => false,
        }
    }
}

/// Play speeds offered, in steps per second.
pub const SPEEDS: [u32; 4] = [1, 2, 4, 8];

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

/// Predict mode's gate: of a move forward from step `from` to step `to`, the first step on
/// the way whose questions are still to be asked (`None`: the move goes through).
pub type Asks<'a> = &'a dyn Fn(usize, usize) -> Option<usize>;

/// Where the learner stands, and the moves that change it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Navigation {
    /// The step shown (0: before the first operation).
    pub pos: usize,
    /// The step the panels show: below the window, they follow [`Navigation::pos`] a frame
    /// later ([`Navigation::settle`]), so that a step first shows what is in view.
    pub panels_at: usize,
    /// Stepping by event, lane by lane.
    pub lanes: Lanes,
    /// Scroll the selected events into view once drawn (the selection moved).
    pub reveal: bool,
    /// Play's speed, in steps (or events) per second ([`SPEEDS`]).
    pub speed: u32,
    /// The last move stopped before this step, whose questions are to be asked first.
    pub asked: Option<usize>,
}

impl Default for Navigation {
    fn default() -> Self {
        Navigation {
            pos: 0,
            panels_at: 0,
            lanes: Lanes::default(),
            reveal: false,
            speed: 2,
            asked: None,
        }
    }
}

impl Navigation {
    /// Makes move `nav` in `s` (`playing`: play is on, which a toggle turns off).
    pub fn apply(&mut self, s: &Session, nav: Nav, playing: bool, asks: Asks) {
        if !matches!(nav, Nav::Speed(_)) {
            self.lanes.crossed = None;
        }
        let len = s.len();
        match nav {
            Nav::Go(p) => self.advance(p.min(len), asks),
            Nav::Step(d) => self.advance(self.pos.saturating_add_signed(d).min(len), asks),
            Nav::Last => self.advance(len, asks),
            Nav::Event(d) => {
                self.step_event(s, d, asks);
            }
            Nav::At { lane, k } => self.select(s, lane, self.pos, k),
            Nav::Moment(d) => self.seek_moment(s, d, asks),
            Nav::Lead(l) => {
                self.lanes.lead = Some(l.min(lanes(s) - 1));
                self.lanes.end = false;
                self.follow(s);
            }
            Nav::Filter(lane, k) => self.lanes.filter[lane] = self.kind_at(s, lane, k),
            Nav::Lockstep => {
                self.lanes.apart = !self.lanes.apart;
                self.follow(s);
            }
            // Play starts over from the first step when it rests at the end.
            Nav::TogglePlay => {
                if !playing && self.pos >= len && self.lanes.at[self.lead(s)].is_none() {
                    self.go(0);
                }
            }
            Nav::Speed(v) => self.speed = v,
        }
    }

    /// Play's move: event by event while an event is selected, else step by step. Says
    /// whether play goes on.
    pub fn tick(&mut self, s: &Session, asks: Asks) -> bool {
        if self.lanes.at[self.lead(s)].is_some() {
            return self.step_event(s, 1, asks);
        }
        let len = s.len();
        if self.pos < len {
            self.advance(self.pos + 1, asks);
        }
        self.pos < len
    }

    /// A new session `s` shown at step `step` (its last, when past it): the patched lane
    /// leads, in lockstep, every lane at the whole step.
    pub fn open(&mut self, s: &Session, step: usize) {
        self.lanes = Lanes::default();
        self.go(step.min(s.len()));
    }

    /// To the whole of step `pos`, in every lane.
    pub fn go(&mut self, pos: usize) {
        self.pos = pos;
        self.lanes.at = [None; LANES];
        self.lanes.end = false;
        self.reveal = true;
    }

    /// The panels catch up with the position; says whether they moved.
    pub fn settle(&mut self) -> bool {
        std::mem::replace(&mut self.panels_at, self.pos) != self.pos
    }

    /// The lane the keys step: the learner's choice, else where the patch acts.
    pub fn lead(&self, s: &Session) -> usize {
        let patched = s.patched_lane();
        self.lanes.lead.unwrap_or(patched).min(lanes(s) - 1)
    }

    /// The leading lane's event and its step's number of events, when stepping by event.
    pub fn event(&self, s: &Session) -> Option<(usize, usize)> {
        let lead = self.lead(s);
        self.lanes.at[lead].map(|k| (k, s.events(lead, self.pos).len()))
    }

    /// The position a permalink records: the lead where two lanes are shown, each lane's event.
    pub fn position(&self, s: &Session) -> Position {
        Position {
            step: self.pos,
            lead: (lanes(s) > 1).then(|| self.lead(s)),
            // (A lane in lockstep before its step's first event is found again on opening.)
            events: self.lanes.at.map(|k| k.and_then(|k| k.checked_sub(1))),
        }
    }

    /// Selects the link's position `at` within its step, where the step has it (an event past
    /// the step's end selects its last).
    pub fn restore(&mut self, s: &Session, at: Position) {
        let at = at.clamp(&s.traces);
        if at.step == self.pos {
            for (k, e) in self.lanes.at.iter_mut().zip(at.events) {
                *k = e.map(|e| e + 1);
            }
        }
        self.lanes.lead = at.lead;
        if at.lead.is_some() && at.events.contains(&None) {
            self.follow(s);
        }
    }

    /// To the whole of step `to`, unless a step on the way asks first.
    fn advance(&mut self, to: usize, asks: Asks) {
        if !self.asks_before(to, asks) {
            self.go(to);
        }
    }

    /// Before a move forward to step `to`: when a step on the way has questions left, rests
    /// on the step before it (so it stays hidden) and keeps which step asks. Says so.
    fn asks_before(&mut self, to: usize, asks: Asks) -> bool {
        let stop = (to > self.pos).then(|| asks(self.pos, to)).flatten();
        if let Some(step) = stop {
            self.go(step - 1);
            self.asked = Some(step);
        }
        stop.is_some()
    }

    /// The kind of event `k` (1-based) of the step in lane `lane`.
    fn kind_at(&self, s: &Session, lane: usize, k: Option<usize>) -> Option<&'static str> {
        let events = s.events(lane, self.pos);
        events.get(k?.checked_sub(1)?).map(|e| e.kind().name())
    }

    /// Lane `lane` leads, at event `k` of step `pos`; lockstep moves the other lane with it.
    fn select(&mut self, s: &Session, lane: usize, pos: usize, k: usize) {
        if pos != self.pos {
            self.lanes.at = [None; LANES];
        }
        self.pos = pos;
        let n = s.events(lane, pos).len();
        self.lanes.lead = Some(lane);
        self.lanes.at[lane] = Some(k.min(n)).filter(|&k| k > 0);
        self.lanes.end = false;
        self.reveal = true;
        self.follow(s);
    }

    /// Lockstep: the other lane to where it stands at the leading lane's input (its list
    /// says when it makes no such event there; 0: before its step's first event); beside a
    /// capture, to the event of the same skb, else it stays (its list says why).
    fn follow(&mut self, s: &Session) {
        let lead = self.lead(s);
        let (other, k) = (1 - lead, self.lanes.at[lead]);
        let Some(k) = k.filter(|_| !self.lanes.apart && s.traces.len() == 2) else {
            return;
        };
        let to = match s.partner(lead, other, self.pos, k) {
            Some(Partner::At(j)) => Some(j),
            Some(Partner::None(_)) => None,
            None => s.counterpart(lead, other, self.pos, k).map(|c| match c {
                Counterpart::Same(j) | Counterpart::Nearest { at: j, .. } => j,
            }),
        };
        if let Some(j) = to {
            self.lanes.at[other] = Some(j);
        }
    }

    /// To the next (`d > 0`) or previous key moment, in the lane that makes it, the other
    /// lane in lockstep beside it; unless a step on the way asks first.
    fn seek_moment(&mut self, s: &Session, d: isize, asks: Asks) {
        let to = s.moment(&s.moments(), self.lead(s), (self.pos, self.lanes.at), d);
        if let Some((lane, p, k)) = to.filter(|&(_, p, _)| !self.asks_before(p, asks)) {
            self.select(s, lane, p, k);
        }
    }

    /// Moves the leading lane one event forward (`d > 0`) or back, across steps (a step
    /// without events is passed over), keeping to the lane's filter: the next or previous
    /// event of that kind. Forward from a step's last event it first rests at the step's
    /// end. Says whether it moved.
    fn step_event(&mut self, s: &Session, d: isize, asks: Asks) -> bool {
        let l = self.lead(s);
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
            Some((p, _)) if self.asks_before(p, asks) => false,
            Some((p, k)) => {
                self.select(s, l, p, k);
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
}

/// The lanes shown (one or two).
fn lanes(s: &Session) -> usize {
    s.traces.len().min(LANES)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::{load_custom, load_walkthrough};

    fn walk(name: &str) -> Session {
        load_walkthrough(&skblab_core::walkthrough::find(name).unwrap()).unwrap()
    }

    /// No step asks first (predict mode off).
    const FREE: Asks = &|_, _| None;

    /// Makes each move in turn, play off and predict mode off.
    fn moves(n: &mut Navigation, s: &Session, all: &[Nav]) {
        for &m in all {
            n.apply(s, m, false, FREE);
        }
    }

    /// Steps stop at the first and the last; a jump past the last lands on it; every step
    /// move shows the whole step in every lane and scrolls it into view.
    #[test]
    fn steps_stop_at_the_first_and_the_last() {
        let s = walk("anatomy");
        let len = s.len();
        assert!(len > 2);
        let mut n = Navigation::default();
        let cases = [
            (Nav::Step(-1), 0),
            (Nav::Step(1), 1),
            (Nav::Last, len),
            (Nav::Step(1), len),
            (Nav::Step(-1), len - 1),
            (Nav::Go(0), 0),
            (Nav::Go(len + 5), len),
            (Nav::Step(-100), 0),
        ];
        for (m, want) in cases {
            n.reveal = false;
            n.lanes.at = [Some(1), None];
            n.apply(&s, m, false, FREE);
            assert_eq!(n.pos, want, "{m:?}");
            assert_eq!(n.lanes.at, [None; LANES], "{m:?}");
            assert!(n.reveal, "{m:?}");
        }
    }

    /// A session of no operations stands before them whatever the move, and play stops at once.
    #[test]
    fn an_empty_trace_stands_before_its_first_operation() {
        let s = load_custom("mechanism = \"sendmsg\"\nops = []\n", Some("modern")).unwrap();
        assert_eq!((s.len(), s.traces.len()), (0, 2));
        let mut n = Navigation::default();
        let all = [
            Nav::Step(1),
            Nav::Last,
            Nav::Event(1),
            Nav::Event(-1),
            Nav::At { lane: 1, k: 3 },
            Nav::Moment(1),
            Nav::Lead(1),
            Nav::TogglePlay,
        ];
        for m in all {
            n.apply(&s, m, false, FREE);
            assert_eq!((n.pos, n.lanes.at), (0, [None; LANES]), "{m:?}");
        }
        assert!(!n.tick(&s, FREE));
        assert_eq!(n.pos, 0);
    }

    /// ↓ walks the leading lane's events; past a step's last it first rests at the step's
    /// end, then crosses to the next step's first; ↑ from there goes back to the last.
    #[test]
    fn event_stepping_rests_at_a_steps_end_before_it_crosses() {
        let s = walk("rx-page-reuse");
        let n1 = s.events(1, 1).len();
        assert!(n1 > 2 && !s.events(1, 2).is_empty());
        let mut n = Navigation::default();
        // The patched lane (the right) leads, from before the first operation.
        moves(&mut n, &s, &[Nav::Event(1)]);
        assert_eq!((n.pos, n.lead(&s), n.lanes.at[1]), (1, 1, Some(1)));
        for k in 2..=n1 {
            moves(&mut n, &s, &[Nav::Event(1)]);
            assert_eq!((n.pos, n.lanes.at[1], n.lanes.end), (1, Some(k), false));
        }
        moves(&mut n, &s, &[Nav::Event(1)]);
        assert_eq!((n.pos, n.lanes.at[1], n.lanes.end), (1, Some(n1), true));
        moves(&mut n, &s, &[Nav::Event(-1)]);
        assert_eq!((n.pos, n.lanes.at[1], n.lanes.end), (1, Some(n1), false));
        moves(&mut n, &s, &[Nav::Event(1), Nav::Event(1)]);
        assert_eq!((n.pos, n.lanes.at[1], n.lanes.end), (2, Some(1), false));
        assert_eq!(n.event(&s), Some((1, s.events(1, 2).len())));
        moves(&mut n, &s, &[Nav::Event(-1)]);
        assert_eq!((n.pos, n.lanes.at[1]), (1, Some(n1)));
        // Back from step 1's first event there is none: it stays.
        n.lanes.at[1] = Some(1);
        moves(&mut n, &s, &[Nav::Event(-1)]);
        assert_eq!((n.pos, n.lanes.at[1]), (1, Some(1)));
    }

    /// The lanes list different events: an event past a lane's last selects its last, and
    /// in lockstep the other lane stands at the same input; with lockstep off it stays put,
    /// and turned on again it follows.
    #[test]
    fn lanes_of_different_lengths_keep_to_their_own_and_lockstep_joins_them() {
        let s = walk("rx-page-reuse");
        let (n0, n1) = (s.events(0, 1).len(), s.events(1, 1).len());
        assert_ne!(n0, n1, "the lanes make different events in step 1");
        let mut n = Navigation::default();
        moves(&mut n, &s, &[Nav::Step(1), Nav::At { lane: 0, k: 999 }]);
        assert_eq!((n.lead(&s), n.lanes.at[0]), (0, Some(n0)));
        assert!(n.lanes.at[1].is_some_and(|k| k <= n1));
        assert!(s.same_input(1, n.lanes.at), "{:?}", n.lanes.at);
        // The right lane's reuse_page, which the left lane does not make.
        let reuse = (s
            .events(1, 1)
            .iter()
            .position(|e| e.kind().name() == "reuse_page"))
        .map(|i| i + 1)
        .expect("the patched kernel reuses a page in step 1");
        moves(&mut n, &s, &[Nav::At { lane: 1, k: reuse }]);
        assert_eq!((n.lead(&s), n.lanes.at[1]), (1, Some(reuse)));
        let beside = n.lanes.at[0];
        assert!(beside.is_some() && s.same_input(1, n.lanes.at));
        // Lockstep off: the left lane stays while the right moves on.
        moves(&mut n, &s, &[Nav::Lockstep, Nav::At { lane: 1, k: n1 }]);
        assert!(n.lanes.apart);
        assert_eq!(n.lanes.at, [beside, Some(n1)]);
        // On again: it follows at once.
        moves(&mut n, &s, &[Nav::Lockstep]);
        assert!(!n.lanes.apart && s.same_input(1, n.lanes.at));
        assert_ne!(n.lanes.at[0], beside);
        // The left lane leads from its own event, the right beside it.
        moves(&mut n, &s, &[Nav::Lead(0)]);
        assert_eq!(n.lead(&s), 0);
        // A lane past the session's lanes leads as the last.
        moves(&mut n, &s, &[Nav::Lead(7)]);
        assert_eq!(n.lead(&s), 1);
    }

    /// The leading lane at the same input in two different events: each lane's own
    /// counterpart (n-th frag_alloc beside the n-th), whichever leads.
    #[test]
    fn lockstep_stands_each_lane_at_the_same_input_whichever_leads() {
        let s = walk("rx-page-reuse");
        let nth = |lane: usize, n: usize| {
            let ev = s.events(lane, 2).iter().enumerate();
            ev.filter(|(_, e)| e.kind().name() == "frag_alloc")
                .nth(n)
                .map(|(i, _)| i + 1)
                .unwrap()
        };
        let mut n = Navigation::default();
        moves(&mut n, &s, &[Nav::Go(2)]);
        for (lead, other) in [(0, 1), (1, 0)] {
            moves(
                &mut n,
                &s,
                &[Nav::At {
                    lane: lead,
                    k: nth(lead, 3),
                }],
            );
            assert_eq!(n.lanes.at[other], Some(nth(other, 3)), "lead {lead}");
        }
    }

    /// Beside a capture, lockstep pairs events by skb (the core's pairing): the captured skb
    /// at the device beside the model building it, a frag beside the frag, whichever lane
    /// leads; an event with no partner (handed up, a page the capture does not see) leaves
    /// the other lane where it stood. The events, by hand: core/src/capture/pair.rs.
    #[test]
    fn beside_a_capture_lockstep_pairs_events_by_skb() {
        let text = include_str!("../../tests/fixtures/capture-tcp.json");
        let s = crate::beside::open(&crate::session::load_capture(text).unwrap()).unwrap();
        let mut n = Navigation::default();
        let cases = [
            // (move, both lanes' events after it)
            (Nav::At { lane: 0, k: 14 }, [Some(14), Some(1)]),
            (Nav::Event(1), [Some(15), Some(4)]),
            (Nav::Event(1), [Some(16), Some(4)]),
            (Nav::At { lane: 1, k: 8 }, [Some(14), Some(8)]),
            (Nav::At { lane: 1, k: 2 }, [Some(14), Some(2)]),
            (Nav::Event(-1), [Some(14), Some(1)]),
            (Nav::Lockstep, [Some(14), Some(1)]),
            (Nav::At { lane: 1, k: 4 }, [Some(14), Some(4)]),
        ];
        moves(&mut n, &s, &[Nav::Go(1)]);
        for (m, want) in cases {
            moves(&mut n, &s, &[m]);
            assert_eq!(n.lanes.at, want, "{m:?}");
        }
        // A read's step: the model holds, with no events, and stays at the whole step.
        moves(
            &mut n,
            &s,
            &[Nav::Lockstep, Nav::Go(3), Nav::At { lane: 0, k: 1 }],
        );
        assert_eq!(n.lanes.at, [Some(1), None]);
    }

    /// Predict mode's gate: a move forward past a step with questions rests before it and
    /// says which step asks; a move back, or one ending before it, goes through.
    #[test]
    fn a_move_forward_stops_before_a_step_that_asks() {
        let s = walk("rx-page-reuse");
        let asks: Asks = &|from, to| (from < 2 && 2 <= to).then_some(2);
        let mut n = Navigation::default();
        n.apply(&s, Nav::Step(1), false, asks);
        assert_eq!((n.pos, n.asked), (1, None));
        n.apply(&s, Nav::Last, false, asks);
        assert_eq!((n.pos, n.asked.take()), (1, Some(2)));
        // By event across the step's end: the step's end first, then the stop, whole.
        let last = s.events(1, 1).len();
        n.apply(&s, Nav::At { lane: 1, k: last }, false, asks);
        n.apply(&s, Nav::Event(1), false, asks);
        assert_eq!((n.lanes.end, n.asked), (true, None));
        n.apply(&s, Nav::Event(1), false, asks);
        assert_eq!(
            (n.pos, n.lanes.at, n.asked.take()),
            (1, [None; LANES], Some(2))
        );
        assert!(n.tick(&s, asks));
        assert_eq!((n.pos, n.asked.take()), (1, Some(2)));
        n.apply(&s, Nav::Go(0), false, asks);
        assert_eq!((n.pos, n.asked), (0, None));
    }

    /// Play steps on until the last step, event by event while an event is selected (the
    /// last step's end first), and starts over from the first step when it rests at the end.
    #[test]
    fn play_runs_to_the_end_then_starts_over() {
        let s = walk("anatomy");
        let len = s.len();
        let mut n = Navigation::default();
        moves(&mut n, &s, &[Nav::Go(len - 2)]);
        assert!(n.tick(&s, FREE) && n.pos == len - 1);
        assert!(!n.tick(&s, FREE) && n.pos == len);
        assert!(!n.tick(&s, FREE) && n.pos == len);
        n.apply(&s, Nav::TogglePlay, true, FREE);
        assert_eq!(n.pos, len, "pausing moves nothing");
        n.apply(&s, Nav::TogglePlay, false, FREE);
        assert_eq!(n.pos, 0, "play starts over");
        let last = s.events(0, len).len();
        assert!(last > 0);
        moves(&mut n, &s, &[Nav::Go(len), Nav::At { lane: 0, k: last }]);
        assert!(n.tick(&s, FREE) && n.lanes.end);
        assert!(!n.tick(&s, FREE));
        assert_eq!((n.pos, n.lanes.at[0]), (len, Some(last)));
        // At the last step's last event, play starts from there, not over.
        n.lanes.end = false;
        n.apply(&s, Nav::TogglePlay, false, FREE);
        assert_eq!((n.pos, n.lanes.at[0]), (len, Some(last)));
        n.apply(&s, Nav::Speed(8), false, FREE);
        assert_eq!(n.speed, 8);
    }

    /// A lane kept to one kind steps from one such event to the next across steps, and says
    /// when it crossed a step or found none; a speed change leaves what it said.
    #[test]
    fn a_filtered_lane_crosses_steps_and_says_so() {
        let s = walk("rx-page-reuse");
        let reuse: Vec<(usize, usize)> = (1..=s.len())
            .flat_map(|p| {
                let ev = s.events(1, p).iter().enumerate();
                ev.filter(|(_, e)| e.kind().name() == "reuse_page")
                    .map(move |(i, _)| (p, i + 1))
            })
            .collect();
        let (p, k) = reuse[0];
        let mut n = Navigation::default();
        moves(&mut n, &s, &[Nav::Go(p), Nav::Filter(1, Some(k))]);
        assert_eq!(n.lanes.filter[1], Some("reuse_page"));
        let next = reuse.iter().find(|&&(q, _)| q > p).copied();
        let last_here = reuse.iter().rfind(|&&(q, _)| q == p).unwrap().1;
        moves(
            &mut n,
            &s,
            &[
                Nav::At {
                    lane: 1,
                    k: last_here,
                },
                Nav::Event(1),
            ],
        );
        assert!(n.lanes.end, "it rests at the step's end first");
        moves(&mut n, &s, &[Nav::Event(1)]);
        let crossed = n.lanes.crossed.expect("it says it crossed");
        assert_eq!((crossed.from, crossed.forward), (p, true));
        assert_eq!(crossed.to, next.map(|(q, _)| q));
        if let Some((q, j)) = next {
            assert_eq!((n.pos, n.lanes.at[1]), (q, Some(j)));
        }
        moves(&mut n, &s, &[Nav::Speed(4)]);
        assert_eq!(n.lanes.crossed, Some(crossed));
        moves(&mut n, &s, &[Nav::Step(1)]);
        assert_eq!(n.lanes.crossed, None);
        moves(&mut n, &s, &[Nav::Filter(1, None)]);
        assert_eq!(n.lanes.filter[1], None);
    }

    #[test]
    fn a_crossing_says_which_steps_it_passed() {
        let said = |from, to, forward| Crossed { from, to, forward }.say("reuse_page");
        let cases = [
            (
                1,
                Some(2),
                true,
                "No more reuse_page events in step 1: now at step 2.",
            ),
            (
                1,
                Some(3),
                true,
                "No more reuse_page events in step 1, nor in step 2: now at step 3.",
            ),
            (
                1,
                Some(5),
                true,
                "No more reuse_page events in step 1, nor in steps 2–4: now at step 5.",
            ),
            (
                4,
                None,
                true,
                "No more reuse_page events in step 4, nor any step after it.",
            ),
            (
                4,
                Some(2),
                false,
                "No earlier reuse_page events in step 4, nor in step 3: now at step 2.",
            ),
            (
                2,
                None,
                false,
                "No earlier reuse_page events in step 2, nor any step before it.",
            ),
        ];
        for (from, to, forward, want) in cases {
            assert_eq!(said(from, to, forward), want);
        }
    }

    /// The key moments: the first from the start, in the lane that makes it, which leads.
    #[test]
    fn a_key_moment_leads_from_the_lane_that_makes_it() {
        let s = walk("rx-skb-cache");
        let (p, k) = s.moments()[1][0];
        let mut n = Navigation::default();
        moves(&mut n, &s, &[Nav::Lead(0), Nav::Moment(1)]);
        assert_eq!((n.pos, n.lead(&s), n.lanes.at[1]), (p, 1, Some(k)));
        moves(&mut n, &s, &[Nav::Moment(-1)]);
        assert_eq!(
            (n.pos, n.lanes.at[1]),
            (p, Some(k)),
            "none before the first"
        );
    }

    /// A permalink's position reads back as the same stand: step, lead and each lane's event.
    #[test]
    fn a_position_restores_as_it_was() {
        let s = walk("rx-page-reuse");
        let mut n = Navigation::default();
        moves(&mut n, &s, &[Nav::Go(2), Nav::At { lane: 0, k: 3 }]);
        let at = n.position(&s);
        assert_eq!((at.step, at.lead, at.events[0]), (2, Some(0), Some(2)));
        let mut back = Navigation::default();
        back.open(&s, at.step);
        back.restore(&s, at);
        assert_eq!((back.pos, back.lanes), (n.pos, n.lanes));
        // A step past the last opens the last.
        back.open(&s, 999);
        assert_eq!((back.pos, back.lanes.lead), (s.len(), None));
        let a = walk("anatomy");
        back.open(&a, 0);
        assert_eq!(back.position(&a).lead, None, "one lane records no lead");
    }

    /// The panels follow the position once settled, and say whether they moved.
    #[test]
    fn the_panels_settle_on_the_position() {
        let s = walk("anatomy");
        let mut n = Navigation::default();
        moves(&mut n, &s, &[Nav::Step(1)]);
        assert_eq!((n.pos, n.panels_at), (1, 0));
        assert!(n.settle());
        assert!(!n.settle());
        assert_eq!(n.panels_at, 1);
    }

    /// A question asked waits for its answer on a move forward, and is given up on a move
    /// back or one that shows nothing of a later step.
    #[test]
    fn a_move_back_gives_a_question_up() {
        let cases = [
            (Nav::Step(-1), true),
            (Nav::Step(1), false),
            (Nav::Event(-1), true),
            (Nav::Event(1), false),
            (Nav::Moment(1), false),
            (Nav::Go(3), true),
            (Nav::Go(4), false),
            (Nav::Last, false),
            (Nav::TogglePlay, false),
            (Nav::Lockstep, true),
            (Nav::Speed(1), true),
        ];
        for (m, gives_up) in cases {
            assert_eq!(m.gives_up_question(3), gives_up, "{m:?}");
        }
    }
}

//! What a lane shows at a position: the step's state, or the state replayed to the lane's
//! event ([`Trace::state_at`]), with the marks of what the step or event changed and, side by
//! side, of what differs from the other lane. The diagram pane keeps the scenes while the
//! position stays, so a scroll draws the part of a scene newly near the view without
//! replaying it.

use super::Shared;
use crate::diagram::{self, Drawing, Marks, Shapes};
use crate::diff::Changed;
use crate::session::LANES;
use skblab_core::events::EventKind;
use skblab_core::freed::Freeable;
use skblab_core::trace::{Queue, State};
use skblab_core::Trace;

/// Trace `t` after event `k` of step `pos` (1-based), marking what that event touched:
/// its skbs, its frag slot, its pages (a page or a queued skb it freed stays in the state, to
/// fade out, marked with the CPU that freed it) and its cursor (`None` when the events do not
/// replay, which the core's tests rule out).
fn at_event(t: &Trace, pos: usize, k: usize) -> Option<(State, Changed)> {
    if k == 0 {
        // Before the step's first event (a lane in lockstep where the other's input starts).
        return Some((t.state_at(pos.checked_sub(1)?, 0).ok()?, Changed::default()));
    }
    let e = t
        .steps
        .get(pos.checked_sub(1)?)?
        .events
        .get(k.checked_sub(1)?)?;
    let mut state = t.state_at(pos - 1, k - 1).ok()?;
    let touched = state.touched(e);
    let cursors = (touched.cursor)
        .and_then(|c| state.cursors.get(c))
        .map(|c| c.name.clone());
    let before = state.pages.clone();
    // The skb a free takes off its queue (or off no list: the last), and where it stood (the
    // model's `free_skb`, a capture's `seen_free`).
    let unlisted = Queue {
        name: UNLISTED.into(),
        skbs: state.in_flight.clone(),
    };
    let queued = e
        .skb()
        .filter(|_| matches!(e.kind(), EventKind::FreeSkb | EventKind::SeenFree))
        .and_then(|id| {
            (state.queues.iter().chain([&unlisted]).enumerate()).find_map(|(qi, q)| {
                let at = q.skbs.iter().position(|s| s.id == id)?;
                Some((qi, at, q.skbs[at].clone()))
            })
        });
    state.apply(e).ok()?;
    // The skbs on no list for a moment (taken to be freed, or not queued yet) are drawn as
    // a list of their own until a list or a free takes them (issue 36: rx_cache_take).
    let n = state.queues.len();
    if !state.in_flight.is_empty() || queued.as_ref().is_some_and(|q| q.0 == n) {
        let skbs = std::mem::take(&mut state.in_flight);
        let name = UNLISTED.into();
        state.queues.push(Queue { name, skbs });
    }
    let freed_on = |what, id| t.freed_on(pos - 1, k, what, id);
    let gone: Vec<_> = (before.iter())
        .filter(|p| state.page_slot(p.id).is_err())
        .cloned()
        .collect();
    let skbs = touched.skbs.iter().copied();
    let marks = Changed {
        skbs: skbs.chain(touched.frags.iter().map(|f| f.0)).collect(),
        pages: touched.pages.into_iter().collect(),
        cursors: cursors.into_iter().collect(),
        frags: touched.frags,
        gone: (gone.iter())
            .filter_map(|p| Some((p.id, freed_on(Freeable::Page, p.id)?)))
            .collect(),
        gone_skbs: (queued.iter())
            .filter_map(|(_, _, s)| Some((s.id, freed_on(Freeable::Skb, s.id)?)))
            .collect(),
    };
    if let Some((qi, at, skb)) = queued {
        state.queues[qi].skbs.insert(at, skb);
    }
    // A page the event freed fades out, marked with its CPU; one that left with its last skb
    // and whose free the trace does not hold (a capture's: not traced) just leaves.
    for p in gone
        .into_iter()
        .filter(|p| marks.gone.iter().any(|g| g.0 == p.id))
    {
        state.insert_page(p);
    }
    Some((state, marks))
}

/// The list the skbs on no list are drawn in, between two events.
const UNLISTED: &str = "on no list, for now";

/// What lane `lane` shows at position `pos`: the step's state (in the session), or the state
/// replayed to the lane's event; what to mark (what the step or event changed and, side by
/// side, what differs from the other lane) and the figure's label.
pub(super) struct Scene {
    lane: usize,
    pos: usize,
    /// After the lane's event, when stepping by event.
    replayed: Option<State>,
    changed: Changed,
    differs: Changed,
    label: String,
}

/// The state after step `pos` of trace `i` (`None` before the first).
fn step_state(s: &Shared, i: usize, pos: usize) -> Option<&State> {
    let p = pos.checked_sub(1)?;
    Some(&s.traces.get(i)?.steps.get(p)?.state)
}

/// The scenes of every trace at `pos`; stepping by event, each lane after its event. Two
/// lanes are compared only where they stand at the same input (the whole step, or events
/// at the same point of the operation's input: [`Session::same_input`]).
///
/// [`Session::same_input`]: crate::session::Session::same_input
pub(super) fn scenes(s: &Shared, pos: usize, events: [Option<usize>; LANES]) -> Vec<Scene> {
    let empty = State::default();
    let n = s.traces.len();
    let shown: Vec<_> = (0..n)
        .map(|i| {
            let k = events.get(i).copied().flatten();
            match k.and_then(|k| at_event(&s.traces[i], pos, k)) {
                Some((st, touched)) => (Some(st), touched),
                None => {
                    let cur = step_state(s, i, pos).unwrap_or(&empty);
                    // Step 1 is measured against the empty start; position 0 marks nothing.
                    let prev = match pos {
                        0 => None,
                        1 => Some(&empty),
                        p => step_state(s, i, p - 1),
                    };
                    (None, Changed::between(prev, cur))
                }
            }
        })
        .collect();
    let cur = |i: usize| {
        (shown[i].0.as_ref())
            .or_else(|| step_state(s, i, pos))
            .unwrap_or(&empty)
    };
    let compared = n == 2 && s.same_input(pos, events);
    // Beside a capture, the model's prediction: the skbs the core judged apart.
    let beside = s.capture.as_ref().and_then(|c| c.beside.as_deref());
    let differs: Vec<Changed> = (0..n)
        .map(|i| match (beside, compared) {
            (Some(b), _) => b.differs(i, pos),
            (None, true) => Changed::between(Some(cur(1 - i)), cur(i)),
            (None, false) => Changed::default(),
        })
        .collect();
    (shown.into_iter().zip(differs).enumerate())
        .map(|(i, ((replayed, changed), differs))| {
            let t = &s.traces[i];
            let label = match (&replayed, events.get(i).copied().flatten()) {
                (Some(_), Some(0)) => format!(
                    "{} ({}), step {pos}, before its first event",
                    t.mechanism, t.variant
                ),
                (Some(_), Some(k)) => {
                    format!("{} ({}), step {pos}, event {k}", t.mechanism, t.variant)
                }
                _ => format!("{} ({}), step {pos}", t.mechanism, t.variant),
            };
            Scene {
                lane: i,
                pos,
                replayed,
                changed,
                differs,
                label,
            }
        })
        .collect()
}

/// A drawing's width in units (pixels at 100 %): alone, what a 1024-px window leaves it once
/// the narration stands above it; side by side, half of what a 1400-px window leaves beside
/// the narration (narrower, the panes stack: style.css). In presentation mode, fitted to its
/// lane whatever the zoom
/// ([`Diagrams::shown_zoom`](super::diagrams::Diagrams::shown_zoom)), it is drawn narrower so
/// that its text grows as the narration's does (by 1.3 at 1280 px, where a lane is about 430
/// px wide and a lone drawing about 870 px).
pub(super) fn drawing_width(traces: usize, present: bool) -> u32 {
    match (traces == 2, present) {
        (true, false) => 500,
        (false, false) => 960,
        (true, true) => 330,
        (false, true) => 660,
    }
}

/// How lanes are drawn: narrower in presentation mode ([`drawing_width`]), and, per trace,
/// the queues left out (presentation mode's and the figures' idle queues, or every one).
#[derive(Clone, Copy, Default)]
pub(super) struct Look<'a> {
    pub present: bool,
    pub leave: Option<&'a [Vec<String>]>,
}

impl Scene {
    /// The scene drawn for `band` (the pieces meeting it; [`ALL`]: the whole drawing), as
    /// `look` says; `shapes`: those of the lane's drawing before.
    pub(super) fn draw(
        &self,
        s: &Shared,
        look: Look,
        band: (u32, u32),
        shapes: &mut Shapes,
    ) -> Drawing {
        let idle = look.leave;
        let empty = State::default();
        let cur = (self.replayed.as_ref())
            .or_else(|| step_state(s, self.lane, self.pos))
            .unwrap_or(&empty);
        let kept;
        let cur = match idle.and_then(|idle| idle.get(self.lane)) {
            Some(idle) => {
                let mut st = cur.clone();
                st.queues.retain(|q| !idle.contains(&q.name));
                kept = st;
                &kept
            }
            None => cur,
        };
        let marks = Marks {
            changed: &self.changed,
            differs: &self.differs,
        };
        let t = &s.traces[self.lane];
        let size = (
            t.consts.max_skb_frags,
            drawing_width(s.traces.len(), look.present),
        );
        diagram::draw(cur, &marks, size, &self.label, band, shapes)
    }
}

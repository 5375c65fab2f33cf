//! Event lockstep between a capture and the model's prediction beside it: which event of one
//! lane stands beside an event of the other. Events pair through their skbs, paired as
//! [`Prediction::compare`](super::Prediction::compare) pairs them (by the place of their bytes
//! in the stream), and through their kinds ([`BESIDE`]); an event with no partner says why.

use super::Compared;
use crate::events::{Event, EventKind};

/// Where the other lane stands beside an event ([`Compared::partner`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Partner {
    /// Event `k` (1-based) of the other lane's step.
    At(usize),
    /// None: why, in words.
    None(String),
}

/// An event's kind, and the kind of the other lane's event shown beside it for the paired
/// skb (a frag beside the frag of the same index).
const BESIDE: [(EventKind, EventKind); 6] = [
    // The capture's skb, first seen or at the device, beside the model building it: the
    // stack at the device beside the model's path from sendmsg.
    (EventKind::SeenSkb, EventKind::AllocSkb),
    (EventKind::SeenXmit, EventKind::AllocSkb),
    (EventKind::SeenFrag, EventKind::NewFrag),
    // The model's skb, built or sent, beside the capture's at the device, where its stack is.
    (EventKind::AllocSkb, EventKind::SeenXmit),
    (EventKind::Xmit, EventKind::SeenXmit),
    (EventKind::NewFrag, EventKind::SeenFrag),
];

impl Compared {
    /// The event of `other` (the other lane's events in the same step) beside event `k`
    /// (1-based) of `events`, one lane's: the capture's ([`super::Capture::trace`]) or the
    /// model's ([`super::Prediction::lane`]), told by its kinds.
    pub fn partner(&self, events: &[Event], k: usize, other: &[Event]) -> Partner {
        let Some(e) = events.get(k.wrapping_sub(1)) else {
            return Partner::None(String::new());
        };
        let kind = e.kind();
        let captured = is_captured(kind);
        let beside = BESIDE.iter().find(|b| b.0 == kind).map(|b| b.1);
        let (Some(skb), Some(want)) = (e.skb(), beside) else {
            return Partner::None(no_kind(kind, captured));
        };
        let Some(theirs) = self.skb_beside(skb, captured) else {
            return Partner::None(match captured {
                true => format!("skb {skb} carries none of the predicted writes' bytes (a SYN, an ACK, or another socket's skb): the model builds no skb like it."),
                false => format!("The capture saw no skb holding the bytes of the model's skb {skb} at the device."),
            });
        };
        let found = other
            .iter()
            .position(|o| o.kind() == want && o.skb() == Some(theirs) && frag(o) == frag(e));
        match found {
            Some(i) => Partner::At(i + 1),
            None => Partner::None(format!(
                "The other lane makes no {} of skb {theirs} in this step.",
                want.name()
            )),
        }
    }

    /// The skb of the other side paired with skb `skb` of the capture (`captured`) or of the
    /// model: the first write's pair that has both.
    fn skb_beside(&self, skb: u32, captured: bool) -> Option<u32> {
        let pairs = self.writes.iter().flat_map(|w| &w.skbs);
        pairs
            .map(|s| match captured {
                true => (s.captured, s.model),
                false => (s.model, s.captured),
            })
            .find_map(|(ours, theirs)| theirs.filter(|_| ours == Some(skb)))
    }
}

/// Whether `kind` is one of the capture's events (`Capture::trace` makes only these).
fn is_captured(kind: EventKind) -> bool {
    use EventKind::*;
    matches!(
        kind,
        SeenSkb | SeenXmit | SeenFrag | SeenRx | SeenCopy | SeenFree
    )
}

/// A frag event's index.
fn frag(e: &Event) -> Option<u32> {
    match *e {
        Event::SeenFrag { idx, .. } | Event::NewFrag { idx, .. } => Some(idx),
        _ => None,
    }
}

/// Why an event of `kind` has no kind beside it in the other lane.
fn no_kind(kind: EventKind, captured: bool) -> String {
    match kind {
        EventKind::SeenFree => "The model frees nothing: it assumes no acknowledgement came (the scenario in the editor says so).".into(),
        _ if captured => format!("The model predicts the sending socket only: it makes nothing like {}.", kind.name()),
        _ => format!("The capture has no event like {}: it reads an skb when allocated, at the device, handed up, copied and freed, and pages only as its frags.", kind.name()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capture::predict::tests::fixture;
    use crate::RunOptions;

    /// From the fixture's lane `from` (0: the capture, 1: the model) at step `pos`, event `k`:
    /// the other lane's event beside it, or `None`.
    fn beside(from: usize, pos: usize, k: usize) -> Option<usize> {
        let c = fixture();
        let p = c.prediction().unwrap();
        let model = p.scenario.run(&RunOptions::traced(None)).unwrap();
        let lanes = [c.trace().unwrap(), p.lane(&c, &model).unwrap()];
        let events = |lane: usize| &lanes[lane].steps[pos - 1].events[..];
        match p
            .compare(&c, &model)
            .partner(events(from), k, events(1 - from))
        {
            Partner::At(j) => Some(j),
            Partner::None(why) => {
                assert!(why.ends_with('.'), "{why}");
                None
            }
        }
    }

    /// By hand, from the fixture's events (core/src/capture/lane.rs and the model's run of
    /// its prediction). Step 1, the capture: 1 seen_skb 0 (the SYN), 2 its seen_xmit, …,
    /// 13 seen_skb 3 (write 1's bytes, from the first data skb's sequence number: offset 0),
    /// 14 seen_xmit 3, 15 seen_frag 3 idx 0, 16 seen_rx 3. The model: 1 alloc_skb 0 (offset
    /// 0), 2 alloc_page, 3 copy_to_page, 4 new_frag 0 idx 0, 5 get_page, 6 mark_psh, 7 push,
    /// 8 xmit 0. Step 4, the capture: 1 seen_skb 7 (write 3's, offset 28960), 2 seen_xmit 7,
    /// 3 seen_frag 7 idx 0, 4 seen_frag 7 idx 1, 5 seen_free 3; the model: 1 alloc_skb 2
    /// (offset 28960), 3 new_frag 2 idx 0, 6 alloc_page, 8 new_frag 2 idx 1, 12 xmit 2.
    /// Step 3 is a read: the capture's seen_copy of skb 3, the model holding, with no events.
    #[test]
    fn events_pair_through_their_skbs_by_stream_offset() {
        let cases = [
            // (lane, step, event) → the other lane's event
            ((0, 1, 13), Some(1)),
            ((0, 1, 14), Some(1)),
            ((0, 1, 15), Some(4)),
            ((0, 1, 16), None), // handed up: the model has no receiver
            ((0, 1, 2), None),  // the SYN carries none of the writes' bytes
            ((1, 1, 1), Some(14)),
            ((1, 1, 4), Some(15)),
            ((1, 1, 8), Some(14)),
            ((1, 1, 2), None), // alloc_page: the capture sees pages only as frags
            ((1, 1, 7), None), // push
            ((0, 4, 2), Some(1)),
            ((0, 4, 3), Some(3)),
            ((0, 4, 4), Some(8)),
            ((0, 4, 5), None), // a free: the model frees nothing
            ((1, 4, 8), Some(4)),
            ((1, 4, 12), Some(2)),
            ((0, 3, 1), None),
        ];
        for ((lane, pos, k), want) in cases {
            assert_eq!(
                beside(lane, pos, k),
                want,
                "lane {lane} step {pos} event {k}"
            );
        }
    }

    /// What each lone event says: the capture's free and its receive side, the model's page.
    #[test]
    fn a_lone_event_says_why() {
        let c = fixture();
        let p = c.prediction().unwrap();
        let model = p.scenario.run(&RunOptions::traced(None)).unwrap();
        let cmp = p.compare(&c, &model);
        let (captured, ours) = (c.trace().unwrap(), p.lane(&c, &model).unwrap());
        let why = |a: &crate::Trace, b: &crate::Trace, pos: usize, k| match cmp.partner(
            &a.steps[pos - 1].events,
            k,
            &b.steps[pos - 1].events,
        ) {
            Partner::None(why) => why,
            at => panic!("{at:?}"),
        };
        assert!(why(&captured, &ours, 4, 5).starts_with("The model frees nothing"));
        assert!(why(&captured, &ours, 1, 16).ends_with("nothing like seen_rx."));
        assert!(why(&captured, &ours, 1, 2).starts_with("skb 0 carries none"));
        assert!(why(&ours, &captured, 1, 2).starts_with("The capture has no event like alloc_page"));
        // Beside a step where the model holds (no events): none of its skb's events there.
        let held = &ours.steps[2].events;
        assert!(held.is_empty());
        let w2 = cmp.partner(&captured.steps[1].events, 2, held);
        let w2_why = "The other lane makes no alloc_skb of skb 1 in this step.";
        assert_eq!(w2, Partner::None(w2_why.into()));
    }
}

//! Where each event of a step stands in its operation's input, so that two kernels given
//! the same operation are shown at the same point of it: the same frame arrived, the same
//! bytes of the write copied or sent, the same bytes read. The kernels make different events
//! (one reuses a page where the other allocates one, one copies to a page where the other
//! copies to the linear area), so the n-th event of a kind is no common point; the input is.
//!
//! An event that takes input in (`rx_frame`, a copy from or to the user, a transmit, an ack)
//! moves its lane's [`Input`] on; every other event stands at the input taken so far.
//! [`counterpart`] pairs an event of one lane with the other lane's at the same input.

use crate::events::Event;
use std::fmt;

/// The input a step's events have taken in so far, each part counted from the step's
/// start. Ordered part by part, in the order a step takes them in (frames before the reads
/// that follow the poll, the write's bytes before the sends that push them), so a lane's
/// input only grows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Input {
    /// Frames arrived (`rx_frame`).
    pub frames: u64,
    /// Bytes of the write copied in (`copy_to_linear`, `copy_to_page`, `copy_to_dfrag`).
    pub written: u64,
    /// Bytes handed to the device (`xmit`, `subflow_xmit`).
    pub sent: u64,
    /// Acks come in (`ack`).
    pub acks: u64,
    /// Bytes read by recvmsg (`copy_to_user`).
    pub read: u64,
}

impl Input {
    /// Takes in what `e` takes in; says whether it took any.
    fn take(&mut self, e: &Event) -> bool {
        let (part, n) = match *e {
            Event::RxFrame { .. } => (&mut self.frames, 1),
            Event::CopyToLinear { bytes, .. }
            | Event::CopyToPage { bytes, .. }
            | Event::CopyToDfrag { bytes, .. } => (&mut self.written, u64::from(bytes)),
            Event::Xmit { len, .. } => (&mut self.sent, u64::from(len)),
            Event::SubflowXmit { bytes, .. } => (&mut self.sent, bytes),
            Event::Ack { .. } => (&mut self.acks, 1),
            Event::CopyToUser { bytes, .. } => (&mut self.read, u64::from(bytes)),
            _ => return false,
        };
        *part += n;
        n > 0
    }
}

/// In words: "5 frames in, 1448 bytes read"; "nothing taken in yet" at the step's start.
impl fmt::Display for Input {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        let parts = [
            (self.frames, "frame", " in"),
            (self.written, "byte", " of the write copied"),
            (self.sent, "byte", " sent"),
            (self.acks, "ack", " in"),
            (self.read, "byte", " read"),
        ];
        let mut sep = "";
        for (n, unit, what) in parts.into_iter().filter(|p| p.0 > 0) {
            let s = if n == 1 { "" } else { "s" };
            write!(f, "{sep}{n} {unit}{s}{what}")?;
            sep = ", ";
        }
        if sep.is_empty() {
            f.write_str("nothing taken in yet")?;
        }
        Ok(())
    }
}

/// The input taken in after each number of `events`: `[0]` before the first, `[k]` after
/// the k-th.
pub fn inputs(events: &[Event]) -> Vec<Input> {
    let mut at = Input::default();
    let mut all = Vec::with_capacity(events.len() + 1);
    all.push(at);
    for e in events {
        at.take(e);
        all.push(at);
    }
    all
}

/// Where the other lane stands beside an event of the leading one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Counterpart {
    /// Its event at the same input that matches: the one that took in the same input, or,
    /// since then, the n-th event of the same kind.
    Same(usize),
    /// It makes no such event at this input: it stands after event `at` (0: before the
    /// step's first), at `input`. `exact`: the same input as the leading lane's; else the
    /// other kernel never stands at exactly that input (it takes it in other pieces), and
    /// `at` is its last point before.
    Nearest {
        at: usize,
        input: Input,
        exact: bool,
    },
}

/// Beside event `k` (1-based) of `lead`, the point of `other` (the same step in another
/// kernel) at the same input; `None` when `lead` has no event `k`.
///
/// Each lane's events at one input start with the event that took it in (or the step's
/// start); the taking events pair, and after them events of a kind pair in order, the
/// first unpaired one of the other lane's after the last pair.
pub fn counterpart(lead: &[Event], other: &[Event], k: usize) -> Option<Counterpart> {
    let (mine, theirs) = (inputs(lead), inputs(other));
    let c = *mine.get(k).filter(|_| k > 0)?;
    let first = |v: &[Input]| v.partition_point(|x| *x < c);
    let (sl, so) = (first(&mine), first(&theirs));
    if theirs.get(so) != Some(&c) {
        return Some(Counterpart::Nearest {
            at: so - 1,
            input: theirs[so - 1],
            exact: false,
        });
    }
    if k == sl {
        return Some(Counterpart::Same(so));
    }
    let end = theirs.partition_point(|x| *x <= c) - 1;
    let mut j = so;
    for i in sl + 1..=k {
        let kind = lead[i - 1].kind();
        match (j + 1..=end).find(|&m| other[m - 1].kind() == kind) {
            Some(m) if i == k => return Some(Counterpart::Same(m)),
            Some(m) => j = m,
            None => {}
        }
    }
    Some(Counterpart::Nearest {
        at: j,
        input: c,
        exact: true,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use Counterpart::{Nearest, Same};

    /// A lane's events by short names: `f` a frame arriving (rx_frame), `c` 100 bytes of
    /// the write copied to the linear area, `C` 200 to a page, `r` 100 bytes read, `a`
    /// alloc_page, `u` reuse_page, `g` get_page, `p` put_page.
    fn lane(s: &str) -> Vec<Event> {
        let page = 0;
        s.chars()
            .map(|ch| match ch {
                'f' => Event::RxFrame {
                    skb: 0,
                    len: 1514,
                    seq: 0,
                    headers: 66,
                    linear: 0,
                },
                'c' => Event::CopyToLinear { skb: 0, bytes: 100 },
                'C' => Event::CopyToPage {
                    skb: 0,
                    page,
                    offset: 0,
                    bytes: 200,
                    cursor: None,
                },
                'r' => Event::CopyToUser {
                    skb: 0,
                    cpu: 1,
                    bytes: 100,
                },
                'a' => Event::AllocPage {
                    page,
                    order: 0,
                    cpu: 0,
                    size: 4096,
                    cursor: None,
                    bias: None,
                },
                'u' => Event::ReusePage {
                    page,
                    cursor: None,
                    bias: None,
                },
                'g' => Event::GetPage { page, count: 2 },
                'p' => Event::PutPage {
                    page,
                    cpu: 0,
                    count: 1,
                    release: false,
                    head: false,
                    destroy: false,
                },
                _ => panic!("no event {ch}"),
            })
            .collect()
    }

    /// The other lane standing after event `at`, `frames` in and `written` bytes copied,
    /// making nothing like the leading lane's event (`exact`) or never at its input.
    fn stands(at: usize, (frames, written): (u64, u64), exact: bool) -> Counterpart {
        let input = Input {
            frames,
            written,
            ..Input::default()
        };
        Nearest { at, input, exact }
    }

    #[test]
    fn each_event_stands_at_the_input_taken_so_far() {
        let at = inputs(&lane("agfpfgrr"));
        let frames: Vec<u64> = at.iter().map(|i| i.frames).collect();
        let read: Vec<u64> = at.iter().map(|i| i.read).collect();
        assert_eq!(frames, [0, 0, 0, 1, 1, 2, 2, 2, 2]);
        assert_eq!(read, [0, 0, 0, 0, 0, 0, 0, 100, 200]);
        assert!(
            at.windows(2).all(|w| w[0] <= w[1]),
            "a lane's input only grows"
        );
        let last = at[8];
        assert_eq!(last.to_string(), "2 frames in, 200 bytes read");
        assert_eq!(at[0].to_string(), "nothing taken in yet");
        let one = Input {
            written: 1,
            sent: 1448,
            acks: 1,
            ..Input::default()
        };
        assert_eq!(
            one.to_string(),
            "1 byte of the write copied, 1448 bytes sent, 1 ack in"
        );
    }

    /// Hand-derived pairings: (lead, other, event k of the lead, where the other stands).
    #[test]
    fn the_other_lane_stands_at_the_same_input() {
        // Standing after event `at`, `frames` in, where the other kernel makes nothing like it.
        let near = |at, frames| stands(at, (frames, 0), true);
        let cases: &[(&str, &str, usize, Counterpart)] = &[
            // The frames pair, whatever came before each.
            ("agfagf", "gfgf", 3, Same(2)),
            ("agfagf", "gfgf", 6, Same(4)),
            // Before the second frame: the reuse the other kernel does not make stands
            // beside the other's point after its first frame; the get_page after it, beside
            // the other's get_page of the same frame.
            ("gfpugf", "gfpagf", 4, near(3, 1)),
            ("gfpugf", "gfpagf", 5, Same(5)),
            ("gfpugf", "gfpagf", 3, Same(3)),
            // The reverse: the allocation the patched kernel does not make.
            ("gfpagf", "gfpugf", 4, near(3, 1)),
            // At the step's start, before any input: event 0 when nothing pairs.
            ("ugf", "gf", 1, near(0, 0)),
            ("ugf", "gf", 2, Same(1)),
            // Kinds pair in order: the second put_page beside the other's second.
            ("fppp", "fpp", 3, Same(3)),
            ("fppp", "fpp", 4, near(3, 1)),
            // The same bytes copied, to a page in one kernel and the linear area in the
            // other: the copies pair by the bytes, not the kind.
            ("aCc", "cc", 2, Same(2)),
            ("aCc", "cc", 1, near(0, 0)),
        ];
        for (lead, other, k, want) in cases {
            let got = counterpart(&lane(lead), &lane(other), *k);
            assert_eq!(got, Some(*want), "{lead} event {k} beside {other}");
        }
    }

    /// Issue 36's cases, in the walkthroughs (snapshots/*.snap show their events).
    #[test]
    fn the_walkthroughs_cases_stand_at_the_same_input() {
        let events = |name: &str, lane: usize, step: usize| {
            let w = crate::walkthrough::find(name).expect("a walkthrough");
            let t = w.traces(|_, o| w.scenario.run(o)).expect("runs");
            t[lane].steps[step - 1].events.clone()
        };
        let nth = |events: &[Event], kind: &str, n: usize| {
            let mut at = events
                .iter()
                .enumerate()
                .filter(|(_, e)| e.kind().name() == kind);
            at.nth(n).map(|(i, _)| i + 1).expect("so many")
        };
        // rx-page-reuse step 1: Duyck's reuse_page comes before the sixth head; the kernel
        // before stands after its fifth frame, just before the sixth head's get_page.
        let (before, after) = (events("rx-page-reuse", 0, 1), events("rx-page-reuse", 1, 1));
        let reuse = nth(&after, "reuse_page", 0);
        let Some(Nearest { at, input, exact }) = counterpart(&after, &before, reuse) else {
            panic!("the kernel before reuses no page");
        };
        assert!(exact && input.frames == 5, "{input}");
        assert_eq!(at + 1, nth(&before, "get_page", 5));
        // The sixth frames pair, either way.
        let six = (nth(&before, "rx_frame", 5), nth(&after, "rx_frame", 5));
        assert_eq!(counterpart(&before, &after, six.0), Some(Same(six.1)));
        assert_eq!(counterpart(&after, &before, six.1), Some(Same(six.0)));
        // send-sg-nogso step 2: kumar-2010's event 3 copies the write's first 248 bytes to a
        // page; pre-2010 copies them to the linear area, its event 1.
        let (old, new) = (events("send-sg-nogso", 0, 2), events("send-sg-nogso", 1, 2));
        assert_eq!(counterpart(&new, &old, 3), Some(Same(1)));
        assert_eq!(counterpart(&old, &new, 1), Some(Same(3)));
        // Its put_page before any copy: the kernel before, at the step's start.
        assert_eq!(counterpart(&new, &old, 1), Some(stands(0, (0, 0), true)));
    }

    /// Where the other kernel takes the input in other pieces it never stands at exactly
    /// the leading lane's input: its last point before it.
    #[test]
    fn other_pieces_stand_at_the_last_point_before() {
        // The other's last point before, after event `at`, `written` bytes in.
        let before = |at, written| stands(at, (0, written), false);
        // 100 bytes copied: the other copies 200 at once.
        let near = counterpart(&lane("cgc"), &lane("aCg"), 1);
        assert_eq!(near, Some(before(1, 0)));
        // 200 bytes: both stand there, the other after its one copy.
        assert_eq!(counterpart(&lane("cgc"), &lane("aCg"), 3), Some(Same(2)));
        // More than the other ever takes in: its last event.
        let far = counterpart(&lane("ccc"), &lane("c"), 3);
        assert_eq!(far, Some(before(1, 100)));
        assert_eq!(counterpart(&lane("c"), &lane("c"), 0), None);
        assert_eq!(counterpart(&lane("c"), &lane("c"), 2), None);
    }
}

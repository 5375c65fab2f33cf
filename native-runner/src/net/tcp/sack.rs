//! The sender's loss-recovery bookkeeping, RFC 6675, kept as the kernel keeps it in the
//! retransmit queue (`tcp_sacktag_write_queue` and the `TCPCB_SACKED_ACKED`, `TCPCB_LOST`,
//! `TCPCB_SACKED_RETRANS` marks): which stream ranges the peer's SACK blocks (RFC 2018)
//! reported, which are presumed lost, and which were resent since. From these follow the data
//! in flight (`SetPipe`) and what to resend next (`NextSeg`). Loss is marked by RFC 6675's
//! `IsLost` here, by RACK ([`super::rack`]) and by the caller's timeout and NewReno rules.
//! Offsets are stream offsets, as in [`super::tcp`].

use std::collections::BTreeMap;

/// RFC 6675 `DupThresh`: a hole is lost once this many separate SACKed ranges, or more than
/// `DupThresh - 1` segments of SACKed bytes, lie above it (the kernel's initial
/// `tp->reordering`, `TCP_FASTRETRANS_THRESH` = 3).
pub const DUP_THRESH: u64 = 3;

/// Disjoint, merged byte ranges: start -> end.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Ranges(BTreeMap<u64, u64>);

impl Ranges {
    /// Adds `start..end`; returns how many bytes were not covered before.
    pub fn insert(&mut self, start: u64, end: u64) -> u64 {
        if start >= end {
            return 0;
        }
        let (mut a, mut b) = (start, end);
        let mut known = 0;
        for (s, e) in self.touching(start, end) {
            self.0.remove(&s);
            known += e.min(end).saturating_sub(s.max(start));
            a = a.min(s);
            b = b.max(e);
        }
        self.0.insert(a, b);
        end - start - known
    }

    /// Takes `start..end` out, splitting ranges that straddle it.
    pub fn remove(&mut self, start: u64, end: u64) {
        if start >= end {
            return;
        }
        for (s, e) in self.touching(start, end) {
            self.0.remove(&s);
            if s < start {
                self.0.insert(s, start);
            }
            if e > end {
                self.0.insert(end, e);
            }
        }
    }

    /// The ranges that overlap or touch `start..end`.
    fn touching(&self, start: u64, end: u64) -> Vec<(u64, u64)> {
        self.0
            .range(..=end)
            .rev()
            .take_while(|(_, &e)| e >= start)
            .map(|(&s, &e)| (s, e))
            .collect()
    }

    /// The parts of the ranges within `start..end`, lowest first.
    pub fn within(&self, start: u64, end: u64) -> impl Iterator<Item = (u64, u64)> + '_ {
        let first = self.0.range(..start).next_back().map(|(&s, _)| s);
        self.0
            .range(first.unwrap_or(start)..end)
            .map(move |(&s, &e)| (s.max(start), e.min(end)))
            .filter(|(s, e)| s < e)
    }

    /// How many bytes of `start..end` are covered.
    pub fn bytes(&self, start: u64, end: u64) -> u64 {
        self.within(start, end).map(|(s, e)| e - s).sum()
    }

    /// The parts of `start..end` not covered, lowest first.
    pub fn gaps(&self, start: u64, end: u64) -> Vec<(u64, u64)> {
        let mut out = Vec::new();
        let mut at = start;
        for (s, e) in self.within(start, end) {
            if s > at {
                out.push((at, s));
            }
            at = e;
        }
        if at < end {
            out.push((at, end));
        }
        out
    }
}

/// The flight's marks. Invariant: no SACKed byte is also lost or resent.
#[derive(Clone, Debug, Default)]
pub struct Scoreboard {
    sacked: Ranges,
    lost: Ranges,
    /// Resent and not presumed lost again since (the kernel's `TCPCB_SACKED_RETRANS`).
    resent: Ranges,
}

/// A `NextSeg` rule: the scoreboard and the flight `una..nxt` in, the range to resend out.
pub type NextSeg = fn(&Scoreboard, u64, u64) -> Option<(u64, u64)>;

impl Scoreboard {
    /// Records one SACK block `start..end`; returns how many bytes it newly SACKed.
    pub fn sack(&mut self, start: u64, end: u64) -> u64 {
        self.lost.remove(start, end);
        self.resent.remove(start, end);
        self.sacked.insert(start, end)
    }

    /// Forgets what `snd_una` has passed (cumulatively acknowledged).
    pub fn advance(&mut self, una: u64) {
        for r in [&mut self.sacked, &mut self.lost, &mut self.resent] {
            r.remove(0, una);
        }
    }

    /// Presumes the unSACKed bytes of `start..end` lost. A range resent since it was last
    /// presumed lost stays in flight unless `again` (RACK found the resend lost too).
    pub fn mark_lost(&mut self, start: u64, end: u64, again: bool) {
        for (s, e) in self.sacked.gaps(start, end) {
            self.lost.insert(s, e);
            if again {
                self.resent.remove(s, e);
            }
        }
    }

    /// `start..end` went out again.
    pub fn resent(&mut self, start: u64, end: u64) {
        for (s, e) in self.sacked.gaps(start, end) {
            self.resent.insert(s, e);
        }
    }

    /// A retransmission timeout (the kernel's `tcp_timeout_mark_lost`): every unSACKed byte
    /// of the flight is lost, resent or not.
    pub fn timeout(&mut self, una: u64, nxt: u64) {
        self.resent = Ranges::default();
        self.mark_lost(una, nxt, true);
    }

    /// RFC 6675 `IsLost` for every hole in `una..nxt`: lost when at least [`DUP_THRESH`]
    /// SACKed ranges, or more than `(DUP_THRESH - 1) * mss` SACKed bytes, lie above it.
    pub fn mark_lost_by_sacks(&mut self, una: u64, nxt: u64, mss: u64) {
        let blocks: Vec<(u64, u64)> = self.sacked.within(una, nxt).collect();
        let mut above = blocks.len() as u64;
        let mut bytes: u64 = blocks.iter().map(|(s, e)| e - s).sum();
        let mut at = una;
        for &(s, e) in &blocks {
            if s > at && (above >= DUP_THRESH || bytes > (DUP_THRESH - 1) * mss) {
                self.lost.insert(at, s);
            }
            above -= 1;
            bytes -= e - s;
            at = e;
        }
    }

    /// Nothing is presumed lost any more (the kernel's `tcp_undo_cwnd_reduction` clearing
    /// `TCPCB_LOST`): the timeout that presumed it was spurious. Resends stay in flight.
    pub fn unmark_lost(&mut self) {
        self.lost = Ranges::default();
    }

    /// Bytes of `una..nxt` SACKed.
    pub fn sacked_bytes(&self, una: u64, nxt: u64) -> u64 {
        self.sacked.bytes(una, nxt)
    }

    /// Bytes of `una..nxt` resent and still in flight (the kernel's `retrans_out`).
    pub fn resent_bytes(&self, una: u64, nxt: u64) -> u64 {
        self.resent.bytes(una, nxt)
    }

    /// Some byte of `una..nxt` is presumed lost and not resent since.
    pub fn has_lost(&self, una: u64, nxt: u64) -> bool {
        next_lost(self, una, nxt).is_some()
    }

    /// RFC 6675 `SetPipe`, as the kernel's `tcp_packets_in_flight` counts it: the flight,
    /// less SACKed and lost bytes, plus resent ones.
    pub fn pipe(&self, una: u64, nxt: u64) -> u64 {
        (nxt - una) - self.sacked.bytes(una, nxt) - self.lost.bytes(una, nxt)
            + self.resent.bytes(una, nxt)
    }
}

/// RFC 6675 `NextSeg` rule 1: the first lost range not resent since.
pub fn next_lost(b: &Scoreboard, una: u64, nxt: u64) -> Option<(u64, u64)> {
    b.lost
        .within(una, nxt)
        .find_map(|(s, e)| b.resent.gaps(s, e).first().copied())
}

/// RFC 6675 `NextSeg` rule 3 (no new data may go): the first unSACKed range not resent,
/// lost or not.
pub fn next_unsacked(b: &Scoreboard, una: u64, nxt: u64) -> Option<(u64, u64)> {
    b.sacked
        .gaps(una, nxt)
        .into_iter()
        .find_map(|(s, e)| b.resent.gaps(s, e).first().copied())
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 100;

    fn board(blocks: &[(u64, u64)]) -> Scoreboard {
        let mut b = Scoreboard::default();
        for &(s, e) in blocks {
            b.sack(s, e);
        }
        b
    }

    #[test]
    fn ranges_merge_split_and_count_only_new_bytes() {
        let mut r = Ranges::default();
        r.insert(100, 200);
        r.insert(300, 400);
        assert_eq!(r.insert(150, 350), 100, "only 200..300 is new");
        assert_eq!(r.0, BTreeMap::from([(100, 400)]));
        assert_eq!(r.insert(400, 500), 100, "adjacent ranges join");
        assert_eq!(r.insert(120, 130), 0);
        r.remove(200, 250);
        assert_eq!(r.0, BTreeMap::from([(100, 200), (250, 500)]));
        assert_eq!(r.gaps(0, 600), [(0, 100), (200, 250), (500, 600)]);
        assert_eq!(r.bytes(150, 300), 100);
        r.remove(0, 450);
        assert_eq!(r.0, BTreeMap::from([(450, 500)]));
    }

    /// Holes between SACKed ranges, and which are lost, derived by hand: one segment of
    /// 100 bytes each, sent 0..1000.
    #[test]
    fn a_hole_is_lost_with_three_ranges_or_over_two_segments_sacked_above_it() {
        // Ranges 100..200, 300..400, 500..600; nothing past 600 SACKed.
        let mut b = board(&[(100, 200), (300, 400), (500, 600)]);
        b.mark_lost_by_sacks(0, 1000, MSS);
        // Only 0..100 has three ranges above it; 200..300 has two (200 bytes, not over
        // 2 x MSS), 400..500 one, the tail none.
        assert_eq!(b.lost.0, BTreeMap::from([(0, 100)]));
        // 100 lost bytes not resent; the other 600 unSACKed bytes are in flight.
        assert_eq!(b.pipe(0, 1000), 600);
        assert_eq!(next_lost(&b, 0, 1000), Some((0, 100)));
        b.resent(0, 50);
        assert_eq!(b.pipe(0, 1000), 650, "half the lost hole resent");
        assert_eq!(next_lost(&b, 0, 1000), Some((50, 100)));
        b.resent(50, 100);
        assert_eq!(next_lost(&b, 0, 1000), None);
        assert_eq!(next_unsacked(&b, 0, 1000), Some((200, 300)));
        // One range of 300 bytes (over 2 x MSS) above a hole: lost too.
        let mut b = board(&[(100, 400)]);
        b.mark_lost_by_sacks(0, 400, MSS);
        assert_eq!(b.lost.0, BTreeMap::from([(0, 100)]));
    }

    #[test]
    fn a_timeout_marks_the_unsacked_flight_lost_and_forgets_the_resends() {
        let mut b = board(&[(100, 200)]);
        b.mark_lost(0, 100, false);
        b.resent(0, 100);
        b.timeout(0, 1000);
        assert_eq!(b.pipe(0, 1000), 0);
        assert_eq!(next_lost(&b, 0, 1000), Some((0, 100)), "resent again");
        b.resent(0, 100);
        assert_eq!(next_lost(&b, 0, 1000), Some((200, 1000)), "SACKed skipped");
    }

    #[test]
    fn a_resend_presumed_lost_again_goes_out_again_only_when_rack_says_so() {
        let mut b = Scoreboard::default();
        b.mark_lost(0, 100, false);
        b.resent(0, 100);
        assert_eq!(b.pipe(0, 1000), 1000, "the resend is in flight");
        // IsLost or NewReno marking the same hole again changes nothing ...
        b.mark_lost(0, 100, false);
        assert_eq!(next_lost(&b, 0, 1000), None);
        // ... RACK finding the resend lost puts it up for resending.
        b.mark_lost(0, 100, true);
        assert_eq!(next_lost(&b, 0, 1000), Some((0, 100)));
        assert_eq!(b.pipe(0, 1000), 900);
        // A SACK for it clears both marks.
        b.sack(0, 100);
        assert!(!b.has_lost(0, 1000));
        assert_eq!(b.pipe(0, 1000), 900);
    }
}

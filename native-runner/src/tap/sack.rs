//! The sender's loss-recovery bookkeeping, RFC 6675 (as the kernel's `tcp_sacktag_write_queue`
//! keeps it in the retransmit queue): a scoreboard of the stream ranges the peer's SACK blocks
//! (RFC 2018) reported, the holes between them, which holes count as lost (`IsLost`), the
//! data in flight (`SetPipe`) and what to resend next (`NextSeg`). Offsets are stream offsets,
//! as in [`super::tcp`].

use std::collections::BTreeMap;

/// RFC 6675 `DupThresh`: a hole is lost once this many separate SACKed ranges, or more than
/// `DupThresh - 1` segments of SACKed bytes, lie above it (the kernel's initial
/// `tp->reordering`, `TCP_FASTRETRANS_THRESH` = 3).
pub const DUP_THRESH: u64 = 3;

/// The SACKed ranges above `snd_una`, merged: start -> end.
#[derive(Clone, Debug, Default)]
pub struct Scoreboard {
    blocks: BTreeMap<u64, u64>,
}

/// A range of sent data not SACKed: `start..lost_end` is presumed lost, `lost_end..end` in
/// flight.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hole {
    pub start: u64,
    pub end: u64,
    pub lost_end: u64,
}

impl Scoreboard {
    /// Records one SACK block `start..end`; returns how many bytes it newly SACKed.
    pub fn sack(&mut self, start: u64, end: u64) -> u64 {
        if start >= end {
            return 0;
        }
        let (mut a, mut b) = (start, end);
        let mut known = 0;
        let touching: Vec<(u64, u64)> = self
            .blocks
            .range(..=end)
            .rev()
            .take_while(|(_, &e)| e >= start)
            .map(|(&s, &e)| (s, e))
            .collect();
        for (s, e) in touching {
            self.blocks.remove(&s);
            known += e.min(end).saturating_sub(s.max(start));
            a = a.min(s);
            b = b.max(e);
        }
        self.blocks.insert(a, b);
        end - start - known
    }

    /// Forgets what `snd_una` has passed (cumulatively acknowledged).
    pub fn advance(&mut self, una: u64) {
        while let Some((&s, &e)) = self.blocks.first_key_value() {
            if s >= una {
                break;
            }
            self.blocks.remove(&s);
            if e > una {
                self.blocks.insert(una, e);
            }
        }
    }

    /// The holes in `una..nxt`, lowest first. A hole is lost (RFC 6675 `IsLost`) when at
    /// least [`DUP_THRESH`] SACKed ranges, or more than `(DUP_THRESH - 1) * mss` SACKed bytes,
    /// lie above it; and, whatever the SACKs say, everything below `lost_below` (the caller's
    /// rule: after a timeout all of the flight, in recovery the first segment).
    pub fn holes(&self, una: u64, nxt: u64, mss: u64, lost_below: u64) -> Vec<Hole> {
        let blocks: Vec<(u64, u64)> = self
            .blocks
            .range(una..nxt)
            .map(|(&s, &e)| (s, e.min(nxt)))
            .collect();
        let mut holes = Vec::new();
        let mut at = una;
        // SACKed ranges and bytes above the current hole: all of them at first.
        let mut above = blocks.len() as u64;
        let mut bytes: u64 = blocks.iter().map(|(s, e)| e - s).sum();
        for &(s, e) in &blocks {
            if s > at {
                let lost = above >= DUP_THRESH || bytes > (DUP_THRESH - 1) * mss;
                holes.push(Self::hole(at, s, lost, lost_below));
            }
            above -= 1;
            bytes -= e - s;
            at = at.max(e);
        }
        if at < nxt {
            holes.push(Self::hole(at, nxt, false, lost_below));
        }
        holes
    }

    fn hole(start: u64, end: u64, lost: bool, lost_below: u64) -> Hole {
        let lost_end = if lost {
            end
        } else {
            lost_below.clamp(start, end)
        };
        Hole {
            start,
            end,
            lost_end,
        }
    }
}

/// A `NextSeg` rule: the holes and `high_rxt` in, the range to resend out.
pub type NextSeg = fn(&[Hole], u64) -> Option<(u64, u64)>;

/// RFC 6675 `SetPipe`: the bytes in flight. Every unSACKed byte that is not lost, and every
/// lost one already resent (up to `high_rxt`).
pub fn pipe(holes: &[Hole], high_rxt: u64) -> u64 {
    holes
        .iter()
        .map(|h| (h.end - h.lost_end) + high_rxt.clamp(h.start, h.lost_end) - h.start)
        .sum()
}

/// RFC 6675 `NextSeg` rule 1: the first lost range above `high_rxt`, as `start..end`.
pub fn next_lost(holes: &[Hole], high_rxt: u64) -> Option<(u64, u64)> {
    holes
        .iter()
        .map(|h| (h.start.max(high_rxt), h.lost_end))
        .find(|(s, e)| s < e)
}

/// RFC 6675 `NextSeg` rule 3 (no new data may go): the first unSACKed range above
/// `high_rxt`, lost or not.
pub fn next_unsacked(holes: &[Hole], high_rxt: u64) -> Option<(u64, u64)> {
    holes
        .iter()
        .map(|h| (h.start.max(high_rxt), h.end))
        .find(|(s, e)| s < e)
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
    fn blocks_merge_and_count_only_new_bytes() {
        let mut b = board(&[(100, 200), (300, 400)]);
        assert_eq!(b.sack(150, 350), 100, "only 200..300 is new");
        assert_eq!(b.blocks, BTreeMap::from([(100, 400)]));
        assert_eq!(b.sack(400, 500), 100, "adjacent ranges join");
        assert_eq!(b.blocks, BTreeMap::from([(100, 500)]));
        assert_eq!(b.sack(120, 130), 0);
        b.advance(450);
        assert_eq!(b.blocks, BTreeMap::from([(450, 500)]));
    }

    /// Holes between SACKed ranges, and which are lost, derived by hand: one segment of
    /// 100 bytes each, sent 0..1000.
    #[test]
    fn a_hole_is_lost_with_three_ranges_or_over_two_segments_sacked_above_it() {
        // Ranges 100..200, 300..400, 500..600; nothing past 600 SACKed.
        let b = board(&[(100, 200), (300, 400), (500, 600)]);
        let h = b.holes(0, 1000, MSS, 0);
        let want = [
            // Three ranges above: lost.
            Hole {
                start: 0,
                end: 100,
                lost_end: 100,
            },
            // Two ranges, 200 bytes (not over 2 x MSS): not lost.
            Hole {
                start: 200,
                end: 300,
                lost_end: 200,
            },
            Hole {
                start: 400,
                end: 500,
                lost_end: 400,
            },
            // The tail: nothing above it.
            Hole {
                start: 600,
                end: 1000,
                lost_end: 600,
            },
        ];
        assert_eq!(h, want);
        // 100 lost bytes not resent; the other 600 unSACKed bytes are in flight.
        assert_eq!(pipe(&h, 0), 600);
        assert_eq!(pipe(&h, 50), 650, "half the lost hole resent");
        assert_eq!(next_lost(&h, 0), Some((0, 100)));
        assert_eq!(next_lost(&h, 100), None);
        assert_eq!(next_unsacked(&h, 100), Some((200, 300)));
        // One range of 300 bytes (over 2 x MSS) above a hole: lost too.
        let h = board(&[(100, 400)]).holes(0, 400, MSS, 0);
        assert_eq!(
            h,
            [Hole {
                start: 0,
                end: 100,
                lost_end: 100
            }]
        );
    }

    #[test]
    fn the_callers_rule_marks_a_prefix_lost() {
        let b = board(&[(100, 200)]);
        // After a timeout: everything sent before it.
        let h = b.holes(0, 1000, MSS, 1000);
        assert_eq!(pipe(&h, 0), 0);
        assert_eq!(next_lost(&h, 0), Some((0, 100)));
        assert_eq!(next_lost(&h, 100), Some((200, 1000)));
        // In recovery: the first segment only.
        let h = b.holes(0, 1000, MSS, 100);
        assert_eq!(next_lost(&h, 0), Some((0, 100)));
        assert_eq!(pipe(&h, 100), 900);
    }
}

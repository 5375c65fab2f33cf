//! Undoing a window reduction that turns out needless, as Linux does in
//! `net/ipv4/tcp_input.c` (read at v6.12: `tcp_init_undo`, `tcp_packet_delayed`,
//! `tcp_may_undo`, `tcp_check_dsack`, `tcp_try_undo_loss`, `tcp_try_undo_recovery`,
//! `tcp_undo_cwnd_reduction`; `tcp_retransmit_skb` in `tcp_output.c` counts the resends).
//!
//! A recovery or a timeout halves the window on a guess that data was lost. The guess was
//! wrong when the peer got the originals after all, and it can say so two ways: its ACK
//! echoes a timestamp older than our first resend (the ACK answered an original, RFC 7323's
//! Eifel test), or it reports every resend as a duplicate in D-SACK blocks (RFC 2883). Then
//! the kernel puts the window back as it was. On the TAP this matters: a loss probe the
//! kernel answers with a delayed ACK lets the runner's short timeout fire first, and without
//! undo each such timeout would cost the whole window.

use crate::net::wire::before;

/// What one episode (a recovery or a timeout) changed, kept to put back.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Undo {
    /// `undo_marker`: `snd_una` when the episode began; `None` once undone or never begun.
    marker: Option<u64>,
    /// `undo_retrans`: segments resent and not yet reported duplicate by a D-SACK; the
    /// kernel's -1 ("none resent yet") is `None`, so `Some(0)` means "every resend was
    /// needless".
    retrans: Option<u64>,
    /// `retrans_stamp`: our timestamp (µs) on the first resend since the flight was clean.
    stamp: Option<u32>,
    /// `prior_cwnd` and `prior_ssthresh`, in bytes.
    prior: (u64, u64),
}

impl Undo {
    /// `tcp_init_undo`, with the window as it was: an episode begins at `una` with
    /// `resent_out` segments resent and still out (they may draw D-SACKs later).
    pub fn init(&mut self, una: u64, resent_out: u64, cwnd: u64, ssthresh: u64) {
        self.marker = Some(una);
        self.retrans = (resent_out > 0).then_some(resent_out);
        self.prior = (cwnd, ssthresh);
    }

    /// `tcp_retransmit_skb`: `segs` segments resent, stamped `tsval`.
    pub fn on_resend(&mut self, segs: u64, tsval: u32) {
        self.stamp.get_or_insert(tsval);
        self.retrans = Some(self.retrans.unwrap_or(0) + segs);
    }

    /// `tcp_check_dsack`: the peer got `segs` segments ending at `end` twice. Only a
    /// D-SACK of data sent since the episode began counts against its resends.
    pub fn on_dsack(&mut self, end: u64, segs: u64) {
        if let (Some(marker), Some(n)) = (self.marker, self.retrans.as_mut()) {
            if end > marker {
                *n = n.saturating_sub(segs);
            }
        }
    }

    /// `tcp_packet_delayed`: nothing was resent, or the ACK echoes a timestamp from before
    /// the first resend (so it answers an original).
    fn delayed(&self, tsecr: Option<u32>) -> bool {
        match (self.stamp, tsecr) {
            (None, _) => true,
            (Some(first), Some(ecr)) => before(ecr, first),
            (Some(_), None) => false,
        }
    }

    /// `tcp_may_undo` then `tcp_undo_cwnd_reduction`: when the episode's reduction was
    /// needless, ends it and returns the window to restore, Reno's `undo_cwnd` (the larger
    /// of `cwnd` and the prior one) and the larger ssthresh.
    pub fn try_undo(&mut self, tsecr: Option<u32>, cwnd: u64, ssthresh: u64) -> Option<(u64, u64)> {
        let may = self.marker.is_some() && (self.retrans == Some(0) || self.delayed(tsecr));
        if !may {
            return None;
        }
        self.marker = None;
        let (prior_cwnd, prior_ssthresh) = self.prior;
        Some((cwnd.max(prior_cwnd), ssthresh.max(prior_ssthresh)))
    }

    /// `tcp_retrans_stamp_cleanup`: no resend is out any more, so the next episode's
    /// timestamp test starts from its own first resend.
    pub fn clean(&mut self) {
        self.stamp = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SEG: u64 = 1448;

    /// A timeout at snd_una 0 with cwnd 10 segments; the resend of one segment goes at
    /// 5,000 µs.
    fn timed_out() -> Undo {
        let mut u = Undo::default();
        u.init(0, 0, 10 * SEG, 7 * SEG);
        u.on_resend(1, 5_000);
        u
    }

    #[test]
    fn an_ack_echoing_an_original_undoes() {
        let mut u = timed_out();
        // Echoes 4,000 µs: sent before the resend.
        assert_eq!(
            u.try_undo(Some(4_000), SEG, 5 * SEG),
            Some((10 * SEG, 7 * SEG))
        );
        assert_eq!(u.try_undo(Some(4_000), SEG, 5 * SEG), None, "once only");
    }

    #[test]
    fn an_ack_echoing_the_resend_does_not_undo_until_a_dsack_reports_it() {
        let mut u = timed_out();
        assert_eq!(u.try_undo(Some(5_000), SEG, 5 * SEG), None);
        assert_eq!(
            u.try_undo(None, SEG, 5 * SEG),
            None,
            "no timestamp, no proof"
        );
        // A D-SACK of data from before the episode says nothing of its resends.
        let mut late = timed_out();
        late.init(2 * SEG, 0, 10 * SEG, 7 * SEG);
        late.on_resend(1, 5_000);
        late.on_dsack(SEG, 1);
        assert_eq!(late.try_undo(Some(5_000), SEG, 5 * SEG), None);
        // The resend reported duplicate: every resend was needless.
        u.on_dsack(SEG, 1);
        assert_eq!(
            u.try_undo(Some(5_000), SEG, 5 * SEG),
            Some((10 * SEG, 7 * SEG))
        );
    }

    #[test]
    fn undo_never_lowers_the_window() {
        let mut u = timed_out();
        assert_eq!(
            u.try_undo(Some(1), 12 * SEG, 9 * SEG),
            Some((12 * SEG, 9 * SEG))
        );
    }

    #[test]
    fn two_resends_need_two_duplicates() {
        let mut u = timed_out();
        u.on_resend(2, 6_000);
        u.on_dsack(2 * SEG, 2);
        assert_eq!(u.try_undo(Some(5_000), SEG, SEG), None, "one of three left");
        u.on_dsack(3 * SEG, 1);
        assert!(u.try_undo(Some(5_000), SEG, SEG).is_some());
    }

    #[test]
    fn the_timestamp_test_starts_from_the_first_resend_after_a_clean_flight() {
        let mut u = timed_out();
        u.on_resend(1, 9_000);
        // 6,000 µs is after the first resend (5,000): not an original's echo.
        assert_eq!(u.try_undo(Some(6_000), SEG, SEG), None);
        u.clean();
        u.on_resend(1, 9_000);
        assert!(u.try_undo(Some(6_000), SEG, SEG).is_some());
    }
}

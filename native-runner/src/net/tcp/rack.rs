//! RACK, time-based loss detection (RFC 8985), as Linux runs it in `net/ipv4/tcp_recovery.c`
//! (read at torvalds/linux commit 010b64f7: `tcp_rack_advance`, `tcp_rack_detect_loss`,
//! `tcp_rack_mark_lost`, `tcp_rack_reo_timeout`). A range sent before the most recently sent
//! range the peer has delivered (acknowledged or SACKed) is lost once it has gone
//! unacknowledged for the RTT of that delivery plus a reordering window. Sequence order plays
//! no part, so a lost *retransmission* is found too, without waiting for the
//! retransmission timer. The tail loss probe that makes RACK see a lost tail lives with the
//! sender ([`super::tcp`]), which owns the timers.

use std::collections::BTreeMap;
use std::time::Duration;

/// The reordering window's floor: the kernel's 1,000 µs in `tcp_rack_detect_loss`.
const REO_WND_MIN: Duration = Duration::from_millis(1);
/// The timer fires this long after the wait ends (the kernel's "+1 to avoid 0", in µs).
const TICK: Duration = Duration::from_micros(1);

/// One range as last sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Sent {
    end: u64,
    at: Duration,
    resent: bool,
    /// Already reported lost: skipped until sent again (the kernel takes the skb off its
    /// time-sorted list).
    lost: bool,
}

/// A range RACK found lost.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Lost {
    pub start: u64,
    pub end: u64,
    /// It was a retransmission (the kernel's `TCPLostRetransmit`).
    pub resent: bool,
}

#[derive(Clone, Debug, Default)]
pub struct Rack {
    /// The flight by stream offset: start -> how it was last sent.
    sent: BTreeMap<u64, Sent>,
    /// RACK.xmit_ts and RACK.end_seq: the latest send among the delivered ranges.
    xmit: Option<(Duration, u64)>,
    /// RACK.rtt: the RTT of that delivery.
    rtt: Duration,
    min_rtt: Option<Duration>,
    /// A delivery moved `xmit` since the last scan (the kernel's `rack.advanced`).
    advanced: bool,
}

/// `tcp_rack_sent_after`: sent later, or at the same time and ending later.
fn sent_after(a: (Duration, u64), b: (Duration, u64)) -> bool {
    a.0 > b.0 || (a.0 == b.0 && a.1 > b.1)
}

impl Rack {
    /// `start..end` went on the wire at `at` (`resent`: not for the first time).
    pub fn on_sent(&mut self, start: u64, end: u64, at: Duration, resent: bool) {
        let over: Vec<(u64, Sent)> = self
            .sent
            .range(..end)
            .rev()
            .take_while(|(_, s)| s.end > start)
            .map(|(&k, &s)| (k, s))
            .collect();
        for (k, s) in over {
            self.sent.remove(&k);
            if k < start {
                self.sent.insert(k, Sent { end: start, ..s });
            }
            if s.end > end {
                self.sent.insert(end, s);
            }
        }
        let s = Sent {
            end,
            at,
            resent,
            lost: false,
        };
        self.sent.insert(start, s);
    }

    /// `start..end` was delivered (acknowledged or SACKed) by `now`: RFC 8985 6.2 step 2
    /// (`tcp_rack_advance`). A retransmission delivered sooner than the minimum RTT was
    /// perhaps the original's delivery, so it says nothing.
    pub fn on_delivered(&mut self, start: u64, end: u64, now: Duration) {
        let hit: Vec<(u64, Sent)> = self
            .sent
            .range(..end)
            .filter(|(_, s)| s.end > start)
            .map(|(&k, &s)| (k, s))
            .collect();
        for (k, s) in hit {
            let rtt = now.saturating_sub(s.at);
            if !s.resent {
                self.min_rtt = Some(self.min_rtt.map_or(rtt, |m| m.min(rtt)));
            }
            let ambiguous = s.resent && self.min_rtt.is_some_and(|m| rtt < m);
            if !ambiguous && self.xmit.is_none_or(|x| sent_after((s.at, s.end), x)) {
                self.xmit = Some((s.at, s.end));
                self.rtt = rtt;
                self.advanced = true;
            }
            if k >= start && s.end <= end {
                self.sent.remove(&k);
            }
        }
    }

    /// An RTT measured outside RACK (the handshake, an ACK's timestamp echo): the kernel's
    /// `tcp_update_rtt_min` takes every sample.
    pub fn rtt_sample(&mut self, rtt: Duration) {
        self.min_rtt = Some(self.min_rtt.map_or(rtt, |m| m.min(rtt)));
    }

    /// Forgets the ranges below `una` (cumulatively acknowledged).
    pub fn advance(&mut self, una: u64) {
        while let Some(e) = self.sent.first_entry() {
            if e.get().end > una {
                break;
            }
            e.remove();
        }
    }

    /// RFC 8985 6.2 step 5 (`tcp_rack_detect_loss`): the ranges sent before the latest
    /// delivered one and unacknowledged for longer than its RTT plus the reordering window,
    /// and how long until the next such range expires (the kernel's `ICSK_TIME_REO_TIMEOUT`).
    /// Scans only after a delivery moved RACK on, or when `timer` (the reordering timer fired).
    pub fn detect_loss(&mut self, now: Duration, timer: bool) -> (Vec<Lost>, Option<Duration>) {
        let Some(latest) = self.xmit.filter(|_| self.advanced || timer) else {
            return (Vec::new(), None);
        };
        self.advanced = false;
        let wait = self.rtt + self.reo_wnd();
        let mut lost = Vec::new();
        let mut next: Option<Duration> = None;
        for (&start, s) in self.sent.iter_mut().filter(|(_, s)| !s.lost) {
            if !sent_after(latest, (s.at, s.end)) {
                continue;
            }
            let age = now.saturating_sub(s.at);
            if age > wait {
                s.lost = true;
                lost.push(Lost {
                    start,
                    end: s.end,
                    resent: s.resent,
                });
            } else {
                // Due just past the wait: a range is lost only once it is over.
                let due = wait - age + TICK;
                next = Some(next.map_or(due, |n| n.max(due)));
            }
        }
        (lost, next)
    }

    /// RFC 8985 6.2 step 4: a quarter of the minimum RTT, at least [`REO_WND_MIN`] (the kernel
    /// uses the floor alone once it counts losses and has seen no reordering; on the TAP the
    /// RTT is far under 4 ms, so both are the floor).
    fn reo_wnd(&self) -> Duration {
        self.min_rtt
            .map_or(REO_WND_MIN, |m| (m / 4).max(REO_WND_MIN))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    fn starts(l: &[Lost]) -> Vec<(u64, bool)> {
        l.iter().map(|l| (l.start, l.resent)).collect()
    }

    /// Segments of 100 bytes: 0 at 0 ms, 100 at 1 ms, 200 at 2 ms. Segment 200 is SACKed at
    /// 6 ms (RTT 4 ms, so reo_wnd = the 1 ms floor and the wait is 5 ms). Segment 0 has
    /// waited 6 ms: lost. Segment 100 has waited 5 ms, not over: the timer is due 1 µs later;
    /// 1 ms later it is lost too.
    #[test]
    fn a_range_sent_before_a_delivered_one_is_lost_after_rtt_plus_reo_wnd() {
        let mut r = Rack::default();
        for i in 0..3 {
            r.on_sent(i * 100, i * 100 + 100, ms(i), false);
        }
        r.on_delivered(200, 300, ms(6));
        let (lost, next) = r.detect_loss(ms(6), false);
        assert_eq!(starts(&lost), [(0, false)]);
        assert_eq!(next, Some(TICK));
        let (lost, next) = r.detect_loss(ms(7), true);
        assert_eq!(starts(&lost), [(100, false)]);
        assert_eq!(next, None);
        // Nothing newly delivered, no timer: no scan, nothing reported twice.
        assert!(r.detect_loss(ms(50), false).0.is_empty());
    }

    /// A lost retransmission, found without a timeout. 0..300 sent at 0 ms; 0 is lost, 100
    /// and 200 SACKed at 4 ms (RTT 4 ms: the wait is 5 ms, and 0 has waited 4). At 6 ms it
    /// is over: lost, resent at 6 ms. New data 300 goes at 7 ms and is SACKed at 11 ms; the
    /// resend, sent before it, has waited 5 ms then, and is lost at 12 ms: RACK reports it
    /// again, as a lost retransmission.
    #[test]
    fn a_lost_retransmission_is_found_by_time() {
        let mut r = Rack::default();
        for i in 0..3 {
            r.on_sent(i * 100, i * 100 + 100, ms(0), false);
        }
        r.on_delivered(100, 300, ms(4));
        let (lost, next) = r.detect_loss(ms(4), false);
        assert!(lost.is_empty());
        assert_eq!(next, Some(ms(1) + TICK));
        assert_eq!(starts(&r.detect_loss(ms(6), true).0), [(0, false)]);
        r.on_sent(0, 100, ms(6), true);
        r.on_sent(300, 400, ms(7), false);
        r.on_delivered(300, 400, ms(11));
        let (lost, next) = r.detect_loss(ms(11), false);
        assert!(lost.is_empty());
        assert_eq!(next, Some(TICK));
        assert_eq!(starts(&r.detect_loss(ms(12), true).0), [(0, true)]);
    }

    /// A retransmission "delivered" sooner than the minimum RTT was the original's delivery:
    /// it must not move RACK on (else everything sent before the resend would look lost).
    #[test]
    fn a_resend_acknowledged_too_soon_moves_nothing() {
        let mut r = Rack::default();
        r.on_sent(0, 100, ms(0), false);
        r.on_sent(100, 200, ms(0), false);
        r.on_delivered(100, 200, ms(10));
        r.on_sent(0, 100, ms(11), true);
        r.on_sent(200, 300, ms(11), false);
        r.on_delivered(0, 100, ms(12));
        assert_eq!(r.xmit, Some((ms(0), 200)));
        assert!(
            r.detect_loss(ms(40), false).0.is_empty(),
            "nothing sent before (0, 200)"
        );
    }

    #[test]
    fn a_resend_splits_the_range_it_overlaps() {
        let mut r = Rack::default();
        r.on_sent(0, 300, ms(0), false);
        r.on_sent(100, 200, ms(5), true);
        let got: Vec<(u64, u64, bool)> =
            r.sent.iter().map(|(&k, s)| (k, s.end, s.resent)).collect();
        assert_eq!(got, [(0, 100, false), (100, 200, true), (200, 300, false)]);
        r.advance(150);
        assert_eq!(r.sent.first_key_value().map(|(&k, _)| k), Some(100));
    }
}

//! Loss recovery as the kernel does it with SACK: the peer's SACK blocks in a
//! [`Scoreboard`], fast recovery on three duplicate ACKs or SACKed segments (RFC 6675),
//! RACK-TLP (RFC 8985: loss found by send time, [`Rack`], and a probe for a lost tail), the
//! timeout as the last resort, and undo of a reduction the peer's timestamps or D-SACKs
//! prove needless ([`Undo`]). What it resends goes out through the sender (`send.rs`).

use super::cc::Controller;
use super::rack::Rack;
use super::sack::{self, Scoreboard};
use super::timer::Timer;
use super::undo::Undo;
use super::Endpoint;
use crate::net::wire::{before, TcpIn};

/// The sender's loss state, as the kernel's `icsk_ca_state` names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ca {
    /// No loss suspected.
    Open,
    /// Fast recovery (RFC 6675): entered on [`sack::DUP_THRESH`] duplicate ACKs or SACKed
    /// segments above `snd_una`; lost holes are resent while the pipe is under cwnd.
    Recovery,
    /// After a retransmission timeout (the kernel's `tcp_enter_loss`): every unSACKed byte
    /// sent before it is lost, resent from `snd_una` in slow start, SACKed ranges skipped.
    Loss,
}

/// What loss recovery keeps between ACKs.
#[derive(Debug)]
pub struct Recovery {
    pub ca: Ca,
    pub dupacks: u32,
    /// RFC 6675 `RecoveryPoint` (the kernel's `high_seq`): `snd_nxt` when recovery began.
    pub point: u64,
    pub sacked: Scoreboard,
    pub rack: Rack,
    pub undo: Undo,
    /// RFC 8985 `TLP.end_seq`: `snd_nxt` when the probe went, until acknowledged; one probe
    /// at a time.
    pub tlp_end: Option<u64>,
}

impl Default for Recovery {
    fn default() -> Recovery {
        Recovery {
            ca: Ca::Open,
            dupacks: 0,
            point: 0,
            sacked: Scoreboard::default(),
            rack: Rack::default(),
            undo: Undo::default(),
            tlp_end: None,
        }
    }
}

impl Endpoint {
    /// Adds the ACK's SACK blocks to the scoreboard (only the parts within `snd_una..snd_nxt`:
    /// D-SACKs of old data and nonsense fall away); returns the bytes newly SACKed. A D-SACK
    /// (RFC 2883) counts against the episode's resends.
    pub(super) fn take_sacks(&mut self, t: &TcpIn) -> u64 {
        if !self.sack_ok {
            return 0;
        }
        let una = self.snd.una;
        let base = self.snd.wire(una);
        if let Some(&(s, e)) = t.sacks.first().filter(|_| is_dsack(t)) {
            let (s, e) = (Self::unwrap(una, base, s), Self::unwrap(una, base, e));
            if s < e {
                self.stats.dsacks_in += 1;
                self.rec.undo.on_dsack(e, (e - s).div_ceil(self.mss));
            }
        }
        let mut new = 0;
        for &(s, e) in &t.sacks {
            let s = Self::unwrap(una, base, s).max(una);
            let e = Self::unwrap(una, base, e).min(self.snd.nxt);
            if s < e {
                self.rec.rack.on_delivered(s, e, self.now);
                new += self.rec.sacked.sack(s, e);
            }
        }
        new
    }

    /// Starts fast recovery when loss is known (`tcp_time_to_recover`): three duplicate
    /// ACKs, or a range lost by RFC 6675's `IsLost` or by RACK.
    pub(super) fn recover_if_lost(&mut self) {
        let data_end = self.snd.nxt.min(self.snd.len());
        let lost = u64::from(self.rec.dupacks) >= sack::DUP_THRESH
            || self.rec.sacked.has_lost(self.snd.una, self.snd.nxt);
        if self.rec.ca == Ca::Open && lost && self.snd.una < data_end {
            self.enter_recovery();
        }
    }

    /// RFC 6675 5 steps 4.1-4.3 (the kernel's `tcp_enter_recovery`): halve, remember where
    /// the flight ends, and resend the first lost segment at once (the first segment is lost
    /// whatever the SACKs say, as NewReno's RFC 6582 has it).
    fn enter_recovery(&mut self) {
        self.stats.fast_retransmits += 1;
        self.begin_episode();
        self.cc.on_recovery(self.snd.flight(), self.mss);
        self.rec.ca = Ca::Recovery;
        self.rec.point = self.snd.nxt;
        let una = self.snd.una;
        self.rec.sacked.mark_lost(una, una + self.mss, false);
        if let Some((s, e)) = sack::next_lost(&self.rec.sacked, una, self.snd.nxt) {
            self.resend(s, e, self.mss);
        }
    }

    /// RFC 6298 5.4-5.6 and RFC 5681 3.1, as the kernel's `tcp_enter_loss`: one segment of
    /// window, everything unSACKed sent so far lost, resent from snd_una (our FIN too);
    /// ssthresh halves once per episode.
    pub(super) fn enter_loss(&mut self) {
        self.stats.timeouts += 1;
        let new_episode = self.rec.ca == Ca::Open;
        if new_episode {
            self.begin_episode();
        }
        self.cc.on_timeout(self.snd.flight(), self.mss, new_episode);
        self.rec.ca = Ca::Loss;
        self.rec.point = self.snd.nxt;
        self.rec.sacked.timeout(self.snd.una, self.snd.nxt);
        self.timers.stop(Timer::Reo);
        self.timers.stop(Timer::Probe);
        self.rec.dupacks = 0;
        self.timers.set(Timer::Rto, self.now + self.rtt.rto());
    }

    /// A recovery or timeout begins (`tcp_init_undo`): what it may have to put back.
    fn begin_episode(&mut self) {
        let resent_out = self.rec.sacked.resent_bytes(self.snd.una, self.snd.nxt);
        let (cwnd, ssthresh) = self.cc.undo_point();
        let segs = resent_out.div_ceil(self.mss);
        self.rec.undo.init(self.snd.una, segs, cwnd, ssthresh);
    }

    /// The kernel's `tcp_try_undo_loss` and `tcp_try_undo_recovery`: if the episode's
    /// reduction was needless, the window goes back and the connection is `Open`; after a
    /// timeout nothing stays presumed lost.
    pub(super) fn try_undo(&mut self, tsecr: Option<u32>) -> bool {
        let (cwnd, ssthresh) = (self.cc.window(), self.cc.ssthresh());
        let Some((cwnd, ssthresh)) = self.rec.undo.try_undo(tsecr, cwnd, ssthresh) else {
            return false;
        };
        self.cc.restore(cwnd, ssthresh);
        if self.rec.ca == Ca::Loss {
            self.rec.sacked.unmark_lost();
            self.stats.loss_undos += 1;
        } else {
            self.stats.recovery_undos += 1;
        }
        self.rec.ca = Ca::Open;
        true
    }

    /// RACK (RFC 8985 6.2, the kernel's `tcp_rack_mark_lost`): marks what it finds lost,
    /// resends included, and arms the reordering timer for what may be lost soon.
    pub(super) fn rack_detect(&mut self, timer: bool) {
        let (lost, reo) = self.rec.rack.detect_loss(self.now, timer);
        for l in lost {
            let segs = (l.end - l.start).div_ceil(self.mss);
            self.stats.rack_lost += segs;
            if l.resent {
                self.stats.rack_lost_resends += segs;
            }
            let start = l.start.max(self.snd.una);
            self.rec.sacked.mark_lost(start, l.end, l.resent);
        }
        if let Some(wait) = reo {
            self.timers.set(Timer::Reo, self.now + wait);
        }
    }
}

/// RFC 2883 as the kernel's `tcp_check_dsack` reads it: the first SACK block reports a
/// duplicate when it starts below the ACK, or lies within the second block.
fn is_dsack(t: &TcpIn) -> bool {
    let Some(&(s0, e0)) = t.sacks.first() else {
        return false;
    };
    t.ack.is_some_and(|ack| before(s0, ack))
        || t.sacks
            .get(1)
            .is_some_and(|&(s1, e1)| !before(e1, e0) && !before(s0, s1))
}

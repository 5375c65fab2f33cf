//! Sending: the stream cut where the model cut it (one [`Chunk`] per skb) as plain MSS-sized
//! frames or as GSO super-packets, within the peer's window (zero-window probes, RFC 9293
//! 3.8.6.1) and the congestion window measured against the pipe (RFC 6675 `NextSeg`); the
//! peer's ACKs; the tail loss probe.

use super::cc::Controller;
use super::recovery::Ca;
use super::sack::{self, NextSeg};
use super::timer::{Timer, RTO_MIN};
use super::{Chunk, Endpoint, MAX_SUPER_PAYLOAD};
use crate::net::vnet::VnetHdr;
use crate::net::wire::{TcpIn, TcpOut};
use skblab_core::consts::wire::hdr_len;
use std::time::Duration;

/// The sending half of the connection: our stream and where it stands. Sequence numbers are
/// stream offsets (0 = our first data byte).
#[derive(Debug)]
pub struct Sender {
    pub tx: Vec<u8>,
    pub chunks: Vec<Chunk>,
    pub iss: u32,
    pub una: u64,
    /// The next new byte to send: everything below it went out at least once.
    pub nxt: u64,
    /// The peer's window, bytes.
    pub wnd: u64,
}

impl Sender {
    pub fn new(tx: Vec<u8>, chunks: Vec<Chunk>, iss: u32) -> Sender {
        Sender {
            tx,
            chunks,
            iss,
            una: 0,
            nxt: 0,
            wnd: 0,
        }
    }

    /// The stream's length, bytes.
    pub fn len(&self) -> u64 {
        self.tx.len() as u64
    }

    /// The 32-bit wire number of stream offset `off`.
    pub fn wire(&self, off: u64) -> u32 {
        self.iss.wrapping_add(1).wrapping_add(off as u32)
    }

    pub fn in_flight(&self) -> bool {
        self.una < self.nxt
    }

    /// Data bytes sent and not acknowledged (our FIN aside).
    pub fn flight(&self) -> u64 {
        let len = self.len();
        self.nxt.min(len) - self.una.min(len)
    }

    pub fn unsent(&self) -> bool {
        self.nxt < self.len()
    }

    /// The end of the skb holding stream offset `off`.
    fn chunk_end(&self, off: u64) -> u64 {
        let i = self.chunks.partition_point(|c| c.end <= off);
        self.chunks.get(i).map_or(self.len(), |c| c.end)
    }
}

impl Endpoint {
    /// RFC 6298 RTT estimate from the echoed timestamp (our TSval is in microseconds).
    pub(super) fn rto_sample(&mut self, t: &TcpIn) {
        let Some((_, ecr)) = t.ts.filter(|(_, e)| *e != 0) else {
            return;
        };
        let r = f64::from(self.tsval().wrapping_sub(ecr)) / 1e6;
        self.rtt.sample(r);
        self.rec.rack.rtt_sample(Duration::from_secs_f64(r));
    }

    pub(super) fn on_ack(&mut self, t: &TcpIn) {
        let Some(ack) = t.ack else { return };
        let ack = Self::unwrap(self.snd.una, self.snd.wire(self.snd.una), ack);
        if ack > self.snd.nxt {
            return;
        }
        let wnd = u64::from(t.wnd) << self.peer_wscale;
        let data_len = self.snd.len();
        let newly_sacked = self.take_sacks(t);
        let outstanding = self.snd.una < self.snd.nxt.min(data_len);
        let mut delivered = None;
        if ack > self.snd.una {
            let una = self.snd.una;
            // Delivered by this ACK: newly SACKed bytes, and acknowledged ones not SACKed before.
            delivered = Some(ack - una - self.rec.sacked.sacked_bytes(una, ack) + newly_sacked);
            self.rec.rack.on_delivered(una, ack, self.now);
            self.snd.una = ack;
            self.rec.sacked.advance(ack);
            self.rec.rack.advance(ack);
            if self.rec.tlp_end.is_some_and(|e| ack >= e) {
                self.rec.tlp_end = None;
            }
            if self.rec.ca == Ca::Recovery && ack < self.rec.point {
                // A partial ACK: the next segment is lost too (NewReno, RFC 6582).
                self.rec.sacked.mark_lost(ack, ack + self.mss, false);
            }
            if ack > data_len {
                self.st = self.st.fin_acked();
            }
            self.rec.dupacks = 0;
            self.rto_sample(t);
            let tsecr = t.ts.map(|(_, ecr)| ecr).filter(|&e| e != 0);
            if self.rec.ca == Ca::Loss {
                // `tcp_process_loss`: an ACK that answers originals ends the timeout's episode.
                self.try_undo(tsecr);
            }
            if self.rec.ca != Ca::Open && ack >= self.rec.point {
                // RFC 6675 5 step 2: recovery ends once RecoveryPoint is acknowledged, its
                // reduction undone if needless (`tcp_try_undo_recovery`).
                if !self.try_undo(tsecr) && self.rec.ca == Ca::Recovery {
                    self.cc.on_recovery_end();
                }
                self.rec.ca = Ca::Open;
                self.rec.undo.clean();
            }
            match self.snd.in_flight() {
                true => self.timers.set(Timer::Rto, self.now + self.rtt.rto()),
                false => self.timers.stop(Timer::Rto),
            }
            // Every new ACK puts the probe a PTO from now (`tcp_schedule_loss_probe`).
            self.timers.stop(Timer::Probe);
            if !self.snd.in_flight() {
                self.timers.stop(Timer::Reo);
            }
        } else if ack == self.snd.una
            && outstanding
            && (newly_sacked > 0 || (t.payload.is_empty() && !t.fin && wnd == self.snd.wnd))
        {
            // A duplicate ACK: RFC 5681's (same window, no data), or one that SACKs new
            // data (RFC 6675 2), whatever its window says.
            self.stats.dup_acks_in += 1;
            self.rec.dupacks += 1;
        }
        self.snd.wnd = wnd;
        self.rec
            .sacked
            .mark_lost_by_sacks(self.snd.una, self.snd.nxt, self.mss);
        self.rack_detect(false);
        self.recover_if_lost();
        // After loss detection, as the kernel's `tcp_cong_control` follows
        // `tcp_fastretrans_alert`: an ACK that starts a recovery grows nothing.
        if let Some(d) = delivered.filter(|_| self.rec.ca != Ca::Recovery) {
            self.cc.on_ack(d, self.mss);
        }
        let rto_idle = self.timers.get(Timer::Rto).is_none();
        if !self.snd.in_flight() && self.snd.unsent() && rto_idle && self.window_shut() {
            self.timers.set(Timer::Rto, self.now + self.rtt.rto());
        }
    }

    /// How much of `off..end` goes in one frame under `room`: at most one MSS on a plain
    /// device; on a GSO device up to the skb's end, or a whole number of segments when the
    /// room or IPv4's length cuts it (as `tso_fragment` does). Never past the skb holding `off`.
    fn cut(&self, off: u64, end: u64, room: u64) -> u64 {
        let want = end.min(self.snd.chunk_end(off)).saturating_sub(off);
        let mut len = want.min(room);
        if !self.cfg.gso {
            len = len.min(self.mss);
        } else if len > self.mss && (len < want || len > MAX_SUPER_PAYLOAD) {
            len = len.min(MAX_SUPER_PAYLOAD);
            len -= len % self.mss;
        }
        len
    }

    /// Resends from `off` towards `end` within `room` and counts it for undo (the kernel's
    /// `tcp_retransmit_skb`). Returns the sequence space resent.
    pub(super) fn resend(&mut self, off: u64, end: u64, room: u64) -> u64 {
        let n = self.resend_frame(off, end, room);
        if n > 0 {
            let tsval = self.tsval();
            self.rec.undo.on_resend(n.div_ceil(self.mss), tsval);
        }
        n
    }

    /// Resends from `off` towards `end` within `room`; our FIN when `off` is past the data
    /// (`__tcp_retransmit_skb`, which a loss probe calls directly). Returns the sequence
    /// space resent.
    fn resend_frame(&mut self, off: u64, end: u64, room: u64) -> u64 {
        let data_len = self.snd.len();
        let n = if off >= data_len {
            self.send_fin();
            1
        } else {
            let n = self.cut(off, end.min(data_len), room);
            if n > 0 {
                self.send_data(off, n);
            }
            n
        };
        self.rec.sacked.resent(off, off + n);
        n
    }

    /// Sends `len` bytes at `off`: one plain frame, or one super-packet when longer than MSS.
    fn send_data(&mut self, off: u64, len: u64) {
        let end = off + len;
        let i = self.snd.chunks.partition_point(|c| c.end < end);
        let psh = self
            .snd
            .chunks
            .get(i)
            .is_some_and(|c| c.end == end && c.psh);
        let segs = len.div_ceil(self.mss);
        let vnet = if segs > 1 {
            self.stats.super_packets_out += 1;
            VnetHdr::tcpv4(hdr_len(true) as u16, self.mss as u16)
        } else {
            VnetHdr::default()
        };
        let resent = off < self.snd.nxt;
        if resent {
            self.stats.retransmitted_segments += segs;
        }
        self.data_frame(off, end, psh, resent, vnet);
    }

    /// Sends `payload` at once as one frame behind `vnet`, whatever the congestion window:
    /// the kernel oracle's skbs, each one TAP write as the model built it, paced by the
    /// model's `arrive` ops (the caller waits for [`Endpoint::send_room`]).
    pub fn push(&mut self, payload: &[u8], vnet: VnetHdr) {
        let off = self.snd.len();
        self.snd.tx.extend_from_slice(payload);
        let end = self.snd.len();
        self.snd.chunks.push(Chunk { end, psh: false });
        self.data_frame(off, end, false, false, vnet);
        self.snd.nxt = end;
    }

    /// The frame of stream bytes `off..end`.
    fn data_frame(&mut self, off: u64, end: u64, psh: bool, resent: bool, vnet: VnetHdr) {
        self.rec.rack.on_sent(off, end, self.now, resent);
        self.stats.segments_out += (end - off).div_ceil(self.mss);
        self.stats.bytes_out += end - off;
        let t = TcpOut {
            seq: self.snd.wire(off),
            ack: self.ack_field(),
            psh,
            wnd: self.rcv_wnd_field(),
            opts: self.opts(),
            payload: &[],
            ..TcpOut::default()
        };
        let tx = std::mem::take(&mut self.snd.tx);
        self.emit(
            TcpOut {
                payload: &tx[off as usize..end as usize],
                ..t
            },
            vnet,
        );
        self.snd.tx = tx;
        self.arm_rto_if_idle();
    }

    /// Our FIN, at the sequence number after the data.
    fn send_fin(&mut self) {
        let t = TcpOut {
            seq: self.snd.wire(self.snd.len()),
            ack: self.ack_field(),
            fin: true,
            wnd: self.rcv_wnd_field(),
            opts: self.opts(),
            ..TcpOut::default()
        };
        self.emit(t, VnetHdr::default());
        self.arm_rto_if_idle();
    }

    fn arm_rto_if_idle(&mut self) {
        if self.timers.get(Timer::Rto).is_none() {
            self.timers.set(Timer::Rto, self.now + self.rtt.rto());
        }
    }

    /// Sends what the windows allow (RFC 6675 `NextSeg`): in recovery the lost ranges first
    /// (rule 1), then new data as the skb boundaries cut it (rule 2), then our FIN, then, with
    /// no new data left, ranges not yet known lost (rule 3). The congestion window is
    /// measured against the pipe, so SACKed data frees room.
    pub(super) fn transmit(&mut self) {
        if !self.st.synchronized() {
            return;
        }
        let data_len = self.snd.len();
        let mut pipe = self.rec.sacked.pipe(self.snd.una, self.snd.nxt);
        let before = pipe;
        if self.rec.ca != Ca::Open {
            pipe += self.resend_while(pipe, sack::next_lost);
        }
        while self.snd.nxt < data_len {
            let flight = self.snd.nxt - self.snd.una;
            let room = self
                .snd
                .wnd
                .saturating_sub(flight)
                .min(self.cc.window().saturating_sub(pipe));
            let want = self.snd.chunk_end(self.snd.nxt) - self.snd.nxt;
            let len = self.cut(self.snd.nxt, data_len, room);
            // No silly windows: a segment shorter than the skb's next one never goes, even
            // with nothing out (`tcp_snd_wnd_test`); a window too small for it is probed.
            if len == 0 || len < self.mss.min(want) {
                break;
            }
            self.send_data(self.snd.nxt, len);
            self.snd.nxt += len;
            pipe += len;
        }
        // As `tcp_write_xmit` ends: no segment's room left under cwnd means cwnd limited the
        // sending (the kernel counts both in whole packets).
        let limited = self.cc.window().saturating_sub(pipe) < self.mss;
        if pipe > before || limited {
            let (flight, una, nxt) = (self.snd.flight(), self.snd.una, self.snd.nxt);
            self.cc.on_sent(limited, flight, una, nxt);
        }
        // Our FIN, once the data is out and we may close.
        if self.snd.nxt == data_len && self.st.fin_due(self.cfg.close_first) {
            self.st = self.st.fin_sent();
            self.snd.nxt = data_len + 1;
            self.send_fin();
        }
        if self.rec.ca != Ca::Open && !self.snd.unsent() {
            self.resend_while(pipe, sack::next_unsacked);
        }
        self.arm_probe();
    }

    /// Resends the ranges `next` picks while the congestion window has a segment of room
    /// over the pipe (RFC 6675 5 step C); returns the bytes resent.
    fn resend_while(&mut self, mut pipe: u64, next: NextSeg) -> u64 {
        let start = pipe;
        while self.cc.window().saturating_sub(pipe) >= self.mss {
            let Some((s, e)) = next(&self.rec.sacked, self.snd.una, self.snd.nxt) else {
                break;
            };
            let room = self.cc.window() - pipe;
            match self.resend(s, e, room) {
                0 => break,
                n => pipe += n,
            }
        }
        pipe - start
    }

    /// RFC 8985 7.2 (the kernel's `tcp_schedule_loss_probe`): with data in flight, no loss
    /// known and no probe out, a probe is due a PTO after the last ACK: two smoothed RTTs,
    /// plus the kernel's `TCP_TIMEOUT_MIN` (2 ms), or plus the peer's delayed-ACK allowance
    /// (here [`RTO_MIN`]) when one segment is out; never later than the timeout.
    fn arm_probe(&mut self) {
        let Some(srtt) = self.rtt.srtt() else { return };
        let data_end = self.snd.nxt.min(self.snd.len());
        let due = self.rec.ca == Ca::Open
            && self.sack_ok
            && self.timers.early().is_none()
            && self.rec.tlp_end.is_none()
            && self.snd.una < data_end;
        if !due {
            return;
        }
        let slack = if self.snd.flight() <= self.mss {
            RTO_MIN
        } else {
            Duration::from_millis(2)
        };
        let pto = (Duration::from_secs_f64(2.0 * srtt) + slack).min(self.rtt.rto());
        self.timers.set(Timer::Probe, self.now + pto);
    }

    /// RFC 8985 7.3 (the kernel's `tcp_send_loss_probe`): one new segment if the peer's
    /// window holds all of it (`tcp_snd_wnd_test`: a whole MSS, or the rest of the skb), else
    /// the last segment sent again. Its ACK, or the SACK of it, lets RACK find a lost tail
    /// without the retransmission timer.
    pub(super) fn send_probe(&mut self) {
        self.stats.loss_probes += 1;
        let data_len = self.snd.len();
        let room = self.snd.wnd.saturating_sub(self.snd.nxt - self.snd.una);
        let new = self.cut(self.snd.nxt, data_len, self.mss);
        if self.snd.nxt < data_len && new <= room {
            self.send_data(self.snd.nxt, new);
            self.snd.nxt += new;
        } else {
            let end = self.snd.nxt.min(data_len);
            let start = end.saturating_sub(self.mss).max(self.snd.una);
            self.resend_frame(start, end, self.mss);
        }
        self.rec.tlp_end = Some(self.snd.nxt);
        self.timers.set(Timer::Rto, self.now + self.rtt.rto());
    }

    /// The peer's window cannot hold the next segment (a whole MSS, or the rest of its skb),
    /// so nothing is sent until it opens (`tcp_snd_wnd_test`, v6.12); the probes ask for it.
    /// Call only with data unsent.
    pub(super) fn window_shut(&self) -> bool {
        let want = self.snd.chunk_end(self.snd.nxt) - self.snd.nxt;
        let room = self.snd.wnd.saturating_sub(self.snd.nxt - self.snd.una);
        room < self.mss.min(want)
    }

    /// Zero-window probe: an old sequence number makes the peer answer with its current
    /// window.
    pub(super) fn send_zero_window_probe(&mut self) {
        self.stats.zero_window_probes += 1;
        let t = TcpOut {
            seq: self.snd.wire(self.snd.una).wrapping_sub(1),
            ack: self.ack_field(),
            wnd: self.rcv_wnd_field(),
            opts: self.opts(),
            ..TcpOut::default()
        };
        self.emit(t, VnetHdr::default());
        self.timers.set(Timer::Rto, self.now + self.rtt.rto());
    }
}

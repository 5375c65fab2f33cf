//! The runner's userspace TCP endpoint: the peer of the kernel's socket across the TAP.
//!
//! Sans-IO, like the core (and quinn-proto): frames and the time come in, frames
//! ([`Endpoint::take_out`]) and what was received ([`Endpoint::poll_event`]) go out. It opens
//! actively (ARP, then SYN offering MSS, SACK-permitted, timestamps and window scale, RFC
//! 7323), sends the stream cut where the model cut it, recovers from loss as the kernel does
//! with SACK and RACK-TLP, receives with reassembly and SACK blocks (RFC 2018), and closes
//! with a FIN each way (the states of RFC 9293). Sequence numbers are kept as 64-bit stream
//! offsets (0 = first data byte) and turned into 32-bit wire numbers at the edge.
//!
//! One concern per module: [`state`] (the connection's states), [`send`] (the sender and the
//! peer's ACKs), [`recv`] (reassembly, SACK and D-SACK blocks, our ACKs), [`recovery`] (loss
//! detection and undo, with [`sack`], [`rack`] and [`undo`]), [`cc`] (congestion control
//! behind a trait), [`timer`] (every timer in one table, the RTT estimate), [`stats`]. The tests
//! that drive the whole endpoint with frames are in `tests/`, one file per concern.

mod cc;
mod rack;
mod recovery;
mod recv;
mod sack;
mod send;
mod state;
mod stats;
mod timer;
mod undo;

#[cfg(test)]
mod tests;

pub use stats::Stats;

use super::vnet::VnetHdr;
use super::wire::{self, Arp, Ends, Frame, TcpIn, TcpOut, MAX_WSCALE};
use cc::{Controller, Reno};
use etherparse::TcpOptionElement as Opt;
use recovery::{Ca, Recovery};
use recv::Receiver;
use send::Sender;
use skblab_core::consts::wire as wire_consts;
use state::St;
use std::collections::VecDeque;
use std::time::Duration;
use timer::{Rtt, Timer, Timers, RTO_INITIAL};

/// A super-packet's payload must fit in one IPv4 datagram with the headers.
pub const MAX_SUPER_PAYLOAD: u64 = wire_consts::max_payload(true) as u64;

/// One skb of the stream, as the model built it: it ends at `end` (a stream offset).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Chunk {
    pub end: u64,
    pub psh: bool,
}

#[derive(Clone, Debug)]
pub struct Config {
    pub ends: Ends,
    /// The MSS we offer (what we accept per segment).
    pub mss: u16,
    /// Our window scale and receive window in bytes.
    pub wscale: u8,
    pub rcv_wnd: u32,
    /// May send GSO super-packets (the scenario's device has TSO).
    pub gso: bool,
    /// Send our FIN as soon as our data is sent (else after the peer's FIN).
    pub close_first: bool,
    /// Leave data checksums to the receiver's trust in offload (`NEEDS_CSUM`): faster, but
    /// the kernel then checks nothing, so never with corruption.
    pub csum_offload: bool,
    /// The largest payload per segment we cut (the model's MSS), below the connection's.
    pub seg_cap: u64,
    /// Offer timestamps (RFC 7323) and SACK (RFC 2018) in the SYN.
    pub timestamps: bool,
    pub sack: bool,
}

/// A frame to put on the TAP.
#[derive(Clone, Debug)]
pub struct Out {
    pub vnet: VnetHdr,
    pub frame: Vec<u8>,
}

/// One data frame that arrived, as the receive path sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Arrival {
    pub len: u32,
    /// The virtio-net gso_size of a kernel super-packet; 0 for a plain frame.
    pub gso_size: u16,
}

/// What the endpoint hands its host besides frames, in the order it happened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    /// A data frame arrived (for the receive model).
    Arrival(Arrival),
    /// The next bytes of the peer's stream, in order.
    Data(Vec<u8>),
}

/// The runner's end of one TCP connection, driven by a host that owns the TAP and the clock.
///
/// Its methods come in classes, named in quinn-proto's manner:
/// - **input** (quinn-proto's `handle_*`): [`Endpoint::start`] opens (ARP, then SYN);
///   [`Endpoint::on_frame`] takes one frame read from the TAP, with the time;
///   [`Endpoint::push`] and [`Endpoint::announce_window`] are the host's own orders (send
///   these bytes as one frame; announce this window).
/// - **timers**: [`Endpoint::poll`] runs what is due at `now` (retries, retransmission and
///   probe timers) and sends what the windows allow; [`Endpoint::deadline`] says when it next
///   has work.
/// - **output** (quinn-proto's `poll_*`): [`Endpoint::take_out`] hands over the frames to
///   write, in order; [`Endpoint::poll_event`] what arrived and the stream's next bytes.
/// - **queries**: `established`, `done`, `mss`, `acked`, `send_room`, `stats`, `check`.
///
/// A host's turn, each time it reads a batch of frames from the TAP (or the deadline passes):
/// 1. `on_frame` for every frame of the batch;
/// 2. [`Endpoint::flush_ack`] once: in-order data is acknowledged once per batch (as GRO makes
///    one skb, and one ACK, of a NAPI poll's frames), and that ACK waits here. A host that
///    skips it leaves in-order data unacknowledged until something else is sent (data, a
///    duplicate ACK for a hole) or the peer's timer resends;
/// 3. `poll(now)`;
/// 4. `take_out`, writing every frame, and `poll_event` until `None` (events are kept until
///    taken).
///
/// Inputs and `poll` only queue frames and events; nothing reaches the wire before
/// `take_out`, so the host decides when (and through which faults) it does.
pub struct Endpoint {
    cfg: Config,
    st: St,
    peer_mac: Option<[u8; 6]>,
    /// Payload bytes per segment: the peer's MSS less our 12 bytes of timestamps.
    mss: u64,
    ts_ok: bool,
    sack_ok: bool,
    peer_wscale: u8,
    ts_recent: u32,
    snd: Sender,
    rcv: Receiver,
    rec: Recovery,
    cc: Reno,
    timers: Timers,
    rtt: Rtt,
    stats: Stats,
    out: Vec<Out>,
    events: VecDeque<Event>,
    now: Duration,
}

impl Endpoint {
    /// An endpoint that will send `tx` cut into `chunks` (ascending ends, the last = tx.len()).
    pub fn new(mut cfg: Config, tx: Vec<u8>, chunks: Vec<Chunk>, iss: u32) -> Endpoint {
        cfg.wscale = cfg.wscale.min(MAX_WSCALE);
        Endpoint {
            cfg,
            st: St::Arp,
            peer_mac: None,
            mss: 536,
            ts_ok: false,
            sack_ok: false,
            peer_wscale: 0,
            ts_recent: 0,
            snd: Sender::new(tx, chunks, iss),
            rcv: Receiver::default(),
            rec: Recovery::default(),
            cc: Reno::default(),
            timers: Timers::default(),
            rtt: Rtt::default(),
            stats: Stats::default(),
            out: Vec::new(),
            events: VecDeque::new(),
            now: Duration::ZERO,
        }
    }

    /// The handshake is done.
    pub fn established(&self) -> bool {
        self.st.synchronized()
    }

    /// Bytes the peer's window takes past what we sent.
    pub fn send_room(&self) -> u64 {
        (self.snd.una + self.snd.wnd).saturating_sub(self.snd.nxt)
    }

    /// Sets the window we announce and says so at once (a window update); 0 holds the peer's
    /// sender: the kernel oracle's held queue keeps every skb on the kernel's write queue.
    pub fn announce_window(&mut self, bytes: u32) {
        self.cfg.rcv_wnd = bytes;
        self.send_ack();
    }

    /// Both FINs sent and acknowledged.
    pub fn done(&self) -> bool {
        self.st.done()
    }

    /// The payload bytes per segment the handshake settled on (valid once established).
    pub fn mss(&self) -> u64 {
        self.mss
    }

    /// Acknowledged bytes of our stream (for progress).
    pub fn acked(&self) -> u64 {
        self.snd.una.min(self.snd.len())
    }

    /// What went over the wire so far.
    pub fn stats(&self) -> &Stats {
        &self.stats
    }

    pub fn take_out(&mut self) -> Vec<Out> {
        std::mem::take(&mut self.out)
    }

    /// The next thing received, if any.
    pub fn poll_event(&mut self) -> Option<Event> {
        self.events.pop_front()
    }

    /// When [`Endpoint::poll`] next has work to do, if ever.
    pub fn deadline(&self) -> Option<Duration> {
        self.timers.next()
    }

    /// What holds between calls, whatever frames came in: the fuzz targets check it.
    #[cfg(feature = "fuzzing")]
    pub fn check(&self) -> Result<(), String> {
        let len = self.snd.len();
        let top = len + u64::from(self.st.fin_queued());
        let fin_acked = matches!(self.st, St::FinWait2 | St::TimeWait | St::Closed);
        let rules = [
            (
                "snd_una <= snd_nxt <= data (and our FIN)",
                self.snd.una <= self.snd.nxt && self.snd.nxt <= top,
            ),
            (
                "our FIN acknowledged = snd_una past the data",
                fin_acked == (self.snd.una > len),
            ),
            (
                "rcv_nxt = bytes delivered",
                self.rcv.nxt == self.rcv.delivered,
            ),
            ("held segments past rcv_nxt", self.rcv.held_past_nxt()),
            ("mss > 0", self.mss > 0),
        ];
        match rules.iter().find(|(_, ok)| !ok) {
            Some((rule, _)) => Err(format!("endpoint state broken: {rule}")),
            None => Ok(()),
        }
    }

    /// Waits for the peer's SYN instead (RFC 9293's passive open), answering ARP meanwhile.
    #[cfg(test)]
    pub fn listen(&mut self) {
        self.st = St::Listen;
    }

    /// Starts the connection: ARP for the kernel's MAC.
    pub fn start(&mut self, now: Duration) {
        self.now = now;
        let e = self.cfg.ends;
        let frame = Arp {
            reply: false,
            sender_mac: e.mac,
            sender_ip: e.ip,
            target_mac: [0; 6],
            target_ip: e.peer_ip,
        }
        .frame();
        self.out.push(Out {
            vnet: VnetHdr::default(),
            frame,
        });
        self.timers.set(Timer::Rto, now + RTO_INITIAL);
    }

    fn tsval(&self) -> u32 {
        self.now.as_micros() as u32
    }

    /// A 32-bit sequence number near `base` (a stream offset) as a stream offset.
    fn unwrap(base: u64, wire_base: u32, seq: u32) -> u64 {
        (base as i64 + i64::from(seq.wrapping_sub(wire_base) as i32)).max(0) as u64
    }

    fn emit(&mut self, t: TcpOut, mut vnet: VnetHdr) {
        let mut e = self.cfg.ends;
        e.peer_mac = self.peer_mac.expect("model bug: TCP before ARP");
        let frame = if self.cfg.csum_offload && !t.payload.is_empty() {
            vnet = vnet.partial(wire_consts::transport_offset() as u16);
            wire::tcp_frame_partial(&e, &t)
        } else {
            wire::tcp_frame(&e, &t)
        }
        .expect("model bug: frame");
        self.stats.frames_out += 1;
        self.out.push(Out { vnet, frame });
    }

    fn opts(&self) -> Vec<Opt> {
        let mut o = Vec::new();
        if self.ts_ok {
            o.extend([
                Opt::Noop,
                Opt::Noop,
                Opt::Timestamp(self.tsval(), self.ts_recent),
            ]);
        }
        o
    }

    fn rcv_wnd_field(&self) -> u16 {
        (self.cfg.rcv_wnd >> self.cfg.wscale).min(65_535) as u16
    }

    /// The SYN, or the SYN-ACK answering the peer's (SACK and timestamps only if both offer),
    /// its options laid out as the kernel's `tcp_options_write` lays them. Its window is
    /// never scaled (RFC 7323 2.2): it offers the field's widest, and the window after the
    /// handshake says what we take.
    fn send_syn(&mut self) {
        let passive = self.st == St::SynRcvd;
        let mut opts = vec![Opt::MaximumSegmentSize(self.cfg.mss)];
        let ts = Opt::Timestamp(self.tsval(), if passive { self.ts_recent } else { 0 });
        let sack = Opt::SelectiveAcknowledgementPermitted;
        let offer = match passive {
            true => (self.sack_ok, self.ts_ok),
            false => (self.cfg.sack, self.cfg.timestamps),
        };
        match offer {
            (true, true) => opts.extend([sack, ts]),
            (true, false) => opts.extend([Opt::Noop, Opt::Noop, sack]),
            (false, true) => opts.extend([Opt::Noop, Opt::Noop, ts]),
            (false, false) => {}
        }
        opts.extend([Opt::Noop, Opt::WindowScale(self.cfg.wscale)]);
        let t = TcpOut {
            seq: self.snd.iss,
            ack: passive.then(|| self.rcv.wire(0)),
            syn: true,
            wnd: 65_535,
            opts,
            ..TcpOut::default()
        };
        self.emit(t, VnetHdr::default());
    }

    /// Handles one frame from the TAP.
    pub fn on_frame(&mut self, vnet: VnetHdr, frame: &[u8], now: Duration) -> Result<(), String> {
        self.now = now;
        match wire::parse(frame) {
            Frame::Arp(a) => self.on_arp(a),
            Frame::Tcp(t)
                if t.dst_port == self.cfg.ends.port && t.src_port == self.cfg.ends.peer_port =>
            {
                if !vnet.needs_csum() && !wire::tcp_checksum_ok(frame) {
                    self.stats.bad_checksums_in += 1;
                    return Ok(());
                }
                self.on_tcp(vnet, t)?;
            }
            _ => {}
        }
        Ok(())
    }

    fn on_arp(&mut self, a: Arp) {
        let e = self.cfg.ends;
        if a.sender_ip == e.peer_ip {
            self.peer_mac = Some(a.sender_mac);
        }
        // Only the kernel's end of the private link is answered: nothing is ever sent to an
        // address outside it, whatever a request claims.
        if !a.reply && a.target_ip == e.ip && a.sender_ip == e.peer_ip {
            let frame = Arp {
                reply: true,
                sender_mac: e.mac,
                sender_ip: e.ip,
                target_mac: a.sender_mac,
                target_ip: a.sender_ip,
            }
            .frame();
            self.out.push(Out {
                vnet: VnetHdr::default(),
                frame,
            });
        }
        if self.st == St::Arp && self.peer_mac.is_some() {
            self.st = St::SynSent;
            self.send_syn();
            self.timers.set(Timer::Rto, self.now + self.rtt.rto());
        }
    }

    fn on_tcp(&mut self, vnet: VnetHdr, t: TcpIn) -> Result<(), String> {
        self.stats.frames_in += 1;
        if t.rst && self.st.done() {
            // Both FINs are acknowledged: this RST answers our ACK of the peer's FIN sent
            // again (see `Stats::peer_fins_again`) and ends nothing the transfer needs (the
            // kernel, without `tcp_rfc1337`, lets a RST end its TIME_WAIT too).
            return Ok(());
        }
        if t.rst {
            return Err("the kernel reset the connection (RST)".into());
        }
        if let Some((val, _)) = t.ts {
            self.ts_recent = val;
        }
        match self.st {
            St::Arp => Ok(()),
            St::SynSent => {
                if t.syn && t.ack == Some(self.snd.iss.wrapping_add(1)) {
                    self.on_syn_ack(&t);
                }
                Ok(())
            }
            St::Listen | St::SynRcvd if t.syn && t.ack.is_none() => {
                self.negotiate(&t);
                self.st = St::SynRcvd;
                self.send_syn();
                self.timers.set(Timer::Rto, self.now + self.rtt.rto());
                Ok(())
            }
            St::Listen => Ok(()),
            St::SynRcvd => {
                if t.ack == Some(self.snd.iss.wrapping_add(1)) {
                    self.enter_established(&t);
                    self.on_ack(&t);
                    self.on_data(vnet, &t);
                    self.transmit();
                }
                Ok(())
            }
            _ => {
                if t.syn {
                    // Our ACK of the SYN-ACK was lost: acknowledge again.
                    self.send_ack();
                    return Ok(());
                }
                self.on_ack(&t);
                self.on_data(vnet, &t);
                self.transmit();
                Ok(())
            }
        }
    }

    fn on_syn_ack(&mut self, t: &TcpIn) {
        self.negotiate(t);
        self.enter_established(t);
        self.send_ack();
        self.transmit();
    }

    /// Takes in the peer's SYN or SYN-ACK: its sequence number and what both sides offered.
    fn negotiate(&mut self, t: &TcpIn) {
        self.rcv.irs = t.seq;
        self.ts_ok = t.ts.is_some() && self.cfg.timestamps;
        self.sack_ok = t.sack_perm && self.cfg.sack;
        self.peer_wscale = t.wscale.unwrap_or(0);
        if t.wscale.is_none() {
            self.cfg.wscale = 0;
        }
        let peer_mss = u32::from(t.mss.unwrap_or(536));
        // A peer's MSS smaller than the timestamp option must not leave 0 to divide by.
        self.mss = u64::from(wire_consts::mss_now(peer_mss, self.ts_ok))
            .min(self.cfg.seg_cap)
            .clamp(1, MAX_SUPER_PAYLOAD);
        self.snd.wnd = u64::from(t.wnd);
    }

    /// The handshake's last segment arrived: data may flow.
    fn enter_established(&mut self, t: &TcpIn) {
        self.cc.on_established(self.mss);
        self.st = St::Established;
        self.timers.stop(Timer::Rto);
        self.rto_sample(t);
    }

    /// Runs the timers: ARP/SYN retries, retransmission timeout, zero-window probe, and
    /// before them RACK's reordering timer or the tail loss probe.
    pub fn poll(&mut self, now: Duration) {
        self.now = now;
        if let Some((_, what)) = self.timers.early().filter(|&(at, _)| now >= at) {
            self.timers.stop(what);
            match what {
                Timer::Reo => {
                    self.rack_detect(true);
                    self.recover_if_lost();
                }
                // A loss found since the probe was armed leaves it to recovery.
                Timer::Probe if self.rec.ca == Ca::Open => self.send_probe(),
                _ => {}
            }
        }
        if self.timers.expired(Timer::Rto, now) {
            self.timers.stop(Timer::Rto);
            let rto = self.rtt.backoff();
            match self.st {
                St::Arp => self.start(now),
                St::SynSent | St::SynRcvd => {
                    self.send_syn();
                    self.timers.set(Timer::Rto, now + rto);
                }
                _ if self.snd.in_flight() => self.enter_loss(),
                _ if self.snd.unsent() && self.window_shut() => self.send_zero_window_probe(),
                _ => {}
            }
        }
        self.transmit();
    }
}

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
//! behind a trait), [`timer`] (every timer in one table, the RTT estimate), [`stats`].

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
mod pair;

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::wire::parse;
    use std::net::Ipv4Addr;

    const ISS: u32 = 1000;
    const IRS: u32 = 5000;
    const KMAC: [u8; 6] = [2, 0, 0, 0, 0, 1];

    fn ends() -> Ends {
        crate::net::netns::runner_ends(40_000, 5001)
    }

    /// The kernel's side of the wire.
    fn kernel_ends() -> Ends {
        let e = ends();
        Ends {
            mac: KMAC,
            peer_mac: e.mac,
            ip: e.peer_ip,
            peer_ip: e.ip,
            port: e.peer_port,
            peer_port: e.port,
        }
    }

    fn endpoint(len: usize, chunks: &[u64], gso: bool) -> Endpoint {
        let cfg = Config {
            ends: ends(),
            timestamps: true,
            sack: true,
            mss: 1460,
            wscale: 7,
            rcv_wnd: 1 << 20,
            gso,
            close_first: true,
            csum_offload: false,
            seg_cap: u64::MAX,
        };
        let chunks = chunks
            .iter()
            .map(|&end| Chunk { end, psh: false })
            .collect();
        Endpoint::new(cfg, vec![7; len], chunks, ISS)
    }

    /// The stream bytes the endpoint handed out since the last call.
    fn received(ep: &mut Endpoint) -> Vec<u8> {
        let mut got = Vec::new();
        while let Some(e) = ep.poll_event() {
            if let Event::Data(d) = e {
                got.extend(d);
            }
        }
        got
    }

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    /// A segment from the kernel: `ack` as a stream offset of the runner's data.
    fn from_kernel(ep: &mut Endpoint, ack: u64, wnd: u16, payload: &[u8], seq_off: u64) {
        let t = TcpOut {
            seq: IRS.wrapping_add(1).wrapping_add(seq_off as u32),
            ack: Some(ISS.wrapping_add(1).wrapping_add(ack as u32)),
            wnd,
            opts: vec![Opt::Noop, Opt::Noop, Opt::Timestamp(77, 1)],
            payload,
            ..TcpOut::default()
        };
        let f = wire::tcp_frame(&kernel_ends(), &t).unwrap();
        ep.on_frame(VnetHdr::default(), &f, ep.now + ms(1)).unwrap();
    }

    /// The kernel's end answers the endpoint's ARP request.
    fn answer_arp(ep: &mut Endpoint) {
        let reply = Arp {
            reply: true,
            sender_mac: KMAC,
            sender_ip: ends().peer_ip,
            target_mac: ends().mac,
            target_ip: ends().ip,
        };
        ep.on_frame(VnetHdr::default(), &reply.frame(), ms(1))
            .unwrap();
    }

    /// ARP, SYN, SYN-ACK (MSS 1460, SACK, timestamps, window scale 10): established.
    fn establish(ep: &mut Endpoint) -> Vec<Out> {
        ep.start(Duration::ZERO);
        let arp = ep.take_out();
        assert!(matches!(parse(&arp[0].frame), Frame::Arp(a) if !a.reply));
        answer_arp(ep);
        let syn = ep.take_out();
        let Frame::Tcp(s) = parse(&syn[0].frame) else {
            panic!("no SYN")
        };
        assert!(s.syn && s.sack_perm);
        assert_eq!((s.seq, s.mss, s.wscale), (ISS, Some(1460), Some(7)));
        assert!(s.ts.is_some());
        let t = TcpOut {
            seq: IRS,
            ack: Some(ISS + 1),
            syn: true,
            wnd: 65_535,
            opts: vec![
                Opt::MaximumSegmentSize(1460),
                Opt::SelectiveAcknowledgementPermitted,
                Opt::Timestamp(77, 1),
                Opt::Noop,
                Opt::WindowScale(10),
            ],
            ..TcpOut::default()
        };
        let f = wire::tcp_frame(&kernel_ends(), &t).unwrap();
        ep.on_frame(VnetHdr::default(), &f, ms(2)).unwrap();
        assert_eq!(ep.mss(), 1448, "timestamps take 12 bytes of the MSS");
        ep.take_out()
    }

    fn data(out: &[Out]) -> Vec<(u32, usize, u16)> {
        out.iter()
            .filter_map(|o| match parse(&o.frame) {
                Frame::Tcp(t) if !t.payload.is_empty() => Some((
                    t.seq.wrapping_sub(ISS + 1),
                    t.payload.len(),
                    o.vnet.gso_size,
                )),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn an_arp_request_from_outside_the_link_is_not_answered() {
        let mut ep = endpoint(0, &[], false);
        ep.start(Duration::ZERO);
        ep.take_out();
        for sender_ip in [Ipv4Addr::new(8, 8, 8, 8), ends().peer_ip] {
            let ask = Arp {
                reply: false,
                sender_mac: KMAC,
                sender_ip,
                target_mac: [0; 6],
                target_ip: ends().ip,
            };
            ep.on_frame(VnetHdr::default(), &ask.frame(), ms(1))
                .unwrap();
            let out = ep.take_out();
            let to: Vec<_> = out
                .iter()
                .filter_map(|o| match parse(&o.frame) {
                    Frame::Arp(a) if a.reply => Some(a.target_ip),
                    _ => None,
                })
                .collect();
            let want = if sender_ip == ends().peer_ip {
                vec![sender_ip]
            } else {
                vec![]
            };
            assert_eq!(to, want, "ARP request from {sender_ip}");
        }
    }

    /// ARP answered, then the kernel's SYN-ACK with window `wnd` and options `opts`.
    fn syn_ack(ep: &mut Endpoint, wnd: u16, opts: Vec<Opt>) {
        ep.start(Duration::ZERO);
        ep.take_out();
        answer_arp(ep);
        ep.take_out();
        let t = TcpOut {
            seq: IRS,
            ack: Some(ISS + 1),
            syn: true,
            wnd,
            opts,
            ..TcpOut::default()
        };
        let f = wire::tcp_frame(&kernel_ends(), &t).unwrap();
        ep.on_frame(VnetHdr::default(), &f, ms(2)).unwrap();
    }

    #[test]
    fn a_peer_mss_smaller_than_the_timestamps_leaves_one_byte() {
        for peer_mss in [0, 11, 12, 13] {
            let mut ep = endpoint(100, &[100], true);
            syn_ack(
                &mut ep,
                65_535,
                vec![Opt::MaximumSegmentSize(peer_mss), Opt::Timestamp(77, 1)],
            );
            assert_eq!(ep.mss(), u64::from(peer_mss).saturating_sub(12).max(1));
            ep.take_out();
        }
    }

    #[test]
    fn window_scales_above_14_count_as_14() {
        let mut cfg = endpoint(0, &[], false).cfg;
        cfg.wscale = 40;
        let chunks = vec![Chunk {
            end: 100,
            psh: false,
        }];
        let mut ep = Endpoint::new(cfg, vec![7; 100], chunks, ISS);
        syn_ack(&mut ep, 1, vec![Opt::WindowScale(255)]);
        let acks: Vec<u16> = ep
            .take_out()
            .iter()
            .filter_map(|o| match parse(&o.frame) {
                Frame::Tcp(t) => Some(t.wnd),
                _ => None,
            })
            .collect();
        // Our 1 MiB window, shifted by 14: 64.
        assert_eq!(acks.first(), Some(&64));
        from_kernel(&mut ep, 0, 1, &[], 0);
        assert_eq!(ep.snd.wnd, 1 << 14, "the peer's scale 255 is taken as 14");
    }

    #[test]
    fn plain_frames_are_mss_sized_and_stop_at_the_initial_window() {
        let mut ep = endpoint(20_000, &[20_000], false);
        let out = establish(&mut ep);
        // The SYN-ACK's window (65,535, never scaled) allows all; the initial cwnd is 10.
        let d = data(&out);
        assert_eq!(d.len(), 10);
        assert!(d.iter().all(|&(_, len, gso)| len == 1448 && gso == 0));
    }

    #[test]
    fn a_gso_device_sends_each_skb_as_one_super_packet() {
        let mut ep = endpoint(70_000, &[65_160, 70_000], true);
        // The initial window (10 segments) lets out a whole number of segments of the skb
        // (tso_fragment) ...
        assert_eq!(data(&establish(&mut ep)), [(0, 14_480, 1448)]);
        // ... and once the windows open, the rest of it and the next skb, one packet each.
        from_kernel(&mut ep, 0, 1024, &[], 0);
        ep.cc.cwnd = 1 << 20;
        ep.transmit();
        let d = data(&ep.take_out());
        assert_eq!(d, [(14_480, 50_680, 1448), (65_160, 4_840, 1448)]);
    }

    #[test]
    fn three_duplicate_acks_resend_the_first_unacked_segment() {
        let mut ep = endpoint(20_000, &[20_000], false);
        establish(&mut ep);
        // A new ACK (it also opens the window), then three duplicates of it.
        for _ in 0..4 {
            from_kernel(&mut ep, 1448, 64, &[], 0);
        }
        let out = ep.take_out();
        assert!(data(&out).contains(&(1448, 1448, 0)), "{:?}", data(&out));
        assert_eq!(ep.stats.fast_retransmits, 1);
        assert!(ep.stats.retransmitted_segments >= 1);
    }

    /// A pure ACK from the kernel with SACK blocks, all as stream offsets of our data.
    fn sack_ack(ep: &mut Endpoint, ack: u64, sacks: &[(u64, u64)]) {
        ack_echoing(ep, ack, 1, sacks);
    }

    /// A pure ACK from the kernel echoing our timestamp `ecr` (µs), with SACK blocks if any.
    fn ack_echoing(ep: &mut Endpoint, ack: u64, ecr: u32, sacks: &[(u64, u64)]) {
        let w = |off: u64| ISS.wrapping_add(1).wrapping_add(off as u32);
        let mut opts = vec![Opt::Noop, Opt::Noop, Opt::Timestamp(77, ecr)];
        let mut blocks = sacks.iter().map(|&(s, e)| (w(s), w(e)));
        if let Some(first) = blocks.next() {
            let rest = [blocks.next(), blocks.next(), None];
            opts.extend([Opt::Noop, Opt::Noop]);
            opts.push(Opt::SelectiveAcknowledgement(first, rest));
        }
        let t = TcpOut {
            seq: IRS + 1,
            ack: Some(w(ack)),
            wnd: 64,
            opts,
            ..TcpOut::default()
        };
        let f = wire::tcp_frame(&kernel_ends(), &t).unwrap();
        ep.on_frame(VnetHdr::default(), &f, ep.now + ms(1)).unwrap();
    }

    const SEG: u64 = 1448;

    /// Ten segments out (0..14,480), the window open (the kernel's 64 << 10).
    fn ten_out() -> Endpoint {
        let mut ep = endpoint(40_000, &[40_000], false);
        assert_eq!(data(&establish(&mut ep)).len(), 10);
        ep
    }

    #[test]
    fn one_sacked_segment_is_reordering_not_loss() {
        let mut ep = ten_out();
        // Segment 2 arrived before segment 1: one SACKed segment above snd_una.
        sack_ack(&mut ep, SEG, &[(2 * SEG, 3 * SEG)]);
        let d = data(&ep.take_out());
        assert!(
            d.iter().all(|&(off, ..)| u64::from(off) >= 10 * SEG),
            "{d:?}"
        );
        assert_eq!(ep.stats.fast_retransmits, 0);
        assert_eq!(ep.stats.retransmitted_segments, 0);
    }

    #[test]
    fn three_sacked_segments_resend_the_hole_at_once_and_nothing_sacked() {
        let mut ep = ten_out();
        // Segment 1 lost; 2, 3 and 4 SACKed: over DupThresh - 1 segments above the hole.
        sack_ack(&mut ep, SEG, &[(2 * SEG, 5 * SEG)]);
        let d = data(&ep.take_out());
        assert_eq!(d[0], (SEG as u32, SEG as usize, 0), "the hole first: {d:?}");
        let resent: Vec<_> = d
            .iter()
            .filter(|&&(off, ..)| u64::from(off) < 10 * SEG)
            .collect();
        assert_eq!(resent.len(), 1, "only the hole: {d:?}");
        assert_eq!(ep.stats.fast_retransmits, 1);
        assert_eq!(ep.stats.retransmitted_segments, 1);
        assert_eq!(ep.rec.ca, Ca::Recovery);
        // More SACKs for the same hole resend nothing more of it.
        sack_ack(&mut ep, SEG, &[(2 * SEG, 7 * SEG)]);
        let d = data(&ep.take_out());
        assert!(
            d.iter().all(|&(off, ..)| u64::from(off) >= 10 * SEG),
            "{d:?}"
        );
        // The resent hole fills the gap: all ten segments acknowledged, recovery over, and
        // nothing else was resent.
        sack_ack(&mut ep, 10 * SEG, &[(11 * SEG, 12 * SEG)]);
        assert_eq!(ep.rec.ca, Ca::Open);
        assert_eq!(ep.stats.retransmitted_segments, 1);
    }

    #[test]
    fn every_lost_hole_is_resent_once_within_the_halved_window() {
        let mut ep = ten_out();
        // Segments 1, 3 and 5 lost; 0 acknowledged; 2, 4 and 6..9 SACKed. ssthresh = cwnd =
        // the flight (nine segments, 13,032 bytes) / 2 = 6,516; the pipe holds no unSACKed
        // segment that is not lost, so four segments fit.
        sack_ack(
            &mut ep,
            SEG,
            &[(2 * SEG, 3 * SEG), (4 * SEG, 5 * SEG), (6 * SEG, 10 * SEG)],
        );
        let d = data(&ep.take_out());
        let s = |n: u64| ((n * SEG) as u32, SEG as usize, 0);
        // The three holes, then one new segment (a second would pass cwnd).
        assert_eq!(d, [s(1), s(3), s(5), s(10)]);
        assert_eq!(ep.stats.fast_retransmits, 1);
        assert_eq!(ep.stats.retransmitted_segments, 3);
        // All acknowledged up to the recovery point, the ACK echoing the resends (sent at
        // 3 ms, so the recovery was needed): it ends at ssthresh. The ACK delivers segments
        // 1, 3 and 5, under a window's worth: congestion avoidance adds nothing yet.
        ack_echoing(&mut ep, 10 * SEG, 3_000, &[]);
        assert_eq!(ep.rec.ca, Ca::Open);
        assert_eq!((ep.cc.cwnd, ep.cc.cwnd_cnt), (6_516, 3 * SEG));
    }

    /// Runs the RACK and probe timers while the kernel stays silent; returns when the
    /// retransmission timer is next due.
    fn until_the_timeout(ep: &mut Endpoint) -> Duration {
        while let Some((at, _)) = ep.timers.early() {
            ep.poll(at);
        }
        ep.take_out();
        ep.timers.get(Timer::Rto).expect("armed")
    }

    #[test]
    fn a_timeout_resends_the_unsacked_flight_only_and_backs_off() {
        let mut ep = ten_out();
        // Two SACKed segments: RACK finds 0 and 1 lost once its reordering window passes and
        // recovery resends them; then silence until the timeout.
        sack_ack(&mut ep, 0, &[(2 * SEG, 4 * SEG)]);
        let first = until_the_timeout(&mut ep);
        ep.poll(first);
        assert_eq!(data(&ep.take_out()), [(0, SEG as usize, 0)]);
        assert_eq!(ep.rec.ca, Ca::Loss);
        // The next timeout waits twice as long (RFC 6298 5.5).
        let second = ep.deadline().expect("re-armed");
        ep.poll(second);
        ep.take_out();
        let third = ep.deadline().expect("re-armed");
        assert_eq!(third - second, 2 * (second - first));
        // The first segment's ACK, echoing the latest resend (so not undone): slow start
        // resends segment 1, skips 2 and 3, resends 4.
        ack_echoing(
            &mut ep,
            SEG,
            second.as_micros() as u32,
            &[(2 * SEG, 4 * SEG)],
        );
        let d = data(&ep.take_out());
        let offs: Vec<u32> = d.iter().map(|&(off, ..)| off / SEG as u32).collect();
        assert_eq!(offs, [1, 4], "{d:?}");
    }

    #[test]
    fn a_timeout_goes_back_to_snd_una() {
        let mut ep = endpoint(20_000, &[20_000], false);
        establish(&mut ep);
        let at = until_the_timeout(&mut ep);
        // The loss probe went first, with new data.
        assert_eq!(ep.stats.loss_probes, 1);
        ep.poll(at);
        assert_eq!(data(&ep.take_out()), [(0, 1448, 0)]);
        assert_eq!(ep.stats.timeouts, 1);
    }

    /// A lost tail, found by a probe, not a timeout. Ten segments and our FIN go at 2 ms;
    /// the kernel acknowledges eight at 3 ms (RTT samples 1.999 and 2.999 ms, as the kernel
    /// echoes TSval 1 µs: SRTT 2.124 ms; the RTO stays at its 30 ms floor). Two segments are
    /// out: the probe is due a PTO later, 2 x 2.124 + 2 = 6.248 ms, at 9.248 ms, and resends
    /// the last segment (no new data is left). Its SACK at 10.248 ms (RTT 1 ms, not under the minimum RTT of 1 ms, so not
    /// ambiguous) makes segment 8, sent at 2 ms, 8.25 ms old: over RTT + reo_wnd = 2 ms, so
    /// RACK finds it lost, and recovery resends it at once.
    #[test]
    fn a_lost_tail_is_recovered_by_a_probe() {
        let mut ep = endpoint(10 * SEG as usize, &[10 * SEG], false);
        assert_eq!(data(&establish(&mut ep)).len(), 10);
        from_kernel(&mut ep, 8 * SEG, 64, &[], 0);
        assert_eq!(ep.timers.early().map(|(_, e)| e), Some(Timer::Probe));
        let at = ep.deadline().expect("armed");
        assert_eq!(at, Duration::from_micros(9_248));
        assert!(at < ep.timers.get(Timer::Rto).expect("the RTO too"));
        ep.poll(at);
        assert_eq!(data(&ep.take_out()), [((9 * SEG) as u32, SEG as usize, 0)]);
        sack_ack(&mut ep, 8 * SEG, &[(9 * SEG, 10 * SEG)]);
        assert_eq!(data(&ep.take_out()), [((8 * SEG) as u32, SEG as usize, 0)]);
        let s = &ep.stats;
        assert_eq!((s.loss_probes, s.rack_lost, s.fast_retransmits), (1, 1, 1));
        assert_eq!(s.timeouts, 0);
    }

    /// A probe sends new data only when the peer's window holds a whole segment of it
    /// (`tcp_snd_wnd_test`): with 176 bytes of window left it resends the last segment, as the
    /// kernel does, rather than a 176-byte sliver the model never cut.
    #[test]
    fn a_probe_under_a_short_window_resends_the_tail() {
        let mut ep = endpoint(20 * SEG as usize, &[20 * SEG], false);
        assert_eq!(data(&establish(&mut ep)).len(), 10);
        // Eight acknowledged; the window (3 << 10 = 3,072) less the two out leaves 176.
        from_kernel(&mut ep, 8 * SEG, 3, &[], 0);
        assert_eq!(data(&ep.take_out()), [], "no silly window");
        assert_eq!(ep.timers.early().map(|(_, e)| e), Some(Timer::Probe));
        ep.poll(ep.deadline().expect("armed"));
        assert_eq!(data(&ep.take_out()), [((9 * SEG) as u32, SEG as usize, 0)]);
        assert_eq!((ep.snd.nxt, ep.stats.loss_probes), (10 * SEG, 1));
    }

    /// A window shorter than the next segment, with nothing out, is waited out with a probe,
    /// not filled with a short segment (`tcp_snd_wnd_test`), so the segments stay the
    /// model's. A kernel reader starved on a busy machine announced 1,024 bytes this way.
    #[test]
    fn a_window_shorter_than_a_segment_sends_nothing_and_is_probed() {
        let mut ep = endpoint(20 * SEG as usize, &[20 * SEG], false);
        assert_eq!(data(&establish(&mut ep)).len(), 10);
        // All ten acknowledged, 1 << 10 = 1,024 bytes of window.
        from_kernel(&mut ep, 10 * SEG, 1, &[], 0);
        assert_eq!(data(&ep.take_out()), [], "no 1,024-byte segment");
        ep.poll(ep.deadline().expect("the probe is armed"));
        assert_eq!(ep.stats.zero_window_probes, 1);
        from_kernel(&mut ep, 10 * SEG, 64, &[], 0);
        assert_eq!(
            data(&ep.take_out())[0],
            ((10 * SEG) as u32, SEG as usize, 0)
        );
    }

    /// A lost retransmission, found by RACK's reordering timer, not a timeout. Ten segments
    /// go at 2 ms. At 3 ms segment 0 is acknowledged and 2..5 SACKed: segment 1 is lost
    /// (`IsLost`) and resent at 3 ms; cwnd = 6,516, and the pipe (the resend and segments
    /// 5..9) is full. At 4 ms 2..10 are SACKed: three new segments go (10..12). At 5 ms they
    /// are SACKed too, but the resend of 1 is not: sent 2 ms before, the RTT of the latest
    /// delivery (1 ms) plus reo_wnd (1 ms) has not yet passed; the reordering timer is due
    /// 1 µs later, and finds the resend lost.
    #[test]
    fn a_lost_retransmission_is_found_without_a_timeout() {
        let mut ep = ten_out();
        sack_ack(&mut ep, SEG, &[(2 * SEG, 5 * SEG)]);
        let s1 = (SEG as u32, SEG as usize, 0);
        assert_eq!(data(&ep.take_out()), [s1]);
        sack_ack(&mut ep, SEG, &[(2 * SEG, 10 * SEG)]);
        let new: Vec<u32> = data(&ep.take_out())
            .iter()
            .map(|d| d.0 / SEG as u32)
            .collect();
        assert_eq!(new, [10, 11, 12]);
        sack_ack(&mut ep, SEG, &[(2 * SEG, 13 * SEG)]);
        let at = ms(5) + Duration::from_micros(1);
        assert_eq!(ep.timers.early(), Some((at, Timer::Reo)));
        ep.take_out();
        ep.poll(at);
        assert_eq!(data(&ep.take_out())[0], s1, "the resend, resent");
        let s = &ep.stats;
        assert_eq!(
            (s.rack_lost_resends, s.timeouts, s.fast_retransmits),
            (1, 0, 1)
        );
    }

    /// A stretch ACK counts for every segment it delivers (`tcp_slow_start` and
    /// `tcp_cong_avoid_ai` take the delivered count): one ACK of the initial ten segments
    /// doubles cwnd to 20, where one segment per ACK would have made it 11 (and RFC 3465's
    /// L = 2, 12). Past ssthresh, one ACK of a whole window of 20 segments adds one.
    #[test]
    fn a_stretch_ack_counts_every_segment_it_delivers() {
        let mut ep = endpoint(100_000, &[100_000], false);
        establish(&mut ep);
        sack_ack(&mut ep, 10 * SEG, &[]);
        assert_eq!(ep.cc.cwnd, 20 * SEG);
        assert_eq!(
            data(&ep.take_out()).len(),
            20,
            "the doubled window goes out"
        );
        ep.cc.ssthresh = ep.cc.cwnd;
        sack_ack(&mut ep, 20 * SEG, &[]);
        assert_eq!(
            (ep.cc.cwnd, ep.cc.cwnd_cnt),
            (20 * SEG, 10 * SEG),
            "half a window"
        );
        sack_ack(&mut ep, 30 * SEG, &[]);
        assert_eq!((ep.cc.cwnd, ep.cc.cwnd_cnt), (21 * SEG, 0));
    }

    /// A sender that does not fill its window keeps it (`tcp_is_cwnd_limited`): three
    /// segments out under a cwnd of ten, all acknowledged, leave cwnd at ten, not 13, as ten
    /// is not under twice the flight.
    #[test]
    fn a_window_the_sender_does_not_fill_does_not_grow() {
        let mut ep = endpoint(3 * SEG as usize, &[3 * SEG], false);
        assert_eq!(data(&establish(&mut ep)).len(), 3);
        sack_ack(&mut ep, 3 * SEG, &[]);
        assert_eq!(ep.cc.cwnd, 10 * SEG);
    }

    /// A timeout with the kernel's ACK merely late. Ten segments go at 2 ms (SRTT 1.999 ms,
    /// RTO at its 30 ms floor); the probe goes at 2 + 2 x 1.999 + 2 = 7.998 ms with new
    /// segment 10 and re-arms the timer, which fires at 37.998 ms: ssthresh = 11 segments / 2
    /// = 7,964 bytes, cwnd one segment, segment 0 resent (our TSval 37,998 µs). At 38.998 ms
    /// the kernel acknowledges segments 0..5. Slow start makes cwnd 7,964.
    fn timed_out_then_acked(ecr: u32, sacks: &[(u64, u64)]) -> Endpoint {
        let mut ep = ten_out();
        let at = until_the_timeout(&mut ep);
        assert_eq!(at, Duration::from_micros(37_998));
        ep.poll(at);
        assert_eq!(data(&ep.take_out()), [(0, SEG as usize, 0)]);
        assert_eq!(
            (ep.rec.ca, ep.cc.cwnd, ep.cc.ssthresh),
            (Ca::Loss, SEG, 7_964)
        );
        ack_echoing(&mut ep, 5 * SEG, ecr, sacks);
        ep
    }

    /// Undone: cwnd back to its ten segments and ssthresh to its old (infinite) value, then
    /// slow start adds the five delivered: 15. Nothing is presumed lost, so with the pipe at
    /// segments 5..11 nine new segments go, not a resend of 5..11. (The resend of 0 came
    /// back in 1 ms, under the handshake's 1.999 ms minimum RTT: RACK takes it for the
    /// original's delivery and finds nothing lost.)
    fn assert_undone(mut ep: Endpoint) {
        assert_eq!(
            (ep.rec.ca, ep.cc.cwnd, ep.cc.ssthresh),
            (Ca::Open, 15 * SEG, u64::MAX)
        );
        assert_eq!(ep.stats.loss_undos, 1);
        let offs: Vec<u32> = data(&ep.take_out())
            .iter()
            .map(|d| d.0 / SEG as u32)
            .collect();
        assert_eq!(offs, (11..20).collect::<Vec<_>>());
    }

    #[test]
    fn a_timeout_is_undone_when_the_ack_echoes_an_original() {
        // The kernel echoes TSval 1 µs, from before the resend (RFC 7323's Eifel test).
        assert_undone(timed_out_then_acked(1, &[]));
    }

    #[test]
    fn a_timeout_is_undone_when_a_dsack_reports_the_resend_duplicate() {
        // The ACK echoes the resend, but a D-SACK (below the ACK) reports segment 0 twice.
        let ep = timed_out_then_acked(37_998, &[(0, SEG)]);
        assert_eq!(ep.stats.dsacks_in, 1);
        assert_undone(ep);
    }

    #[test]
    fn a_timeout_stands_when_the_ack_answers_the_resend() {
        let mut ep = timed_out_then_acked(37_998, &[]);
        assert_eq!((ep.rec.ca, ep.cc.cwnd), (Ca::Loss, 7_964));
        assert_eq!(ep.stats.loss_undos, 0);
        // Segments 5..10 were presumed lost: five fit in 7,964 bytes, resent.
        let offs: Vec<u32> = data(&ep.take_out())
            .iter()
            .map(|d| d.0 / SEG as u32)
            .collect();
        assert_eq!(offs, [5, 6, 7, 8, 9]);
    }

    /// The runner as receiver reports duplicates (RFC 2883, as `tcp_dsack_set`): a segment
    /// below rcv_nxt, then one already held out of order, then one overlapping a held range,
    /// each in the first SACK block of the next ACK, once.
    #[test]
    fn a_duplicate_received_is_reported_in_a_dsack_block() {
        let mut ep = endpoint(0, &[], false);
        establish(&mut ep);
        let kernel = |ep: &mut Endpoint, off: u64| {
            from_kernel(ep, 0, 64, &[9; 100], off);
            ep.flush_ack();
            let out = ep.take_out();
            let Some(Frame::Tcp(t)) = out.last().map(|o| parse(&o.frame)) else {
                panic!("no ACK")
            };
            let w = |x: u32| x.wrapping_sub(IRS + 1);
            (
                w(t.ack.unwrap()),
                t.sacks
                    .iter()
                    .map(|&(s, e)| (w(s), w(e)))
                    .collect::<Vec<_>>(),
            )
        };
        assert_eq!(kernel(&mut ep, 0), (100, vec![]));
        assert_eq!(kernel(&mut ep, 0), (100, vec![(0, 100)]), "below the ACK");
        assert_eq!(kernel(&mut ep, 200), (100, vec![(200, 300)]));
        assert_eq!(
            kernel(&mut ep, 200),
            (100, vec![(200, 300), (200, 300)]),
            "within the SACK block after it"
        );
        // Overlapping the held range from above it: only the overlap is a duplicate.
        assert_eq!(
            kernel(&mut ep, 250),
            (100, vec![(250, 300), (200, 350)]),
            "the overlap, then the merged held range"
        );
        assert_eq!(ep.stats.dsacks_out, 3);
    }

    #[test]
    fn a_zero_window_is_probed_and_a_window_update_resumes_sending() {
        let mut ep = endpoint(20_000, &[20_000], false);
        establish(&mut ep);
        // Everything sent so far acknowledged, window closed.
        from_kernel(&mut ep, 14_480, 0, &[], 0);
        assert!(data(&ep.take_out()).is_empty());
        let at = ep.deadline().expect("persist timer");
        ep.poll(at);
        let probe = ep.take_out();
        let Frame::Tcp(p) = parse(&probe[0].frame) else {
            panic!("no probe")
        };
        assert_eq!(p.seq, ISS.wrapping_add(1).wrapping_add(14_480 - 1));
        assert_eq!(ep.stats.zero_window_probes, 1);
        from_kernel(&mut ep, 14_480, 64, &[], 0);
        assert_eq!(data(&ep.take_out())[0], (14_480, 1448, 0));
    }

    #[test]
    fn out_of_order_data_is_sacked_at_once_and_delivered_when_the_hole_fills() {
        let mut ep = endpoint(0, &[], false);
        establish(&mut ep);
        from_kernel(&mut ep, 0, 64, &[2; 100], 100);
        let out = ep.take_out();
        let Frame::Tcp(a) = parse(&out[0].frame) else {
            panic!("no ACK")
        };
        assert_eq!(a.ack, Some(IRS + 1));
        assert_eq!(a.sacks, [(IRS + 101, IRS + 201)]);
        assert!(received(&mut ep).is_empty());
        from_kernel(&mut ep, 0, 64, &[1; 100], 0);
        assert!(
            ep.take_out().is_empty(),
            "in-order data waits for the batch's ACK"
        );
        ep.flush_ack();
        let out = ep.take_out();
        let Frame::Tcp(a) = parse(&out[0].frame) else {
            panic!("no ACK")
        };
        assert_eq!(a.ack, Some(IRS + 201));
        assert_eq!(received(&mut ep), [[1u8; 100], [2u8; 100]].concat());
    }

    #[test]
    fn sack_blocks_put_the_latest_arrival_first() {
        let mut ep = endpoint(0, &[], false);
        establish(&mut ep);
        // Four holes' worth of ranges arrive, highest last, then one at the bottom.
        for at in [100, 300, 500, 700, 200] {
            from_kernel(&mut ep, 0, 64, &[1; 50], at);
        }
        let out = ep.take_out();
        let Some(Frame::Tcp(a)) = out.last().map(|o| parse(&o.frame)) else {
            panic!("no ACK")
        };
        let w = |off: u32| IRS + 1 + off;
        // 200 (latest), then 700 and 500 (the two before it); 100 and 300 left out.
        assert_eq!(
            a.sacks,
            [(w(200), w(250)), (w(700), w(750)), (w(500), w(550))]
        );
    }

    #[test]
    fn fins_both_ways_finish_the_connection() {
        let mut ep = endpoint(100, &[100], false);
        establish(&mut ep);
        // Data and our FIN went out; the kernel acknowledges both and sends its FIN.
        let t = TcpOut {
            seq: IRS + 1,
            ack: Some(ISS + 1 + 101),
            fin: true,
            wnd: 64,
            opts: vec![Opt::Noop, Opt::Noop, Opt::Timestamp(78, 1)],
            ..TcpOut::default()
        };
        let f = wire::tcp_frame(&kernel_ends(), &t).unwrap();
        ep.on_frame(VnetHdr::default(), &f, ms(5)).unwrap();
        assert!(ep.done());
        let out = ep.take_out();
        let Frame::Tcp(a) = parse(&out[0].frame) else {
            panic!("no ACK of the FIN")
        };
        assert_eq!(a.ack, Some(IRS + 2));
    }

    /// A bare segment from the kernel with flags: `ack` and `seq_off` as stream offsets.
    fn kernel_fin(ep: &mut Endpoint, ack: u64, seq_off: u64, fin: bool) {
        let t = TcpOut {
            seq: IRS.wrapping_add(1).wrapping_add(seq_off as u32),
            ack: Some(ISS.wrapping_add(1).wrapping_add(ack as u32)),
            fin,
            wnd: 64,
            opts: vec![Opt::Noop, Opt::Noop, Opt::Timestamp(78, 1)],
            ..TcpOut::default()
        };
        let f = wire::tcp_frame(&kernel_ends(), &t).unwrap();
        ep.on_frame(VnetHdr::default(), &f, ep.now + ms(1)).unwrap();
    }

    fn fins(out: &[Out]) -> Vec<u32> {
        out.iter()
            .filter_map(|o| match parse(&o.frame) {
                Frame::Tcp(t) if t.fin => Some(t.seq.wrapping_sub(ISS + 1)),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn the_passive_closer_sends_its_fin_after_the_peers_and_ends_on_its_ack() {
        let mut ep = endpoint(0, &[], false);
        ep.cfg.close_first = false;
        assert!(
            fins(&establish(&mut ep)).is_empty(),
            "no FIN before the peer's"
        );
        assert_eq!(ep.st, St::Established);
        kernel_fin(&mut ep, 0, 0, true);
        assert_eq!(ep.st, St::LastAck, "the peer's FIN, then ours at once");
        assert_eq!(fins(&ep.take_out()), [0]);
        kernel_fin(&mut ep, 1, 1, false);
        assert_eq!(ep.st, St::Closed);
        assert!(ep.done());
    }

    #[test]
    fn a_lost_fin_goes_out_again_and_its_ack_then_the_peers_fin_end_the_connection() {
        let mut ep = endpoint(100, &[100], false);
        assert_eq!(fins(&establish(&mut ep)), [100]);
        assert_eq!(ep.st, St::FinWait1);
        // The data is acknowledged, the FIN is not: the timeout sends the FIN alone.
        kernel_fin(&mut ep, 100, 0, false);
        ep.take_out();
        let at = ep.deadline().expect("armed for the FIN");
        ep.poll(at);
        let out = ep.take_out();
        assert_eq!((fins(&out), data(&out)), (vec![100], vec![]));
        kernel_fin(&mut ep, 101, 0, false);
        assert_eq!(ep.st, St::FinWait2);
        assert_eq!(ep.deadline(), None, "nothing left to time");
        kernel_fin(&mut ep, 101, 0, true);
        assert_eq!(ep.st, St::TimeWait);
        assert!(ep.done());
    }

    /// Under load our ACK of the kernel's FIN may come after its timeout sent the FIN
    /// again: both copies are acknowledged, the first ACK closes the kernel's socket, and it
    /// answers the second with a RST, which ends nothing (reproduced on the TAP by delaying
    /// the runner's reads 300 ms: the kernel counted it in `Tcp.OutRsts`). Before both FINs
    /// are acknowledged a RST is an error.
    #[test]
    fn a_fin_sent_again_is_acknowledged_again_and_a_reset_after_the_close_ends_nothing() {
        let mut ep = endpoint(100, &[100], false);
        establish(&mut ep);
        let rst = TcpOut {
            seq: IRS + 1,
            rst: true,
            ..TcpOut::default()
        };
        let rst = wire::tcp_frame(&kernel_ends(), &rst).unwrap();
        assert!(ep.on_frame(VnetHdr::default(), &rst, ms(4)).is_err());
        kernel_fin(&mut ep, 101, 0, true);
        kernel_fin(&mut ep, 101, 0, true);
        assert!(ep.done());
        let acks: Vec<Option<u32>> = ep
            .take_out()
            .iter()
            .map(|o| match parse(&o.frame) {
                Frame::Tcp(t) => t.ack,
                _ => None,
            })
            .collect();
        assert_eq!(
            acks,
            [Some(IRS + 2); 2],
            "each copy of the FIN acknowledged"
        );
        assert_eq!(ep.stats.peer_fins_again, 1);
        assert_eq!(ep.on_frame(VnetHdr::default(), &rst, ms(9)), Ok(()));
    }

    #[test]
    fn fins_that_cross_go_through_closing() {
        let mut ep = endpoint(0, &[], false);
        assert_eq!(fins(&establish(&mut ep)), [0]);
        // The peer's FIN does not acknowledge ours.
        kernel_fin(&mut ep, 0, 0, true);
        assert_eq!(ep.st, St::Closing);
        assert!(!ep.done());
        kernel_fin(&mut ep, 1, 1, false);
        assert_eq!(ep.st, St::TimeWait);
        assert!(ep.done());
    }
}

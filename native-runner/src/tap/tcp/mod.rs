//! The runner's userspace TCP endpoint: the peer of the kernel's socket across the TAP.
//!
//! Sans-IO, like the core: frames and the time come in, frames go out ([`Endpoint::take_out`]).
//! It opens actively (ARP, then SYN offering MSS, SACK-permitted, timestamps and window scale,
//! RFC 7323), sends the stream cut where the model cut it (one [`Chunk`] per skb) as plain
//! MSS-sized frames or as GSO super-packets, honours the peer's window (zero-window probes,
//! RFC 9293 3.8.6.1), recovers from loss as the kernel does with SACK (RFC 6675: the peer's
//! SACK blocks kept in a [`Scoreboard`], fast retransmit on three duplicate ACKs or SACKed
//! segments, lost ranges resent while the pipe is under the congestion window) and RACK-TLP
//! (RFC 8985: loss found by send time, [`Rack`], and a probe for a lost tail), with the
//! timeout as the last resort (it resends the unSACKed flight, RFC 6298 with backoff),
//! undoes a reduction the peer's timestamps or D-SACKs prove needless ([`Undo`]),
//! receives with reassembly and SACK blocks (RFC 2018), and closes with a FIN each way (the
//! states of RFC 9293). Sequence numbers are kept as 64-bit stream offsets (0 = first data
//! byte) and turned into 32-bit wire numbers at the edge.

mod rack;
mod sack;
mod undo;

use rack::Rack;
use sack::Scoreboard;
use undo::Undo;
use super::vnet::VnetHdr;
use super::wire::{self, before, Arp, Ends, Frame, TcpIn, TcpOut, MAX_WSCALE};
use etherparse::TcpOptionElement as Opt;
use skblab_core::consts::wire::{ETH_HLEN, IPV4_HLEN, TCP_TS_HLEN};
use std::collections::BTreeMap;
use std::time::Duration;

/// Header bytes of our data frames: Ethernet, IPv4 without options, TCP with timestamps.
const HDR_LEN: u16 = (ETH_HLEN + IPV4_HLEN + TCP_TS_HLEN) as u16;
/// The largest IPv4 datagram (`IP_MAX_MTU`, the 16-bit total length): a super-packet's
/// payload must fit under it with the headers.
const IP_MAX_MTU: u32 = 65_535;
pub const MAX_SUPER_PAYLOAD: u64 = (IP_MAX_MTU - IPV4_HLEN - TCP_TS_HLEN) as u64;
/// The timestamp option as every segment carries it (`TCPOLEN_TSTAMP_ALIGNED`: 10 bytes and
/// two NOPs), out of the MSS: the TCP header with it less `sizeof(struct tcphdr)`.
const TCPOLEN_TSTAMP_ALIGNED: u64 = (TCP_TS_HLEN - wire::TCP_HLEN) as u64;
const RTO_INITIAL: Duration = Duration::from_millis(200);
const RTO_MIN: Duration = Duration::from_millis(30);
const RTO_MAX: Duration = Duration::from_secs(1);

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

/// What went over the wire, for the summary.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct Stats {
    pub frames_out: u64,
    /// Wire segments sent (a super-packet counts its MSS-sized pieces).
    pub segments_out: u64,
    pub super_packets_out: u64,
    pub bytes_out: u64,
    pub retransmitted_segments: u64,
    pub timeouts: u64,
    pub fast_retransmits: u64,
    /// Segments RACK found lost (RFC 8985), and how many of them were retransmissions.
    pub rack_lost: u64,
    pub rack_lost_resends: u64,
    /// Tail loss probes sent (RFC 8985 7).
    pub loss_probes: u64,
    /// Reductions undone, after a timeout (the kernel's `TCPLossUndo`) and after a fast
    /// recovery (`TCPFullUndo`).
    pub loss_undos: u64,
    pub recovery_undos: u64,
    /// D-SACK blocks (RFC 2883) received and sent.
    pub dsacks_in: u64,
    pub dsacks_out: u64,
    /// Of those sent, the ones sent once both FINs were out: the peer may be in TIME_WAIT
    /// by then, where the kernel's `tcp_timewait_state_process` reads no SACK, or gone.
    pub dsacks_out_closing: u64,
    pub zero_window_probes: u64,
    pub frames_in: u64,
    pub segments_in: u64,
    pub super_packets_in: u64,
    pub bytes_in: u64,
    pub bad_checksums_in: u64,
    pub dup_acks_in: u64,
}

/// The connection's state (RFC 9293 3.3.2), with ARP resolution before the SYN. Our FIN
/// takes the sequence number after the data (stream offset `tx.len()`), so `snd_nxt` passes
/// the data by one once the FIN is out, as the kernel's `tcp_send_fin` does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum St {
    Arp,
    SynSent,
    Established,
    /// Our FIN sent, not acknowledged; no FIN from the peer yet.
    FinWait1,
    /// Our FIN acknowledged; waiting for the peer's.
    FinWait2,
    /// Both FINs sent, ours not acknowledged yet (simultaneous close).
    Closing,
    /// Both FINs sent and acknowledged, we closed first. The runner does not wait 2 MSL: the
    /// namespace vanishes with the process.
    TimeWait,
    /// The peer's FIN received; ours not sent yet.
    CloseWait,
    /// The peer's FIN received, ours sent and not acknowledged.
    LastAck,
    /// Both FINs sent and acknowledged, the peer closed first.
    Closed,
}

/// The sender's loss state, as the kernel's `icsk_ca_state` names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ca {
    /// No loss suspected.
    Open,
    /// Fast recovery (RFC 6675): entered on [`sack::DUP_THRESH`] duplicate ACKs or SACKed
    /// segments above `snd_una`; lost holes are resent while the pipe is under cwnd.
    Recovery,
    /// After a retransmission timeout (the kernel's `tcp_enter_loss`): every unSACKed byte
    /// sent before it is lost, resent from `snd_una` in slow start, SACKed ranges skipped.
    Loss,
}

/// What the early timer does when it fires.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Early {
    /// RACK's reordering window has passed for a range: look for losses again.
    Reo,
    /// Tail loss probe.
    Probe,
}

impl St {
    /// Our FIN has its sequence number: it went out at least once.
    #[cfg(feature = "fuzzing")]
    fn fin_queued(self) -> bool {
        use St::*;
        matches!(
            self,
            FinWait1 | FinWait2 | Closing | TimeWait | LastAck | Closed
        )
    }

    /// The peer's FIN arrived in order.
    fn peer_closed(self) -> bool {
        use St::*;
        matches!(self, CloseWait | Closing | LastAck | TimeWait | Closed)
    }

    /// Both FINs went out: the peer's arrived in order, and ours followed.
    fn both_fins_out(self) -> bool {
        self.peer_closed() && self != St::CloseWait
    }

    /// The handshake is done: data and FINs flow.
    fn synchronized(self) -> bool {
        !matches!(self, St::Arp | St::SynSent)
    }
}

pub struct Endpoint {
    cfg: Config,
    st: St,
    peer_mac: Option<[u8; 6]>,
    /// Payload bytes per segment: the peer's MSS less our 12 bytes of timestamps.
    mss: u64,
    ts_ok: bool,
    sack_ok: bool,
    peer_wscale: u8,
    // -- sending --
    tx: Vec<u8>,
    chunks: Vec<Chunk>,
    iss: u32,
    snd_una: u64,
    /// The next new byte to send: everything below it went out at least once.
    snd_nxt: u64,
    snd_wnd: u64,
    cwnd: u64,
    /// Bytes delivered towards the next segment of congestion avoidance (`snd_cwnd_cnt`).
    cwnd_cnt: u64,
    /// Congestion window validation (the kernel's `tcp_cwnd_validate`): whether this window
    /// of data filled cwnd, the largest flight in it, and where it ends.
    cwnd_limited: bool,
    max_flight: u64,
    cwnd_usage_seq: u64,
    ssthresh: u64,
    dupacks: u32,
    ca: Ca,
    /// RFC 6675 `RecoveryPoint` (the kernel's `high_seq`): `snd_nxt` when recovery began.
    recovery_point: u64,
    sacked: Scoreboard,
    rack: Rack,
    undo: Undo,
    /// The RACK reordering timer or the tail loss probe, whichever is due (the kernel's
    /// `ICSK_TIME_REO_TIMEOUT` and `ICSK_TIME_LOSS_PROBE`), before the retransmission timer.
    early: Option<(Duration, Early)>,
    /// RFC 8985 `TLP.end_seq`: `snd_nxt` when the probe went, until acknowledged; one probe
    /// at a time.
    tlp_end: Option<u64>,
    /// The retransmission timeout, doubled on each expiry (RFC 6298 5.5) until an RTT
    /// sample sets it afresh.
    rto: Duration,
    srtt: Option<(f64, f64)>,
    timer: Option<Duration>,
    // -- receiving --
    irs: u32,
    rcv_nxt: u64,
    ooo: BTreeMap<u64, Vec<u8>>,
    /// Where the latest out-of-order segments start, most recent first (for SACK's order).
    sack_recent: Vec<u64>,
    /// Where the peer's FIN sits in its stream, once seen (perhaps before the data up to it).
    peer_fin: Option<u64>,
    ts_recent: u32,
    /// In-order data arrived and is not acknowledged yet.
    ack_due: bool,
    /// A range received twice, to report once in the next ACK (RFC 2883; the kernel's
    /// `duplicate_sack`).
    dsack: Option<(u64, u64)>,
    pub rx: Vec<u8>,
    pub arrivals: Vec<Arrival>,
    pub stats: Stats,
    out: Vec<Out>,
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
            tx,
            chunks,
            iss,
            snd_una: 0,
            snd_nxt: 0,
            snd_wnd: 0,
            cwnd: 0,
            cwnd_cnt: 0,
            cwnd_limited: false,
            max_flight: 0,
            cwnd_usage_seq: 0,
            ssthresh: u64::MAX,
            dupacks: 0,
            ca: Ca::Open,
            recovery_point: 0,
            sacked: Scoreboard::default(),
            rack: Rack::default(),
            undo: Undo::default(),
            early: None,
            tlp_end: None,
            rto: RTO_INITIAL,
            srtt: None,
            timer: None,
            irs: 0,
            rcv_nxt: 0,
            ooo: BTreeMap::new(),
            sack_recent: Vec::new(),
            peer_fin: None,
            ts_recent: 0,
            ack_due: false,
            dsack: None,
            rx: Vec::new(),
            arrivals: Vec::new(),
            stats: Stats::default(),
            out: Vec::new(),
            now: Duration::ZERO,
        }
    }

    /// Both FINs sent and acknowledged.
    pub fn done(&self) -> bool {
        matches!(self.st, St::TimeWait | St::Closed)
    }

    /// The payload bytes per segment the handshake settled on (valid once established).
    pub fn mss(&self) -> u64 {
        self.mss
    }

    /// Acknowledged bytes of our stream (for progress).
    pub fn acked(&self) -> u64 {
        self.snd_una.min(self.tx.len() as u64)
    }

    pub fn take_out(&mut self) -> Vec<Out> {
        std::mem::take(&mut self.out)
    }

    /// When [`Endpoint::poll`] next has work to do, if ever.
    pub fn deadline(&self) -> Option<Duration> {
        let early = self.early.map(|(at, _)| at);
        self.timer.into_iter().chain(early).min()
    }

    /// What holds between calls, whatever frames came in: the fuzz targets check it.
    #[cfg(feature = "fuzzing")]
    pub fn check(&self) -> Result<(), String> {
        let len = self.tx.len() as u64;
        let top = len + u64::from(self.st.fin_queued());
        let fin_acked = matches!(self.st, St::FinWait2 | St::TimeWait | St::Closed);
        let rules = [
            (
                "snd_una <= snd_nxt <= data (and our FIN)",
                self.snd_una <= self.snd_nxt && self.snd_nxt <= top,
            ),
            (
                "our FIN acknowledged = snd_una past the data",
                fin_acked == (self.snd_una > len),
            ),
            (
                "rcv_nxt = bytes delivered",
                self.rcv_nxt == self.rx.len() as u64,
            ),
            (
                "held segments past rcv_nxt",
                self.ooo.keys().all(|&s| s > self.rcv_nxt),
            ),
            ("mss > 0", self.mss > 0),
        ];
        match rules.iter().find(|(_, ok)| !ok) {
            Some((rule, _)) => Err(format!("endpoint state broken: {rule}")),
            None => Ok(()),
        }
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
        self.arm(now + RTO_INITIAL);
    }

    fn arm(&mut self, at: Duration) {
        self.timer = Some(at);
    }

    fn tsval(&self) -> u32 {
        self.now.as_micros() as u32
    }

    fn wire_seq(&self, off: u64) -> u32 {
        self.iss.wrapping_add(1).wrapping_add(off as u32)
    }

    /// A 32-bit sequence number near `base` (a stream offset) as a stream offset.
    fn unwrap(base: u64, wire_base: u32, seq: u32) -> u64 {
        (base as i64 + i64::from(seq.wrapping_sub(wire_base) as i32)).max(0) as u64
    }

    fn rcv_wire(&self, off: u64) -> u32 {
        self.irs.wrapping_add(1).wrapping_add(off as u32)
    }

    /// Our acknowledgment number: the next byte expected, past the peer's FIN once received.
    fn ack_field(&self) -> Option<u32> {
        Some(self.rcv_wire(self.rcv_nxt + u64::from(self.st.peer_closed())))
    }

    fn emit(&mut self, t: TcpOut, mut vnet: VnetHdr) {
        let mut e = self.cfg.ends;
        e.peer_mac = self.peer_mac.expect("model bug: TCP before ARP");
        let frame = if self.cfg.csum_offload && !t.payload.is_empty() {
            vnet = vnet.partial((ETH_HLEN + IPV4_HLEN) as u16);
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

    fn send_syn(&mut self) {
        let opts = vec![
            Opt::MaximumSegmentSize(self.cfg.mss),
            Opt::SelectiveAcknowledgementPermitted,
            Opt::Timestamp(self.tsval(), 0),
            Opt::Noop,
            Opt::WindowScale(self.cfg.wscale),
        ];
        let t = TcpOut {
            seq: self.iss,
            syn: true,
            wnd: self.cfg.rcv_wnd.min(65_535) as u16,
            opts,
            ..TcpOut::default()
        };
        self.emit(t, VnetHdr::default());
    }

    /// An ACK of everything received in order, with SACK blocks for what is held out of order,
    /// after a D-SACK block for a duplicate (three blocks at most, as 40 option bytes less 12
    /// for timestamps leave room for three).
    fn send_ack(&mut self) {
        self.ack_due = false;
        let mut opts = self.opts();
        let dsack = self.dsack.take();
        self.stats.dsacks_out += u64::from(dsack.is_some());
        self.stats.dsacks_out_closing += u64::from(dsack.is_some() && self.st.both_fins_out());
        let blocks: Vec<(u32, u32)> = dsack
            .into_iter()
            .chain(self.sack_blocks())
            .take(3)
            .map(|(a, b)| (self.rcv_wire(a), self.rcv_wire(b)))
            .collect();
        if !blocks.is_empty() {
            let rest = [1, 2].map(|i| blocks.get(i).copied());
            opts.extend([Opt::Noop, Opt::Noop]);
            opts.push(Opt::SelectiveAcknowledgement(
                blocks[0],
                [rest[0], rest[1], None],
            ));
        }
        let t = TcpOut {
            seq: self.wire_seq(self.snd_nxt),
            ack: self.ack_field(),
            wnd: self.rcv_wnd_field(),
            opts,
            ..TcpOut::default()
        };
        self.emit(t, VnetHdr::default());
    }

    /// The SACK blocks to send (RFC 2018 4): the range holding the latest out-of-order
    /// arrival first, then the ranges of the arrivals before it, most recent first (as the
    /// kernel's `tcp_sack_new_ofo_skb` keeps them), then the lowest others; three at most.
    fn sack_blocks(&self) -> Vec<(u64, u64)> {
        if !self.sack_ok {
            return Vec::new();
        }
        let mut held: Vec<(u64, u64)> = Vec::new();
        for (&s, d) in &self.ooo {
            let e = s + d.len() as u64;
            match held.last_mut() {
                Some((_, b)) if s <= *b => *b = (*b).max(e),
                _ => held.push((s, e)),
            }
        }
        let recent = self
            .sack_recent
            .iter()
            .filter_map(|&at| held.iter().find(|(s, e)| (*s..*e).contains(&at)));
        let mut out: Vec<(u64, u64)> = Vec::with_capacity(3);
        for &b in recent.chain(held.iter()) {
            if out.len() == 3 {
                break;
            }
            if !out.contains(&b) {
                out.push(b);
            }
        }
        out
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
            self.arm(self.now + self.rto);
        }
    }

    fn on_tcp(&mut self, vnet: VnetHdr, t: TcpIn) -> Result<(), String> {
        self.stats.frames_in += 1;
        if t.rst {
            return Err("the kernel reset the connection (RST)".into());
        }
        if let Some((val, _)) = t.ts {
            self.ts_recent = val;
        }
        match self.st {
            St::Arp => Ok(()),
            St::SynSent => {
                if t.syn && t.ack == Some(self.iss.wrapping_add(1)) {
                    self.on_syn_ack(&t);
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
        self.irs = t.seq;
        self.ts_ok = t.ts.is_some();
        self.sack_ok = t.sack_perm;
        self.peer_wscale = t.wscale.unwrap_or(0);
        if t.wscale.is_none() {
            self.cfg.wscale = 0;
        }
        let peer_mss = u64::from(t.mss.unwrap_or(536));
        // A peer's MSS smaller than the timestamp option must not underflow, nor leave 0 to divide by.
        let opts = if self.ts_ok {
            TCPOLEN_TSTAMP_ALIGNED
        } else {
            0
        };
        self.mss = peer_mss
            .saturating_sub(opts)
            .min(self.cfg.seg_cap)
            .clamp(1, MAX_SUPER_PAYLOAD);
        self.snd_wnd = u64::from(t.wnd);
        // RFC 6928 initial window: ten segments.
        self.cwnd = 10 * self.mss;
        self.st = St::Established;
        self.timer = None;
        self.rto_sample(t);
        self.send_ack();
        self.transmit();
    }

    /// RFC 6298 RTT estimate from the echoed timestamp (our TSval is in microseconds).
    fn rto_sample(&mut self, t: &TcpIn) {
        let Some((_, ecr)) = t.ts.filter(|(_, e)| *e != 0) else {
            return;
        };
        let r = f64::from(self.tsval().wrapping_sub(ecr)) / 1e6;
        let (srtt, var) = match self.srtt {
            None => (r, r / 2.0),
            Some((s, v)) => (0.875 * s + 0.125 * r, 0.75 * v + 0.25 * (s - r).abs()),
        };
        self.srtt = Some((srtt, var));
        self.rack.rtt_sample(Duration::from_secs_f64(r));
        self.rto = Duration::from_secs_f64(srtt + 4.0 * var).clamp(RTO_MIN, RTO_MAX);
    }

    fn on_ack(&mut self, t: &TcpIn) {
        let Some(ack) = t.ack else { return };
        let ack = Self::unwrap(self.snd_una, self.wire_seq(self.snd_una), ack);
        if ack > self.snd_nxt {
            return;
        }
        let wnd = u64::from(t.wnd) << self.peer_wscale;
        let data_len = self.tx.len() as u64;
        let newly_sacked = self.take_sacks(t);
        let outstanding = self.snd_una < self.snd_nxt.min(data_len);
        let mut delivered = None;
        if ack > self.snd_una {
            // Delivered by this ACK: newly SACKed bytes, and acknowledged ones not SACKed before.
            delivered = Some(
                ack - self.snd_una - self.sacked.sacked_bytes(self.snd_una, ack) + newly_sacked,
            );
            self.rack.on_delivered(self.snd_una, ack, self.now);
            self.snd_una = ack;
            self.sacked.advance(ack);
            self.rack.advance(ack);
            if self.tlp_end.is_some_and(|e| ack >= e) {
                self.tlp_end = None;
            }
            if self.ca == Ca::Recovery && ack < self.recovery_point {
                // A partial ACK: the next segment is lost too (NewReno, RFC 6582).
                self.sacked.mark_lost(ack, ack + self.mss, false);
            }
            if ack > data_len {
                self.st = match self.st {
                    St::FinWait1 => St::FinWait2,
                    St::Closing => St::TimeWait,
                    St::LastAck => St::Closed,
                    st => st,
                };
            }
            self.dupacks = 0;
            self.rto_sample(t);
            let tsecr = t.ts.map(|(_, ecr)| ecr).filter(|&e| e != 0);
            if self.ca == Ca::Loss {
                // `tcp_process_loss`: an ACK that answers originals ends the timeout's episode.
                self.try_undo(tsecr);
            }
            if self.ca != Ca::Open && ack >= self.recovery_point {
                // RFC 6675 5 step 2: recovery ends once RecoveryPoint is acknowledged, its
                // reduction undone if needless (`tcp_try_undo_recovery`).
                if !self.try_undo(tsecr) && self.ca == Ca::Recovery {
                    self.cwnd = self.ssthresh;
                }
                self.ca = Ca::Open;
                self.undo.clean();
            }
            self.timer = self.in_flight().then_some(self.now + self.rto);
            if !self.in_flight() || matches!(self.early, Some((_, Early::Probe))) {
                // Every new ACK puts the probe a PTO from now (`tcp_schedule_loss_probe`).
                self.early = None;
            }
        } else if ack == self.snd_una
            && outstanding
            && (newly_sacked > 0 || (t.payload.is_empty() && !t.fin && wnd == self.snd_wnd))
        {
            // A duplicate ACK: RFC 5681's (same window, no data), or one that SACKs new
            // data (RFC 6675 2), whatever its window says.
            self.stats.dup_acks_in += 1;
            self.dupacks += 1;
        }
        self.snd_wnd = wnd;
        self.sacked
            .mark_lost_by_sacks(self.snd_una, self.snd_nxt, self.mss);
        self.rack_detect(false);
        self.recover_if_lost();
        // After loss detection, as the kernel's `tcp_cong_control` follows
        // `tcp_fastretrans_alert`: an ACK that starts a recovery grows nothing.
        if let Some(d) = delivered.filter(|_| self.ca != Ca::Recovery) {
            self.grow_cwnd(d);
        }
        if wnd == 0 && !self.in_flight() && self.unsent() && self.timer.is_none() {
            self.arm(self.now + self.rto);
        }
    }

    /// Adds the ACK's SACK blocks to the scoreboard (only the parts within `snd_una..snd_nxt`:
    /// D-SACKs of old data and nonsense fall away); returns the bytes newly SACKed. A D-SACK
    /// (RFC 2883) counts against the episode's resends.
    fn take_sacks(&mut self, t: &TcpIn) -> u64 {
        if !self.sack_ok {
            return 0;
        }
        let base = self.wire_seq(self.snd_una);
        if let Some(&(s, e)) = t.sacks.first().filter(|_| is_dsack(t)) {
            let (s, e) = (
                Self::unwrap(self.snd_una, base, s),
                Self::unwrap(self.snd_una, base, e),
            );
            if s < e {
                self.stats.dsacks_in += 1;
                self.undo.on_dsack(e, (e - s).div_ceil(self.mss));
            }
        }
        let mut new = 0;
        for &(s, e) in &t.sacks {
            let s = Self::unwrap(self.snd_una, base, s).max(self.snd_una);
            let e = Self::unwrap(self.snd_una, base, e).min(self.snd_nxt);
            if s < e {
                self.rack.on_delivered(s, e, self.now);
                new += self.sacked.sack(s, e);
            }
        }
        new
    }

    /// Reno as the kernel runs it (`tcp_reno_cong_avoid`, `tcp_slow_start`,
    /// `tcp_cong_avoid_ai` in net/ipv4/tcp_cong.c, v6.12), in bytes: a stretch ACK counts
    /// for everything it delivered, as that many ACKs would. Slow start grows by the bytes
    /// delivered up to ssthresh; what is left, and everything past it, grows cwnd by one
    /// segment per cwnd of bytes delivered.
    fn grow_cwnd(&mut self, delivered: u64) {
        if !self.is_cwnd_limited() {
            return;
        }
        let mut left = delivered;
        if self.cwnd < self.ssthresh {
            let grown = (self.cwnd + left).min(self.ssthresh);
            left -= grown - self.cwnd;
            self.cwnd = grown;
        }
        self.cwnd_cnt += left;
        if self.cwnd_cnt >= self.cwnd {
            let n = self.cwnd_cnt / self.cwnd;
            self.cwnd_cnt -= n * self.cwnd;
            self.cwnd += n * self.mss;
        }
    }

    /// `tcp_is_cwnd_limited`: cwnd grows only while the sender uses it, filled this window,
    /// or, in slow start, while cwnd is under twice the largest recent flight.
    fn is_cwnd_limited(&self) -> bool {
        self.cwnd_limited || (self.cwnd < self.ssthresh && self.cwnd < 2 * self.max_flight)
    }

    /// `tcp_cwnd_validate`, after each round of sending: remembers for the current window of
    /// data whether cwnd was full, or else the largest flight.
    fn cwnd_validate(&mut self, limited: bool) {
        let flight = self.flight();
        if self.snd_una >= self.cwnd_usage_seq
            || limited
            || (!self.cwnd_limited && flight > self.max_flight)
        {
            self.cwnd_limited = limited;
            self.max_flight = flight;
            self.cwnd_usage_seq = self.snd_nxt;
        }
    }

    /// Starts fast recovery when loss is known (`tcp_time_to_recover`): three duplicate
    /// ACKs, or a range lost by RFC 6675's `IsLost` or by RACK.
    fn recover_if_lost(&mut self) {
        let data_end = self.snd_nxt.min(self.tx.len() as u64);
        let lost = u64::from(self.dupacks) >= sack::DUP_THRESH
            || self.sacked.has_lost(self.snd_una, self.snd_nxt);
        if self.ca == Ca::Open && lost && self.snd_una < data_end {
            self.enter_recovery();
        }
    }

    /// RFC 6675 5 steps 4.1-4.3 (the kernel's `tcp_enter_recovery`): halve, remember where
    /// the flight ends, and resend the first lost segment at once (the first segment is lost
    /// whatever the SACKs say, as NewReno's RFC 6582 has it).
    fn enter_recovery(&mut self) {
        self.stats.fast_retransmits += 1;
        self.begin_episode();
        self.ssthresh = (self.flight() / 2).max(2 * self.mss);
        self.cwnd = self.ssthresh;
        self.ca = Ca::Recovery;
        self.recovery_point = self.snd_nxt;
        self.sacked
            .mark_lost(self.snd_una, self.snd_una + self.mss, false);
        if let Some((s, e)) = sack::next_lost(&self.sacked, self.snd_una, self.snd_nxt) {
            self.resend(s, e, self.mss);
        }
    }

    /// A recovery or timeout begins (`tcp_init_undo`): what it may have to put back.
    fn begin_episode(&mut self) {
        let resent_out = self.sacked.resent_bytes(self.snd_una, self.snd_nxt);
        // `tcp_current_ssthresh` outside a reduction: at least three quarters of cwnd.
        let ssthresh = self.ssthresh.max(self.cwnd / 2 + self.cwnd / 4);
        let segs = resent_out.div_ceil(self.mss);
        self.undo.init(self.snd_una, segs, self.cwnd, ssthresh);
    }

    /// The kernel's `tcp_try_undo_loss` and `tcp_try_undo_recovery`: if the episode's
    /// reduction was needless, the window goes back and the connection is `Open`; after a
    /// timeout nothing stays presumed lost.
    fn try_undo(&mut self, tsecr: Option<u32>) -> bool {
        let Some((cwnd, ssthresh)) = self.undo.try_undo(tsecr, self.cwnd, self.ssthresh) else {
            return false;
        };
        (self.cwnd, self.ssthresh) = (cwnd, ssthresh);
        if self.ca == Ca::Loss {
            self.sacked.unmark_lost();
            self.stats.loss_undos += 1;
        } else {
            self.stats.recovery_undos += 1;
        }
        self.ca = Ca::Open;
        true
    }

    /// RACK (RFC 8985 6.2, the kernel's `tcp_rack_mark_lost`): marks what it finds lost,
    /// resends included, and arms the reordering timer for what may be lost soon.
    fn rack_detect(&mut self, timer: bool) {
        let (lost, reo) = self.rack.detect_loss(self.now, timer);
        for l in lost {
            let segs = (l.end - l.start).div_ceil(self.mss);
            self.stats.rack_lost += segs;
            if l.resent {
                self.stats.rack_lost_resends += segs;
            }
            let start = l.start.max(self.snd_una);
            self.sacked.mark_lost(start, l.end, l.resent);
        }
        if let Some(wait) = reo {
            self.early = Some((self.now + wait, Early::Reo));
        }
    }

    fn in_flight(&self) -> bool {
        self.snd_una < self.snd_nxt
    }

    /// Data bytes sent and not acknowledged (our FIN aside).
    fn flight(&self) -> u64 {
        let len = self.tx.len() as u64;
        self.snd_nxt.min(len) - self.snd_una.min(len)
    }

    fn unsent(&self) -> bool {
        self.snd_nxt < self.tx.len() as u64
    }

    /// How much of `off..end` goes in one frame under `room`: at most one MSS on a plain
    /// device; on a GSO device up to the skb's end, or a whole number of segments when the
    /// room or IPv4's length cuts it (as `tso_fragment` does). Never past the skb holding `off`.
    fn cut(&self, off: u64, end: u64, room: u64) -> u64 {
        let want = end.min(self.chunk_end(off)).saturating_sub(off);
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
    fn resend(&mut self, off: u64, end: u64, room: u64) -> u64 {
        let n = self.resend_frame(off, end, room);
        if n > 0 {
            let tsval = self.tsval();
            self.undo.on_resend(n.div_ceil(self.mss), tsval);
        }
        n
    }

    /// Resends from `off` towards `end` within `room`; our FIN when `off` is past the data
    /// (`__tcp_retransmit_skb`, which a loss probe calls directly). Returns the sequence
    /// space resent.
    fn resend_frame(&mut self, off: u64, end: u64, room: u64) -> u64 {
        let data_len = self.tx.len() as u64;
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
        self.sacked.resent(off, off + n);
        n
    }

    /// The end of the skb holding stream offset `off`.
    fn chunk_end(&self, off: u64) -> u64 {
        let i = self.chunks.partition_point(|c| c.end <= off);
        self.chunks.get(i).map_or(self.tx.len() as u64, |c| c.end)
    }

    /// Sends `len` bytes at `off`: one plain frame, or one super-packet when longer than MSS.
    fn send_data(&mut self, off: u64, len: u64) {
        let end = off + len;
        let i = self.chunks.partition_point(|c| c.end < end);
        let psh = self.chunks.get(i).is_some_and(|c| c.end == end && c.psh);
        let segs = len.div_ceil(self.mss);
        let vnet = if segs > 1 {
            self.stats.super_packets_out += 1;
            VnetHdr::tcpv4(HDR_LEN, self.mss as u16)
        } else {
            VnetHdr::default()
        };
        let resent = off < self.snd_nxt;
        if resent {
            self.stats.retransmitted_segments += segs;
        }
        self.rack.on_sent(off, end, self.now, resent);
        self.stats.segments_out += segs;
        self.stats.bytes_out += len;
        let t = TcpOut {
            seq: self.wire_seq(off),
            ack: self.ack_field(),
            psh,
            wnd: self.rcv_wnd_field(),
            opts: self.opts(),
            payload: &[],
            ..TcpOut::default()
        };
        let tx = std::mem::take(&mut self.tx);
        self.emit(
            TcpOut {
                payload: &tx[off as usize..end as usize],
                ..t
            },
            vnet,
        );
        self.tx = tx;
        if self.timer.is_none() {
            self.arm(self.now + self.rto);
        }
    }

    /// Our FIN, at the sequence number after the data.
    fn send_fin(&mut self) {
        let t = TcpOut {
            seq: self.wire_seq(self.tx.len() as u64),
            ack: self.ack_field(),
            fin: true,
            wnd: self.rcv_wnd_field(),
            opts: self.opts(),
            ..TcpOut::default()
        };
        self.emit(t, VnetHdr::default());
        if self.timer.is_none() {
            self.arm(self.now + self.rto);
        }
    }

    /// Sends what the windows allow (RFC 6675 `NextSeg`): in recovery the lost ranges first
    /// (rule 1), then new data as the skb boundaries cut it (rule 2), then our FIN, then, with
    /// no new data left, ranges not yet known lost (rule 3). The congestion window is
    /// measured against the pipe, so SACKed data frees room.
    fn transmit(&mut self) {
        if !self.st.synchronized() {
            return;
        }
        let data_len = self.tx.len() as u64;
        let mut pipe = self.sacked.pipe(self.snd_una, self.snd_nxt);
        let before = pipe;
        if self.ca != Ca::Open {
            pipe += self.resend_while(pipe, sack::next_lost);
        }
        while self.snd_nxt < data_len {
            let flight = self.snd_nxt - self.snd_una;
            let room = self
                .snd_wnd
                .saturating_sub(flight)
                .min(self.cwnd.saturating_sub(pipe));
            let want = self.chunk_end(self.snd_nxt) - self.snd_nxt;
            let len = self.cut(self.snd_nxt, data_len, room);
            // No silly windows: a short segment only when it ends the skb or nothing is out.
            if len == 0 || (len < self.mss.min(want) && flight > 0) {
                break;
            }
            self.send_data(self.snd_nxt, len);
            self.snd_nxt += len;
            pipe += len;
        }
        // As `tcp_write_xmit` ends: no segment's room left under cwnd means cwnd limited the
        // sending (the kernel counts both in whole packets).
        let limited = self.cwnd.saturating_sub(pipe) < self.mss;
        if pipe > before || limited {
            self.cwnd_validate(limited);
        }
        // Our FIN, once the data is out and we may close.
        let fin_due = match self.st {
            St::Established => self.cfg.close_first,
            St::CloseWait => true,
            _ => false,
        };
        if self.snd_nxt == data_len && fin_due {
            self.st = match self.st {
                St::Established => St::FinWait1,
                _ => St::LastAck,
            };
            self.snd_nxt = data_len + 1;
            self.send_fin();
        }
        if self.ca != Ca::Open && !self.unsent() {
            self.resend_while(pipe, sack::next_unsacked);
        }
        self.arm_probe();
    }

    /// Resends the ranges `next` picks while the congestion window has a segment of room
    /// over the pipe (RFC 6675 5 step C); returns the bytes resent.
    fn resend_while(&mut self, mut pipe: u64, next: sack::NextSeg) -> u64 {
        let start = pipe;
        while self.cwnd.saturating_sub(pipe) >= self.mss {
            let Some((s, e)) = next(&self.sacked, self.snd_una, self.snd_nxt) else {
                break;
            };
            let room = self.cwnd - pipe;
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
        let Some((srtt, _)) = self.srtt else { return };
        let data_end = self.snd_nxt.min(self.tx.len() as u64);
        let due = self.ca == Ca::Open
            && self.sack_ok
            && self.early.is_none()
            && self.tlp_end.is_none()
            && self.snd_una < data_end;
        if !due {
            return;
        }
        let slack = if self.flight() <= self.mss {
            RTO_MIN
        } else {
            Duration::from_millis(2)
        };
        let pto = (Duration::from_secs_f64(2.0 * srtt) + slack).min(self.rto);
        self.early = Some((self.now + pto, Early::Probe));
    }

    /// RFC 8985 7.3 (the kernel's `tcp_send_loss_probe`): one new segment if the peer's
    /// window holds all of it (`tcp_snd_wnd_test`: a whole MSS, or the rest of the skb), else
    /// the last segment sent again. Its ACK, or the SACK of it, lets RACK find a lost tail
    /// without the retransmission timer.
    fn send_probe(&mut self) {
        self.stats.loss_probes += 1;
        let data_len = self.tx.len() as u64;
        let room = self.snd_wnd.saturating_sub(self.snd_nxt - self.snd_una);
        let new = self.cut(self.snd_nxt, data_len, self.mss);
        if self.snd_nxt < data_len && new <= room {
            self.send_data(self.snd_nxt, new);
            self.snd_nxt += new;
        } else {
            let end = self.snd_nxt.min(data_len);
            let start = end.saturating_sub(self.mss).max(self.snd_una);
            self.resend_frame(start, end, self.mss);
        }
        self.tlp_end = Some(self.snd_nxt);
        self.arm(self.now + self.rto);
    }

    fn on_data(&mut self, vnet: VnetHdr, t: &TcpIn) {
        let len = t.payload.len() as u64;
        if len == 0 && !t.fin {
            return;
        }
        let start = Self::unwrap(self.rcv_nxt, self.rcv_wire(self.rcv_nxt), t.seq);
        if len > 0 {
            self.stats.bytes_in += len;
            let gso = if vnet.is_gso() { vnet.gso_size } else { 0 };
            self.stats.segments_in += if gso > 0 {
                self.stats.super_packets_in += 1;
                len.div_ceil(u64::from(gso))
            } else {
                1
            };
            self.arrivals.push(Arrival {
                len: len as u32,
                gso_size: gso,
            });
        }
        let end = start + len;
        if len > 0 && self.sack_ok {
            self.dsack = self.dsack.or(self.duplicate(start, end));
        }
        if start <= self.rcv_nxt && end > self.rcv_nxt {
            // In order: straight to the stream.
            let skip = (self.rcv_nxt - start) as usize;
            self.rx.extend_from_slice(&t.payload[skip..]);
            self.rcv_nxt = end;
        } else if start > self.rcv_nxt {
            self.ooo.entry(start).or_insert_with(|| t.payload.to_vec());
            self.sack_recent.insert(0, start);
            self.sack_recent.truncate(3);
        }
        if t.fin {
            self.peer_fin = Some(end);
        }
        // Deliver everything now in order.
        while let Some((&s, _)) = self.ooo.first_key_value() {
            if s > self.rcv_nxt {
                break;
            }
            let (s, d) = self.ooo.pop_first().expect("non-empty");
            let e = s + d.len() as u64;
            if e > self.rcv_nxt {
                self.rx.extend_from_slice(&d[(self.rcv_nxt - s) as usize..]);
                self.rcv_nxt = e;
            }
        }
        if self.peer_fin == Some(self.rcv_nxt) {
            self.st = match self.st {
                St::Established => St::CloseWait,
                St::FinWait1 => St::Closing,
                St::FinWait2 => St::TimeWait,
                st => st,
            };
        }
        if self.ooo.is_empty() && !t.fin && start <= self.rcv_nxt {
            // In-order data: one ACK for the whole batch the TAP delivered (as GRO makes one
            // skb, and one ACK, of a NAPI poll's frames).
            self.ack_due = true;
        } else {
            // A hole, a duplicate or a FIN: say so now (duplicate ACK with SACK blocks).
            self.send_ack();
        }
    }

    /// The part of `start..end` already received, if any: below `rcv_nxt` (the kernel's
    /// `tcp_data_queue`), else within the held range just below `start` or the first held
    /// range inside it (`tcp_data_queue_ofo`); two lookups, not a scan of the held queue.
    fn duplicate(&self, start: u64, end: u64) -> Option<(u64, u64)> {
        if start < self.rcv_nxt {
            return Some((start, end.min(self.rcv_nxt)));
        }
        let below = self.ooo.range(..start).next_back();
        let inside = self.ooo.range(start..end).next();
        below
            .into_iter()
            .chain(inside)
            .map(|(&s, d)| (s.max(start), end.min(s + d.len() as u64)))
            .find(|(s, e)| s < e)
    }

    /// Sends the ACK held back for the batch, if any: call after each batch of frames.
    pub fn flush_ack(&mut self) {
        if std::mem::take(&mut self.ack_due) {
            self.send_ack();
        }
    }

    /// Runs the timers: ARP/SYN retries, retransmission timeout, zero-window probe.
    pub fn poll(&mut self, now: Duration) {
        self.now = now;
        if let Some((_, what)) = self.early.filter(|&(at, _)| now >= at) {
            self.early = None;
            match what {
                Early::Reo => {
                    self.rack_detect(true);
                    self.recover_if_lost();
                }
                // A loss found since the probe was armed leaves it to recovery.
                Early::Probe if self.ca == Ca::Open => self.send_probe(),
                Early::Probe => {}
            }
        }
        if self.timer.is_some_and(|t| now >= t) {
            self.timer = None;
            // RFC 6298 5.5: back off, until an RTT sample sets the timeout afresh.
            self.rto = (self.rto * 2).min(RTO_MAX);
            let rto = self.rto;
            match self.st {
                St::Arp => self.start(now),
                St::SynSent => {
                    self.send_syn();
                    self.arm(now + rto);
                }
                _ if self.in_flight() => {
                    // RFC 6298 5.4-5.6 and RFC 5681 3.1, as the kernel's `tcp_enter_loss`:
                    // one segment of window, everything unSACKed sent so far lost, resent
                    // from snd_una (our FIN too); ssthresh halves once per episode.
                    self.stats.timeouts += 1;
                    if self.ca == Ca::Open {
                        self.begin_episode();
                        self.ssthresh = (self.flight() / 2).max(2 * self.mss);
                    }
                    self.cwnd = self.mss;
                    self.ca = Ca::Loss;
                    self.recovery_point = self.snd_nxt;
                    self.sacked.timeout(self.snd_una, self.snd_nxt);
                    self.early = None;
                    self.dupacks = 0;
                    self.arm(now + rto);
                }
                _ if self.snd_wnd == 0 && self.unsent() => {
                    // Zero-window probe: an old sequence number makes the peer answer with
                    // its current window.
                    self.stats.zero_window_probes += 1;
                    let t = TcpOut {
                        seq: self.wire_seq(self.snd_una).wrapping_sub(1),
                        ack: self.ack_field(),
                        wnd: self.rcv_wnd_field(),
                        opts: self.opts(),
                        ..TcpOut::default()
                    };
                    self.emit(t, VnetHdr::default());
                    self.arm(now + rto);
                }
                _ => {}
            }
        }
        self.transmit();
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tap::wire::parse;
    use std::net::Ipv4Addr;

    const ISS: u32 = 1000;
    const IRS: u32 = 5000;
    const KMAC: [u8; 6] = [2, 0, 0, 0, 0, 1];

    fn ends() -> Ends {
        Ends {
            mac: [2, 0, 0, 0, 0, 2],
            peer_mac: [0; 6],
            ip: Ipv4Addr::new(192, 0, 2, 2),
            peer_ip: Ipv4Addr::new(192, 0, 2, 1),
            port: 40_000,
            peer_port: 5001,
        }
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
        assert_eq!(ep.snd_wnd, 1 << 14, "the peer's scale 255 is taken as 14");
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
        ep.cwnd = 1 << 20;
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
        assert_eq!(ep.ca, Ca::Recovery);
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
        assert_eq!(ep.ca, Ca::Open);
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
        assert_eq!(ep.ca, Ca::Open);
        assert_eq!((ep.cwnd, ep.cwnd_cnt), (6_516, 3 * SEG));
    }

    /// Runs the RACK and probe timers while the kernel stays silent; returns when the
    /// retransmission timer is next due.
    fn until_the_timeout(ep: &mut Endpoint) -> Duration {
        while let Some((at, _)) = ep.early {
            ep.poll(at);
        }
        ep.take_out();
        ep.timer.expect("armed")
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
        assert_eq!(ep.ca, Ca::Loss);
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
        assert_eq!(ep.early.map(|(_, e)| e), Some(Early::Probe));
        let at = ep.deadline().expect("armed");
        assert_eq!(at, Duration::from_micros(9_248));
        assert!(at < ep.timer.expect("the RTO too"));
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
        assert_eq!(ep.early.map(|(_, e)| e), Some(Early::Probe));
        ep.poll(ep.deadline().expect("armed"));
        assert_eq!(data(&ep.take_out()), [((9 * SEG) as u32, SEG as usize, 0)]);
        assert_eq!((ep.snd_nxt, ep.stats.loss_probes), (10 * SEG, 1));
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
        assert_eq!(ep.early, Some((at, Early::Reo)));
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
        assert_eq!(ep.cwnd, 20 * SEG);
        assert_eq!(
            data(&ep.take_out()).len(),
            20,
            "the doubled window goes out"
        );
        ep.ssthresh = ep.cwnd;
        sack_ack(&mut ep, 20 * SEG, &[]);
        assert_eq!(
            (ep.cwnd, ep.cwnd_cnt),
            (20 * SEG, 10 * SEG),
            "half a window"
        );
        sack_ack(&mut ep, 30 * SEG, &[]);
        assert_eq!((ep.cwnd, ep.cwnd_cnt), (21 * SEG, 0));
    }

    /// A sender that does not fill its window keeps it (`tcp_is_cwnd_limited`): three
    /// segments out under a cwnd of ten, all acknowledged, leave cwnd at ten, not 13, as ten
    /// is not under twice the flight.
    #[test]
    fn a_window_the_sender_does_not_fill_does_not_grow() {
        let mut ep = endpoint(3 * SEG as usize, &[3 * SEG], false);
        assert_eq!(data(&establish(&mut ep)).len(), 3);
        sack_ack(&mut ep, 3 * SEG, &[]);
        assert_eq!(ep.cwnd, 10 * SEG);
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
        assert_eq!((ep.ca, ep.cwnd, ep.ssthresh), (Ca::Loss, SEG, 7_964));
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
            (ep.ca, ep.cwnd, ep.ssthresh),
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
        assert_eq!((ep.ca, ep.cwnd), (Ca::Loss, 7_964));
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
        assert!(ep.rx.is_empty());
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
        assert_eq!(ep.rx, [[1u8; 100], [2u8; 100]].concat());
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

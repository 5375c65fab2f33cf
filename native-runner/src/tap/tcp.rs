//! The runner's userspace TCP endpoint: the peer of the kernel's socket across the TAP.
//!
//! Sans-IO, like the core: frames and the time come in, frames go out ([`Endpoint::take_out`]).
//! It opens actively (ARP, then SYN offering MSS, SACK-permitted, timestamps and window scale,
//! RFC 7323), sends the stream cut where the model cut it (one [`Chunk`] per skb) as plain
//! MSS-sized frames or as GSO super-packets, honours the peer's window (zero-window probes,
//! RFC 9293 3.8.6.1), retransmits on timeout (RFC 6298) and after three duplicate ACKs
//! (NewReno, RFC 6582), receives with reassembly and SACK blocks (RFC 2018), and closes with a
//! FIN each way. Sequence numbers are kept as 64-bit stream offsets (0 = first data byte) and
//! turned into 32-bit wire numbers at the edge.

use super::vnet::VnetHdr;
use super::wire::{self, Arp, Ends, Frame, TcpIn, TcpOut, MAX_WSCALE};
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
    pub zero_window_probes: u64,
    pub frames_in: u64,
    pub segments_in: u64,
    pub super_packets_in: u64,
    pub bytes_in: u64,
    pub bad_checksums_in: u64,
    pub dup_acks_in: u64,
}

/// The connection's state (RFC 9293 3.3.2), with ARP resolution before the SYN. Our FIN
/// takes the sequence number after the data (stream offset `tx.len()`), so `snd_nxt` and
/// `snd_max` pass the data by one once it is out, as the kernel's `tcp_send_fin` does.
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
    snd_nxt: u64,
    snd_max: u64,
    snd_wnd: u64,
    cwnd: u64,
    ssthresh: u64,
    dupacks: u32,
    recover: Option<u64>,
    rto: Duration,
    srtt: Option<(f64, f64)>,
    timer: Option<Duration>,
    backoff: u32,
    // -- receiving --
    irs: u32,
    rcv_nxt: u64,
    ooo: BTreeMap<u64, Vec<u8>>,
    /// Where the peer's FIN sits in its stream, once seen (perhaps before the data up to it).
    peer_fin: Option<u64>,
    ts_recent: u32,
    /// In-order data arrived and is not acknowledged yet.
    ack_due: bool,
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
            snd_max: 0,
            snd_wnd: 0,
            cwnd: 0,
            ssthresh: u64::MAX,
            dupacks: 0,
            recover: None,
            rto: RTO_INITIAL,
            srtt: None,
            timer: None,
            backoff: 0,
            irs: 0,
            rcv_nxt: 0,
            ooo: BTreeMap::new(),
            peer_fin: None,
            ts_recent: 0,
            ack_due: false,
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
        self.timer
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
                "snd_una <= snd_max <= data (and our FIN)",
                self.snd_una <= self.snd_max && self.snd_max <= top,
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

    /// An ACK of everything received in order, with SACK blocks for what is held out of order.
    fn send_ack(&mut self) {
        self.ack_due = false;
        let mut opts = self.opts();
        if self.sack_ok && !self.ooo.is_empty() {
            let mut blocks: Vec<(u32, u32)> = Vec::new();
            let mut cur: Option<(u64, u64)> = None;
            for (&s, d) in &self.ooo {
                let e = s + d.len() as u64;
                cur = match cur {
                    Some((a, b)) if s <= b => Some((a, b.max(e))),
                    Some((a, b)) => {
                        blocks.push((self.rcv_wire(a), self.rcv_wire(b)));
                        Some((s, e))
                    }
                    None => Some((s, e)),
                };
            }
            if let Some((a, b)) = cur {
                blocks.push((self.rcv_wire(a), self.rcv_wire(b)));
            }
            // 40 option bytes: 12 for timestamps leave room for three blocks.
            blocks.truncate(3);
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
        self.backoff = 0;
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
        self.rto = Duration::from_secs_f64(srtt + 4.0 * var).clamp(RTO_MIN, RTO_MAX);
    }

    fn on_ack(&mut self, t: &TcpIn) {
        let Some(ack) = t.ack else { return };
        let ack = Self::unwrap(self.snd_una, self.wire_seq(self.snd_una), ack);
        if ack > self.snd_max {
            return;
        }
        let wnd = u64::from(t.wnd) << self.peer_wscale;
        let data_len = self.tx.len() as u64;
        if ack > self.snd_una {
            let acked = ack - self.snd_una;
            self.snd_una = ack;
            if ack > data_len {
                self.st = match self.st {
                    St::FinWait1 => St::FinWait2,
                    St::Closing => St::TimeWait,
                    St::LastAck => St::Closed,
                    st => st,
                };
            }
            self.snd_nxt = self.snd_nxt.max(self.snd_una);
            self.dupacks = 0;
            self.backoff = 0;
            self.rto_sample(t);
            match self.recover {
                Some(r) if ack < r => self.retransmit_one(),
                Some(_) => {
                    self.recover = None;
                    self.cwnd = self.ssthresh;
                }
                None if self.cwnd < self.ssthresh => self.cwnd += acked.min(2 * self.mss),
                None => self.cwnd += (self.mss * self.mss / self.cwnd).max(1),
            }
            self.timer = self.in_flight().then_some(self.now + self.rto);
        } else if ack == self.snd_una
            && t.payload.is_empty()
            && !t.fin
            && wnd == self.snd_wnd
            && self.snd_una < self.snd_max.min(data_len)
        {
            self.stats.dup_acks_in += 1;
            self.dupacks += 1;
            if self.dupacks == 3 && self.recover.is_none() {
                self.stats.fast_retransmits += 1;
                self.ssthresh = (self.flight() / 2).max(2 * self.mss);
                self.cwnd = self.ssthresh + 3 * self.mss;
                self.recover = Some(self.snd_max.min(data_len));
                self.retransmit_one();
            } else if self.dupacks > 3 {
                self.cwnd += self.mss;
            }
        }
        self.snd_wnd = wnd;
        if wnd == 0 && !self.in_flight() && self.unsent() && self.timer.is_none() {
            self.arm(self.now + self.rto);
        }
    }

    fn in_flight(&self) -> bool {
        self.snd_una < self.snd_max
    }

    /// Data bytes sent and not acknowledged (our FIN aside).
    fn flight(&self) -> u64 {
        let len = self.tx.len() as u64;
        self.snd_max.min(len) - self.snd_una.min(len)
    }

    fn unsent(&self) -> bool {
        self.snd_nxt < self.tx.len() as u64
    }

    /// Resends one segment at snd_una (fast retransmit, NewReno partial ACK).
    fn retransmit_one(&mut self) {
        let end = self.chunk_end(self.snd_una).min(self.snd_max);
        let len = end.saturating_sub(self.snd_una).min(self.mss);
        if len > 0 {
            self.send_data(self.snd_una, len);
        }
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
        if off < self.snd_max {
            self.stats.retransmitted_segments += segs;
        }
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
        self.snd_max = self.snd_max.max(end);
        if self.timer.is_none() {
            self.arm(self.now + self.rto);
        }
    }

    /// Sends what the window, the congestion window and the skb boundaries allow.
    fn transmit(&mut self) {
        if !self.st.synchronized() {
            return;
        }
        let data_len = self.tx.len() as u64;
        while self.snd_nxt < data_len {
            let flight = self.snd_nxt - self.snd_una;
            let allowed = self.snd_wnd.min(self.cwnd).saturating_sub(flight);
            let want = self.chunk_end(self.snd_nxt) - self.snd_nxt;
            let mut len = want.min(allowed);
            if !self.cfg.gso {
                len = len.min(self.mss);
            } else if len > self.mss && (len < want || len > MAX_SUPER_PAYLOAD) {
                // Window- or IP-length-limited: a whole number of segments (tso_fragment).
                len = len.min(MAX_SUPER_PAYLOAD);
                len -= len % self.mss;
            }
            // No silly windows: a short segment only when it ends the skb or nothing is out.
            if len == 0 || (len < self.mss.min(want) && flight > 0) {
                break;
            }
            self.send_data(self.snd_nxt, len);
            self.snd_nxt += len;
        }
        // Our FIN: first when the data is out and we may close, again after a timeout.
        let fin_due = match self.st {
            St::Established => self.cfg.close_first,
            St::CloseWait | St::FinWait1 | St::Closing | St::LastAck => true,
            _ => false,
        };
        if self.snd_nxt == data_len && fin_due {
            self.st = match self.st {
                St::Established => St::FinWait1,
                St::CloseWait => St::LastAck,
                st => st,
            };
            self.snd_nxt = data_len + 1;
            self.snd_max = self.snd_nxt;
            let t = TcpOut {
                seq: self.wire_seq(data_len),
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
        if start <= self.rcv_nxt && end > self.rcv_nxt {
            // In order: straight to the stream.
            let skip = (self.rcv_nxt - start) as usize;
            self.rx.extend_from_slice(&t.payload[skip..]);
            self.rcv_nxt = end;
        } else if start > self.rcv_nxt {
            self.ooo.entry(start).or_insert_with(|| t.payload.to_vec());
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

    /// Sends the ACK held back for the batch, if any: call after each batch of frames.
    pub fn flush_ack(&mut self) {
        if std::mem::take(&mut self.ack_due) {
            self.send_ack();
        }
    }

    /// Runs the timers: ARP/SYN retries, retransmission timeout, zero-window probe.
    pub fn poll(&mut self, now: Duration) {
        self.now = now;
        if self.timer.is_some_and(|t| now >= t) {
            self.timer = None;
            self.backoff = (self.backoff + 1).min(6);
            let rto = (self.rto * (1 << self.backoff.min(3))).min(RTO_MAX);
            match self.st {
                St::Arp => self.start(now),
                St::SynSent => {
                    self.send_syn();
                    self.arm(now + rto);
                }
                _ if self.in_flight() => {
                    // RFC 6298 5.4-5.6: go back to snd_una, one segment of window.
                    self.stats.timeouts += 1;
                    self.ssthresh = (self.flight() / 2).max(2 * self.mss);
                    self.cwnd = self.mss;
                    self.recover = None;
                    self.dupacks = 0;
                    // An unacknowledged FIN goes out again after the data.
                    self.snd_nxt = self.snd_una;
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

    #[test]
    fn a_peer_mss_smaller_than_the_timestamps_leaves_one_byte() {
        for peer_mss in [0, 11, 12, 13] {
            let mut ep = endpoint(100, &[100], true);
            ep.start(Duration::ZERO);
            ep.take_out();
            answer_arp(&mut ep);
            ep.take_out();
            let t = TcpOut {
                seq: IRS,
                ack: Some(ISS + 1),
                syn: true,
                wnd: 65_535,
                opts: vec![Opt::MaximumSegmentSize(peer_mss), Opt::Timestamp(77, 1)],
                ..TcpOut::default()
            };
            let f = wire::tcp_frame(&kernel_ends(), &t).unwrap();
            ep.on_frame(VnetHdr::default(), &f, ms(2)).unwrap();
            assert_eq!(ep.mss(), u64::from(peer_mss).saturating_sub(12).max(1));
            ep.take_out();
        }
    }

    #[test]
    fn window_scales_above_14_count_as_14() {
        let mut ep = endpoint(100, &[100], false);
        ep.cfg.wscale = 40;
        ep = Endpoint::new(
            ep.cfg.clone(),
            vec![7; 100],
            vec![Chunk {
                end: 100,
                psh: false,
            }],
            ISS,
        );
        ep.start(Duration::ZERO);
        ep.take_out();
        answer_arp(&mut ep);
        ep.take_out();
        let t = TcpOut {
            seq: IRS,
            ack: Some(ISS + 1),
            syn: true,
            wnd: 1,
            opts: vec![Opt::WindowScale(255)],
            ..TcpOut::default()
        };
        let f = wire::tcp_frame(&kernel_ends(), &t).unwrap();
        ep.on_frame(VnetHdr::default(), &f, ms(2)).unwrap();
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

    #[test]
    fn a_timeout_goes_back_to_snd_una() {
        let mut ep = endpoint(20_000, &[20_000], false);
        establish(&mut ep);
        let at = ep.deadline().expect("armed");
        ep.poll(at);
        assert_eq!(data(&ep.take_out()), [(0, 1448, 0)]);
        assert_eq!(ep.stats.timeouts, 1);
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

//! Frames on the TAP: Ethernet, ARP, IPv4, TCP. Building and parsing go through `etherparse`;
//! this module adds ARP (28 fixed bytes) and the checksum work the kernel leaves to a
//! "device" with checksum offload.

use etherparse::{
    ArpEthIpv4Packet, ArpOperation, ArpPacket, EtherType, Ethernet2Header, NetSlice, PacketBuilder,
    SlicedPacket, TcpOptionElement, TransportSlice,
};
use std::net::Ipv4Addr;

pub const ETH_LEN: usize = skblab_core::consts::wire::ETH_HLEN as usize;
/// Offset of the TCP checksum inside the TCP header.
pub const TCP_CSUM_OFFSET: usize = 16;
/// RFC 7323 §2.3: a window scale above 14 is taken as 14 (the kernel's `TCP_MAX_WSCALE`).
pub const MAX_WSCALE: u8 = 14;

/// `a` comes before `b` in 32-bit sequence (or timestamp) space, as the kernel's `before()`
/// compares them across wraparound.
pub fn before(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) < 0
}

/// The TCP header fields the endpoint sets, plus options and payload.
#[derive(Clone, Debug, Default)]
pub struct TcpOut<'a> {
    pub seq: u32,
    pub ack: Option<u32>,
    pub syn: bool,
    pub fin: bool,
    pub psh: bool,
    pub rst: bool,
    pub wnd: u16,
    pub opts: Vec<TcpOptionElement>,
    pub payload: &'a [u8],
}

/// Addresses of one side of the connection.
#[derive(Clone, Copy, Debug)]
pub struct Ends {
    pub mac: [u8; 6],
    pub peer_mac: [u8; 6],
    pub ip: Ipv4Addr,
    pub peer_ip: Ipv4Addr,
    pub port: u16,
    pub peer_port: u16,
}

/// Builds an Ethernet/IPv4/TCP frame with both checksums complete.
pub fn tcp_frame(e: &Ends, t: &TcpOut) -> Result<Vec<u8>, String> {
    let mut b = PacketBuilder::ethernet2(e.mac, e.peer_mac)
        .ipv4(e.ip.octets(), e.peer_ip.octets(), 64)
        .tcp(e.port, e.peer_port, t.seq, t.wnd);
    if let Some(a) = t.ack {
        b = b.ack(a);
    }
    if t.syn {
        b = b.syn();
    }
    if t.fin {
        b = b.fin();
    }
    if t.psh {
        b = b.psh();
    }
    if t.rst {
        b = b.rst();
    }
    let b = b
        .options(&t.opts)
        .map_err(|e| format!("model bug: TCP options: {e}"))?;
    let mut out = Vec::with_capacity(b.size(t.payload.len()));
    b.write(&mut out, t.payload)
        .map_err(|e| format!("model bug: building a frame: {e}"))?;
    Ok(out)
}

/// Builds the same frame with only the pseudo-header sum in the TCP checksum field, for a
/// receiver that trusts checksum offload (virtio-net `NEEDS_CSUM`, the kernel's
/// CHECKSUM_PARTIAL): the payload is never summed.
pub fn tcp_frame_partial(e: &Ends, t: &TcpOut) -> Result<Vec<u8>, String> {
    let mut f = tcp_frame(
        e,
        &TcpOut {
            payload: &[],
            ..t.clone()
        },
    )?;
    f.extend_from_slice(t.payload);
    let ip = ETH_LEN..ETH_LEN + 20;
    let tot = (f.len() - ETH_LEN) as u16;
    f[ETH_LEN + 2..ETH_LEN + 4].copy_from_slice(&tot.to_be_bytes());
    f[ETH_LEN + 10..ETH_LEN + 12].copy_from_slice(&[0, 0]);
    let ip_sum = !fold(sum16(0, &f[ip]));
    f[ETH_LEN + 10..ETH_LEN + 12].copy_from_slice(&ip_sum.to_be_bytes());
    let r = tcp_range(&f).ok_or("model bug: partial frame")?;
    let pseudo = fold(sum16(0, &f[ETH_LEN + 12..ETH_LEN + 20]) + 6 + r.len() as u64);
    let at = r.start + TCP_CSUM_OFFSET;
    f[at..at + 2].copy_from_slice(&pseudo.to_be_bytes());
    Ok(f)
}

/// An ARP request or reply for IPv4 over Ethernet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Arp {
    pub reply: bool,
    pub sender_mac: [u8; 6],
    pub sender_ip: Ipv4Addr,
    pub target_mac: [u8; 6],
    pub target_ip: Ipv4Addr,
}

impl Arp {
    /// The frame: Ethernet (broadcast for a request) and the ARP packet, both etherparse's.
    pub fn frame(&self) -> Vec<u8> {
        let destination = if self.reply {
            self.target_mac
        } else {
            [0xff; 6]
        };
        let eth = Ethernet2Header {
            source: self.sender_mac,
            destination,
            ether_type: EtherType::ARP,
        };
        let arp = ArpEthIpv4Packet {
            operation: match self.reply {
                true => ArpOperation::REPLY,
                false => ArpOperation::REQUEST,
            },
            sender_mac: self.sender_mac,
            sender_ipv4: self.sender_ip.octets(),
            target_mac: self.target_mac,
            target_ipv4: self.target_ip.octets(),
        };
        [&eth.to_bytes()[..], &arp.to_bytes()].concat()
    }

    /// An Ethernet/IPv4 request or reply; anything else is not ours to answer.
    fn parse(f: &[u8]) -> Option<Arp> {
        let a = ArpPacket::from_slice(f.get(ETH_LEN..)?)
            .ok()?
            .try_eth_ipv4()
            .ok()?;
        let reply = match a.operation {
            ArpOperation::REQUEST => false,
            ArpOperation::REPLY => true,
            _ => return None,
        };
        Some(Arp {
            reply,
            sender_mac: a.sender_mac,
            sender_ip: a.sender_ipv4_addr(),
            target_mac: a.target_mac,
            target_ip: a.target_ipv4_addr(),
        })
    }
}

/// A parsed TCP segment.
#[derive(Clone, Debug, Default)]
pub struct TcpIn<'a> {
    pub src_port: u16,
    pub dst_port: u16,
    pub seq: u32,
    pub ack: Option<u32>,
    pub syn: bool,
    pub fin: bool,
    pub rst: bool,
    pub wnd: u16,
    pub mss: Option<u16>,
    pub wscale: Option<u8>,
    pub sack_perm: bool,
    /// (TSval, TSecr).
    pub ts: Option<(u32, u32)>,
    pub sacks: Vec<(u32, u32)>,
    pub payload: &'a [u8],
}

/// What a frame on the TAP is.
#[derive(Debug)]
pub enum Frame<'a> {
    Arp(Arp),
    Tcp(TcpIn<'a>),
    /// IPv6, other protocols, or malformed: ignored.
    Other,
}

pub fn parse(f: &[u8]) -> Frame<'_> {
    if f.len() >= ETH_LEN && u16::from_be_bytes([f[12], f[13]]) == EtherType::ARP.0 {
        return Arp::parse(f).map_or(Frame::Other, Frame::Arp);
    }
    let Ok(p) = SlicedPacket::from_ethernet(f) else {
        return Frame::Other;
    };
    let (Some(NetSlice::Ipv4(_)), Some(TransportSlice::Tcp(t))) = (&p.net, &p.transport) else {
        return Frame::Other;
    };
    let mut s = TcpIn {
        src_port: t.source_port(),
        dst_port: t.destination_port(),
        seq: t.sequence_number(),
        ack: t.ack().then(|| t.acknowledgment_number()),
        syn: t.syn(),
        fin: t.fin(),
        rst: t.rst(),
        wnd: t.window_size(),
        payload: t.payload(),
        ..TcpIn::default()
    };
    for o in t.options_iterator().flatten() {
        match o {
            TcpOptionElement::MaximumSegmentSize(m) => s.mss = Some(m),
            TcpOptionElement::WindowScale(w) => s.wscale = Some(w.min(MAX_WSCALE)),
            TcpOptionElement::SelectiveAcknowledgementPermitted => s.sack_perm = true,
            TcpOptionElement::Timestamp(v, e) => s.ts = Some((v, e)),
            TcpOptionElement::SelectiveAcknowledgement(first, rest) => {
                s.sacks = std::iter::once(first)
                    .chain(rest.into_iter().flatten())
                    .collect()
            }
            TcpOptionElement::Noop => {}
        }
    }
    Frame::Tcp(s)
}

/// The IPv4 header length and TCP segment range of an Ethernet/IPv4/TCP frame.
fn tcp_range(f: &[u8]) -> Option<std::ops::Range<usize>> {
    let ip = f.get(ETH_LEN..ETH_LEN + 20)?;
    if u16::from_be_bytes([f[12], f[13]]) != 0x0800 || ip[9] != 6 {
        return None;
    }
    let ihl = usize::from(ip[0] & 0xf) * 4;
    let tot = usize::from(u16::from_be_bytes([ip[2], ip[3]]));
    let r = ETH_LEN + ihl..ETH_LEN + tot;
    (r.end <= f.len() && r.start + 20 <= r.end).then_some(r)
}

/// One's-complement sum of 16-bit big-endian words (RFC 1071), not yet folded.
fn sum16(mut acc: u64, data: &[u8]) -> u64 {
    let mut chunks = data.chunks_exact(2);
    for c in &mut chunks {
        acc += u64::from(u16::from_be_bytes([c[0], c[1]]));
    }
    if let [last] = chunks.remainder() {
        acc += u64::from(*last) << 8;
    }
    acc
}

fn fold(mut acc: u64) -> u16 {
    while acc > 0xffff {
        acc = (acc & 0xffff) + (acc >> 16);
    }
    acc as u16
}

/// The TCP checksum over the pseudo-header and `seg` as it stands (field included).
fn tcp_sum(f: &[u8], seg: &std::ops::Range<usize>) -> u16 {
    let pseudo = sum16(0, &f[ETH_LEN + 12..ETH_LEN + 20]) + 6 + seg.len() as u64;
    fold(sum16(pseudo, &f[seg.clone()]))
}

/// Whether an IPv4/TCP frame's TCP checksum is right (non-TCP frames pass).
pub fn tcp_checksum_ok(f: &[u8]) -> bool {
    tcp_range(f).is_none_or(|r| tcp_sum(f, &r) == 0xffff)
}

/// Completes the TCP checksum of a frame the kernel left with only the pseudo-header sum in
/// it (CHECKSUM_PARTIAL): what a NIC with checksum offload does before the wire.
pub fn complete_tcp_checksum(f: &mut [u8]) {
    if let Some(r) = tcp_range(f) {
        let at = r.start + TCP_CSUM_OFFSET;
        f[at..at + 2].copy_from_slice(&[0, 0]);
        let c = !tcp_sum(f, &r);
        f[at..at + 2].copy_from_slice(&c.to_be_bytes());
    }
}

/// Writes a valid TCP checksum of 0xFFFF as 0x0000. Both are the same one's-complement
/// value, but the kernel's software checksum (`skb_checksum_help`, net/core/dev.c, 6.x)
/// writes CSUM_MANGLED_0 (0xFFFF) for a zero result, and Wireshark flags that form as bad
/// (RFC 1624 says a computed checksum is never 0xFFFF). Returns whether it rewrote.
pub fn canonical_zero_checksum(f: &mut [u8]) -> bool {
    let Some(r) = tcp_range(f) else { return false };
    let at = r.start + TCP_CSUM_OFFSET;
    if f[at..at + 2] == [0xff, 0xff] && tcp_sum(f, &r) == 0xffff {
        f[at..at + 2].copy_from_slice(&[0, 0]);
        return true;
    }
    false
}

/// The byte range of the TCP segment (header and payload), for fault injection.
pub fn tcp_segment(f: &[u8]) -> Option<std::ops::Range<usize>> {
    tcp_range(f)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ends() -> Ends {
        Ends {
            peer_mac: [2, 0, 0, 0, 0, 1],
            ..crate::net::netns::runner_ends(40000, 5001)
        }
    }

    #[test]
    fn built_frames_parse_back_with_good_checksums() {
        let payload = vec![7u8; 3001];
        let f = tcp_frame(
            &ends(),
            &TcpOut {
                seq: 100,
                ack: Some(5),
                psh: true,
                wnd: 512,
                opts: vec![
                    TcpOptionElement::Noop,
                    TcpOptionElement::Noop,
                    TcpOptionElement::Timestamp(9, 8),
                ],
                payload: &payload,
                ..TcpOut::default()
            },
        )
        .unwrap();
        assert!(tcp_checksum_ok(&f));
        let Frame::Tcp(t) = parse(&f) else {
            panic!("not TCP")
        };
        assert_eq!(
            (t.seq, t.ack, t.ts, t.payload.len()),
            (100, Some(5), Some((9, 8)), 3001)
        );
    }

    #[test]
    fn completing_a_partial_checksum_fixes_it_and_corruption_breaks_it() {
        let mut f = tcp_frame(&ends(), &TcpOut::default()).unwrap();
        f[ETH_LEN + 20 + TCP_CSUM_OFFSET] ^= 0x5a;
        assert!(!tcp_checksum_ok(&f));
        complete_tcp_checksum(&mut f);
        assert!(tcp_checksum_ok(&f));
        f[ETH_LEN + 20 + 4] ^= 1;
        assert!(!tcp_checksum_ok(&f));
    }

    #[test]
    fn a_partial_frame_completes_to_the_full_one() {
        let payload: Vec<u8> = (0..5000u32).map(|i| i as u8).collect();
        let t = TcpOut {
            seq: 7,
            ack: Some(9),
            payload: &payload,
            ..TcpOut::default()
        };
        let full = tcp_frame(&ends(), &t).unwrap();
        let mut part = tcp_frame_partial(&ends(), &t).unwrap();
        assert_ne!(part, full);
        complete_tcp_checksum(&mut part);
        assert_eq!(part, full);
    }

    #[test]
    fn a_mangled_zero_checksum_is_written_as_zero() {
        let mut f = tcp_frame(&ends(), &TcpOut::default()).unwrap();
        let at = ETH_LEN + 20 + TCP_CSUM_OFFSET;
        // Pick a window that makes the sum of everything but the checksum 0xffff, so the
        // checksum computes to 0x0000 and 0xffff is the kernel's mangled form of it.
        f[at..at + 2].copy_from_slice(&[0, 0]);
        f[ETH_LEN + 20 + 14..ETH_LEN + 20 + 16].copy_from_slice(&[0, 0]);
        let r = tcp_range(&f).unwrap();
        let w = 0xffff - tcp_sum(&f, &r);
        f[ETH_LEN + 20 + 14..ETH_LEN + 20 + 16].copy_from_slice(&w.to_be_bytes());
        assert_eq!(tcp_sum(&f, &r), 0xffff);
        f[at..at + 2].copy_from_slice(&[0xff, 0xff]);
        assert!(tcp_checksum_ok(&f));
        assert!(canonical_zero_checksum(&mut f));
        assert_eq!(f[at..at + 2], [0, 0]);
        assert!(tcp_checksum_ok(&f));
        assert!(!canonical_zero_checksum(&mut f));
    }

    #[test]
    fn arp_round_trips() {
        let a = Arp {
            reply: true,
            sender_mac: [2, 0, 0, 0, 0, 2],
            sender_ip: Ipv4Addr::new(192, 0, 2, 2),
            target_mac: [2, 0, 0, 0, 0, 1],
            target_ip: Ipv4Addr::new(192, 0, 2, 1),
        };
        let Frame::Arp(b) = parse(&a.frame()) else {
            panic!("not ARP")
        };
        assert_eq!(a, b);
    }
}

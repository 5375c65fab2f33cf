//! The endpoint's tests, driven as a host drives it: hand-made kernel frames in, the
//! endpoint's frames out. One file per concern, named after the module whose behaviour it
//! checks where one does (each module's own unit tests stay in that module); the fixtures
//! they share are here, and [`pair`] runs two endpoints against each other in memory.

mod cc;
mod handshake;
mod pair;
mod rack;
mod recovery;
mod recv;
mod send;
mod state;
mod timer;
mod undo;

use super::*;
use crate::net::wire::parse;

const ISS: u32 = 1000;
const IRS: u32 = 5000;
const KMAC: [u8; 6] = [2, 0, 0, 0, 0, 1];
const SEG: u64 = 1448;

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

/// The settings these tests give an endpoint: the MSS of a 1500-byte MTU, SACK,
/// timestamps, window scale 7 and a 1 MiB window.
fn config(ends: Ends, gso: bool, close_first: bool) -> Config {
    Config {
        ends,
        mss: skblab_core::consts::wire::advmss(1500) as u16,
        wscale: 7,
        rcv_wnd: 1 << 20,
        gso,
        close_first,
        csum_offload: false,
        seg_cap: u64::MAX,
        timestamps: true,
        sack: true,
    }
}

fn endpoint(len: usize, chunks: &[u64], gso: bool) -> Endpoint {
    let cfg = config(ends(), gso, true);
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

/// Ten segments out (0..14,480), the window open (the kernel's 64 << 10).
fn ten_out() -> Endpoint {
    let mut ep = endpoint(40_000, &[40_000], false);
    assert_eq!(data(&establish(&mut ep)).len(), 10);
    ep
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

//! The TAP runner's frame parser and TCP endpoint, fed whatever the "kernel" sends.
//!
//! The input is a configuration and a list of frames and timer ticks: raw bytes, or
//! Ethernet/IPv4/TCP frames built from arbitrary fields (any option bytes, sequence numbers
//! near the connection's or anywhere, any window), a handshake that gets the connection
//! established, and ARP from anyone. Properties: no panic; after every input the endpoint's
//! state is consistent ([`Endpoint::check`]); every frame it sends is well formed, from its
//! own address, to an address in 192.0.2.0/24 (the private namespace's).

use arbitrary::{Arbitrary, Unstructured};
use skblab_runner::net::fuzzing::{
    complete_tcp_checksum, parse, runner_ends, tcp_checksum_ok, Chunk, Config, Endpoint, Ends,
    Frame, Out, VnetHdr, ETH_LEN,
};
use std::net::Ipv4Addr;
use std::time::Duration;

const ISS: u32 = 1000;
const IRS: u32 = 5000;
const KERNEL_MAC: [u8; 6] = [2, 0, 0, 0, 0, 1];
const US: Ends = runner_ends(40_000, 5001);

#[derive(Debug)]
struct Run {
    mss: u16,
    wscale: u8,
    rcv_wnd: u32,
    gso: bool,
    close_first: bool,
    csum_offload: bool,
    seg_cap: u16,
    /// Bytes we send, cut into skbs at these offsets.
    tx_len: u16,
    cuts: Vec<u16>,
    inputs: Vec<Input>,
}

#[derive(Debug)]
enum Input {
    /// Any bytes, with any virtio-net header.
    Raw {
        vnet: [u8; 12],
        frame: Vec<u8>,
    },
    /// The kernel's ARP reply and SYN-ACK, with these options.
    Handshake {
        mss: Option<u16>,
        wscale: Option<u8>,
        ts: bool,
        sack: bool,
        wnd: u16,
    },
    Tcp(Segment),
    /// An ARP request or reply from any address.
    Arp {
        reply: bool,
        sender: [u8; 4],
        target_us: bool,
    },
    /// Time passes and the timers run.
    Poll {
        ms: u16,
    },
    FlushAck,
}

#[derive(Debug)]
struct Segment {
    /// FIN, SYN, RST, PSH, ACK, URG, ECE, CWR as on the wire.
    flags: u8,
    seq: Seq,
    ack: Seq,
    wnd: u16,
    /// Raw option bytes (at most 40 are used).
    opts: Vec<u8>,
    payload: u16,
    vnet: Vnet,
}

/// A sequence number near where the connection is, or anywhere.
#[derive(Debug)]
enum Seq {
    Near(i16),
    Far(u32),
}

#[derive(Debug)]
enum Vnet {
    Plain,
    /// Checksum left to "offload": only the pseudo-header sum is needed.
    NeedsCsum,
    Gso(u16),
    BadChecksum,
}

// By hand, not derived: see Cargo.toml.
impl<'a> Arbitrary<'a> for Run {
    fn arbitrary(u: &mut Unstructured<'a>) -> arbitrary::Result<Self> {
        Ok(Run {
            mss: u.arbitrary()?,
            wscale: u.arbitrary()?,
            rcv_wnd: u.arbitrary()?,
            gso: u.arbitrary()?,
            close_first: u.arbitrary()?,
            csum_offload: u.arbitrary()?,
            seg_cap: u.arbitrary()?,
            tx_len: u.arbitrary()?,
            cuts: u.arbitrary()?,
            inputs: u.arbitrary_iter()?.collect::<arbitrary::Result<_>>()?,
        })
    }
}

impl<'a> Arbitrary<'a> for Input {
    fn arbitrary(u: &mut Unstructured<'a>) -> arbitrary::Result<Self> {
        Ok(match u.choose_index(6)? {
            0 => Input::Raw {
                vnet: u.arbitrary()?,
                frame: u.arbitrary()?,
            },
            1 => Input::Handshake {
                mss: u.arbitrary()?,
                wscale: u.arbitrary()?,
                ts: u.arbitrary()?,
                sack: u.arbitrary()?,
                wnd: u.arbitrary()?,
            },
            2 => Input::Tcp(Segment {
                flags: u.arbitrary()?,
                seq: seq(u)?,
                ack: seq(u)?,
                wnd: u.arbitrary()?,
                opts: u.arbitrary()?,
                payload: u.arbitrary()?,
                vnet: match u.choose_index(4)? {
                    0 => Vnet::Plain,
                    1 => Vnet::NeedsCsum,
                    2 => Vnet::Gso(u.arbitrary()?),
                    _ => Vnet::BadChecksum,
                },
            }),
            3 => Input::Arp {
                reply: u.arbitrary()?,
                sender: u.arbitrary()?,
                target_us: u.arbitrary()?,
            },
            4 => Input::Poll { ms: u.arbitrary()? },
            _ => Input::FlushAck,
        })
    }
}

fn seq(u: &mut Unstructured) -> arbitrary::Result<Seq> {
    Ok(match u.arbitrary()? {
        true => Seq::Near(u.arbitrary()?),
        false => Seq::Far(u.arbitrary()?),
    })
}

pub fn tap_frames(data: &[u8]) {
    let Ok(run) = Run::arbitrary_take_rest(Unstructured::new(data)) else {
        return;
    };
    let mut cuts: Vec<u64> = run
        .cuts
        .iter()
        .map(|&c| u64::from(c))
        .filter(|&c| c > 0 && c < u64::from(run.tx_len))
        .collect();
    cuts.sort_unstable();
    cuts.dedup();
    cuts.push(u64::from(run.tx_len));
    let chunks = cuts
        .iter()
        .map(|&end| Chunk {
            end,
            psh: end % 2 == 0,
        })
        .collect();
    let cfg = Config {
        ends: US,
        mss: run.mss,
        wscale: run.wscale,
        rcv_wnd: run.rcv_wnd,
        gso: run.gso,
        close_first: run.close_first,
        csum_offload: run.csum_offload,
        seg_cap: u64::from(run.seg_cap),
        timestamps: true,
        sack: true,
    };
    let tx = (0..run.tx_len).map(|i| i as u8).collect();
    let mut ep = Endpoint::new(cfg, tx, chunks, ISS);
    let mut now = Duration::ZERO;
    ep.start(now);
    check(&mut ep);
    for input in &run.inputs {
        now += Duration::from_millis(1);
        let result = match input {
            Input::Raw { vnet, frame } => {
                let vnet = VnetHdr::parse(vnet).expect("12 bytes");
                ep.on_frame(vnet, frame, now)
            }
            Input::Handshake {
                mss,
                wscale,
                ts,
                sack,
                wnd,
            } => {
                let arp = arp(true, US.peer_ip.octets(), true);
                ep.on_frame(VnetHdr::default(), &arp, now).and_then(|()| {
                    let mut opts = Vec::new();
                    if let Some(m) = mss {
                        opts.extend([2, 4]);
                        opts.extend(m.to_be_bytes());
                    }
                    if *sack {
                        opts.extend([4, 2]);
                    }
                    if *ts {
                        opts.extend([8, 10, 0, 0, 0, 77, 0, 0, 0, 1]);
                    }
                    if let Some(w) = wscale {
                        opts.extend([1, 3, 3, *w]);
                    }
                    let f = tcp(IRS, ISS.wrapping_add(1), 0x12, *wnd, &opts, 0);
                    ep.on_frame(VnetHdr::default(), &f, now)
                })
            }
            Input::Tcp(s) => {
                let seq = match s.seq {
                    Seq::Near(d) => IRS.wrapping_add(1).wrapping_add_signed(d.into()),
                    Seq::Far(n) => n,
                };
                let ack = match s.ack {
                    Seq::Near(d) => ISS.wrapping_add(1).wrapping_add_signed(d.into()),
                    Seq::Far(n) => n,
                };
                let mut f = tcp(seq, ack, s.flags, s.wnd, &s.opts, s.payload);
                let vnet = match s.vnet {
                    Vnet::Plain => VnetHdr::default(),
                    Vnet::NeedsCsum => VnetHdr::default().partial(ETH_LEN as u16 + 20),
                    Vnet::Gso(size) => VnetHdr::tcpv4(66, size),
                    Vnet::BadChecksum => {
                        let n = f.len();
                        f[n - 1] ^= 0x55;
                        VnetHdr::default()
                    }
                };
                ep.on_frame(vnet, &f, now)
            }
            Input::Arp {
                reply,
                sender,
                target_us,
            } => ep.on_frame(VnetHdr::default(), &arp(*reply, *sender, *target_us), now),
            Input::Poll { ms } => {
                now += Duration::from_millis(u64::from(*ms));
                ep.poll(now);
                Ok(())
            }
            Input::FlushAck => {
                ep.flush_ack();
                Ok(())
            }
        };
        check(&mut ep);
        if result.is_err() {
            return; // a RST ends the session
        }
    }
}

/// The endpoint's state, and every frame it sent since the last check.
fn check(ep: &mut Endpoint) {
    if let Err(e) = ep.check() {
        panic!("{e}");
    }
    for out in ep.take_out() {
        check_out(out);
    }
}

fn check_out(Out { vnet, mut frame }: Out) {
    let in_net = |ip: Ipv4Addr| ip.octets()[..3] == [192, 0, 2];
    match parse(&frame) {
        Frame::Arp(a) => {
            assert_eq!(a.sender_ip, US.ip, "ARP from another address");
            assert!(
                in_net(a.target_ip),
                "ARP to {} (outside 192.0.2.0/24)",
                a.target_ip
            );
        }
        Frame::Tcp(t) => {
            let ip = |at: usize| {
                Ipv4Addr::from(<[u8; 4]>::try_from(&frame[at..at + 4]).expect("4 bytes"))
            };
            let (src, dst) = (ip(ETH_LEN + 12), ip(ETH_LEN + 16));
            assert_eq!(src, US.ip, "TCP from another address");
            assert!(in_net(dst), "TCP to {dst} (outside 192.0.2.0/24)");
            assert_eq!(
                (t.src_port, t.dst_port),
                (US.port, US.peer_port),
                "TCP ports"
            );
            if vnet.flags & 1 != 0 {
                complete_tcp_checksum(&mut frame);
            }
            assert!(tcp_checksum_ok(&frame), "a TCP frame with a bad checksum");
        }
        Frame::Other => panic!("the endpoint sent a frame it cannot parse: {frame:02x?}"),
    }
}

fn arp(reply: bool, sender: [u8; 4], target_us: bool) -> Vec<u8> {
    let mut f = Vec::with_capacity(42);
    f.extend(if reply { US.mac } else { [0xff; 6] });
    f.extend(KERNEL_MAC);
    f.extend([
        0x08,
        0x06,
        0,
        1,
        0x08,
        0x00,
        6,
        4,
        0,
        if reply { 2 } else { 1 },
    ]);
    f.extend(KERNEL_MAC);
    f.extend(sender);
    f.extend(if target_us { US.mac } else { [0; 6] });
    f.extend(if target_us {
        US.ip.octets()
    } else {
        [192, 0, 2, 9]
    });
    f
}

/// An Ethernet/IPv4/TCP frame from the kernel's address to ours, options as given (padded with
/// zeros to a multiple of four, at most 40 bytes), a payload of `len` bytes, checksum complete.
fn tcp(seq: u32, ack: u32, flags: u8, wnd: u16, opts: &[u8], len: u16) -> Vec<u8> {
    let opts = &opts[..opts.len().min(40)];
    let hdr = 20 + opts.len().div_ceil(4) * 4;
    let tot = 20 + hdr + usize::from(len);
    let mut f = Vec::with_capacity(ETH_LEN + tot);
    f.extend(US.mac);
    f.extend(KERNEL_MAC);
    f.extend([0x08, 0x00]);
    f.extend([0x45, 0]);
    f.extend((tot.min(65_535) as u16).to_be_bytes());
    f.extend([0, 0, 0x40, 0, 64, 6, 0, 0]);
    f.extend(US.peer_ip.octets());
    f.extend(US.ip.octets());
    f.extend(US.peer_port.to_be_bytes());
    f.extend(US.port.to_be_bytes());
    f.extend(seq.to_be_bytes());
    f.extend(ack.to_be_bytes());
    f.extend([(hdr as u8 / 4) << 4, flags]);
    f.extend(wnd.to_be_bytes());
    f.extend([0, 0, 0, 0]);
    f.extend(opts);
    f.resize(ETH_LEN + 20 + hdr, 0);
    f.extend((0..len).map(|i| i as u8));
    complete_tcp_checksum(&mut f);
    f
}

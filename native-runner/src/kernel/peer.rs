//! A TCP peer on the TAP whose window is closed: the kernel's sender keeps every skb it
//! builds on its write queue, which is the model's held queue (`device.drain = false`).
//!
//! The runner opens the connection to a listening kernel socket (ARP, SYN with the MSS
//! option that gives the scenario's mss_now), acknowledges the SYN-ACK with the widest window
//! the scenario allows (so `tp->max_window` does not bound the size goal unless the scenario
//! says it does), then announces a zero window without having received a byte. The kernel
//! accepts a window that shrinks to zero (`tcp_may_update_window`), and from then on
//! `tcp_write_xmit` sends nothing: the zero-window probes it sends carry no data.

use super::verdict::too_slow;
use crate::tap::netns::{Tap, KERNEL_IP, RUNNER_IP, RUNNER_MAC};
use crate::tap::vnet;
use crate::tap::wire::{self, Arp, Ends, Frame, TcpOut};
use etherparse::TcpOptionElement as Opt;
use std::time::{Duration, Instant};

/// The runner's window scale: 2^7 lets a 16-bit field announce up to 8 MiB.
pub const WSCALE: u8 = 7;
const RUNNER_PORT: u16 = 40_000;
const ISS: u32 = 1_000_000;

/// What the runner announces.
#[derive(Clone, Copy, Debug)]
pub struct PeerParams {
    /// The kernel's listening port.
    pub port: u16,
    /// The MSS option of the SYN (mss_now + the option bytes on every segment).
    pub mss_option: u16,
    /// Offer timestamps (12 option bytes on every segment).
    pub timestamps: bool,
    /// The window announced after the handshake, bytes (a multiple of 2^WSCALE).
    pub window: u32,
}

/// An open connection on the TAP, as the runner's side sees it after the handshake.
pub struct Conn {
    pub ends: Ends,
    /// The runner's next sequence number.
    pub snd_nxt: u32,
    /// The kernel's next sequence number (what the runner acknowledges).
    pub rcv_nxt: u32,
    /// The kernel's last TSval (echoed), when timestamps are on.
    pub ts_recent: Option<u32>,
    /// The kernel's window scale (from its SYN-ACK).
    pub peer_wscale: u8,
    /// The right edge of the kernel's receive window: its last ACK plus its window.
    pub wnd_end: u32,
    timestamps: bool,
}

impl Conn {
    /// The TCP header fields of a segment at `snd_nxt` that acknowledges everything.
    pub fn segment<'a>(&self, wnd: u32, payload: &'a [u8]) -> TcpOut<'a> {
        TcpOut {
            seq: self.snd_nxt,
            ack: Some(self.rcv_nxt),
            wnd: (wnd >> WSCALE).min(65_535) as u16,
            opts: self.ts_opts(),
            payload,
            ..TcpOut::default()
        }
    }

    fn ts_opts(&self) -> Vec<Opt> {
        match (self.timestamps, self.ts_recent) {
            (true, ecr) => vec![Opt::Noop, Opt::Noop, Opt::Timestamp(2, ecr.unwrap_or(0))],
            (false, _) => Vec::new(),
        }
    }

    /// Takes in what the kernel says in one of its segments: its acknowledgement, window and
    /// timestamp.
    pub fn absorb(&mut self, t: &wire::TcpIn) {
        if let Some(ack) = t.ack {
            let end = ack.wrapping_add(u32::from(t.wnd) << self.peer_wscale);
            if (end.wrapping_sub(self.wnd_end) as i32) > 0 {
                self.wnd_end = end;
            }
        }
        if let Some((v, _)) = t.ts {
            self.ts_recent = Some(v);
        }
    }
}

/// Writes one frame to the TAP behind a virtio-net header with no offload.
pub fn send_plain(tap: &Tap, frame: &[u8]) -> Result<(), String> {
    let mut b = vnet::VnetHdr::default().to_bytes().to_vec();
    b.extend_from_slice(frame);
    tap.write(&b)
}

/// Opens the connection and closes the window; returns once the zero window is sent.
pub fn open_closed(tap: &Tap, p: &PeerParams) -> Result<(), String> {
    let c = handshake(tap, p)?;
    send_plain(tap, &wire::tcp_frame(&c.ends, &c.segment(p.window, &[]))?)?;
    send_plain(tap, &wire::tcp_frame(&c.ends, &c.segment(0, &[]))?)
}

/// ARP, SYN, SYN-ACK: returns the connection once the kernel's SYN-ACK is in (the runner's
/// ACK is the caller's first segment).
pub fn handshake(tap: &Tap, p: &PeerParams) -> Result<Conn, String> {
    let mut ends = Ends {
        mac: RUNNER_MAC,
        peer_mac: [0xff; 6],
        ip: RUNNER_IP,
        peer_ip: KERNEL_IP,
        port: RUNNER_PORT,
        peer_port: p.port,
    };
    let send = |f: Vec<u8>| send_plain(tap, &f);
    send(
        Arp {
            reply: false,
            sender_mac: RUNNER_MAC,
            sender_ip: RUNNER_IP,
            target_mac: [0; 6],
            target_ip: KERNEL_IP,
        }
        .frame(),
    )?;
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut buf = vec![0u8; 65_536 + vnet::LEN];
    let mut syn_sent = false;
    loop {
        if Instant::now() > deadline {
            return Err(too_slow(
                "the kernel did not complete the TCP handshake on the TAP in 10 s",
            ));
        }
        tap.wait(100)?;
        let Some(n) = tap.read(&mut buf)? else {
            continue;
        };
        match wire::parse(&buf[vnet::LEN..n]) {
            Frame::Arp(a) if a.target_ip == RUNNER_IP => {
                ends.peer_mac = a.sender_mac;
                answer_arp(tap, &a)?;
                if !syn_sent {
                    syn_sent = true;
                    let mut opts = vec![Opt::MaximumSegmentSize(p.mss_option)];
                    if p.timestamps {
                        opts.extend([Opt::Noop, Opt::Noop, Opt::Timestamp(1, 0)]);
                    }
                    opts.extend([Opt::Noop, Opt::WindowScale(WSCALE)]);
                    send(wire::tcp_frame(
                        &ends,
                        &TcpOut {
                            seq: ISS,
                            syn: true,
                            wnd: 65_535,
                            opts,
                            ..TcpOut::default()
                        },
                    )?)?;
                }
            }
            Frame::Tcp(t) if t.syn && t.ack == Some(ISS + 1) => {
                return Ok(Conn {
                    ends,
                    snd_nxt: ISS + 1,
                    rcv_nxt: t.seq.wrapping_add(1),
                    ts_recent: t.ts.map(|(v, _)| v),
                    peer_wscale: t.wscale.unwrap_or(0),
                    // A SYN-ACK's window is never scaled.
                    wnd_end: (ISS + 1).wrapping_add(u32::from(t.wnd)),
                    timestamps: p.timestamps,
                });
            }
            _ => {}
        }
    }
}

/// Answers an ARP request for the runner's address (the kernel may ask at any time).
pub fn answer_arp(tap: &Tap, a: &Arp) -> Result<(), String> {
    if a.reply || a.target_ip != RUNNER_IP {
        return Ok(());
    }
    send_plain(
        tap,
        &Arp {
            reply: true,
            sender_mac: RUNNER_MAC,
            sender_ip: RUNNER_IP,
            target_mac: a.sender_mac,
            target_ip: a.sender_ip,
        }
        .frame(),
    )
}

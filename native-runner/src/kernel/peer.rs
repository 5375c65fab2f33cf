//! A TCP peer on the TAP whose window is closed: the kernel's sender keeps every skb it
//! builds on its write queue, which is the model's held queue (`device.drain = false`).
//!
//! The runner opens the connection to a listening kernel socket (ARP, SYN with the MSS
//! option that gives the scenario's mss_now), acknowledges the SYN-ACK with the widest window
//! the scenario allows (so `tp->max_window` does not bound the size goal unless the scenario
//! says it does), then announces a zero window without having received a byte. The kernel
//! accepts a window that shrinks to zero (`tcp_may_update_window`), and from then on
//! `tcp_write_xmit` sends nothing: the zero-window probes it sends carry no data.

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

/// Opens the connection and closes the window; returns once the zero window is sent.
pub fn open_closed(tap: &Tap, p: &PeerParams) -> Result<(), String> {
    let mut ends = Ends {
        mac: RUNNER_MAC,
        peer_mac: [0xff; 6],
        ip: RUNNER_IP,
        peer_ip: KERNEL_IP,
        port: RUNNER_PORT,
        peer_port: p.port,
    };
    let send = |f: Vec<u8>| {
        let mut b = vnet::VnetHdr::default().to_bytes().to_vec();
        b.extend_from_slice(&f);
        tap.write(&b)
    };
    let ts = |tsval: u32, ecr: u32| -> Vec<Opt> {
        if p.timestamps {
            vec![Opt::Noop, Opt::Noop, Opt::Timestamp(tsval, ecr)]
        } else {
            Vec::new()
        }
    };
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
            return Err("the kernel did not complete the TCP handshake on the TAP in 10 s".into());
        }
        tap.wait(100)?;
        let Some(n) = tap.read(&mut buf)? else {
            continue;
        };
        match wire::parse(&buf[vnet::LEN..n]) {
            Frame::Arp(a) if a.target_ip == RUNNER_IP => {
                ends.peer_mac = a.sender_mac;
                if !a.reply {
                    send(
                        Arp {
                            reply: true,
                            sender_mac: RUNNER_MAC,
                            sender_ip: RUNNER_IP,
                            target_mac: a.sender_mac,
                            target_ip: a.sender_ip,
                        }
                        .frame(),
                    )?;
                }
                if !syn_sent {
                    syn_sent = true;
                    let mut opts = vec![Opt::MaximumSegmentSize(p.mss_option)];
                    opts.extend(ts(1, 0));
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
                let ecr = t.ts.map_or(0, |(v, _)| v);
                let ack = |wnd: u32| TcpOut {
                    seq: ISS + 1,
                    ack: Some(t.seq.wrapping_add(1)),
                    wnd: (wnd >> WSCALE) as u16,
                    opts: ts(2, ecr),
                    ..TcpOut::default()
                };
                send(wire::tcp_frame(&ends, &ack(p.window))?)?;
                send(wire::tcp_frame(&ends, &ack(0))?)?;
                return Ok(());
            }
            _ => {}
        }
    }
}

//! The oracle's TCP peer on the TAP: the TAP runs' endpoint ([`Endpoint`]), driven here.
//!
//! For seed 000 its window is closed: the runner opens the connection to a listening kernel
//! socket (ARP, SYN with the MSS option that gives the scenario's mss_now), acknowledges the
//! SYN-ACK with the widest window the scenario allows (so `tp->max_window` does not bound
//! the size goal unless the scenario says it does), then announces a zero window without
//! having received a byte. The kernel accepts a window that shrinks to zero
//! (`tcp_may_update_window`), and from then on `tcp_write_xmit` sends nothing: the
//! zero-window probes it sends carry no data, and the kernel's sender keeps every skb it
//! builds on its write queue, which is the model's held queue (`device.drain = false`). For
//! seeds 001 and 002 it writes the model's skbs ([`Endpoint::push`]).

use super::verdict::RunError;
use crate::net::link::{Link, WSCALE};
use crate::net::netns::{runner_ends, Tap};
use crate::net::tcp::{Config, Endpoint};
use std::time::{Duration, Instant};
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

/// The runner's end of an open connection on the TAP.
pub struct Peer {
    pub ep: Endpoint,
    start: Instant,
    link: Link,
}

impl Peer {
    /// ARP, SYN, SYN-ACK, and our ACK announcing `p.window`: returns once it is sent.
    pub fn open(tap: &Tap, p: &PeerParams) -> Result<Peer, RunError> {
        let cfg = Config {
            ends: runner_ends(RUNNER_PORT, p.port),
            mss: p.mss_option,
            wscale: WSCALE,
            rcv_wnd: p.window,
            gso: false,
            close_first: false,
            csum_offload: false,
            seg_cap: u64::MAX,
            timestamps: p.timestamps,
            sack: false,
        };
        let mut peer = Peer {
            ep: Endpoint::new(cfg, Vec::new(), Vec::new(), ISS),
            start: Instant::now(),
            link: Link::default(),
        };
        peer.ep.start(Duration::ZERO);
        let deadline = peer.start + Duration::from_secs(10);
        loop {
            peer.flush(tap)?;
            if peer.ep.established() {
                return Ok(peer);
            }
            if Instant::now() > deadline {
                return Err(super::verdict::too_slow(
                    "the kernel did not complete the TCP handshake on the TAP in 10 s",
                ));
            }
            tap.wait(100)?;
            peer.pump(tap)?;
            peer.ep.poll(peer.start.elapsed());
        }
    }

    /// Takes in what the kernel sent (ACKs, ARP) without waiting, and answers: one turn of
    /// [`Endpoint`]'s contract but for `poll`, which the callers run on their own schedule.
    /// The kernel sends this peer no data, so no ACK is held for the batch today; `flush_ack`
    /// keeps it that way if it ever does, and the events are dropped (nothing reads them).
    pub fn pump(&mut self, tap: &Tap) -> Result<(), String> {
        while let Some(o) = self.link.read(tap)? {
            self.ep.on_frame(o.vnet, &o.frame, self.start.elapsed())?;
        }
        self.ep.flush_ack();
        while self.ep.poll_event().is_some() {}
        self.flush(tap)
    }

    /// Writes what the endpoint has to send.
    pub fn flush(&mut self, tap: &Tap) -> Result<(), String> {
        for o in self.ep.take_out() {
            self.link.write(tap, &o)?;
        }
        Ok(())
    }

    /// Writes what the endpoint has to send as a NIC's frames on tun's NAPI frags path
    /// ([`Link::write_frags`]): the payload of each in a frag of its own.
    pub fn flush_frags(&mut self, tap: &Tap) -> Result<(), String> {
        for o in self.ep.take_out() {
            self.link.write_frags(tap, &o)?;
        }
        Ok(())
    }

    /// Waits until the kernel's window takes `len` more bytes.
    pub fn wait_window(&mut self, tap: &Tap, len: u32) -> Result<(), String> {
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            self.pump(tap)?;
            let room = self.ep.send_room();
            if room >= u64::from(len) {
                return Ok(());
            }
            if Instant::now() > deadline {
                return Err(format!(
                    "the kernel's receive window ({room} bytes) stayed below an skb of {len} \
                     bytes for 5 s: read (`recvmsg`) before more arrives"
                ));
            }
            tap.wait(10)?;
        }
    }
}

/// Opens the connection and closes the window; returns once the zero window is sent.
pub fn open_closed(tap: &Tap, p: &PeerParams) -> Result<(), RunError> {
    let mut peer = Peer::open(tap, p)?;
    peer.ep.announce_window(0);
    Ok(peer.flush(tap)?)
}

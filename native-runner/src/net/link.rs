//! The TAP as one endpoint's link: whole frames in and out, each behind its virtio-net header,
//! in buffers sized for the largest frame the TAP carries; and the window the runner's
//! endpoints announce. `skblab tap`'s transfers and the oracle's peer both use it.

use super::netns::Tap;
use super::tcp::Out;
use super::vnet::{self, VnetHdr};
use super::wire::ETH_LEN;

/// The largest frame: its virtio-net header, Ethernet, and a whole IPv4 datagram (a GSO
/// super-packet).
pub const FRAME_MAX: usize = vnet::LEN + ETH_LEN + 65_535;

/// The window scale the runner offers: 2^7 lets a 16-bit field announce up to 8 MiB.
pub const WSCALE: u8 = 7;
/// The receive window the runner announces by default: 8 MiB, about the most [`WSCALE`]
/// lets it say.
pub const RCV_WND: u32 = 8 << 20;

/// Reads and writes frames on a TAP: the buffers each way (the TAP is the caller's, which
/// keeps it beside the link).
pub struct Link {
    rx: Vec<u8>,
    tx: Vec<u8>,
}

impl Default for Link {
    fn default() -> Self {
        Link {
            rx: vec![0; FRAME_MAX],
            tx: Vec::with_capacity(FRAME_MAX),
        }
    }
}

impl Link {
    /// The next frame the kernel wrote on `tap`, without waiting; a read without a valid
    /// virtio-net header is skipped.
    pub fn read(&mut self, tap: &Tap) -> Result<Option<Out>, String> {
        while let Some(n) = tap.read(&mut self.rx)? {
            if let Some(vnet) = VnetHdr::parse(&self.rx[..n]) {
                let frame = self.rx[vnet::LEN..n].to_vec();
                return Ok(Some(Out { vnet, frame }));
            }
        }
        Ok(None)
    }

    /// Writes `o` on `tap` behind its virtio-net header, as one write.
    pub fn write(&mut self, tap: &Tap, o: &Out) -> Result<(), String> {
        self.tx.clear();
        self.tx.extend_from_slice(&o.vnet.to_bytes());
        self.tx.extend_from_slice(&o.frame);
        tap.write(&self.tx)
    }

    /// Writes `o` as a NIC's frame on tun's NAPI frags path: the virtio-net header and the
    /// Ethernet, IPv4 and TCP headers in one iovec (the skb's head), the payload in a second
    /// (a frag of `netdev_alloc_frag`); a frame without payload in one.
    pub fn write_frags(&mut self, tap: &Tap, o: &Out) -> Result<(), String> {
        let at = tcp_headers_len(&o.frame).min(o.frame.len());
        let (hdr, payload) = o.frame.split_at(at);
        self.tx.clear();
        self.tx.extend_from_slice(&o.vnet.to_bytes());
        self.tx.extend_from_slice(hdr);
        if payload.is_empty() {
            return tap.write(&self.tx);
        }
        tap.writev(&[&self.tx, payload])
    }
}

/// Ethernet + IPv4 (IHL) + TCP (data offset) header bytes at the front of `frame`.
fn tcp_headers_len(frame: &[u8]) -> usize {
    let ihl = frame.get(ETH_LEN).map_or(0, |b| usize::from(b & 0x0f) * 4);
    let doff = frame
        .get(ETH_LEN + ihl + 12)
        .map_or(0, |b| usize::from(b >> 4) * 4);
    ETH_LEN + ihl + doff
}

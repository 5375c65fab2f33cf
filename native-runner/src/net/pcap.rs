//! A classic pcap writer (the 24-byte global header and 16-byte record headers of libpcap's
//! format), small enough to write directly.

use std::io::{self, Write};
use std::time::{Duration, Instant};

/// LINKTYPE_ETHERNET: the TAP's frames.
pub const LINKTYPE_ETHERNET: u32 = 1;
/// LINKTYPE_LINUX_SLL: a 16-byte cooked header (direction, device type, link address,
/// protocol) before the packet from its network header on (`skblab trace`'s).
pub const LINKTYPE_LINUX_SLL: u32 = 113;
/// Large enough for a 64 KiB GSO super-packet in one record.
const SNAPLEN: u32 = 262_144;

pub struct Pcap<W: Write> {
    out: W,
    start: Instant,
    /// Seconds since the epoch at `start`, so timestamps read as wall-clock time.
    epoch: std::time::Duration,
}

impl<W: Write> Pcap<W> {
    /// A capture of Ethernet frames.
    pub fn new(out: W) -> io::Result<Pcap<W>> {
        Pcap::with_link(out, LINKTYPE_ETHERNET)
    }

    pub fn with_link(mut out: W, link: u32) -> io::Result<Pcap<W>> {
        out.write_all(&0xa1b2_c3d4u32.to_le_bytes())?;
        out.write_all(&2u16.to_le_bytes())?;
        out.write_all(&4u16.to_le_bytes())?;
        out.write_all(&0i32.to_le_bytes())?; // thiszone
        out.write_all(&0u32.to_le_bytes())?; // sigfigs
        out.write_all(&SNAPLEN.to_le_bytes())?;
        out.write_all(&link.to_le_bytes())?;
        let epoch = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        Ok(Pcap {
            out,
            start: Instant::now(),
            epoch,
        })
    }

    /// Writes one Ethernet frame, stamped now (checksums as they are: complete them first).
    pub fn frame(&mut self, f: &[u8]) -> io::Result<()> {
        let t = self.epoch + self.start.elapsed();
        self.record(t, f, f.len() as u32)
    }

    /// Writes a packet of `len` bytes of which `data` are the first, at `t` since the epoch.
    pub fn record(&mut self, t: Duration, data: &[u8], len: u32) -> io::Result<()> {
        let data = &data[..data.len().min(SNAPLEN as usize)];
        self.out.write_all(&(t.as_secs() as u32).to_le_bytes())?;
        self.out.write_all(&t.subsec_micros().to_le_bytes())?;
        self.out.write_all(&(data.len() as u32).to_le_bytes())?;
        self.out
            .write_all(&len.max(data.len() as u32).to_le_bytes())?;
        self.out.write_all(data)
    }

    pub fn finish(mut self) -> io::Result<W> {
        self.out.flush()?;
        Ok(self.out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_the_classic_layout() {
        let mut p = Pcap::new(Vec::new()).unwrap();
        p.frame(&[1, 2, 3]).unwrap();
        let b = p.finish().unwrap();
        assert_eq!(b.len(), 24 + 16 + 3);
        assert_eq!(&b[..4], &[0xd4, 0xc3, 0xb2, 0xa1]);
        assert_eq!(&b[20..24], &[1, 0, 0, 0]);
        assert_eq!(&b[24 + 8..24 + 16], &[3, 0, 0, 0, 3, 0, 0, 0]);
        assert_eq!(&b[40..], &[1, 2, 3]);
    }

    #[test]
    fn a_record_keeps_the_packets_length_beside_what_was_captured() {
        let mut p = Pcap::with_link(Vec::new(), LINKTYPE_LINUX_SLL).unwrap();
        p.record(Duration::new(7, 5_000), &[0x45, 0], 1500).unwrap();
        let b = p.finish().unwrap();
        assert_eq!(&b[20..24], &[113, 0, 0, 0]);
        assert_eq!(&b[24..32], &[7, 0, 0, 0, 5, 0, 0, 0]);
        assert_eq!(&b[32..40], &[2, 0, 0, 0, 0xdc, 0x05, 0, 0]);
        assert_eq!(&b[40..], &[0x45, 0]);
    }
}

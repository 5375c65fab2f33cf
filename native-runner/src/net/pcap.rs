//! A classic pcap writer (the 24-byte global header and 16-byte record headers of libpcap's
//! format, link type Ethernet), small enough to write directly.

use std::io::{self, Write};
use std::time::Instant;

/// LINKTYPE_ETHERNET.
const LINKTYPE_ETHERNET: u32 = 1;
/// Large enough for a 64 KiB GSO super-packet in one record.
const SNAPLEN: u32 = 262_144;

pub struct Pcap<W: Write> {
    out: W,
    start: Instant,
    /// Seconds since the epoch at `start`, so timestamps read as wall-clock time.
    epoch: std::time::Duration,
}

impl<W: Write> Pcap<W> {
    pub fn new(mut out: W) -> io::Result<Pcap<W>> {
        out.write_all(&0xa1b2_c3d4u32.to_le_bytes())?;
        out.write_all(&2u16.to_le_bytes())?;
        out.write_all(&4u16.to_le_bytes())?;
        out.write_all(&0i32.to_le_bytes())?; // thiszone
        out.write_all(&0u32.to_le_bytes())?; // sigfigs
        out.write_all(&SNAPLEN.to_le_bytes())?;
        out.write_all(&LINKTYPE_ETHERNET.to_le_bytes())?;
        let epoch = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        Ok(Pcap {
            out,
            start: Instant::now(),
            epoch,
        })
    }

    /// Writes one Ethernet frame (checksums as they are: complete them first).
    pub fn frame(&mut self, f: &[u8]) -> io::Result<()> {
        let t = self.epoch + self.start.elapsed();
        let len = f.len() as u32;
        self.out.write_all(&(t.as_secs() as u32).to_le_bytes())?;
        self.out.write_all(&t.subsec_micros().to_le_bytes())?;
        self.out.write_all(&len.min(SNAPLEN).to_le_bytes())?;
        self.out.write_all(&len.to_le_bytes())?;
        self.out.write_all(&f[..f.len().min(SNAPLEN as usize)])
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
}

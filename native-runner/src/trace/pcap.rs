//! `--pcap`: the packets the program's sockets sent, at the device, as a pcap that
//! Wireshark and tshark read. Each record is one skb as `net:net_dev_start_xmit` saw it (a
//! GSO skb is one record of its whole length, as tcpdump shows it), from its IP header on,
//! its first [`PACKET_BYTES`] captured: the headers, not the payload.

use super::script::PACKET_BYTES;
use crate::net::pcap::{Pcap, LINKTYPE_RAW};
use std::io::Write;
use std::time::Duration;

/// One `pkt NSECS LEN BYTES` line: when, the packet's length, its first bytes (`\xNN` each).
struct Packet {
    ns: u64,
    len: u32,
    bytes: Vec<u8>,
}

fn packet(line: &str) -> Option<Packet> {
    let mut w = line.strip_prefix("pkt ")?.split(' ');
    let (ns, len) = (w.next()?.parse().ok()?, w.next()?.parse().ok()?);
    let hex = w.next().unwrap_or("");
    let bytes: Vec<u8> = (hex.split("\\x").skip(1))
        .map(|b| u8::from_str_radix(b, 16).ok())
        .collect::<Option<_>>()?;
    (bytes.len() <= PACKET_BYTES as usize && w.next().is_none()).then_some(Packet {
        ns,
        len,
        bytes,
    })
}

/// Writes the probes' packet lines to `out` in time order; `boot` is the wall-clock time at
/// which the probes' clock (`nsecs`, CLOCK_MONOTONIC) read 0. Returns how many.
pub fn write(lines: &[String], boot: Duration, out: impl Write) -> Result<usize, String> {
    let mut packets = Vec::new();
    for l in lines.iter().filter(|l| l.starts_with("pkt ")) {
        packets.push(packet(l).ok_or_else(|| format!("probe line {l:?}: not a packet"))?);
    }
    packets.sort_by_key(|p| p.ns);
    let io = |e: std::io::Error| format!("--pcap: {e}");
    let mut pcap = Pcap::with_link(out, LINKTYPE_RAW).map_err(io)?;
    for p in &packets {
        pcap.record(boot + Duration::from_nanos(p.ns), &p.bytes, p.len)
            .map_err(io)?;
    }
    pcap.finish().map_err(io)?;
    Ok(packets.len())
}

/// The wall-clock time at which CLOCK_MONOTONIC read 0.
pub fn boot_time() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes the timespec it is given.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    let mono = Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    now.saturating_sub(mono)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packets_are_written_in_time_order_with_their_length() {
        let lines = [
            "pkt 2000 1500 \\x45\\x00".to_string(),
            "dev 1 2 3".to_string(),
            "pkt 1000 40 \\x45\\x01\\xff".to_string(),
        ];
        let mut out = Vec::new();
        assert_eq!(write(&lines, Duration::from_secs(10), &mut out), Ok(2));
        // The global header, then the earlier packet: 10 s + 1 µs, 3 of 40 bytes.
        assert_eq!(
            &out[24..40],
            &[10, 0, 0, 0, 1, 0, 0, 0, 3, 0, 0, 0, 40, 0, 0, 0]
        );
        assert_eq!(&out[40..43], &[0x45, 0x01, 0xff]);
        assert_eq!(&out[43 + 8..43 + 16], &[2, 0, 0, 0, 0xdc, 0x05, 0, 0]);
    }

    #[test]
    fn a_line_that_is_not_a_packet_is_refused_by_name() {
        for bad in ["pkt 1 40 \\x4g", "pkt 1 x \\x45", "pkt 1 40 \\x45 more"] {
            let e = write(&[bad.to_string()], Duration::ZERO, Vec::new()).unwrap_err();
            assert!(e.contains("not a packet"), "{e}");
        }
    }
}

//! `--pcap`: the packets of the program's sockets, both ways and whole (payload too), as a
//! pcap that Wireshark and tshark read. A packet socket (`AF_PACKET`, `SOCK_DGRAM`: the
//! kernel takes off the link header and tells the packet's protocol and direction) opened in
//! the command's network namespace before it starts reads every packet there, in the order
//! the kernel handed them to it; once the capture names the program's sockets, only the packets to or from
//! their ports are written ([`Capture::owns_packet`]). The records are Linux cooked captures
//! (LINKTYPE_LINUX_SLL), so Wireshark shows each packet's direction.

use crate::net::pcap::{Pcap, LINKTYPE_LINUX_SLL};
use skblab_core::capture::Capture;
use std::io::Write;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// At most this many bytes of packets are held while the command runs; past it, packets
/// are counted, not kept.
pub const MAX_HELD_BYTES: usize = 256 << 20;
/// The largest packet read whole: a 64 KiB GSO packet on lo, with room for BIG TCP's.
const READ_BYTES: usize = 256 << 10;
/// The packet socket's receive buffer (SO_RCVBUFFORCE), so a burst is not dropped while
/// the reader thread waits for a CPU.
const RCVBUF: libc::c_int = 64 << 20;
/// How often the reader looks whether it is asked to stop.
const POLL_MS: libc::c_int = 50;

/// One packet as the packet socket gave it.
struct Packet {
    /// When it was read, since the epoch ([`stamp`]).
    at: Duration,
    /// `sll_pkttype` (PACKET_HOST, PACKET_OUTGOING, ...), `sll_hatype` (ARPHRD_*), the
    /// link address and the protocol (an ethertype, network order as read).
    pkttype: u16,
    hatype: u16,
    addr: Vec<u8>,
    protocol: u16,
    /// Its first bytes (all of it up to [`READ_BYTES`]), from the network header on, and
    /// its whole length.
    data: Vec<u8>,
    len: u32,
}

/// The packets read while the command ran.
pub struct Packets {
    list: Vec<Packet>,
    /// Packets the kernel dropped from the socket's buffer, and those past [`MAX_HELD_BYTES`].
    pub dropped: u64,
    pub over: u64,
}

/// The reader thread; [`Sniffer::finish`] stops it and takes what it read.
pub struct Sniffer {
    stop: Arc<AtomicBool>,
    thread: JoinHandle<Result<Packets, String>>,
}

impl Sniffer {
    /// Starts reading every packet in the network namespace of `pid` (this process's when
    /// `None`). Returns once the socket is open, so no packet sent after is missed.
    pub fn start(pid: Option<u32>) -> Result<Sniffer, String> {
        let stop = Arc::new(AtomicBool::new(false));
        let (tx, rx) = std::sync::mpsc::channel();
        let flag = stop.clone();
        let thread = std::thread::Builder::new()
            .name("skblab-pcap".into())
            .spawn(move || {
                let fd = enter_netns(pid).and_then(|()| open());
                let ok = fd.as_ref().map(|_| ()).map_err(Clone::clone);
                let _ = tx.send(ok);
                read_all(&fd?, &flag)
            })
            .map_err(|e| format!("--pcap: no reader thread: {e}"))?;
        match rx.recv() {
            Ok(Ok(())) => Ok(Sniffer { stop, thread }),
            Ok(Err(e)) => Err(e),
            Err(_) => Err("--pcap: the reader thread ended before its socket opened".into()),
        }
    }

    /// Stops the reader and returns the packets it read.
    pub fn finish(self) -> Result<Packets, String> {
        self.stop.store(true, Ordering::Relaxed);
        (self.thread.join()).map_err(|_| "--pcap: the reader thread panicked".to_string())?
    }
}

/// Moves this thread into `pid`'s network namespace (setns affects the calling thread only).
fn enter_netns(pid: Option<u32>) -> Result<(), String> {
    let Some(pid) = pid else { return Ok(()) };
    let path = format!("/proc/{pid}/ns/net");
    let ns = std::fs::File::open(&path).map_err(|e| format!("--pcap: {path}: {e}"))?;
    // SAFETY: a valid namespace descriptor; CLONE_NEWNET names its type.
    if unsafe { libc::setns(ns.as_raw_fd(), libc::CLONE_NEWNET) } != 0 {
        let e = std::io::Error::last_os_error();
        return Err(format!("--pcap: entering {path}: {e}"));
    }
    Ok(())
}

/// A packet socket for every protocol on every device, with a large receive buffer.
fn open() -> Result<OwnedFd, String> {
    let all = (libc::ETH_P_ALL as u16).to_be() as libc::c_int;
    // SAFETY: plain socket(2); the descriptor is owned at once.
    let fd = unsafe { libc::socket(libc::AF_PACKET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, all) };
    if fd < 0 {
        let e = std::io::Error::last_os_error();
        return Err(format!("--pcap: a packet socket (AF_PACKET): {e}"));
    }
    // SAFETY: fd is a new descriptor no one else owns.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    let size = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: an int option of its size on a valid socket. Failing leaves the default.
    unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_RCVBUFFORCE,
            (&RCVBUF as *const libc::c_int).cast(),
            size,
        )
    };
    Ok(fd)
}

/// Reads packets until `stop`, then the ones still queued, and the kernel's drop count.
fn read_all(fd: &OwnedFd, stop: &AtomicBool) -> Result<Packets, String> {
    let mut p = Packets {
        list: Vec::new(),
        dropped: 0,
        over: 0,
    };
    let (mut held, mut buf) = (0usize, vec![0u8; READ_BYTES]);
    loop {
        let stopping = stop.load(Ordering::Relaxed);
        let mut pfd = libc::pollfd {
            fd: fd.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd. After a stop, only what is already queued is read.
        let ready = unsafe { libc::poll(&mut pfd, 1, if stopping { 0 } else { POLL_MS }) };
        if ready <= 0 {
            if stopping {
                break;
            }
            continue;
        }
        let Some(packet) = recv(fd, &mut buf)? else {
            continue;
        };
        if held + packet.data.len() > MAX_HELD_BYTES {
            p.over += 1;
            continue;
        }
        held += packet.data.len();
        p.list.push(packet);
    }
    p.dropped = drops(fd);
    Ok(p)
}

/// One packet, or `None` for one to leave out: lo's outgoing copy (lo hands every packet
/// it sends back as incoming, so each would be written twice; libpcap leaves it out too).
fn recv(fd: &OwnedFd, buf: &mut [u8]) -> Result<Option<Packet>, String> {
    // SAFETY: an all-zero sockaddr_ll is valid; recvfrom fills it and its length.
    let mut from: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
    let mut from_len = std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t;
    // SAFETY: buf and from are valid for their lengths; MSG_TRUNC returns the whole length.
    let n = unsafe {
        libc::recvfrom(
            fd.as_raw_fd(),
            buf.as_mut_ptr().cast(),
            buf.len(),
            libc::MSG_TRUNC | libc::MSG_DONTWAIT,
            (&mut from as *mut libc::sockaddr_ll).cast(),
            &mut from_len,
        )
    };
    if n < 0 {
        let e = std::io::Error::last_os_error();
        return match e.kind() {
            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::Interrupted => Ok(None),
            _ => Err(format!("--pcap: reading the packet socket: {e}")),
        };
    }
    if from.sll_pkttype == libc::PACKET_OUTGOING && from.sll_hatype == libc::ARPHRD_LOOPBACK {
        return Ok(None);
    }
    let kept = (n as usize).min(buf.len());
    let halen = usize::from(from.sll_halen).min(from.sll_addr.len());
    Ok(Some(Packet {
        at: stamp(),
        pkttype: from.sll_pkttype.into(),
        hatype: from.sll_hatype,
        addr: from.sll_addr[..halen].to_vec(),
        protocol: from.sll_protocol,
        data: buf[..kept].to_vec(),
        len: n as u32,
    }))
}

/// The time now, since the epoch: when the packet was read. The kernel's own stamp
/// (SIOCGSTAMPNS) is not used: timestamping is switched on by a deferred work item, so the
/// first packets carry none and would be stamped at their read, out of order with the rest.
fn stamp() -> Duration {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
    now.unwrap_or_default()
}

/// Packets the kernel dropped because the socket's buffer was full (PACKET_STATISTICS).
fn drops(fd: &OwnedFd) -> u64 {
    let mut st = libc::tpacket_stats {
        tp_packets: 0,
        tp_drops: 0,
    };
    let mut len = std::mem::size_of::<libc::tpacket_stats>() as libc::socklen_t;
    // SAFETY: PACKET_STATISTICS writes one tpacket_stats and its length.
    unsafe {
        libc::getsockopt(
            fd.as_raw_fd(),
            libc::SOL_PACKET,
            libc::PACKET_STATISTICS,
            (&mut st as *mut libc::tpacket_stats).cast(),
            &mut len,
        )
    };
    st.tp_drops.into()
}

/// The transport protocol and ports of an IPv4 or IPv6 packet, from its network header.
fn ports(data: &[u8]) -> Option<(u8, u16, u16)> {
    use etherparse::{LaxSlicedPacket, TransportSlice};
    let p = LaxSlicedPacket::from_ip(data).ok()?;
    match p.transport? {
        TransportSlice::Tcp(t) => Some((6, t.source_port(), t.destination_port())),
        TransportSlice::Udp(u) => Some((17, u.source_port(), u.destination_port())),
        _ => None,
    }
}

/// Writes the packets of `c`'s sockets to `out`, in the order they were read (the packet
/// socket's queue is the order the kernel handed them over). Returns how many.
pub fn write(p: &Packets, c: &Capture, out: impl Write) -> Result<usize, String> {
    let io = |e: std::io::Error| format!("--pcap: {e}");
    let mut pcap = Pcap::with_link(out, LINKTYPE_LINUX_SLL).map_err(io)?;
    let ours: Vec<&Packet> = (p.list.iter())
        .filter(|k| ports(&k.data).is_some_and(|(pr, s, d)| c.owns_packet(pr, s, d)))
        .collect();
    for k in &ours {
        let mut rec = sll_header(k);
        let head = rec.len() as u32;
        rec.extend_from_slice(&k.data);
        pcap.record(k.at, &rec, head + k.len).map_err(io)?;
    }
    pcap.finish().map_err(io)?;
    Ok(ours.len())
}

/// The 16-byte cooked header: direction, device type, address length, address (8 bytes,
/// zero-padded), protocol; big-endian, the protocol as the socket gave it.
fn sll_header(k: &Packet) -> Vec<u8> {
    let mut h = Vec::with_capacity(16 + k.data.len());
    h.extend_from_slice(&k.pkttype.to_be_bytes());
    h.extend_from_slice(&k.hatype.to_be_bytes());
    h.extend_from_slice(&(k.addr.len() as u16).to_be_bytes());
    let mut addr = [0u8; 8];
    addr[..k.addr.len()].copy_from_slice(&k.addr);
    h.extend_from_slice(&addr);
    h.extend_from_slice(&k.protocol.to_ne_bytes());
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An IPv4 TCP packet from port `src` to `dst` with `payload`, as etherparse builds it.
    fn tcp(src: u16, dst: u16, payload: &[u8]) -> Vec<u8> {
        let b = etherparse::PacketBuilder::ipv4([127, 0, 0, 1], [127, 0, 0, 1], 64)
            .tcp(src, dst, 1, 65535);
        let mut v = Vec::new();
        b.write(&mut v, payload).unwrap();
        v
    }

    fn packet(at: u64, pkttype: u16, data: Vec<u8>) -> Packet {
        Packet {
            at: Duration::from_micros(at),
            pkttype,
            hatype: libc::ARPHRD_LOOPBACK,
            addr: vec![0; 6],
            protocol: 0x0800u16.to_be(),
            len: data.len() as u32,
            data,
        }
    }

    /// The fixture's sockets own 41378 <-> 7000: those packets are written in the order read
    /// with their cooked header and whole payload; a packet of another port pair is not.
    #[test]
    fn the_programs_packets_are_written_whole_in_the_order_read() {
        let c = Capture::parse(include_str!("../../../tests/fixtures/capture-tcp.json")).unwrap();
        let p = Packets {
            list: vec![
                packet(1000, 0, tcp(41378, 7000, b"xxxx")),
                packet(1500, 0, tcp(5555, 6666, b"not ours")),
                packet(2000, 0, tcp(7000, 41378, b"")),
            ],
            dropped: 0,
            over: 0,
        };
        let mut out = Vec::new();
        assert_eq!(write(&p, &c, &mut out), Ok(2));
        // The global header (24 bytes), then the earlier packet: 1 ms, 16 + 44 bytes.
        let first = &out[24..];
        assert_eq!(&first[..8], &[0, 0, 0, 0, 0xe8, 0x03, 0, 0]);
        assert_eq!(&first[8..16], &[60, 0, 0, 0, 60, 0, 0, 0]);
        // Incoming (0), ARPHRD_LOOPBACK (772), a 6-byte address, IPv4.
        assert_eq!(&first[16..22], &[0, 0, 0x03, 0x04, 0, 6]);
        assert_eq!(&first[30..32], &[0x08, 0x00]);
        assert_eq!(&first[72..76], b"xxxx");
        let second = &first[76..];
        assert_eq!(&second[..8], &[0, 0, 0, 0, 0xd0, 0x07, 0, 0]);
        assert_eq!(second.len(), 16 + 16 + 40);
    }

    #[test]
    fn a_packet_that_is_not_ip_has_no_ports() {
        assert_eq!(ports(&[0x45]), None);
        assert_eq!(ports(&tcp(1, 2, b"")), Some((6, 1, 2)));
    }
}

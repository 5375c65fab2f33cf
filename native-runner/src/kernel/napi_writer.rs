//! Seed 001's kernel run, the writing side: a TAP on tun's NAPI frags path, one UDP frame a
//! `writev` from a thread pinned to CPU 0 (which is also the reader), and the priming that
//! brings CPU 0's frag cache to a fresh page before the model's first frame (see
//! [`super::napi_frags`], which judges the probe's lines). Both NAPI frags runs name their
//! threads, ports, reader and steps here, under the judges that plan and read them.

use super::napi_probe::{parse, refill_base};
use super::peer::{Peer, PeerParams};
use super::pinned::{softirq_on, Pinned};
use super::probe::Tracer;
use super::verdict::{too_slow, Inconclusive, RunError};
use crate::net::link::RCV_WND;
use crate::net::netns::{self, set_gro, Tap, KERNEL_IP, RUNNER_IP, RUNNER_MAC};
use crate::net::sockopt::setsockopt;
use crate::net::vnet::VnetHdr;
use skblab_core::consts::wire::mss_option;
use skblab_core::rx::{napi_frags_per_page, BH_CPU};
use skblab_core::Cpu;
use std::cell::RefCell;
use std::collections::HashSet;
use std::io::Read;
use std::net::{TcpListener, TcpStream, UdpSocket};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// The kernel's UDP port.
pub(super) const PORT: u16 = 5004;
/// The writing (and reading) thread, on CPU 0: the probe's frames are its `writev`s.
pub(super) const WRITER: &str = "skblab-napi";
/// The most frames priming may take to reach a refill of fragments of `payload` bytes: one
/// more than a 32 KiB page holds, and one for the page already started (an order-0 fallback
/// page holds fewer). More means something else keeps emptying or refilling CPU 0's cache.
pub(super) fn prime_max(payload: u32) -> u64 {
    u64::from(napi_frags_per_page(payload)) + 2
}

/// The reading thread, on CPU 1.
pub(super) const READER: &str = "skblab-napi-rd";
/// The reader's CPU: a read skb goes back to CPU 0 (`skb_attempt_defer_free`).
pub const READER_CPU: Cpu = 1;

/// How the reader reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reader {
    /// Every datagram before the next frame (`app.prompt`, `nic.budget = 1`).
    Prompt,
    /// None until the socket closes.
    Lagging,
}

/// What the kernel run does, op by op.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// One writev per frame: each frame's payload bytes.
    Arrive(Vec<u32>),
    /// The reader reads this many bytes.
    Read(u64),
    /// NET_RX on this CPU (frees its defer list).
    Softirq(Cpu),
}

/// A separate TAP name, so this run never meets the `rx` run's device.
const TAP_NAME: &str = "skbnapi0";

/// A TAP with IFF_NAPI | IFF_NAPI_FRAGS, no virtio-net header, addressed and up.
fn open_tap() -> Result<(OwnedFd, [u8; 6]), String> {
    const TUNSETIFF: libc::c_ulong = 0x4004_54ca;
    // IFF_TAP | IFF_NO_PI | IFF_NAPI | IFF_NAPI_FRAGS (include/uapi/linux/if_tun.h).
    const FLAGS: libc::c_short = 0x0002 | 0x1000 | 0x0010 | 0x0020;
    let err = |what: &str| format!("{what}: {}", std::io::Error::last_os_error());
    // SAFETY: a valid C string; the descriptor is ours.
    let fd = unsafe { libc::open(c"/dev/net/tun".as_ptr(), libc::O_RDWR | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(err("open /dev/net/tun"));
    }
    // SAFETY: fd is a fresh descriptor we own.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    let mut ifr = [0u8; 40];
    ifr[..TAP_NAME.len()].copy_from_slice(TAP_NAME.as_bytes());
    ifr[16..18].copy_from_slice(&FLAGS.to_ne_bytes());
    // SAFETY: TUNSETIFF reads and writes a struct ifreq (40 bytes).
    if unsafe { libc::ioctl(fd.as_raw_fd(), TUNSETIFF as _, ifr.as_mut_ptr()) } != 0 {
        return Err(err(
            "TUNSETIFF with IFF_NAPI | IFF_NAPI_FRAGS (needs CAP_NET_ADMIN)",
        ));
    }
    let _ = std::fs::write(
        format!("/proc/sys/net/ipv6/conf/{TAP_NAME}/disable_ipv6"),
        "1",
    );
    netns::link_up("lo")?;
    netns::set_addr_mask(
        TAP_NAME,
        KERNEL_IP,
        std::net::Ipv4Addr::new(255, 255, 255, 0),
    )?;
    netns::link_up(TAP_NAME)?;
    Ok((fd, hw_addr(TAP_NAME)?))
}

/// The MAC address of interface `name` (SIOCGIFHWADDR).
fn hw_addr(name: &str) -> Result<[u8; 6], String> {
    let mut ifr = [0u8; 40];
    ifr[..name.len()].copy_from_slice(name.as_bytes());
    let sock = UdpSocket::bind("127.0.0.1:0").map_err(|e| format!("udp socket: {e}"))?;
    // SAFETY: SIOCGIFHWADDR fills the ifreq's sockaddr (family, then the MAC).
    if unsafe { libc::ioctl(sock.as_raw_fd(), libc::SIOCGIFHWADDR as _, ifr.as_mut_ptr()) } != 0 {
        return Err(format!(
            "SIOCGIFHWADDR: {}",
            std::io::Error::last_os_error()
        ));
    }
    let mut mac = [0u8; 6];
    mac.copy_from_slice(&ifr[18..24]);
    Ok(mac)
}

/// An Ethernet + IPv4 + UDP frame to the kernel's [`PORT`] carrying `payload` bytes, and
/// where its payload starts.
fn udp_frame(mac: [u8; 6], payload: u32) -> Result<(Vec<u8>, usize), String> {
    let data = vec![0x5a; payload as usize];
    let mut frame = Vec::new();
    etherparse::PacketBuilder::ethernet2(RUNNER_MAC, mac)
        .ipv4(RUNNER_IP.octets(), KERNEL_IP.octets(), 64)
        .udp(40_000, PORT)
        .write(&mut frame, &data)
        .map_err(|e| format!("building a UDP frame: {e}"))?;
    let at = frame.len() - data.len();
    Ok((frame, at))
}

/// The writer's state on CPU 0: the TAP, the kernel's UDP socket, the frame headers.
struct Writer {
    tap: OwnedFd,
    sock: Option<UdpSocket>,
    mac: [u8; 6],
}

enum Cmd {
    /// One frame of this payload, then the marker; `read`: then read every datagram queued.
    Frame { payload: u32, read: bool },
    /// Read every datagram queued.
    Drain,
    /// Read what is left, then close the socket.
    Close,
}

impl Writer {
    fn run(&mut self, c: Cmd) -> Result<(), String> {
        match c {
            Cmd::Frame { payload, read } => {
                self.write(payload)?;
                if read {
                    self.drain()?;
                }
                // SAFETY: getsid(0) has no preconditions; it is the probe's marker.
                unsafe { libc::getsid(0) };
                Ok(())
            }
            Cmd::Drain => self.drain(),
            Cmd::Close => {
                // What a reader left is read first: a UDP socket frees its queue only after an
                // RCU grace period (SOCK_RCU_FREE: __sk_destruct, udp_destruct_common), which
                // under load can come after the probe stops; a read frees each skb at once
                // (skb_consume_udp, on the CPU that built it), giving back the same fragments.
                self.drain()?;
                drop(self.sock.take());
                Ok(())
            }
        }
    }

    /// One writev: the headers, then the payload.
    fn write(&self, payload: u32) -> Result<(), String> {
        let (frame, at) = udp_frame(self.mac, payload)?;
        let (hdr, body) = frame.split_at(at);
        let iov = [hdr, body].map(|b| libc::iovec {
            iov_base: b.as_ptr() as *mut libc::c_void,
            iov_len: b.len(),
        });
        // SAFETY: two iovecs over live buffers.
        let n = unsafe { libc::writev(self.tap.as_raw_fd(), iov.as_ptr(), 2) };
        if n != frame.len() as isize {
            return Err(format!(
                "writev to the TAP: {n} of {} bytes ({})",
                frame.len(),
                std::io::Error::last_os_error()
            ));
        }
        Ok(())
    }

    /// Reads every datagram queued (each was delivered before its writev returned).
    fn drain(&self) -> Result<(), String> {
        let s = self.sock.as_ref().ok_or("read after close")?;
        let mut buf = [0u8; 4096];
        loop {
            match s.recv(&mut buf) {
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return Ok(()),
                Err(e) => return Err(format!("reading the UDP socket: {e}")),
            }
        }
    }
}

/// One kernel run under `script` (the run's probes): primes CPU 0's cache to a refill, writes
/// the model's frames, closes. Returns the probe's lines and the writev number of the model's
/// first frame.
pub fn run_kernel(
    payloads: &[u32],
    reader: Reader,
    script: &str,
) -> Result<(Vec<String>, u64), RunError> {
    let (tap, mac) = open_tap()?;
    let sock = UdpSocket::bind((KERNEL_IP, PORT))
        .map_err(|e| format!("bind {KERNEL_IP}:{PORT} in the namespace: {e}"))?;
    sock.set_nonblocking(true)
        .map_err(|e| format!("nonblocking: {e}"))?;
    crate::net::sockopt::setsockopt(&sock, libc::SOL_SOCKET, libc::SO_RCVBUFFORCE, 64 << 20)
        .map_err(|e| format!("SO_RCVBUFFORCE: {e}"))?;
    let w = Writer {
        tap,
        sock: Some(sock),
        mac,
    };
    let writer = Pinned::spawn(WRITER, 0, w, Writer::run)?;
    let mut tracer = Tracer::start(script)?;
    let first = prime(
        || {
            writer.call(Cmd::Frame {
                payload: payloads[0],
                read: false,
            })
        },
        &mut tracer,
        payloads[0],
    )?;
    let read = reader == Reader::Prompt;
    if read {
        // The held frames before it, and itself, are read before the next frame.
        writer.call(Cmd::Drain)?;
    }
    for &payload in &payloads[1..] {
        writer.call(Cmd::Frame { payload, read })?;
    }
    writer.call(Cmd::Close)?;
    std::thread::sleep(std::time::Duration::from_millis(50));
    let lines = tracer.finish()?;
    drop(writer);
    Ok((lines, first))
}

/// Writes held frames (`frame`, each followed by its mark) until one is a refill, read back
/// from the probe after each; returns its writev number.
fn prime(
    mut frame: impl FnMut() -> Result<(), RunError>,
    tracer: &mut Tracer,
    payload: u32,
) -> Result<u64, RunError> {
    let mut seen = Vec::new();
    let max = prime_max(payload);
    for n in 1..=max {
        frame()?;
        let mark = format!("mark {n}");
        for l in tracer.read_until(|l| l == mark)? {
            if let Ok(l) = parse(&l) {
                seen.push(l);
            }
        }
        if refill_base(&seen, n).is_some() {
            return Ok(n);
        }
    }
    // Another user of CPU 0's cache keeps refilling it, as a spoiled trace is.
    Err(Inconclusive(format!(
        "no refill: {max} held frames never reached a refill of CPU 0's frag cache"
    ))
    .into())
}

/// The TCP run's TAP: tun's NAPI frags path, with a virtio-net header for the peer.
const TCP_TAP: &str = "skbnapi1";

/// The CPU-0 side of the TCP run: the TAP, the runner's end of the connection, and the
/// held UDP frames that prime the frag cache.
struct TcpBh {
    tap: Tap,
    peer: Peer,
    mac: [u8; 6],
}

enum TcpCmd {
    /// One held UDP frame of this payload, then the mark.
    Prime(u32),
    /// One writev per payload, each a TCP segment.
    Frames(Vec<u32>),
}

impl TcpBh {
    fn run(&mut self, c: TcpCmd) -> Result<(), String> {
        match c {
            TcpCmd::Prime(payload) => {
                let (frame, at) = udp_frame(self.mac, payload)?;
                let vnet = VnetHdr::default().to_bytes();
                let head = [&vnet[..], &frame[..at]].concat();
                self.tap.writev(&[&head, &frame[at..]])?;
                // SAFETY: getsid(0) has no preconditions; it is the probe's marker.
                unsafe { libc::getsid(0) };
                Ok(())
            }
            TcpCmd::Frames(payloads) => {
                for len in payloads {
                    self.peer.wait_window(&self.tap, len)?;
                    self.peer
                        .ep
                        .push(&vec![0x5a; len as usize], VnetHdr::default());
                    self.peer.flush_frags(&self.tap)?;
                }
                Ok(())
            }
        }
    }
}

enum ReadCmd {
    /// Read this many bytes, then mark the recvmsg's end (getsid(2)).
    Read(u64),
    Close,
}

fn reader_run(sock: &mut Option<TcpStream>, c: ReadCmd) -> Result<(), String> {
    let s = sock.as_mut().ok_or("recvmsg after close")?;
    match c {
        ReadCmd::Close => drop(sock.take()),
        ReadCmd::Read(n) => {
            let mut buf = vec![0u8; n as usize];
            s.read_exact(&mut buf)
                .map_err(|e| format!("the reader reading {n} bytes: {e}"))?;
            // SAFETY: getsid(0) has no preconditions; it is the probe's recvmsg mark.
            unsafe { libc::getsid(0) };
        }
    }
    Ok(())
}

/// The TCP run (see [`super::napi_tcp`]): the connection, GRO per `gro`, the priming (held
/// UDP frames to a refill, then a page's worth), the steps, NET_RX on both CPUs, and the
/// frees of the skbs the reader read, under `script` (the run's probes). Returns the probe's
/// lines and the writev number of the first TCP frame.
pub fn run_tcp(
    port: u16,
    gro: bool,
    steps: &[Step],
    payloads: &[u32],
    script: &str,
) -> Result<(Vec<String>, u64), RunError> {
    let tap = Tap::open_napi_frags(TCP_TAP)?;
    set_gro(TCP_TAP, gro)?;
    let mac = hw_addr(TCP_TAP)?;
    let held = UdpSocket::bind((KERNEL_IP, PORT))
        .map_err(|e| format!("bind {KERNEL_IP}:{PORT} in the namespace: {e}"))?;
    setsockopt(&held, libc::SOL_SOCKET, libc::SO_RCVBUFFORCE, 64 << 20)
        .map_err(|e| format!("SO_RCVBUFFORCE: {e}"))?;
    let listener = TcpListener::bind((KERNEL_IP, port))
        .map_err(|e| format!("bind {KERNEL_IP}:{port} in the namespace: {e}"))?;
    setsockopt(&listener, libc::SOL_SOCKET, libc::SO_RCVBUFFORCE, 8 << 20)
        .map_err(|e| format!("SO_RCVBUFFORCE on the listener: {e}"))?;
    let p = PeerParams {
        port,
        mss_option: mss_option(payloads.iter().copied().max().unwrap_or(1), true) as u16,
        timestamps: true,
        window: RCV_WND,
    };
    let peer = Peer::open(&tap, &p)?;
    let (sock, _) = listener
        .accept()
        .map_err(|e| format!("kernel accept: {e}"))?;
    let bh = Pinned::spawn(WRITER, BH_CPU, TcpBh { tap, peer, mac }, TcpBh::run)?;
    let reader = Pinned::spawn(READER, READER_CPU, Some(sock), reader_run)?;
    let mut tracer = Tracer::start(script)?;
    let payload = payloads.first().copied().unwrap_or(1);
    let refill = prime(|| bh.call(TcpCmd::Prime(payload)), &mut tracer, payload)?;
    for _ in 1..napi_frags_per_page(payload) {
        bh.call(TcpCmd::Prime(payload))?;
    }
    let first = refill + u64::from(napi_frags_per_page(payload));
    for step in steps {
        match step {
            Step::Arrive(frames) => bh.call(TcpCmd::Frames(frames.clone()))?,
            Step::Read(0) => {}
            Step::Read(n) => reader.call(ReadCmd::Read(*n))?,
            Step::Softirq(cpu) => softirq_on(*cpu)?,
        }
    }
    for cpu in 0..skblab_core::NR_CPUS as Cpu {
        softirq_on(cpu)?;
    }
    wait_frees(&mut tracer)?;
    reader.call(ReadCmd::Close)?;
    let lines = tracer.finish()?;
    drop((reader, bh, held));
    Ok((lines, first))
}

/// Reads the probe's lines until every skb the reader read is freed (a deferred one when
/// NET_RX runs on CPU 0, which ksoftirqd may do late on a busy machine): too slow, else.
fn wait_frees(tracer: &mut Tracer) -> Result<(), RunError> {
    let (copied, freed) = (RefCell::new(HashSet::new()), RefCell::new(HashSet::new()));
    let addr = |l: &str, at: usize| l.split_whitespace().nth(at).map(str::to_string);
    tracer
        .read_until(|l| {
            if l.starts_with("copy ") {
                copied.borrow_mut().extend(addr(l, 3));
            } else if l.starts_with("sfree ") {
                freed.borrow_mut().extend(addr(l, 2));
            }
            let copied = copied.borrow();
            !copied.is_empty() && copied.is_subset(&freed.borrow())
        })
        .map(drop)
        .map_err(|e| {
            let (c, f) = (copied.borrow().len(), freed.borrow().len());
            too_slow(&format!("{f} of the {c} read skbs freed: {e:?}"))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn priming_stops_one_page_and_a_frame_past_the_cache() {
        // 22 fragments of 1,472 bytes fit a 32 KiB page; 512 of 64.
        assert_eq!(prime_max(1448), 24);
        assert_eq!(prime_max(1), 514);
    }
}

//! Seed 001's kernel run, the writing side: a TAP on tun's NAPI frags path, one UDP frame a
//! `writev` from a thread pinned to CPU 0 (which is also the reader), and the priming that
//! brings CPU 0's frag cache to a fresh page before the model's first frame (see
//! [`super::napi_frags`], which judges the probe's lines).

use super::napi_frags::{parse, prime_max, refill_base, script, Reader, PORT, WRITER};
use super::pinned::Pinned;
use super::probe::Tracer;
use super::verdict::{Inconclusive, RunError};
use crate::net::netns::{self, KERNEL_IP, RUNNER_IP, RUNNER_MAC};
use std::net::UdpSocket;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

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
    let sock = UdpSocket::bind("127.0.0.1:0").map_err(|e| format!("udp socket: {e}"))?;
    // SAFETY: SIOCGIFHWADDR fills the ifreq's sockaddr (family, then the MAC).
    if unsafe { libc::ioctl(sock.as_raw_fd(), libc::SIOCGIFHWADDR as _, ifr.as_mut_ptr()) } != 0 {
        return Err(err("SIOCGIFHWADDR"));
    }
    let mut mac = [0u8; 6];
    mac.copy_from_slice(&ifr[18..24]);
    Ok((fd, mac))
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
        let data = vec![0x5a; payload as usize];
        let mut frame = Vec::new();
        etherparse::PacketBuilder::ethernet2(RUNNER_MAC, self.mac)
            .ipv4(RUNNER_IP.octets(), KERNEL_IP.octets(), 64)
            .udp(40_000, PORT)
            .write(&mut frame, &data)
            .map_err(|e| format!("building a UDP frame: {e}"))?;
        let (hdr, body) = frame.split_at(frame.len() - data.len());
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

/// One kernel run: primes CPU 0's cache to a refill, writes the model's frames, closes.
/// Returns the probe's lines and the writev number of the model's first frame.
pub fn run_kernel(payloads: &[u32], reader: Reader) -> Result<(Vec<String>, u64), RunError> {
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
    let mut tracer = Tracer::start(&script())?;
    let first = prime(&writer, &mut tracer, payloads[0])?;
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

/// Writes held frames until one is a refill (read back from the probe after each); returns
/// its writev number.
fn prime(writer: &Pinned<Cmd>, tracer: &mut Tracer, payload: u32) -> Result<u64, RunError> {
    let mut seen = Vec::new();
    let max = prime_max(payload);
    for n in 1..=max {
        writer.call(Cmd::Frame {
            payload,
            read: false,
        })?;
        let mark = format!("mark {n}");
        for l in tracer.read_until(|l| l == mark)? {
            seen.push(parse(&l)?);
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

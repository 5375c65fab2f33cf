//! A small sender and receiver in one process, for `skblab trace`'s tests (tests/trace.rs)
//! and a first program to trace: it listens on 127.0.0.1:PORT, connects to itself, writes COUNT writes
//! of SIZE bytes from one thread while another reads them all, prints what it wrote and
//! read, and exits with EXIT. A reader that lags (LAG ms before it reads, TCP and MPTCP)
//! finds the writes queued on its socket, where TCP coalesces them.
//!
//! `udp-connected` receives on a UDP socket that only connect(2)ed to the sender (the
//! kernel picks its port): no bind(2), nothing sent.
//!
//! `skbpeer tcp|udp|udp-connected|mptcp PORT SIZE COUNT [EXIT [LAG]]`, or `skbpeer wait`
//! (waits for a signal).

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::os::fd::{FromRawFd, OwnedFd};
use std::time::Duration;

/// IPPROTO_MPTCP (include/uapi/linux/in.h).
const IPPROTO_MPTCP: i32 = 262;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("wait") {
        println!("waiting");
        // SAFETY: pause(2) has no preconditions; a signal's default action ends us.
        unsafe { libc::pause() };
        return;
    }
    let [proto, port, size, count, rest @ ..] = &args[..] else {
        eprintln!(
            "usage: skbpeer tcp|udp|udp-connected|mptcp PORT SIZE COUNT [EXIT [LAG]] | skbpeer wait"
        );
        std::process::exit(2);
    };
    let num = |s: &str| -> usize { s.parse().expect("a number") };
    let (port, size, count) = (num(port) as u16, num(size), num(count));
    let exit = rest.first().map_or(0, |s| num(s) as i32);
    let lag = Duration::from_millis(rest.get(1).map_or(0, |s| num(s)) as u64);
    let addr: SocketAddr = ([127, 0, 0, 1], port).into();
    let read = match proto.as_str() {
        "udp" => udp(addr, size, count),
        "udp-connected" => udp_connected(addr, size, count),
        "tcp" | "mptcp" => stream(addr, size, count, proto == "mptcp", lag),
        other => panic!("unknown protocol {other}"),
    };
    println!("wrote {} read {read}", size * count);
    std::process::exit(exit);
}

/// A TCP (or MPTCP) socket, listening or not.
fn socket(mptcp: bool) -> OwnedFd {
    let proto = if mptcp { IPPROTO_MPTCP } else { 0 };
    // SAFETY: socket(2) with constant arguments; the descriptor is checked and owned.
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_STREAM, proto) };
    assert!(fd >= 0, "socket: {}", std::io::Error::last_os_error());
    // SAFETY: a fresh descriptor nothing else owns.
    unsafe { OwnedFd::from_raw_fd(fd) }
}

fn sockaddr(addr: SocketAddr) -> libc::sockaddr_in {
    let SocketAddr::V4(a) = addr else {
        unreachable!("127.0.0.1")
    };
    libc::sockaddr_in {
        sin_family: libc::AF_INET as u16,
        sin_port: a.port().to_be(),
        sin_addr: libc::in_addr {
            s_addr: u32::from_ne_bytes(a.ip().octets()),
        },
        sin_zero: [0; 8],
    }
}

fn check(rc: i32, what: &str) {
    assert!(rc == 0, "{what}: {}", std::io::Error::last_os_error());
}

/// Writes `count` writes of `size` bytes over a connection to itself, the reader starting
/// `lag` after the writer; returns what the reader read.
fn stream(addr: SocketAddr, size: usize, count: usize, mptcp: bool, lag: Duration) -> usize {
    use std::os::fd::AsRawFd;
    let sa = sockaddr(addr);
    let len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
    let l = socket(mptcp);
    let one: libc::c_int = 1;
    // SAFETY: valid descriptors, a valid sockaddr_in and its length, an int option.
    unsafe {
        let opt = (&one as *const libc::c_int).cast();
        let optlen = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
        libc::setsockopt(
            l.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_REUSEADDR,
            opt,
            optlen,
        );
        check(
            libc::bind(l.as_raw_fd(), (&sa as *const libc::sockaddr_in).cast(), len),
            "bind",
        );
        check(libc::listen(l.as_raw_fd(), 1), "listen");
    }
    let listener = TcpListener::from(l);
    let c = socket(mptcp);
    // SAFETY: as above.
    check(
        unsafe { libc::connect(c.as_raw_fd(), (&sa as *const libc::sockaddr_in).cast(), len) },
        "connect",
    );
    let (mut r, _) = listener.accept().expect("accept");
    let total = size * count;
    let reader = std::thread::spawn(move || {
        std::thread::sleep(lag);
        let mut buf = vec![0u8; 1 << 20];
        let mut got = 0;
        while got < total {
            match r.read(&mut buf).expect("read") {
                0 => break,
                n => got += n,
            }
        }
        got
    });
    let mut w = TcpStream::from(c);
    let data = vec![b'x'; size];
    for _ in 0..count {
        w.write_all(&data).expect("write");
    }
    let got = reader.join().expect("reader");
    drop(w);
    got
}

/// Sends `count` datagrams of `size` bytes to itself; returns what the reader read.
fn udp(addr: SocketAddr, size: usize, count: usize) -> usize {
    let r = UdpSocket::bind(addr).expect("bind");
    let s = UdpSocket::bind("127.0.0.1:0").expect("bind");
    exchange(&s, &r, addr, size, count)
}

/// `count` datagrams of `size` bytes from `s` to `r` at `to`, one at a time, each read
/// before the next so that none is dropped for want of room; returns what `r` read.
fn exchange(s: &UdpSocket, r: &UdpSocket, to: SocketAddr, size: usize, count: usize) -> usize {
    let data = vec![b'x'; size];
    let mut buf = vec![0u8; 65536];
    let mut got = 0;
    for _ in 0..count {
        s.send_to(&data, to).expect("send");
        got += r.recv(&mut buf).expect("recv");
    }
    got
}

/// Sends `count` datagrams of `size` bytes from a socket bound to `addr` to one that only
/// connected to it (socket(2) and connect(2): its port the kernel's); returns what it read.
fn udp_connected(addr: SocketAddr, size: usize, count: usize) -> usize {
    use std::os::fd::AsRawFd;
    let s = UdpSocket::bind(addr).expect("bind");
    // SAFETY: socket(2) with constant arguments; the descriptor is checked and owned.
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM, 0) };
    assert!(fd >= 0, "socket: {}", std::io::Error::last_os_error());
    // SAFETY: a fresh descriptor nothing else owns.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    let sa = sockaddr(addr);
    let len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
    // SAFETY: a valid descriptor, a valid sockaddr_in and its length.
    let rc = unsafe {
        libc::connect(
            fd.as_raw_fd(),
            (&sa as *const libc::sockaddr_in).cast(),
            len,
        )
    };
    check(rc, "connect");
    let r = UdpSocket::from(fd);
    let to = r.local_addr().expect("the port connect(2) bound");
    exchange(&s, &r, to, size, count)
}

//! The kernel's side: an ordinary `std::net` socket on a thread inside the namespace, and the
//! namespace's own TCP counters (/proc/net/snmp, /proc/net/netstat).

use crate::net::netns::KERNEL_IP;
use crate::net::sockopt::setsockopt;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// Makes the kernel's receive buffer small and its reader slow, so its window closes.
#[derive(Clone, Copy, Debug, Default)]
pub struct SlowReader {
    pub rcvbuf: u32,
    pub pause: Duration,
}

/// A listening socket on the kernel's side of the TAP.
pub fn listen(port: u16, slow: Option<SlowReader>) -> Result<TcpListener, String> {
    let l = TcpListener::bind((KERNEL_IP, port))
        .map_err(|e| format!("bind {KERNEL_IP}:{port} in the namespace: {e}"))?;
    if let Some(s) = slow {
        // Accepted sockets inherit it.
        setsockopt(&l, libc::SOL_SOCKET, libc::SO_RCVBUF, s.rcvbuf as i32)
            .map_err(|e| format!("SO_RCVBUF on the listener: {e}"))?;
    }
    Ok(l)
}

/// Accepts one connection and reads it to the end, hashing; with `slow`, pauses after the
/// first read so the receive buffer fills and the window closes.
pub fn spawn_reader(
    l: TcpListener,
    slow: Option<SlowReader>,
) -> JoinHandle<Result<Option<[u8; 32]>, String>> {
    std::thread::spawn(move || {
        let (mut s, _) = l.accept().map_err(|e| format!("kernel accept: {e}"))?;
        read_hashing(&mut s, slow.map(|sl| sl.pause)).map(Some)
    })
}

/// Accepts one connection, writes `data`, half-closes, and waits for the runner's FIN.
pub fn spawn_writer(
    l: TcpListener,
    data: Arc<Vec<u8>>,
) -> JoinHandle<Result<Option<[u8; 32]>, String>> {
    std::thread::spawn(move || {
        let (mut s, _): (TcpStream, _) = l.accept().map_err(|e| format!("kernel accept: {e}"))?;
        s.write_all(&data)
            .map_err(|e| format!("kernel write: {e}"))?;
        s.shutdown(Shutdown::Write)
            .map_err(|e| format!("kernel shutdown: {e}"))?;
        let mut rest = Vec::new();
        s.read_to_end(&mut rest)
            .map_err(|e| format!("kernel read to the runner's FIN: {e}"))?;
        Ok(None)
    })
}

/// Reads `s` to its end, hashing (the same work on every path the benchmark compares),
/// pausing once after the first read if asked.
pub fn read_hashing(s: &mut impl Read, mut pause: Option<Duration>) -> Result<[u8; 32], String> {
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 256 << 10];
    loop {
        let n = s.read(&mut buf).map_err(|e| format!("kernel read: {e}"))?;
        if n == 0 {
            return Ok(h.finalize().into());
        }
        h.update(&buf[..n]);
        if let Some(p) = pause.take() {
            std::thread::sleep(p);
        }
    }
}

/// The namespace's TCP counters that tell whether the kernel was happy.
pub const WATCHED: &[&str] = &[
    "Tcp.InSegs",
    "Tcp.OutSegs",
    "Tcp.RetransSegs",
    "Tcp.InErrs",
    "Tcp.InCsumErrors",
    "Tcp.OutRsts",
    "Tcp.EstabResets",
    "Tcp.AttemptFails",
    "TcpExt.TCPAbortOnData",
    "TcpExt.TCPAbortOnClose",
    "TcpExt.TCPAbortOnMemory",
    "TcpExt.TCPAbortOnTimeout",
    "TcpExt.TCPOFOQueue",
    "TcpExt.TCPSACKReorder",
    // D-SACKs (RFC 2883) the kernel sent for duplicates it received, and read from the runner.
    "TcpExt.TCPDSACKOldSent",
    "TcpExt.TCPDSACKOfoSent",
    "TcpExt.TCPDSACKRecv",
    "TcpExt.TCPDSACKOfoRecv",
    // Segments `tcp_paws_discard` refused: a reordered ACK whose timestamp is older than one
    // the kernel already took never reaches SACK processing.
    "TcpExt.PAWSEstab",
    // Window reductions the kernel undid as needless (`tcp_try_undo_*`).
    "TcpExt.TCPFullUndo",
    "TcpExt.TCPDSACKUndo",
    "TcpExt.TCPLossUndo",
    "TcpExt.TCPToZeroWindowAdv",
    "TcpExt.TCPFromZeroWindowAdv",
    "TcpExt.TCPZeroWindowDrop",
    "TcpExt.TCPRcvQDrop",
];

/// Reads the "Name: k1 k2 ..." / "Name: v1 v2 ..." line pairs of /proc/net/snmp and
/// /proc/net/netstat (this thread's namespace) into `Name.key` -> value.
pub fn counters() -> BTreeMap<String, u64> {
    let mut m = BTreeMap::new();
    for path in ["/proc/net/snmp", "/proc/net/netstat"] {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        for pair in lines.chunks_exact(2) {
            let (Some((name, keys)), Some((_, vals))) =
                (pair[0].split_once(':'), pair[1].split_once(':'))
            else {
                continue;
            };
            for (k, v) in keys.split_whitespace().zip(vals.split_whitespace()) {
                if let Ok(v) = v.parse::<i64>() {
                    m.insert(format!("{name}.{k}"), v.max(0) as u64);
                }
            }
        }
    }
    m
}

/// The watched counters' growth between two readings.
pub fn delta(
    before: &BTreeMap<String, u64>,
    after: &BTreeMap<String, u64>,
) -> BTreeMap<String, u64> {
    WATCHED
        .iter()
        .map(|k| {
            let get = |m: &BTreeMap<String, u64>| m.get(*k).copied().unwrap_or(0);
            (k.to_string(), get(after).saturating_sub(get(before)))
        })
        .collect()
}

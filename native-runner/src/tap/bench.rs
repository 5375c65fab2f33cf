//! `skblab tap bench`: bulk throughput each way over the TAP, plain and GSO, beside the
//! kernel talking to itself over a veth pair, all measured in one run.
//!
//! The runner sends the send model's skbs (`modern`, 2 MiB writes). The veth pair joins this process's namespace to a second private one that a helper
//! thread creates (`unshare(CLONE_NEWNET)` on that thread only): with both ends in one
//! namespace the kernel would route the traffic over `lo`, not the veth. Creating a veth needs
//! netlink; the `ip` tool (iproute2) does it, run inside the private namespace. The veth uses
//! 192.0.2.128/25, more specific than the TAP's /24, so the two never mix.

use super::session::{self, Dir};
use super::socket;
use crate::net::netns::{self, Tap};
use std::io::{Read, Write};
use std::net::{Ipv4Addr, Shutdown, TcpListener, TcpStream};
use std::process::Command;
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

const VETH_A: &str = "skbveth0";
const VETH_B: &str = "skbveth1";
const IP_A: Ipv4Addr = Ipv4Addr::new(192, 0, 2, 129);
const IP_B: Ipv4Addr = Ipv4Addr::new(192, 0, 2, 130);
const MASK_25: Ipv4Addr = Ipv4Addr::new(255, 255, 255, 128);
const VETH_PORT: u16 = 5100;

#[derive(Debug, serde::Serialize)]
struct Row {
    path: &'static str,
    /// Runner -> kernel (TAP), or A -> B (veth), Gbit/s.
    to_kernel: f64,
    /// Kernel -> runner (TAP), or B -> A (veth), Gbit/s.
    from_kernel: f64,
}

/// Each figure is the best of this many rounds: the machine is shared and noisy.
const ROUNDS: usize = 5;

pub fn run(tap: &Tap, bytes: u64, json: bool) -> Result<(), String> {
    super::check_bytes(bytes)?;
    let payload = super::payload(bytes, 1);
    let veth = Veth::new(payload.clone())?;
    // best[path][dir]: TAP plain, TAP GSO, veth; to kernel, from kernel.
    let mut best = [[0.0f64; 2]; 3];
    let mut port = 5001;
    let plans = [chunks(bytes, false)?, chunks(bytes, true)?];
    for _ in 0..ROUNDS {
        for (i, gso) in [false, true].into_iter().enumerate() {
            for (j, dir) in [Dir::Send, Dir::Recv].into_iter().enumerate() {
                let mut t = super::base(dir, gso, payload.clone());
                t.port = port;
                port += 1;
                t.progress = false;
                // Like a virtio guest: checksums left to offload, as veth leaves them too.
                t.csum_offload = gso;
                if dir == Dir::Send {
                    t.chunks = plans[i].clone();
                }
                let o = session::run(tap, t, None)?;
                if !o.intact {
                    return Err(format!("TAP {dir:?} (gso {gso}): the bytes differ"));
                }
                best[i][j] = best[i][j].max(o.gbit_per_s);
            }
        }
        let (ab, ba) = veth.round()?;
        best[2][0] = best[2][0].max(ab);
        best[2][1] = best[2][1].max(ba);
    }
    veth.finish()?;
    let rows: Vec<Row> = [
        "TAP, plain frames",
        "TAP, GSO super-packets",
        "veth, kernel to kernel",
    ]
    .into_iter()
    .zip(best)
    .map(|(path, [to_kernel, from_kernel])| Row {
        path,
        to_kernel,
        from_kernel,
    })
    .collect();
    print(&rows, bytes, json)
}

/// The send model's skbs for a bulk transfer: 2 MiB writes, each transmitted and
/// acknowledged (the model's socket buffer holds 4 MiB), on today's kernel.
fn chunks(bytes: u64, gso: bool) -> Result<Vec<crate::net::tcp::Chunk>, String> {
    let mut text = format!("mechanism = \"sendmsg\"\n[device]\ngso = {gso}\n");
    let mut left = bytes;
    while left > 0 {
        let n = left.min(2 << 20);
        text.push_str(&format!(
            "[[ops]]\nop = \"sendmsg\"\nbytes = {n}\n[[ops]]\nop = \"transmit\"\n\
             [[ops]]\nop = \"ack\"\n"
        ));
        left -= n;
    }
    let sc = skblab_core::Scenario::parse(&text).map_err(|e| e.to_string())?;
    let skblab_core::Scenario::Sendmsg(s) = sc else {
        return Err("the bench builds a sendmsg scenario".into());
    };
    let today = skblab_core::send::Variant::TODAY.name();
    Ok(super::plan::send_plan(&s, Some(today))?.chunks)
}

/// A veth pair to a second private namespace, whose end a helper thread serves: per round it
/// reads one connection to its end (hashing, as the TAP's kernel reader does) and writes the
/// payload to another.
struct Veth {
    payload: Arc<Vec<u8>>,
    peer: std::thread::JoinHandle<Result<(), String>>,
    stop: mpsc::Sender<bool>,
}

impl Veth {
    fn new(payload: Arc<Vec<u8>>) -> Result<Veth, String> {
        let (tid_tx, tid_rx) = mpsc::channel();
        let (go_tx, go_rx) = mpsc::channel::<bool>();
        let (ready_tx, ready_rx) = mpsc::channel();
        let data = payload.clone();
        let peer = std::thread::spawn(move || -> Result<(), String> {
            // SAFETY: unshare on this thread only; it moves just this thread.
            if unsafe { libc::unshare(libc::CLONE_NEWNET) } != 0 {
                return Err(format!("unshare: {}", std::io::Error::last_os_error()));
            }
            // SAFETY: gettid has no preconditions.
            let _ = tid_tx.send(unsafe { libc::gettid() });
            go_rx.recv().map_err(|e| e.to_string())?;
            netns::link_up("lo")?;
            netns::set_addr_mask(VETH_B, IP_B, MASK_25)?;
            netns::link_up(VETH_B)?;
            let l = TcpListener::bind((IP_B, VETH_PORT)).map_err(|e| format!("veth bind: {e}"))?;
            let _ = ready_tx.send(());
            while go_rx.recv() == Ok(true) {
                let (mut s, _) = l.accept().map_err(|e| e.to_string())?;
                socket::read_hashing(&mut s, None)?;
                drop(s);
                let (mut s, _) = l.accept().map_err(|e| e.to_string())?;
                s.write_all(&data).map_err(|e| e.to_string())?;
                s.shutdown(Shutdown::Write).map_err(|e| e.to_string())?;
            }
            Ok(())
        });
        let tid = tid_rx
            .recv()
            .map_err(|_| "the veth peer thread failed to start".to_string())?;
        let out = Command::new("ip")
            .args([
                "link", "add", VETH_A, "type", "veth", "peer", "name", VETH_B,
            ])
            .args(["netns", &tid.to_string()])
            .output()
            .map_err(|e| format!("running `ip` (iproute2) to create the veth pair: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "ip link add veth: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        netns::set_addr_mask(VETH_A, IP_A, MASK_25)?;
        netns::link_up(VETH_A)?;
        let _ = go_tx.send(true);
        ready_rx
            .recv()
            .map_err(|_| "the veth peer thread failed to set up".to_string())?;
        Ok(Veth {
            payload,
            peer,
            stop: go_tx,
        })
    }

    /// One round: A -> B, then B -> A (Gbit/s each).
    fn round(&self) -> Result<(f64, f64), String> {
        let _ = self.stop.send(true);
        let n = self.payload.len() as f64 * 8.0;
        let start = Instant::now();
        let mut s = connect()?;
        s.write_all(&self.payload).map_err(|e| e.to_string())?;
        s.shutdown(Shutdown::Write).map_err(|e| e.to_string())?;
        let _ = s.read(&mut [0u8; 16]);
        let ab = n / start.elapsed().as_secs_f64() / 1e9;
        let start = Instant::now();
        let mut s = connect()?;
        let mut got = Vec::with_capacity(self.payload.len());
        s.read_to_end(&mut got).map_err(|e| e.to_string())?;
        let ba = n / start.elapsed().as_secs_f64() / 1e9;
        if got != **self.payload {
            return Err("veth: the bytes differ".into());
        }
        Ok((ab, ba))
    }

    fn finish(self) -> Result<(), String> {
        let _ = self.stop.send(false);
        self.peer
            .join()
            .map_err(|_| "the veth peer thread panicked".to_string())?
    }
}

fn connect() -> Result<TcpStream, String> {
    TcpStream::connect_timeout(&(IP_B, VETH_PORT).into(), Duration::from_secs(5))
        .map_err(|e| format!("veth connect: {e}"))
}

fn print(rows: &[Row], bytes: u64, json: bool) -> Result<(), String> {
    let veth = rows.last().expect("veth row");
    if json {
        let v = serde_json::json!({ "bytes": bytes, "gbit_per_s": rows });
        return session::print(&format!("{v:#}\n"));
    }
    let ratio = |x: f64, v: f64| if v > 0.0 { x / v } else { 0.0 };
    let mut t = format!(
        "tap bench: {} bytes each way, Gbit/s (ratio to veth)\n  {:<26} {:>18} {:>18}\n",
        super::report::thousands(bytes),
        "",
        "to kernel",
        "from kernel"
    );
    for r in rows {
        t.push_str(&format!(
            "  {:<26} {:>8.2} ({:>4.2}x) {:>10.2} ({:>4.2}x)\n",
            r.path,
            r.to_kernel,
            ratio(r.to_kernel, veth.to_kernel),
            r.from_kernel,
            ratio(r.from_kernel, veth.from_kernel)
        ));
    }
    session::print(&t)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The documented maximum plans without tracing (no trace cap applies): 128 writes of
    /// 2 MiB, each cut into size-goal skbs of 45 x 1448 = 65,160 bytes.
    #[test]
    fn the_largest_bench_transfer_plans_every_byte() {
        let bytes = super::super::MAX_BYTES;
        let c = chunks(bytes, true).unwrap();
        assert_eq!(c.last().map(|c| c.end), Some(bytes));
        // 2 MiB = 32 x 65,160 + 12,032: 33 skbs per write.
        assert_eq!(c.len() as u64, 33 * (bytes >> 21));
    }
}

//! Seed 003 on the running kernel: MPTCP kernel to kernel over `lo`, the DSS mappings traced
//! at `mptcp:mptcp_sendmsg_frag`, beside the MPTCP model's subflow queue (`abeni-2020`, which
//! every kernel since 5.11 has).
//!
//! The model's subflow "does not drain": its skbs wait, and the tail keeps growing. On the
//! kernel the same holds with TCP_CORK on the MPTCP socket (`tcp_push` with
//! TCP_NAGLE_CORK leaves a tail shorter than the MSS on the queue), while a full skb (one
//! loopback MSS) goes out whole and is final. A warm-up transfer that the peer reads first
//! opens the peer's window (`tp->max_window`), which otherwise halves mss_now on a fresh
//! connection (`tcp_sync_mss` -> `tcp_bound_to_half_wnd`). The writes then come from a new
//! thread, whose page frag (`current->task_frag`) starts empty, as the model's does.
//!
//! `mptcp_sendmsg_frag` fires its tracepoint after every call with the mapping of the skb it
//! wrote into, so each mapping's last sighting is its final form.

use super::send::{self, Write};
use super::verdict::{Side, SkbView};
use skblab_core::mechanism::Mechanism;
use skblab_core::mptcp::push::Scheduler;
use skblab_core::mptcp::{MptcpOp, MptcpScenario};
use skblab_core::RunOptions;
use std::collections::HashMap;
use std::io::{Read, Write as _};
use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// IPPROTO_MPTCP (include/uapi/linux/in.h).
const IPPROTO_MPTCP: i32 = 262;
const PORT: u16 = 5002;
/// What the peer reads before the writes: enough for its window to open past 2 x 64 KiB.
pub const WARM_UP: usize = 8 << 20;

/// The writes the kernel run drives and the ops after them it leaves out.
pub fn plan(sc: &MptcpScenario) -> Result<(Vec<Write>, Vec<String>), String> {
    if sc.subflows.len() != 1 || sc.scheduler != Scheduler::First {
        return Err(
            "subflows: the kernel run has one subflow over lo (scheduler \"first\")".into(),
        );
    }
    if sc.drain {
        return Err(
            "drain = true: the kernel run holds the subflow's tail (TCP_CORK); \
                    set drain = false"
                .into(),
        );
    }
    if sc.subflows[0].max_window != 0 {
        return Err("subflows[0].max_window: the kernel run opens the window wide (0)".into());
    }
    let (mut writes, mut not_driven) = (Vec::new(), Vec::new());
    for (i, op) in sc.ops.iter().enumerate() {
        match op {
            MptcpOp::Sendmsg { bytes, count } => {
                if let Some(first) = not_driven.first() {
                    return Err(format!(
                        "ops[{i}]: a write after {first}: the kernel run compares the mappings \
                         its writes build, with nothing acknowledged between them"
                    ));
                }
                writes.push(Write {
                    iov: vec![*bytes as u32],
                    eor: false,
                    count: *count,
                });
            }
            MptcpOp::Transmit { .. } => not_driven.push(format!("ops[{i}] (transmit)")),
            MptcpOp::Ack => not_driven.push(format!("ops[{i}] (ack)")),
            MptcpOp::Close => not_driven.push(format!("ops[{i}] (close)")),
        }
    }
    if writes.iter().map(|w| w.count).sum::<u64>() > send::MAX_CALLS {
        return Err(format!(
            "ops: the kernel run makes at most {} sendmsg calls in all",
            send::MAX_CALLS
        ));
    }
    Ok((writes, not_driven))
}

/// The model's subflow 0 after the writes: one skb per DSS mapping, sequence numbers counted
/// from its first mapping's (as the kernel's are).
pub fn model(sc: &MptcpScenario, variant: &str, writes: usize) -> Result<Side, String> {
    let mut sc = sc.clone();
    sc.ops.truncate(writes);
    let opts = RunOptions {
        variant: Some(variant.to_string()),
        counters_only: false,
    };
    let t = sc.run(&opts).map_err(|e| e.to_string())?;
    let st = &t.steps.last().ok_or("the scenario has no writes")?.state;
    let q = st
        .queues
        .iter()
        .find(|q| q.name == "subflow 0")
        .ok_or("model bug: no subflow 0 queue")?;
    let maps = q
        .skbs
        .iter()
        .map(|s| {
            s.mapping
                .ok_or("model bug: a subflow skb without a mapping")
        })
        .collect::<Result<Vec<_>, _>>()?;
    let Some(first) = maps.first().copied() else {
        return Ok(Side::default());
    };
    let skbs = maps
        .iter()
        .map(|m| {
            mapping_view(
                m.data_seq - first.data_seq,
                m.subflow_seq.wrapping_sub(first.subflow_seq) as u64,
                m.data_len as u64,
            )
        })
        .collect();
    Ok(Side {
        size_goals: Vec::new(),
        skbs,
    })
}

fn mapping_view(data_seq: u64, subflow_seq: u64, data_len: u64) -> SkbView {
    SkbView {
        len: data_len,
        data_seq: Some(data_seq),
        subflow_seq: Some(subflow_seq),
        data_len: Some(data_len),
        ..SkbView::default()
    }
}

/// The probe: every mapping mptcp_sendmsg_frag leaves (time, data_seq, subflow_seq, data_len).
/// Not filtered on this process: the kernel also pushes from MPTCP's delegated actions in
/// softirq context and from its worker, whatever task is current. This namespace's
/// connection is then the only one traced unless another MPTCP sender runs on the machine
/// at the same time (its mappings would show as extra skbs: a "differ", never an "agree").
pub fn script() -> String {
    let map = r#"tracepoint:mptcp:mptcp_sendmsg_frag {
  printf("map %llu %llu %u %u\n", nsecs, args->data_seq, args->subflow_seq, args->data_len);
}
"#;
    format!("{map}{}", super::probe::END_PROBE)
}

pub const TRACEPOINTS: &[&str] = &["mptcp/mptcp_sendmsg_frag", "syscalls/sys_enter_getppid"];

/// The kernel's mappings from the probe's lines, in the order they began, each at its last
/// sighting; sequence numbers counted from the first mapping's, as the model's are.
pub fn kernel_side(lines: &[String]) -> Result<Side, String> {
    let mut maps = Vec::new();
    for l in lines {
        let f: Vec<u64> = l
            .strip_prefix("map ")
            .ok_or_else(|| format!("unexpected probe line: {l}"))?
            .split_whitespace()
            .map(str::parse)
            .collect::<Result<_, _>>()
            .map_err(|e| format!("probe line {l:?}: {e}"))?;
        let [ns, data_seq, subflow_seq, data_len] = f[..] else {
            return Err(format!("probe line {l:?}: expected 4 numbers"));
        };
        maps.push((ns, data_seq, subflow_seq as u32, data_len));
    }
    maps.sort_by_key(|m| m.0);
    let Some(&(_, d0, s0, _)) = maps.first() else {
        return Ok(Side::default());
    };
    let mut side = Side::default();
    let mut at: HashMap<(u64, u32), usize> = HashMap::new();
    for &(_, d, s, len) in &maps {
        let view = mapping_view(d.wrapping_sub(d0), s.wrapping_sub(s0) as u64, len);
        let i = *at.entry((d, s)).or_insert_with(|| {
            side.skbs.push(view);
            side.skbs.len() - 1
        });
        side.skbs[i] = view;
    }
    Ok(side)
}

fn os_err(what: &str) -> String {
    format!("{what}: {}", std::io::Error::last_os_error())
}

fn sockaddr(port: u16) -> libc::sockaddr_in {
    libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: port.to_be(),
        sin_addr: libc::in_addr {
            s_addr: u32::from(Ipv4Addr::LOCALHOST).to_be(),
        },
        sin_zero: [0; 8],
    }
}

fn mptcp_socket() -> Result<OwnedFd, String> {
    // SAFETY: plain socket(2).
    let fd = unsafe {
        libc::socket(
            libc::AF_INET,
            libc::SOCK_STREAM | libc::SOCK_CLOEXEC,
            IPPROTO_MPTCP,
        )
    };
    if fd < 0 {
        return Err(os_err(
            "socket(AF_INET, SOCK_STREAM, IPPROTO_MPTCP) (CONFIG_MPTCP, net.mptcp.enabled = 1)",
        ));
    }
    // SAFETY: a fresh descriptor we own.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// An MPTCP connection over lo: (the writer's end, the peer's end).
fn connect() -> Result<(TcpStream, TcpStream), String> {
    let l = mptcp_socket()?;
    let a = sockaddr(PORT);
    let len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
    // SAFETY: a valid sockaddr_in and its length, on our own descriptors.
    unsafe {
        if libc::bind(l.as_raw_fd(), (&a as *const libc::sockaddr_in).cast(), len) != 0 {
            return Err(os_err("bind 127.0.0.1 (MPTCP)"));
        }
        if libc::listen(l.as_raw_fd(), 1) != 0 {
            return Err(os_err("listen (MPTCP)"));
        }
    }
    let listener = TcpListener::from(l);
    let c = mptcp_socket()?;
    // SAFETY: as above.
    if unsafe { libc::connect(c.as_raw_fd(), (&a as *const libc::sockaddr_in).cast(), len) } != 0 {
        return Err(os_err("connect 127.0.0.1 (MPTCP)"));
    }
    let (peer, _) = listener
        .accept()
        .map_err(|e| format!("MPTCP accept: {e}"))?;
    Ok((TcpStream::from(c), peer))
}

/// The peer reads WARM_UP bytes that another thread writes, so its window opens.
fn warm_up(w: &TcpStream, r: &TcpStream) -> Result<(), String> {
    let (mut w, mut r) = (
        w.try_clone().map_err(|e| e.to_string())?,
        r.try_clone().map_err(|e| e.to_string())?,
    );
    let reader = std::thread::spawn(move || -> std::io::Result<()> {
        let mut buf = vec![0u8; 1 << 16];
        let mut left = WARM_UP;
        while left > 0 {
            let n = r.read(&mut buf)?;
            if n == 0 {
                break;
            }
            left = left.saturating_sub(n);
        }
        Ok(())
    });
    let writer = std::thread::spawn(move || w.write_all(&vec![0u8; WARM_UP]));
    let joined = |h: std::thread::JoinHandle<std::io::Result<()>>| {
        h.join()
            .map_err(|_| "a warm-up thread panicked".to_string())?
            .map_err(|e| format!("the warm-up transfer: {e}"))
    };
    joined(writer)?;
    joined(reader)
}

/// Waits until every byte written is mapped onto the subflow: the msk's SIOCOUTQNSD (bytes
/// not yet sent at the MPTCP level) falls to 0, as pushes may finish after sendmsg returns.
fn wait_all_mapped(w: &TcpStream) -> Result<(), String> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let mut unsent: libc::c_int = 0;
        // SAFETY: SIOCOUTQNSD writes one int.
        if unsafe { libc::ioctl(w.as_raw_fd(), libc::SIOCOUTQNSD, &mut unsent) } != 0 {
            return Err(os_err("SIOCOUTQNSD on the MPTCP socket"));
        }
        if unsent == 0 {
            return Ok(());
        }
        if std::time::Instant::now() > deadline {
            return Err(format!(
                "{unsent} bytes were still not pushed to the subflow after 10 s"
            ));
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// Sets lo up, connects, warms up, corks, and runs the writes under `tracer`'s probes.
/// Returns the probe's lines (the sockets close after the trace ends).
pub fn run_kernel(mtu: u32, writes: Vec<Write>) -> Result<Vec<String>, String> {
    crate::tap::netns::set_mtu("lo", mtu)?;
    crate::tap::netns::link_up("lo")?;
    let (w, peer) = connect()?;
    warm_up(&w, &peer)?;
    // Let the warm-up's acknowledgements land: its skbs leave the queue.
    std::thread::sleep(std::time::Duration::from_millis(100));
    send::setsockopt(&w, libc::IPPROTO_TCP, libc::TCP_CORK, 1)
        .map_err(|e| format!("TCP_CORK on the MPTCP socket: {e}"))?;
    let tracer = super::probe::Tracer::start(&script())?;
    let plan = send::Plan {
        writes,
        not_driven: Vec::new(),
    };
    let w = send::write_all(w, plan, false)?;
    wait_all_mapped(&w)?;
    let lines = tracer.finish()?;
    drop((w, peer));
    Ok(lines)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scenario(text: &str) -> MptcpScenario {
        match skblab_core::Scenario::parse(text).unwrap() {
            skblab_core::Scenario::Mptcp(s) => s,
            _ => panic!("not an mptcp scenario"),
        }
    }

    #[test]
    fn the_plan_drives_writes_and_refuses_what_lo_cannot_hold() {
        let ok = scenario(
            "mechanism = \"mptcp\"\n[[ops]]\nop = \"sendmsg\"\nbytes = 16384\ncount = 8\n\
             [[ops]]\nop = \"close\"\n",
        );
        let (writes, not_driven) = plan(&ok).unwrap();
        assert_eq!(
            writes,
            [Write {
                iov: vec![16384],
                eor: false,
                count: 8
            }]
        );
        assert_eq!(not_driven, ["ops[1] (close)"]);
        let refused = |text: &str| plan(&scenario(text)).unwrap_err();
        assert!(
            refused("mechanism = \"mptcp\"\ndrain = true\n[[ops]]\nop = \"ack\"\n")
                .starts_with("drain")
        );
        assert!(refused(
            "mechanism = \"mptcp\"\n[[subflows]]\n[[subflows]]\n[[ops]]\nop = \"ack\"\n"
        )
        .starts_with("subflows"));
        assert!(refused(
            "mechanism = \"mptcp\"\n[[ops]]\nop = \"ack\"\n\
             [[ops]]\nop = \"sendmsg\"\nbytes = 1\n"
        )
        .starts_with("ops[1]: a write after ops[0] (ack)"));
    }

    #[test]
    fn mappings_are_folded_and_counted_from_the_first() {
        let lines: Vec<String> = [
            "map 3 1000 4294967290 16384",
            "map 4 1000 4294967290 65459",
            "map 5 66459 65453 77",
            "map 6 66459 65453 16461",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let side = kernel_side(&lines).unwrap();
        let got: Vec<(Option<u64>, Option<u64>, u64)> = side
            .skbs
            .iter()
            .map(|s| (s.data_seq, s.subflow_seq, s.len))
            .collect();
        // The subflow sequence wraps past 2^32 between the two mappings.
        assert_eq!(
            got,
            [(Some(0), Some(0), 65459), (Some(65459), Some(65459), 16461)]
        );
    }
}

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

use super::run::{Ask, KernelRun, Oracle, Seen};
use super::send::{self, Write};
use super::verdict::{too_slow, Inconclusive, RunError, Side, SkbView};
use skblab_core::mechanism::Mechanism;
use skblab_core::mptcp::{MptcpOp, MptcpScenario, Scheduler};
use skblab_core::RunOptions;
use std::collections::HashMap;
use std::io::{Read, Write as _};
use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// IPPROTO_MPTCP (include/uapi/linux/in.h).
const IPPROTO_MPTCP: i32 = 262;
/// The first run's port; a run retried after an untrustworthy trace takes the next.
pub const PORT: u16 = 5002;
/// What the peer reads before the writes: enough for its window to open past 2 x 64 KiB.
pub const WARM_UP: usize = 8 << 20;
/// How long the run waits for the kernel to acknowledge or push (seconds even on a machine
/// busy on every core).
const PATIENCE: std::time::Duration = std::time::Duration::from_secs(10);

/// What to do when the msk's send buffer fills: after the warm-up the peer reads nothing,
/// so every byte written waits in the msk's send buffer (`sk_sndbuf`, autotuned up to
/// net.ipv4.tcp_wmem's maximum) and the peer's receive buffer.
const WHEN_FULL: &str = "the peer reads nothing after the warm-up, so the scenario's sendmsg \
    ops must fit in the msk's send buffer (net.ipv4.tcp_wmem's maximum, 4 MiB by default) and \
    the peer's receive window: write fewer bytes (a few MiB at most)";

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
    let f = sc.subflows[0];
    if f.max_window != 0 {
        return Err("subflows[0].max_window: the kernel run opens the window wide (0)".into());
    }
    if sc.high_order_alloc_disable {
        return Err(send::HIGH_ORDER_ALLOC_DISABLE.replace("{field}", "high_order_alloc_disable"));
    }
    if !f.timestamps {
        return Err(
            "subflows[0].timestamps = false: the kernel run's subflow over lo uses TCP \
                    timestamps (net.ipv4.tcp_timestamps = 1): set it true"
                .into(),
        );
    }
    if let Some(mss) = f.mss {
        return Err(format!(
            "subflows[0].mss = {mss}: the kernel run's mss_now is what lo's MTU gives \
             (tcp_current_mss): leave mss out and set subflows[0].mtu instead"
        ));
    }
    if !f.gso || f.gso_max_size.is_some() {
        return Err(
            "subflows[0].gso / gso_max_size: lo does GSO with its own limit \
                    (gso = true, no gso_max_size)"
                .into(),
        );
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
            _ => not_driven.push(format!("ops[{i}] ({})", op.name())),
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
    let opts = RunOptions::traced(Some(variant));
    let t = sc.run(&opts).map_err(|e| e.to_string())?;
    let sc = skblab_core::Scenario::Mptcp(sc.clone());
    Side::of_model(&sc, &t, writes).map_err(|e| e.to_string())
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
/// softirq context and from its worker, whatever task is current, and the tracepoint's
/// fields name no socket. So the probe prints only mappings in this connection's data
/// sequence range, `$2 << 32 | $3` (the first byte's) and `$4` bytes on (bpftrace's
/// positional numbers are signed 64-bit, hence the halves); others are only counted
/// (`other N` at the end; not atomic across CPUs, shown only), so another busy sender
/// cannot overflow the buffers.
/// [`kernel_side`] checks the range again and judges nothing unless the mappings are whole.
pub fn script() -> String {
    let map = r#"tracepoint:mptcp:mptcp_sendmsg_frag {
  if (args->data_seq - (((uint64)$2 << 32) | (uint64)$3) < (uint64)$4) {
    printf("map %llu %llu %u %u\n", nsecs, args->data_seq, args->subflow_seq, args->data_len);
  } else {
    @other++;
  }
}
END { printf("other %d\n", @other); clear(@other); }
"#;
    format!("{map}{}", super::probe::END_PROBE)
}

/// The probe's arguments for the range `[start, start + total)`.
fn range_args(start: u64, total: u64) -> [u64; 3] {
    [start >> 32, start & 0xffff_ffff, total]
}

pub const TRACEPOINTS: &[&str] = &["mptcp/mptcp_sendmsg_frag", "syscalls/sys_enter_getppid"];

/// The data sequence numbers this run's writes took, `[start, end)`: the msk's
/// `mptcpi_write_seq` (MPTCP_INFO) before and after them. A connection's data sequence
/// starts at a number derived from its random key (`mptcp_crypto_key_sha`), so a mapping in
/// this range is this connection's and a mapping outside it is another's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Written {
    pub start: u64,
    pub end: u64,
}

/// One `map` line.
#[derive(Clone, Copy, Debug)]
struct Map {
    ns: u64,
    data_seq: u64,
    subflow_seq: u32,
    data_len: u64,
}

fn parse_map(l: &str) -> Result<Map, Inconclusive> {
    let bad = |why: String| Inconclusive(format!("probe line {l:?}: {why}"));
    let f: Vec<u64> = l
        .strip_prefix("map ")
        .ok_or_else(|| bad("not a mapping".into()))?
        .split_whitespace()
        .map(str::parse)
        .collect::<Result<_, _>>()
        .map_err(|e: std::num::ParseIntError| bad(e.to_string()))?;
    let [ns, data_seq, subflow_seq, data_len] = f[..] else {
        return Err(bad("expected 4 numbers".into()));
    };
    Ok(Map {
        ns,
        data_seq,
        subflow_seq: subflow_seq as u32,
        data_len,
    })
}

/// This connection's mappings from the probe's lines, each at its last sighting, in data
/// order, counted from the first write's data_seq; and how many sightings belonged to
/// other connections. The probe sees every MPTCP sender on the machine, so a trace is
/// judged only when what must hold does: this connection's mappings start at the first
/// byte written, follow each other without gap or overlap in the data and the subflow
/// sequence space (one subflow), and cover every byte written. Anything else (a mapping
/// missing, a retransmission re-mapping data, a foreign mapping that landed in range) is
/// [`Inconclusive`], never a verdict.
pub fn kernel_side(lines: &[String], w: Written) -> Result<(Side, u64), Inconclusive> {
    let mut other = 0;
    let mut maps = Vec::new();
    for l in lines {
        match l.strip_prefix("other ") {
            Some(n) => other += n.parse::<u64>().unwrap_or(0),
            None => maps.push(parse_map(l)?),
        }
    }
    maps.sort_by_key(|m| m.ns);
    let total = w.end.wrapping_sub(w.start);
    let ours = |m: &Map| m.data_seq.wrapping_sub(w.start) < total;
    let foreign = other + maps.iter().filter(|m| !ours(m)).count() as u64;
    // Each mapping's last sighting is its final form.
    let mut last: Vec<Map> = Vec::new();
    let mut at: HashMap<(u64, u32), usize> = HashMap::new();
    for m in maps.into_iter().filter(ours) {
        let i = *at.entry((m.data_seq, m.subflow_seq)).or_insert_with(|| {
            last.push(m);
            last.len() - 1
        });
        last[i] = m;
    }
    last.sort_by_key(|m| m.data_seq.wrapping_sub(w.start));
    let Some(first) = last.first().copied() else {
        return if total == 0 {
            Ok((Side::default(), foreign))
        } else {
            Err(Inconclusive(format!(
                "no mapping of this connection was traced ({total} bytes written, {foreign} \
                 mappings of other connections)"
            )))
        };
    };
    let (mut data, mut sub) = (w.start, first.subflow_seq);
    let mut side = Side::default();
    for m in &last {
        if m.data_seq != data || m.subflow_seq != sub {
            return Err(Inconclusive(format!(
                "this connection's mappings are not contiguous: one at data_seq +{} \
                 subflow_seq +{} where the previous ended at +{} / +{} (a mapping lost, or \
                 data mapped twice)",
                m.data_seq.wrapping_sub(w.start),
                m.subflow_seq.wrapping_sub(first.subflow_seq),
                data.wrapping_sub(w.start),
                sub.wrapping_sub(first.subflow_seq),
            )));
        }
        side.skbs.push(mapping_view(
            m.data_seq.wrapping_sub(w.start),
            m.subflow_seq.wrapping_sub(first.subflow_seq) as u64,
            m.data_len,
        ));
        data = data.wrapping_add(m.data_len);
        sub = sub.wrapping_add(m.data_len as u32);
    }
    if data != w.end {
        return Err(Inconclusive(format!(
            "this connection's mappings cover {} of the {total} bytes written",
            data.wrapping_sub(w.start)
        )));
    }
    Ok((side, foreign))
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
fn connect(port: u16) -> Result<(TcpStream, TcpStream), String> {
    let l = mptcp_socket()?;
    let a = sockaddr(port);
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

/// What the run waits for on the msk, each an ioctl that counts bytes down to 0
/// (`mptcp_ioctl_outq`, net/mptcp/protocol.c since v5.19: write_seq less the number given).
#[derive(Clone, Copy)]
enum Outq {
    /// SIOCOUTQ (write_seq - snd_una): bytes the peer has not acknowledged at the data level.
    Unacked,
    /// SIOCOUTQNSD (write_seq - snd_nxt): bytes not yet pushed onto a subflow.
    Unmapped,
}

impl Outq {
    fn ioctl(self) -> (libc::Ioctl, &'static str, &'static str) {
        match self {
            // SIOCOUTQ is TIOCOUTQ (include/uapi/linux/sockios.h).
            Outq::Unacked => (libc::TIOCOUTQ, "SIOCOUTQ", "acknowledged by the peer"),
            Outq::Unmapped => (libc::SIOCOUTQNSD, "SIOCOUTQNSD", "pushed to the subflow"),
        }
    }
}

/// Waits until the msk's count `q` falls to 0: the warm-up acknowledged before the writes
/// (its dfrags and skbs gone, its send buffer free), every byte written mapped after them
/// (pushes may finish after sendmsg returns). Both come from softirqs and the MPTCP worker,
/// which a busy machine may run late: past `patience` the run is untrusted ([`too_slow`]),
/// not wrong.
fn wait_outq(w: &TcpStream, q: Outq, patience: std::time::Duration) -> Result<(), RunError> {
    let (req, name, done) = q.ioctl();
    let deadline = std::time::Instant::now() + patience;
    loop {
        let mut left: libc::c_int = 0;
        // SAFETY: SIOCOUTQ and SIOCOUTQNSD write one int.
        if unsafe { libc::ioctl(w.as_raw_fd(), req, &mut left) } != 0 {
            return Err(os_err(&format!("{name} on the MPTCP socket")).into());
        }
        if left == 0 {
            return Ok(());
        }
        if std::time::Instant::now() > deadline {
            return Err(too_slow(&format!(
                "{left} bytes were still not {done} after {patience:?}"
            )));
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// The msk's `mptcpi_write_seq` (getsockopt SOL_MPTCP / MPTCP_INFO,
/// include/uapi/linux/mptcp.h since v5.9): the data sequence number of the next byte written.
fn write_seq(w: &TcpStream) -> Result<u64, String> {
    /// SOL_MPTCP and MPTCP_INFO (include/linux/socket.h, include/uapi/linux/mptcp.h).
    const SOL_MPTCP: i32 = 284;
    const MPTCP_INFO: i32 = 1;
    /// struct mptcp_info: six u8, flags and token (u32), then mptcpi_write_seq (u64).
    const WRITE_SEQ_AT: usize = 16;
    let mut info = [0u8; 128];
    let mut len = info.len() as libc::socklen_t;
    // SAFETY: a valid buffer and its length; the kernel writes at most `len` bytes.
    let r = unsafe {
        libc::getsockopt(
            w.as_raw_fd(),
            SOL_MPTCP,
            MPTCP_INFO,
            info.as_mut_ptr().cast(),
            &mut len,
        )
    };
    if r != 0 {
        return Err(os_err("MPTCP_INFO on the MPTCP socket"));
    }
    if (len as usize) < WRITE_SEQ_AT + 8 {
        return Err(format!(
            "MPTCP_INFO returned {len} bytes, too few for mptcpi_write_seq (the connection fell \
             back to TCP?)"
        ));
    }
    let b: [u8; 8] = info[WRITE_SEQ_AT..WRITE_SEQ_AT + 8]
        .try_into()
        .expect("8 bytes");
    Ok(u64::from_ne_bytes(b))
}

/// Sets lo up, connects (listening on `port`), warms up, corks, and runs the writes under
/// the probe. Returns the probe's lines and the data sequence range the writes took (the
/// sockets close after the trace ends).
pub fn run_kernel(
    mtu: u32,
    writes: Vec<Write>,
    port: u16,
) -> Result<(Vec<String>, Written), RunError> {
    crate::net::netns::set_mtu("lo", mtu)?;
    crate::net::netns::link_up("lo")?;
    let (w, peer) = connect(port)?;
    warm_up(&w, &peer)?;
    // The warm-up's acknowledgements land: its skbs and dfrags leave the queues, and the
    // send buffer the writes need is free. Then a moment for the window updates the peer
    // sent as it read (tcp_cleanup_rbuf), which follow the last data acknowledgement.
    wait_outq(&w, Outq::Unacked, PATIENCE)?;
    std::thread::sleep(std::time::Duration::from_millis(100));
    crate::net::sockopt::setsockopt(&w, libc::IPPROTO_TCP, libc::TCP_CORK, 1)
        .map_err(|e| format!("TCP_CORK on the MPTCP socket: {e}"))?;
    let plan = send::Plan {
        writes,
        not_driven: Vec::new(),
    };
    let total = plan.bytes();
    // Nothing is written between here and the writes: this is the first byte's data_seq.
    let start = write_seq(&w)?;
    let tracer = super::probe::Tracer::start_with(&script(), &range_args(start, total))?;
    let w = send::write_all(w, plan, false, WHEN_FULL)?;
    wait_outq(&w, Outq::Unmapped, PATIENCE)?;
    let end = write_seq(&w)?;
    let lines = tracer.finish()?;
    drop((w, peer));
    if end.wrapping_sub(start) != total {
        return Err(format!(
            "model bug: the msk's write_seq moved by {} for {total} bytes written",
            end.wrapping_sub(start)
        )
        .into());
    }
    Ok((lines, Written { start, end }))
}

/// Seed 003's oracle run: MPTCP over lo, corked.
pub struct Mptcp {
    variant: String,
    mtu: u32,
    writes: Vec<Write>,
    not_driven: Vec<String>,
    model: Side,
}

impl KernelRun for Mptcp {
    type Ask = Ask<MptcpScenario>;
    type Seen = Seen;

    fn plan(ask: Ask<MptcpScenario>) -> Result<Mptcp, String> {
        let (writes, not_driven) = plan(&ask.sc)?;
        let model = model(&ask.sc, &ask.variant, writes.len())?;
        Ok(Mptcp {
            variant: ask.variant,
            mtu: ask.sc.subflows[0].mtu,
            writes,
            not_driven,
            model,
        })
    }

    fn tracepoints(&self) -> Vec<&'static str> {
        TRACEPOINTS.to_vec()
    }

    fn script(&self) -> String {
        script()
    }

    fn once(&self, n: u16) -> Result<Seen, RunError> {
        let (lines, written) = run_kernel(self.mtu, self.writes.clone(), PORT + n)?;
        let (side, foreign) = kernel_side(&lines, written)?;
        let setup = serde_json::json!({
            "path": "lo, MPTCP to MPTCP",
            "mtu": self.mtu,
            "warm_up_bytes": WARM_UP,
            "tail": "held by TCP_CORK",
            "mappings": "this connection's (its data_seq range, MPTCP_INFO write_seq), whole \
                and contiguous",
            "other_connections_sightings_left_out": foreign,
        });
        Ok(Seen::new(side, setup))
    }
}

impl Oracle for Mptcp {
    const MECHANISM: &'static str = MptcpScenario::NAME;

    fn variant(&self) -> &str {
        &self.variant
    }

    fn model(&self) -> Side {
        self.model.clone()
    }

    fn not_driven(&self) -> Vec<String> {
        self.not_driven.clone()
    }
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

    /// A push or an acknowledgement that does not come in time makes the run untrusted, not
    /// an error: bytes held unsent (TCP_CORK, less than an MSS) on a TCP socket over lo, whose
    /// SIOCOUTQNSD and SIOCOUTQ count as the msk's do.
    #[test]
    fn a_push_that_does_not_finish_is_too_slow_not_a_fault() {
        let l = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
        let mut w = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let _peer = l.accept().unwrap();
        crate::net::sockopt::setsockopt(&w, libc::IPPROTO_TCP, libc::TCP_CORK, 1).unwrap();
        w.write_all(&[7; 100]).unwrap();
        let short = std::time::Duration::from_millis(30);
        for (q, what) in [(Outq::Unmapped, "pushed"), (Outq::Unacked, "acknowledged")] {
            let e = wait_outq(&w, q, short).unwrap_err();
            let RunError::Untrusted(Inconclusive(e)) = e else {
                panic!("{e:?}")
            };
            assert!(
                e.contains(&format!("100 bytes were still not {what}")),
                "{e}"
            );
        }
        // Uncorked, the bytes go out and lo acknowledges them.
        crate::net::sockopt::setsockopt(&w, libc::IPPROTO_TCP, libc::TCP_CORK, 0).unwrap();
        wait_outq(&w, Outq::Unacked, PATIENCE).unwrap();
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

    fn lines(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    /// This connection wrote 65459 + 16461 bytes from data_seq 1000.
    const W: Written = Written {
        start: 1000,
        end: 1000 + 65459 + 16461,
    };

    #[test]
    fn mappings_are_folded_and_counted_from_the_first_write() {
        let (side, foreign) = kernel_side(
            &lines(&[
                "map 3 1000 4294967290 16384",
                "map 4 1000 4294967290 65459",
                // Another connection's, interleaved: left out.
                "map 5 987654321 77 10346",
                "map 6 66459 65453 77",
                "map 7 66459 65453 16461",
                // The warm-up's data, remapped (a retransmission): before the range.
                "map 8 999 4294967289 1",
                // What the probe counted and did not print.
                "other 5",
            ]),
            W,
        )
        .unwrap();
        assert_eq!(foreign, 7);
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

    #[test]
    fn a_trace_that_is_not_whole_is_inconclusive() {
        let why = |v: &[&str]| kernel_side(&lines(v), W).unwrap_err().0;
        // The tail's mapping missing: the bytes do not add up.
        assert!(why(&["map 1 1000 5 65459"]).contains("cover 65459 of the 81920 bytes"));
        // A gap: the first mapping missing.
        assert!(why(&["map 1 66459 65464 16461"]).contains("not contiguous"));
        // Data mapped twice (a re-injection at another subflow sequence).
        assert!(why(&[
            "map 1 1000 5 65459",
            "map 2 1000 70000 65459",
            "map 3 66459 65464 16461"
        ])
        .contains("not contiguous"));
        // Nothing of this connection at all.
        assert!(why(&["map 1 5 5 5"]).contains("no mapping of this connection"));
        assert!(why(&["map 1 x"]).contains("probe line"));
    }
}

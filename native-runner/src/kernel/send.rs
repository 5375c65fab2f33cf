//! Seed 000 on the running kernel: the scenario's writes on a kernel TCP socket whose peer
//! window is closed (the model's held queue), traced at `tcp:tcp_sendmsg_locked`, beside the
//! send model's write queue.
//!
//! `tcp_sendmsg_locked` (net/ipv4/tcp.c) fires its tracepoint at the top of every pass of
//! its copy loop with the write queue's tail skb, before that pass copies anything. So each
//! skb is seen in its final form on the pass that moves on to the next skb (the tail is full,
//! EOR, or out of frag slots), and the last one on the first pass of one more write of a
//! single byte, sent after the scenario's writes for that purpose alone.

use super::peer;
use super::probe::{Tracer, END_PROBE};
use super::run::{Ask, KernelRun, Oracle, Seen};
use super::verdict::{Inconclusive, RunError, Side, SkbView};
use crate::net::link::WSCALE;
use crate::net::netns::{self, Tap};
use skblab_core::consts::wire::mss_option;
use skblab_core::consts::wire::{IPV4_HLEN, TCP_HLEN, TCP_TS_HLEN};
use skblab_core::mechanism::{Mechanism, RunOptions};
use skblab_core::send::{iov_lengths, SendOp, SendScenario, Variant};
use skblab_core::size_goal::bound_to_half_wnd;
use std::collections::HashMap;
use std::net::{TcpListener, TcpStream};
use std::os::fd::AsRawFd;

/// Enough for the seed's cases (a 1 MiB write is one call); bpftrace's buffers keep up.
pub(super) const MAX_CALLS: u64 = 10_000;

/// What to do when the kernel's send buffer fills on a held queue.
pub const WHEN_FULL: &str = "raise socket.sndbuf (the kernel run sets it with SO_SNDBUFFORCE), \
    or write fewer bytes";

/// One sendmsg call as the scenario asks it, `count` times.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Write {
    pub iov: Vec<u32>,
    pub eor: bool,
    pub count: u64,
}

/// What the kernel run does: the scenario's writes, and the ops after them that it leaves
/// out (the comparison is of the held queue after the last write).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    pub writes: Vec<Write>,
    pub not_driven: Vec<String>,
}

impl Plan {
    /// Every byte the writes send.
    pub fn bytes(&self) -> u64 {
        self.writes
            .iter()
            .map(|w| w.count * w.iov.iter().map(|&l| u64::from(l)).sum::<u64>())
            .sum()
    }
}

/// The writes of a scenario the kernel run can drive, or an error naming the field it cannot.
pub fn plan(sc: &SendScenario) -> Result<Plan, String> {
    if sc.device.drain {
        return Err(
            "device.drain = true: the kernel run holds the queue (its peer's window is \
                    closed); set device.drain = false"
                .into(),
        );
    }
    settings_applied(sc)?;
    if sc.socket.net_header_len != IPV4_HLEN {
        return Err("socket.net_header_len: the kernel run is IPv4 (20)".into());
    }
    if ![TCP_HLEN, TCP_TS_HLEN].contains(&sc.socket.tcp_header_len) {
        return Err(
            "socket.tcp_header_len: the kernel run offers timestamps (32) or not \
                    (20), nothing else"
                .into(),
        );
    }
    let (mut writes, mut not_driven, mut calls) = (Vec::new(), Vec::new(), 0u64);
    for (i, op) in sc.ops.iter().enumerate() {
        match op {
            SendOp::Sendmsg {
                bytes,
                iov,
                eor,
                count,
            } => {
                if let Some(first) = not_driven.first() {
                    return Err(format!(
                        "ops[{i}]: a write after {first}: the kernel run compares the queue \
                         its writes build, with nothing sent or acknowledged between them"
                    ));
                }
                calls += count;
                if calls > MAX_CALLS {
                    return Err(format!(
                        "ops[{i}].count: the kernel run makes at most {MAX_CALLS} sendmsg \
                         calls in all"
                    ));
                }
                writes.push(Write {
                    iov: iov_lengths(*bytes, iov.as_deref()),
                    eor: *eor,
                    count: *count,
                });
            }
            other => not_driven.push(format!("ops[{i}] ({})", other.name())),
        }
    }
    Ok(Plan { writes, not_driven })
}

/// The settings the kernel run cannot give the kernel, refused by name before any set-up (a
/// setting the kernel did not get would be judged against the model anyway).
fn settings_applied(sc: &SendScenario) -> Result<(), String> {
    use crate::net::netns::{TAP_MAX_MTU, TAP_MIN_MTU};
    let (s, d) = (sc.socket, sc.device);
    if d.high_order_alloc_disable {
        return Err(HIGH_ORDER_ALLOC_DISABLE.replace("{field}", "device.high_order_alloc_disable"));
    }
    if !(TAP_MIN_MTU..=TAP_MAX_MTU).contains(&d.mtu) {
        return Err(format!(
            "device.mtu = {}: the kernel run's TAP takes an MTU from {TAP_MIN_MTU} to \
             {TAP_MAX_MTU} (tun's max_mtu: 65535 less the Ethernet header)",
            d.mtu
        ));
    }
    let unit = 1u32 << crate::net::link::WSCALE;
    let widest = 65_535 << crate::net::link::WSCALE;
    if s.max_window % unit != 0 || s.max_window > widest {
        return Err(format!(
            "socket.max_window = {}: the kernel run announces windows in units of {unit} bytes \
             (window scale {}), up to {widest}: give a multiple of {unit}, or 0 (unbounded)",
            s.max_window,
            crate::net::link::WSCALE
        ));
    }
    // tcp_sync_mss bounds mss_now by tcp_bound_to_half_wnd too (net/ipv4/tcp_output.c).
    let bound = bound_to_half_wnd(Variant::TODAY.era(), s.mss, s.max_window, s.tcp_header_len);
    if bound != s.mss {
        return Err(format!(
            "socket.max_window = {}: the kernel bounds mss_now to {bound} (tcp_sync_mss -> \
             tcp_bound_to_half_wnd), not socket.mss = {}: set socket.mss = {bound} or \
             socket.max_window >= {}",
            s.max_window,
            s.mss,
            2 * s.mss
        ));
    }
    Ok(())
}

/// net.core.high_order_alloc_disable is one setting for the whole machine (net_core_table,
/// not per network namespace): the kernel run leaves it alone.
pub(super) const HIGH_ORDER_ALLOC_DISABLE: &str = "{field} = true: \
    net.core.high_order_alloc_disable is one setting for the whole machine, not per network \
    namespace, and the kernel run does not change it: set it false";

/// The variant that stands for the running kernel, unless `--variant` names another.
pub fn variant(flag: Option<&str>) -> Result<Variant, String> {
    flag.map_or(Ok(Variant::TODAY), str::parse)
        .map_err(|e: skblab_core::Error| format!("--variant: {e}"))
}

/// The size goal may depend on MAX_TCP_HEADER, which the kernel's config sets
/// ([`SendScenario::size_goals_by_config`]). The run cannot read the running kernel's value,
/// so where it matters the scenario must name it (`[consts] max_tcp_header`), or it is refused.
fn size_goal_is_config_free(sc: &SendScenario, v: Variant) -> Result<(), String> {
    let Some(goals) = sc.size_goals_by_config(v).map_err(|e| e.to_string())? else {
        return Ok(());
    };
    let each: Vec<String> = goals
        .iter()
        .map(|(h, g)| format!("{h} gives {g}"))
        .collect();
    Err(format!(
        "socket.mss = {}: at this MSS the size goal depends on MAX_TCP_HEADER, which the \
         kernel's config sets and the run cannot read ({}): set [consts] max_tcp_header to the \
         running kernel's (192 on one without CONFIG_WLAN or IP tunnels; docs/kernel-oracle.md)",
        sc.socket.mss,
        each.join(", ")
    ))
}

/// The model's size goal and held write queue after the writes (the scenario's first ops),
/// as the core reads them from its run ([`Side::of_model`]).
pub fn model(sc: &SendScenario, v: Variant, plan: &Plan) -> Result<Side, String> {
    size_goal_is_config_free(sc, v)?;
    let opts = RunOptions::traced(Some(v.name()));
    let t = sc.run(&opts).map_err(|e| format!("the model: {e}"))?;
    let sc = skblab_core::Scenario::Sendmsg(sc.clone());
    Side::of_model(&sc, &t, plan.writes.len()).map_err(|e| format!("the model: {e}"))
}

/// The probe: the tail skb at every pass of the copy loop (time, thread, address, len,
/// data_len, nr_frags, truesize, size_goal). `$skb->head + $skb->end` is skb_shinfo() on 64-bit.
pub fn script() -> String {
    let tail = r#"tracepoint:tcp:tcp_sendmsg_locked /pid == $1/ {
  $skb = (struct sk_buff *)args->skb_addr;
  if ($skb != 0) {
    $sh = (struct skb_shared_info *)($skb->head + $skb->end);
    printf("tail %llu %d %llu %u %u %u %u %d\n", nsecs, tid, args->skb_addr, $skb->len,
           $skb->data_len, $sh->nr_frags, $skb->truesize, args->size_goal);
  } else {
    printf("tail %llu %d 0 0 0 0 0 %d\n", nsecs, tid, args->size_goal);
  }
}
"#;
    format!("{tail}{END_PROBE}")
}

/// The tracepoints the probe needs.
pub const TRACEPOINTS: &[&str] = &["tcp/tcp_sendmsg_locked", "syscalls/sys_enter_getppid"];

/// One `tail` line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Tail {
    ns: u64,
    tid: u64,
    addr: u64,
    skb: SkbView,
    size_goal: u64,
}

fn parse_tail(line: &str) -> Result<Tail, Inconclusive> {
    let bad = |why: String| Inconclusive(format!("probe line {line:?}: {why}"));
    let f: Vec<u64> = line
        .strip_prefix("tail ")
        .ok_or_else(|| bad("not a tail".into()))?
        .split_whitespace()
        .map(|w| w.parse::<u64>())
        .collect::<Result<_, _>>()
        .map_err(|e| bad(e.to_string()))?;
    let [ns, tid, addr, len, data_len, nr_frags, truesize, size_goal] = f[..] else {
        return Err(bad("expected 8 numbers".into()));
    };
    Ok(Tail {
        ns,
        tid,
        addr,
        skb: SkbView {
            len,
            linear: Some(len.saturating_sub(data_len)),
            nr_frags: Some(nr_frags),
            truesize: Some(truesize),
            ..SkbView::default()
        },
        size_goal,
    })
}

/// The kernel's write queue from the probe's lines: each skb's last sighting, skbs in the
/// order they first appeared (nothing is freed while the window is closed, so an address
/// names one skb). Judged only when what must hold does: every line comes from one thread
/// (the writer, whose only socket this is: one flow), and the skbs hold exactly the
/// `written` bytes; else [`Inconclusive`].
pub fn kernel_side(lines: &[String], written: u64) -> Result<Side, Inconclusive> {
    let mut tails = lines
        .iter()
        .map(|l| parse_tail(l))
        .collect::<Result<Vec<_>, _>>()?;
    // Per-CPU buffers reach bpftrace in any order; the timestamps do not.
    tails.sort_by_key(|t| t.ns);
    if let Some(t) = tails.iter().find(|t| t.tid != tails[0].tid) {
        return Err(Inconclusive(format!(
            "the probe saw tcp_sendmsg_locked in threads {} and {}: not one flow",
            tails[0].tid, t.tid
        )));
    }
    let mut side = Side::default();
    let mut at: HashMap<u64, usize> = HashMap::new();
    for t in &tails {
        if !side.size_goals.contains(&t.size_goal) {
            side.size_goals.push(t.size_goal);
        }
        if t.addr == 0 {
            continue;
        }
        let i = *at.entry(t.addr).or_insert_with(|| {
            side.skbs.push(t.skb);
            side.skbs.len() - 1
        });
        side.skbs[i] = t.skb;
    }
    let queued: u64 = side.skbs.iter().map(|s| s.len).sum();
    if queued != written {
        return Err(Inconclusive(format!(
            "the traced skbs hold {queued} bytes, the writes {written}"
        )));
    }
    Ok(side)
}

/// The scenario's writes on `sock` from a thread of their own: a new thread's page frag
/// (`current->task_frag`, which `sk_page_frag` gives a user socket) starts empty, as the
/// model's does. With `probe_byte`, ends with the one-byte write that shows the last skb.
/// A send buffer that fills (EAGAIN, or a short write) fails saying how far the writes got
/// and `when_full`: which setting to change.
pub fn write_all(
    sock: TcpStream,
    plan: Plan,
    probe_byte: bool,
    when_full: &'static str,
) -> Result<TcpStream, String> {
    std::thread::spawn(move || {
        let fd = sock.as_raw_fd();
        let biggest = plan.writes.iter().flat_map(|w| w.iov.iter()).max();
        let buf = vec![0x5au8; biggest.copied().unwrap_or(1).max(1) as usize];
        let mut sent = 0u64;
        let full = |sent: u64| {
            format!(
                "the kernel's send buffer filled after {sent} of the {} bytes written: {when_full}",
                plan.bytes()
            )
        };
        for (n, w) in plan.writes.iter().enumerate() {
            let flags = if w.eor { libc::MSG_EOR } else { 0 };
            for _ in 0..w.count {
                sent += match sendmsg(fd, &buf, &w.iov, flags) {
                    Ok(Sent::All(n)) => n,
                    Ok(Sent::Short(n)) => return Err(full(sent + n)),
                    Err(e) => {
                        return Err(format!(
                            "write {n} of the scenario on the kernel socket: {e}"
                        ))
                    }
                };
            }
        }
        if probe_byte {
            match sendmsg(fd, &buf, &[1], 0) {
                Ok(Sent::All(_)) => {}
                Ok(Sent::Short(_)) => return Err(full(sent)),
                Err(e) => return Err(format!("the final one-byte write: {e}")),
            }
        }
        Ok(sock)
    })
    .join()
    .map_err(|_| "the writer thread panicked".to_string())?
}

/// What one sendmsg took: all of it, or less (the send buffer filled; EAGAIN is 0).
enum Sent {
    All(u64),
    Short(u64),
}

/// One non-blocking sendmsg of the iovecs `iov` (each pointing into `buf`).
fn sendmsg(fd: i32, buf: &[u8], iov: &[u32], flags: i32) -> Result<Sent, String> {
    let mut vecs: Vec<libc::iovec> = iov
        .iter()
        .map(|&l| libc::iovec {
            iov_base: buf.as_ptr() as *mut libc::c_void,
            iov_len: l as usize,
        })
        .collect();
    // SAFETY: msghdr is plain data; zeroed is a valid empty header.
    let mut m: libc::msghdr = unsafe { std::mem::zeroed() };
    m.msg_iov = vecs.as_mut_ptr();
    m.msg_iovlen = vecs.len();
    let want: u64 = iov.iter().map(|&l| u64::from(l)).sum();
    // SAFETY: every iovec points into `buf`, which outlives the call.
    let n = unsafe { libc::sendmsg(fd, &m, flags | libc::MSG_DONTWAIT | libc::MSG_NOSIGNAL) };
    if n < 0 {
        let e = std::io::Error::last_os_error();
        return match e.kind() {
            std::io::ErrorKind::WouldBlock => Ok(Sent::Short(0)),
            _ => Err(e.to_string()),
        };
    }
    Ok(if n as u64 == want {
        Sent::All(want)
    } else {
        Sent::Short(n as u64)
    })
}

/// Sets sk_sndbuf to exactly `bytes` (SO_SNDBUFFORCE stores twice the value given, and
/// locks it against autotuning).
pub fn set_sndbuf(sock: &TcpStream, bytes: u32) -> Result<(), String> {
    crate::net::sockopt::setsockopt(
        sock,
        libc::SOL_SOCKET,
        libc::SO_SNDBUFFORCE,
        (bytes / 2) as i32,
    )
    .map_err(|e| format!("SO_SNDBUFFORCE: {e}"))
}

/// The kernel's mss_now (`tcpi_snd_mss`, tp->mss_cache) on `sock`.
pub fn kernel_mss(sock: &TcpStream) -> Result<u32, String> {
    // SAFETY: tcp_info is plain data; the kernel fills at most `len` bytes.
    let mut info: libc::tcp_info = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::tcp_info>() as libc::socklen_t;
    // SAFETY: a valid buffer and length.
    let r = unsafe {
        libc::getsockopt(
            sock.as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_INFO,
            (&mut info as *mut libc::tcp_info).cast(),
            &mut len,
        )
    };
    if r != 0 {
        return Err(format!("TCP_INFO: {}", std::io::Error::last_os_error()));
    }
    Ok(info.tcpi_snd_mss)
}

/// Reads whatever the kernel put on the TAP since the handshake and fails if any of it
/// carried data: the window was meant to hold every byte.
pub fn check_nothing_sent(tap: &Tap) -> Result<(), String> {
    use crate::net::{vnet, wire};
    let mut buf = vec![0u8; 65_536 + vnet::LEN];
    while let Some(n) = tap.read(&mut buf)? {
        if let wire::Frame::Tcp(t) = wire::parse(&buf[vnet::LEN..n]) {
            if !t.payload.is_empty() {
                return Err(format!(
                    "the kernel sent {} bytes of data although the peer's window was closed: \
                     the held queue was not held",
                    t.payload.len()
                ));
            }
        }
    }
    Ok(())
}

/// The kernel's listening port on the TAP (a run retried takes the next).
const PORT: u16 = 5001;

/// Seed 000's oracle run: the held write queue on the TAP.
pub struct Send {
    sc: SendScenario,
    variant: Variant,
    plan: Plan,
    model: Side,
}

impl KernelRun for Send {
    type Ask = Ask<SendScenario>;
    type Seen = Seen;

    fn plan(ask: Ask<SendScenario>) -> Result<Send, String> {
        let variant = variant(Some(&ask.variant))?;
        let plan = plan(&ask.sc)?;
        let model = model(&ask.sc, variant, &plan)?;
        Ok(Send {
            sc: ask.sc,
            variant,
            plan,
            model,
        })
    }

    fn tracepoints(&self) -> Vec<&'static str> {
        TRACEPOINTS.to_vec()
    }

    fn script(&self) -> String {
        script()
    }

    /// The kernel listens on `PORT + n`; the kernel's mss_now must be the scenario's.
    fn once(&self, n: u16) -> Result<Seen, RunError> {
        let port = PORT + n;
        let tap = netns::Tap::open()?;
        let (s, d) = (self.sc.socket, self.sc.device);
        netns::set_mtu(netns::TAP_NAME, d.mtu)?;
        tap.set_offload(d.gso)?;
        let listener = TcpListener::bind((netns::KERNEL_IP, port))
            .map_err(|e| format!("bind {}:{port} in the namespace: {e}", netns::KERNEL_IP))?;
        let tracer = Tracer::start(&self.script())?;
        peer::open_closed(
            &tap,
            &peer::PeerParams {
                port,
                mss_option: mss_option(s.mss, s.timestamps()) as u16,
                timestamps: s.timestamps(),
                window: window(s.max_window),
            },
        )?;
        let (sock, _) = listener
            .accept()
            .map_err(|e| format!("kernel accept: {e}"))?;
        set_sndbuf(&sock, s.sndbuf)?;
        let mss = kernel_mss(&sock)?;
        if mss != s.mss {
            return Err(format!(
                "the kernel's mss_now is {mss}, the scenario's socket.mss {}: nothing compared",
                s.mss
            )
            .into());
        }
        // Let the zero window land before the first write.
        std::thread::sleep(std::time::Duration::from_millis(50));
        let sock = write_all(sock, self.plan.clone(), true, WHEN_FULL)?;
        let lines = tracer.finish()?;
        check_nothing_sent(&tap)?;
        drop(sock);
        let side = kernel_side(&lines, self.plan.bytes())?;
        let setup = serde_json::json!({
            "path": "TAP",
            "mss": mss,
            "tso": d.gso,
            "mtu": d.mtu,
            "peer_window": format!("{} then 0 (held queue)", window(s.max_window)),
            "sndbuf": s.sndbuf,
        });
        Ok(Seen::new(side, setup))
    }
}

impl Oracle for Send {
    const MECHANISM: &'static str = SendScenario::NAME;

    fn variant(&self) -> &str {
        self.variant.name()
    }

    fn model(&self) -> Side {
        self.model.clone()
    }

    fn not_driven(&self) -> Vec<String> {
        self.plan.not_driven.clone()
    }
}

/// The window the runner announces before closing it: the scenario's max_window, or for 0
/// (unbounded) the widest a 16-bit field scaled by 2^[`WSCALE`] carries.
fn window(max_window: u32) -> u32 {
    if max_window == 0 {
        65_535 << WSCALE
    } else {
        max_window.min(65_535 << WSCALE) >> WSCALE << WSCALE
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn each_skb_is_its_last_sighting_in_time_order() {
        // Out of time order, as per-CPU buffers may deliver them.
        let side = kernel_side(
            &lines(&[
                "tail 30 7 200 100 100 1 1000 65160",
                "tail 10 7 0 0 0 0 0 65160",
                "tail 20 7 100 65160 65160 2 66000 65160",
                "tail 15 7 100 32768 32768 1 33000 65160",
            ]),
            65260,
        )
        .unwrap();
        assert_eq!(side.size_goals, [65160]);
        let got: Vec<(u64, u64, u64)> = side
            .skbs
            .iter()
            .map(|s| (s.len, s.linear.unwrap(), s.nr_frags.unwrap()))
            .collect();
        assert_eq!(got, [(65160, 0, 2), (100, 0, 1)]);
    }

    #[test]
    fn a_trace_that_is_not_whole_is_inconclusive() {
        let why = |v: &[&str], written| kernel_side(&lines(v), written).unwrap_err().0;
        assert!(why(&["tail 1 2 3"], 0).contains("expected 8 numbers"));
        assert!(why(&["what 1 2 3 4 5 6 7 8"], 0).contains("not a tail"));
        // Bytes missing: the last skb was never seen in its final form.
        let short = why(&["tail 1 7 100 1000 1000 1 2000 65160"], 4096);
        assert!(
            short.contains("hold 1000 bytes, the writes 4096"),
            "{short}"
        );
        // Another thread's sendmsg: another flow.
        let two = why(
            &[
                "tail 1 7 100 1000 1000 1 2000 65160",
                "tail 2 8 200 1000 1000 1 2000 65160",
            ],
            2000,
        );
        assert!(two.contains("threads 7 and 8"), "{two}");
    }

    fn scenario(text: &str) -> SendScenario {
        match skblab_core::Scenario::parse(text).unwrap() {
            skblab_core::Scenario::Sendmsg(s) => s,
            _ => panic!("not a send scenario"),
        }
    }

    #[test]
    fn the_plan_drives_writes_and_leaves_out_trailing_ops() {
        let sc = scenario(
            "mechanism = \"sendmsg\"\n[[ops]]\nop = \"sendmsg\"\nbytes = 100\ncount = 3\n\
             [[ops]]\nop = \"sendmsg\"\niov = [1, 2]\neor = true\n[[ops]]\nop = \"transmit\"\n",
        );
        let p = plan(&sc).unwrap();
        assert_eq!(
            p.writes,
            [
                Write {
                    iov: vec![100],
                    eor: false,
                    count: 3
                },
                Write {
                    iov: vec![1, 2],
                    eor: true,
                    count: 1
                },
            ]
        );
        assert_eq!(p.not_driven, ["ops[2] (transmit)"]);
    }

    #[test]
    fn the_model_holds_what_the_writes_queued_and_runs_nothing_after() {
        let sc = scenario(
            "mechanism = \"sendmsg\"\n[[ops]]\nop = \"sendmsg\"\nbytes = 140000\n\
             [[ops]]\nop = \"transmit\"\n[[ops]]\nop = \"ack\"\n",
        );
        let side = model(&sc, Variant::TODAY, &plan(&sc).unwrap()).unwrap();
        assert_eq!(side.size_goals, [65_160]);
        let lens: Vec<u64> = side.skbs.iter().map(|s| s.len).collect();
        assert_eq!(lens, [65_160, 65_160, 9_680]);
        let none = scenario("mechanism = \"sendmsg\"\n[[ops]]\nop = \"transmit\"\n");
        let side = model(&none, Variant::TODAY, &plan(&none).unwrap()).unwrap();
        assert!(side.skbs.is_empty());
    }

    #[test]
    fn the_plan_refuses_what_the_kernel_run_cannot_hold() {
        let after = scenario(
            "mechanism = \"sendmsg\"\n[[ops]]\nop = \"transmit\"\n\
             [[ops]]\nop = \"sendmsg\"\nbytes = 1\n",
        );
        assert!(plan(&after)
            .unwrap_err()
            .starts_with("ops[1]: a write after ops[0]"));
        let drain = scenario(
            "mechanism = \"sendmsg\"\n[device]\ndrain = true\n[[ops]]\nop = \"sendmsg\"\nbytes = 1\n",
        );
        assert!(plan(&drain).unwrap_err().starts_with("device.drain"));
    }
}

//! Seeds 002 and 001 on the running kernel: an `rx` scenario's skbs delivered to a kernel TCP
//! socket through the TAP on CPU 0, read by a thread on CPU 1, and where each consumed skb
//! is freed, beside the model's `defer-free` (v6.12; the running 6.18 has the same rule).
//!
//! **Where the skbs come from.** One TAP write per skb the model's GRO hands the socket: a
//! TCPv4 GSO super-packet (`gso_size` = `socket.mss`) of that skb's payload, or a plain
//! frame for a one-segment skb. `tun_get_user` (drivers/net/tun.c, v6.x) allocates the skb
//! in the writing thread, pinned to CPU 0 (so `skb->alloc_cpu` = 0), and, with no NAPI on the
//! TAP, `tun_rx_batched` hands it to `netif_receive_skb` there, BH off: `tcp_v4_rcv` runs on
//! CPU 0 before the write returns. The TAP's `sk_sndbuf` is set below INT_MAX so
//! `tun_can_build_skb` says no and every skb has a kmalloc'd head of `hdr_len` bytes, the
//! headers and one payload byte: a head that is not a page frag cannot be stolen, so
//! `tcp_try_coalesce` (`skb_try_coalesce`, `skb_head_is_locked`) never merges two of them on
//! the receive queue, which the model does not model either.
//!
//! **Where they are freed.** The reader (pinned to `app.cpu`, 1 by default) reads exactly what each `recvmsg`
//! op reads in the model. `tcp_recvmsg_locked` -> `tcp_eat_recv_skb` ->
//! `skb_attempt_defer_free` (net/core/skbuff.c, v6.18) frees an skb at once when its
//! `alloc_cpu` is the current CPU or that CPU's defer count reaches `net.core.skb_defer_max`,
//! else puts it on the allocating CPU's defer list, which `net_rx_action` there frees
//! (`skb_defer_free_flush`). The TAP has no NAPI, so the runner raises NET_RX on a CPU (a
//! UDP datagram over `lo` from a thread pinned there: `loopback_xmit` -> `__netif_rx`) where
//! the model runs a softirq: before each `arrive` (the model flushes before each poll) and for
//! each `softirq` op; after the last op, on both CPUs, so that every deferred skb is freed
//! and seen.
//!
//! **What is traced.** `skb:skb_copy_datagram_iovec` in this process (recvmsg's copies: the
//! skb's head, bytes, `skb->alloc_cpu` through BTF), and the head's free wherever it
//! happens: `kmem:kfree` / `kmem:kmem_cache_free` of that head (`skb_free_head`), with the
//! CPU. `consume_skb`'s tracepoint would miss the local path (`kfree_skb_napi_cache` ->
//! `__napi_kfree_skb` has none). And `kmem:mm_page_alloc` in the CPU-0 thread (seed 001:
//! shown, not judged; docs/kernel-oracle.md) while it is inside write(2) on the TAP, less
//! the user pages that write faults in: during the compared run, and during a page phase
//! after it that sends the same payload again as plain frames through `tun_build_skb`
//! (the writer's `task_frag`). A `close` op waits until then: it frees only unread skbs.

use super::peer::{Peer, PeerParams};
use super::pinned::{raise_net_rx, softirq_on, Pinned};
use super::probe;
use super::run::{Ask, KernelRun, Oracle, Seen};
use super::verdict::{too_slow, RunError, Side, SkbView};
use crate::net::netns::{Tap, KERNEL_IP};
use crate::net::vnet::VnetHdr;
use skblab_core::consts::wire::{hdr_len, mss_option};
use skblab_core::mechanism::Mechanism;
use skblab_core::rx::{self, Proto, RxOp, RxScenario, BH_CPU};
use skblab_core::skb::gso_segments;
use skblab_core::Cpu;
use skblab_core::RunOptions;
use std::collections::{BTreeMap, HashMap};
use std::io::Read;
use std::net::{TcpListener, TcpStream};

/// The kernel's listening port on the TAP (a run retried takes the next).
pub const PORT: u16 = 5003;
/// The name (and so `comm`) of the thread that writes the TAP on CPU 0.
const BH_THREAD: &str = "skblab-rx-bh";
/// The name of the reading thread on `app.cpu` (the probe's copies are its; the TAP's own reads
/// of the kernel's ACKs copy through the same tracepoint).
const APP_THREAD: &str = "skblab-rx-app";
pub const TRACEPOINTS: &[&str] = &[
    "skb/skb_copy_datagram_iovec",
    "kmem/kfree",
    "kmem/kmem_cache_free",
    "kmem/mm_page_alloc",
    "syscalls/sys_enter_write",
    "syscalls/sys_enter_getsid",
    "syscalls/sys_exit_write",
    "syscalls/sys_enter_getppid",
];

/// What the kernel run does, op by op.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// Softirq on CPU 0, then one TAP write per skb: each skb's payload bytes.
    Arrive(Vec<u32>),
    /// The reader reads this many bytes.
    Read(u64),
    /// NET_RX on this CPU.
    Softirq(Cpu),
    /// The reader closes the socket (at the end of the kernel run).
    Close,
}

/// The model's run, ready to set beside the kernel's.
pub struct Model {
    pub side: Side,
    pub steps: Vec<Step>,
    /// The model's page counters (seed 001), shown beside the kernel's page allocations.
    pub pages: BTreeMap<String, u64>,
}

/// Refuses, naming the field, what the kernel run cannot reproduce.
fn check(sc: &RxScenario) -> Result<(), String> {
    let refuse = |field: &str, why: &str| Err(format!("{field}: {why}"));
    if sc.socket.proto != Proto::Tcp {
        return refuse("socket.proto", "the kernel run receives TCP (\"tcp\")");
    }
    if sc.nic.rps {
        return refuse("nic.rps", "the kernel run has no RPS (false)");
    }
    if sc.app.lag != 0 || sc.app.prompt {
        return refuse(
            "app",
            "the kernel run reads only at `recvmsg` ops (lag = 0, prompt = false)",
        );
    }
    for (i, op) in sc.ops.iter().enumerate() {
        match op {
            RxOp::Recvmsg { skbs: Some(_), .. } => {
                return refuse(
                    &format!("ops[{i}].skbs"),
                    "recvmsg reads everything or `bytes`",
                )
            }
            RxOp::Lock | RxOp::Release | RxOp::Disconnect => {
                return refuse(
                    &format!("ops[{i}]"),
                    "the kernel run drives arrive, recvmsg, softirq and close",
                )
            }
            _ => {}
        }
    }
    Ok(())
}

/// Runs the model; returns its consumed skbs and what the kernel run must do.
pub fn model(sc: &RxScenario, variant: &str) -> Result<Model, String> {
    check(sc)?;
    let t = sc
        .run(&RunOptions::traced(Some(variant)))
        .map_err(|e| e.to_string())?;
    let mut steps = Vec::new();
    for (op, step) in sc.ops.iter().zip(&t.steps) {
        steps.push(match op {
            RxOp::Arrive { .. } => Step::Arrive(rx::delivered(step).map_err(|e| e.to_string())?),
            RxOp::Recvmsg { .. } => Step::Read(rx::copied(step)),
            RxOp::Softirq { cpu } => Step::Softirq(*cpu),
            _ => Step::Close,
        });
    }
    let pages = ["frames_arrived", "frag_cache_pages", "page_allocs"]
        .iter()
        .filter_map(|n| t.counters.get(n).map(|v| (n.to_string(), v)))
        .collect();
    let side = Side::of_model(&skblab_core::Scenario::Rx(sc.clone()), &t, sc.ops.len())
        .map_err(|e| e.to_string())?;
    Ok(Model { side, steps, pages })
}

/// __GFP_MOVABLE (include/linux/gfp_types.h): user pages faulted in while a write copies
/// from user memory carry it; skb and slab pages do not.
const GFP_MOVABLE: u32 = 0x08;

/// The probe. Copies are the reader thread's; frees are anyone's, but only of a head a copy
/// recorded (`@h`), which is forgotten once freed (heads are reused). getsid(2) from this
/// process starts the page phase (`@phase` 1): its copies are not compared.
pub fn script() -> String {
    let body = format!(
        r#"tracepoint:syscalls:sys_enter_getsid /pid == $1/ {{ @phase = 1; }}
tracepoint:skb:skb_copy_datagram_iovec /pid == $1 && comm == "{APP_THREAD}" && @phase == 0/ {{
  $skb = (struct sk_buff *)args->skbaddr;
  @h[(uint64)$skb->head] = 1;
  printf("copy %llu %llu %u %u\n", nsecs, (uint64)$skb->head, args->len, $skb->alloc_cpu);
}}
tracepoint:kmem:kfree /@h[(uint64)args->ptr]/ {{
  printf("free %llu %llu %u\n", nsecs, (uint64)args->ptr, cpu);
  delete(@h[(uint64)args->ptr]);
}}
tracepoint:kmem:kmem_cache_free /@h[(uint64)args->ptr]/ {{
  printf("free %llu %llu %u\n", nsecs, (uint64)args->ptr, cpu);
  delete(@h[(uint64)args->ptr]);
}}
tracepoint:syscalls:sys_enter_write /pid == $1 && comm == "{BH_THREAD}"/ {{ @w[tid] = 1; }}
tracepoint:syscalls:sys_exit_write /@w[tid]/ {{ delete(@w[tid]); }}
tracepoint:kmem:mm_page_alloc /@w[tid] && (args->gfp_flags & {GFP_MOVABLE}) == 0/ {{
  printf("page %llu %u %u\n", nsecs, @phase, args->order);
}}
"#
    );
    format!("{body}{}", probe::END_PROBE)
}

/// Pages by order, for each phase: the compared run (tun_alloc_skb), then the page phase
/// (tun_build_skb).
pub type Pages = [BTreeMap<u32, u64>; 2];

/// The kernel's side from the probe's lines: its consumed skbs, and the pages the CPU-0
/// thread allocated in its TAP writes, by phase and order.
pub fn kernel_side(lines: &[String]) -> Result<(Side, Pages), String> {
    let mut parsed = Vec::new();
    for l in lines {
        let mut w = l.split_whitespace();
        let kind = w.next().unwrap_or_default().to_string();
        let nums: Vec<u64> = w
            .map(str::parse)
            .collect::<Result<_, _>>()
            .map_err(|e| format!("probe line {l:?}: {e}"))?;
        let want = match kind.as_str() {
            "copy" => 4,
            "free" => 3,
            "page" => 3,
            _ => return Err(format!("unexpected probe line: {l}")),
        };
        if nums.len() != want {
            return Err(format!("probe line {l:?}: expected {want} numbers"));
        }
        parsed.push((nums[0], kind, nums));
    }
    parsed.sort_by_key(|p| p.0);
    let (mut side, mut pages) = (Side::default(), Pages::default());
    let mut open: HashMap<u64, usize> = HashMap::new();
    for (_, kind, n) in parsed {
        match kind.as_str() {
            "copy" => {
                let i = *open.entry(n[1]).or_insert_with(|| {
                    side.skbs.push(SkbView {
                        alloc_cpu: Some(n[3]),
                        ..SkbView::default()
                    });
                    side.skbs.len() - 1
                });
                side.skbs[i].len += n[2];
            }
            "free" => {
                if let Some(i) = open.remove(&n[1]) {
                    side.skbs[i].free_cpu = Some(n[2]);
                }
            }
            _ => *pages[n[1].min(1) as usize].entry(n[2] as u32).or_insert(0) += 1,
        }
    }
    Ok((side, pages))
}

/// The CPU-0 side: the TAP and the runner's end of the connection.
struct Bh {
    tap: Tap,
    peer: Peer,
    mss: u32,
}

enum BhCmd {
    Arrive(Vec<u32>),
    /// TUNSETSNDBUF back to INT_MAX: frames under a page now go through `tun_build_skb`.
    BuildSkb,
}

impl Bh {
    fn run(&mut self, c: BhCmd) -> Result<(), String> {
        match c {
            BhCmd::Arrive(skbs) => self.arrive(skbs),
            BhCmd::BuildSkb => self.tap.set_sndbuf(i32::MAX),
        }
    }

    /// An `arrive`: NET_RX first (the model's poll flushes CPU 0's defer list), then the
    /// skbs.
    fn arrive(&mut self, skbs: Vec<u32>) -> Result<(), String> {
        raise_net_rx()?;
        for len in skbs {
            self.peer.wait_window(&self.tap, len)?;
            self.write_skb(len)?;
        }
        Ok(())
    }

    /// One TAP write carrying `len` payload bytes: a super-packet of `mss` segments, or a
    /// plain frame; the head holds the headers and one payload byte (`hdr_len`).
    fn write_skb(&mut self, len: u32) -> Result<(), String> {
        let payload = vec![0x5a; len as usize];
        let hdr_len = (hdr_len(true) + 1) as u16;
        let hdr = if len > self.mss {
            VnetHdr::tcpv4(hdr_len, self.mss as u16)
        } else {
            VnetHdr {
                hdr_len,
                ..VnetHdr::default()
            }
        };
        self.peer.ep.push(&payload, hdr);
        self.peer.flush(&self.tap)
    }
}

enum ReadCmd {
    Read(u64),
    Close,
}

fn reader_run(sock: &mut Option<TcpStream>, c: ReadCmd) -> Result<(), String> {
    match c {
        ReadCmd::Close => {
            drop(sock.take());
            Ok(())
        }
        ReadCmd::Read(n) => {
            let s = sock.as_mut().ok_or("recvmsg after close")?;
            let mut buf = vec![0u8; n as usize];
            s.read_exact(&mut buf)
                .map_err(|e| format!("the reader reading {n} bytes: {e}"))
        }
    }
}

/// net.core.skb_defer_max, read before the namespace changes (it is not per namespace and
/// a new namespace's /proc/sys/net/core does not list it).
pub fn defer_max() -> String {
    std::fs::read_to_string("/proc/sys/net/core/skb_defer_max")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|e| format!("unreadable ({e})"))
}

/// Seed 001's measurement, after the compared run: the same payload again, as one plain
/// frame per `socket.mss` bytes through `tun_build_skb` (the writer's `task_frag`, refilled
/// by `skb_page_frag_refill`), each arrive read before the next. Its copies are not
/// compared (getsid(2) moves the probe to phase 1); its pages are counted apart.
fn page_phase(
    bh: &Pinned<BhCmd>,
    reader: &Pinned<ReadCmd>,
    mss: u32,
    steps: &[Step],
) -> Result<(), RunError> {
    // SAFETY: getsid(0) has no preconditions; it is the probe's phase switch.
    unsafe { libc::getsid(0) };
    bh.call(BhCmd::BuildSkb)?;
    for step in steps {
        if let Step::Arrive(skbs) = step {
            let frames: Vec<u32> = skbs.iter().flat_map(|&l| gso_segments(l, mss)).collect();
            let bytes = frames.iter().map(|&f| u64::from(f)).sum();
            bh.call(BhCmd::Arrive(frames))?;
            reader.call(ReadCmd::Read(bytes))?;
        }
    }
    Ok(())
}

/// Sets up the TAP and the connection, runs the steps on the two pinned threads under the
/// probe, then raises NET_RX on both CPUs and waits until the kernel has freed as many of
/// the read skbs as the model frees (`frees`). The kernel listens on `port`.
pub fn run_kernel(
    port: u16,
    mss: u32,
    reader_cpu: Cpu,
    steps: &[Step],
    frees: usize,
) -> Result<Vec<String>, RunError> {
    let tap = Tap::open()?;
    tap.set_offload(true)?;
    tap.set_sndbuf(i32::MAX - 1)?;
    let listener = TcpListener::bind((KERNEL_IP, port))
        .map_err(|e| format!("bind {KERNEL_IP}:{port} in the namespace: {e}"))?;
    // Room for every skb an arrive delivers before a read (tcp_try_rmem_schedule).
    crate::net::sockopt::setsockopt(&listener, libc::SOL_SOCKET, libc::SO_RCVBUFFORCE, 8 << 20)
        .map_err(|e| format!("SO_RCVBUFFORCE on the listener: {e}"))?;
    let p = PeerParams {
        port,
        mss_option: mss_option(mss, true) as u16,
        timestamps: true,
        window: crate::net::link::RCV_WND,
    };
    let peer = Peer::open(&tap, &p)?;
    let (sock, _) = listener
        .accept()
        .map_err(|e| format!("kernel accept: {e}"))?;
    let bh = Bh { tap, peer, mss };
    let bh = Pinned::spawn(BH_THREAD, BH_CPU, bh, Bh::run)?;
    let reader = Pinned::spawn(APP_THREAD, reader_cpu, Some(sock), reader_run)?;
    let mut tracer = probe::Tracer::start(&script())?;
    for step in steps {
        match step {
            Step::Arrive(skbs) => bh.call(BhCmd::Arrive(skbs.clone()))?,
            Step::Read(0) => {}
            Step::Read(n) => reader.call(ReadCmd::Read(*n))?,
            Step::Softirq(cpu) => softirq_on(*cpu)?,
            // Closing frees only unread skbs, which are not compared: it waits until after
            // the page phase, which needs the connection.
            Step::Close => {}
        }
    }
    for cpu in 0..skblab_core::NR_CPUS as Cpu {
        softirq_on(cpu)?;
    }
    wait_frees(&mut tracer, frees)?;
    page_phase(&bh, &reader, mss, steps)?;
    reader.call(ReadCmd::Close)?;
    let lines = tracer.finish()?;
    drop((reader, bh));
    Ok(lines)
}

/// Reads the probe's lines until `frees` of the read skbs are freed. A deferred skb is freed
/// when NET_RX runs on its CPU, which ksoftirqd may do late on a busy machine: a fixed wait
/// here once ended a run before any of its 40 frees. Frees that do not come in time make
/// the run too slow (retried, then inconclusive), and the reason says how many came.
fn wait_frees(tracer: &mut probe::Tracer, frees: usize) -> Result<(), RunError> {
    if frees == 0 {
        return Ok(());
    }
    // Paired as the report pairs them (by head, in time order: lines from two CPUs may
    // come out of order).
    let freed = |lines: &[String]| {
        kernel_side(lines).map_or(0, |(side, _)| {
            side.skbs.iter().filter(|s| s.free_cpu.is_some()).count()
        })
    };
    // Paired only once there are enough free lines: each freed skb has one.
    let (seen, free_lines) = (std::cell::RefCell::new(Vec::new()), std::cell::Cell::new(0));
    let done = tracer.read_until(|l| {
        if l.starts_with("free ") {
            free_lines.set(free_lines.get() + 1);
        }
        if l.starts_with("copy ") || l.starts_with("free ") {
            seen.borrow_mut().push(l.to_string());
        }
        free_lines.get() >= frees && freed(&seen.borrow()) >= frees
    });
    done.map(drop).map_err(|e| {
        let RunError::Failed(e) = e else {
            return e;
        };
        let came = freed(&seen.borrow());
        too_slow(&format!(
            "{came} of the {frees} read skbs the model frees were freed in the kernel ({e})"
        ))
    })
}

/// Seeds 002 and 001's oracle run: skbs into a kernel socket through the TAP on CPU 0, read
/// on CPU 1.
pub struct Rx {
    variant: String,
    mss: u32,
    reader_cpu: Cpu,
    model: Model,
    defer_max: String,
}

impl KernelRun for Rx {
    type Ask = Ask<RxScenario>;
    type Seen = Seen;

    fn plan(ask: Ask<RxScenario>) -> Result<Rx, String> {
        let model = model(&ask.sc, &ask.variant)?;
        Ok(Rx {
            variant: ask.variant,
            mss: ask.sc.socket.mss,
            reader_cpu: ask.sc.app.cpu,
            model,
            defer_max: defer_max(),
        })
    }

    fn tracepoints(&self) -> Vec<&'static str> {
        TRACEPOINTS.to_vec()
    }

    fn script(&self) -> String {
        script()
    }

    fn once(&self, n: u16) -> Result<Seen, RunError> {
        let frees = (self.model.side.skbs.iter())
            .filter(|s| s.free_cpu.is_some())
            .count();
        let m = &self.model;
        let lines = run_kernel(PORT + n, self.mss, self.reader_cpu, &m.steps, frees)?;
        let (side, pages) = kernel_side(&lines)?;
        let setup = serde_json::json!({
            "path": "TAP, no NAPI: tun_get_user -> netif_receive_skb on CPU 0",
            "skbs": "one TAP write per skb the model's GRO delivers",
            "reader_cpu": self.reader_cpu,
            "softirq_cpu": BH_CPU,
            "skb_defer_max": self.defer_max,
            "free_cpu": "the CPU that freed the consumed skb (or whose defer list holds it, model)",
        });
        let mut seen = Seen::new(side, setup);
        let by_order = |m: &BTreeMap<u32, u64>| -> serde_json::Value {
            m.iter()
                .map(|(order, n)| (format!("order {order}"), serde_json::Value::from(*n)))
                .collect::<serde_json::Map<_, _>>()
                .into()
        };
        seen.shown.insert(
            "kernel_pages".into(),
            serde_json::json!({
                "compared run (tun_alloc_skb: alloc_skb_with_frags)": by_order(&pages[0]),
                "the same payload as MSS frames (tun_build_skb: task_frag)": by_order(&pages[1]),
                "why not judged": "a TAP allocates in the writer's task, not from a driver's \
                    netdev_alloc_frag / napi_alloc_frag cache; slab refills count too \
                    (docs/kernel-oracle.md)",
            }),
        );
        seen.shown
            .insert("model_pages".into(), serde_json::json!(m.pages));
        Ok(seen)
    }
}

impl Oracle for Rx {
    const MECHANISM: &'static str = RxScenario::NAME;

    fn variant(&self) -> &str {
        &self.variant
    }

    fn model(&self) -> Side {
        self.model.side.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::kernel::rx_scenario as scenario;

    #[test]
    fn the_model_frees_consumed_skbs_on_the_allocating_cpu() {
        let sc = scenario(
            "mechanism = \"rx\"\n[[ops]]\nop = \"arrive\"\nframes = 45\n\
             [[ops]]\nop = \"recvmsg\"\n[[ops]]\nop = \"arrive\"\nframes = 10\n\
             [[ops]]\nop = \"recvmsg\"\n",
        );
        let m = model(&sc, RxScenario::TODAY).unwrap();
        assert_eq!(
            m.steps,
            [
                Step::Arrive(vec![65160]),
                Step::Read(65160),
                Step::Arrive(vec![14480]),
                Step::Read(14480)
            ]
        );
        let got: Vec<_> = m
            .side
            .skbs
            .iter()
            .map(|s| (s.len, s.alloc_cpu, s.free_cpu))
            .collect();
        // The first is freed by the second arrive's poll; the second waits on CPU 0's list.
        assert_eq!(got, [(65160, Some(0), Some(0)), (14480, Some(0), Some(0))]);
        let none = model(&sc, "modern+none").unwrap();
        assert!(none.side.skbs.iter().all(|s| s.free_cpu == Some(1)));
    }

    #[test]
    fn what_the_kernel_run_cannot_hold_is_refused_by_name() {
        let refused = |extra: &str| {
            let sc = scenario(&format!(
                "mechanism = \"rx\"\n{extra}\n[[ops]]\nop = \"arrive\"\nframes = 1\n"
            ));
            model(&sc, RxScenario::TODAY).err().unwrap()
        };
        assert!(refused("[nic]\nrps = true").starts_with("nic.rps"));
        assert!(refused("[app]\ncpu = 2").contains("app.cpu"));
        assert!(refused("[app]\nprompt = true").starts_with("app:"));
        assert!(refused("[socket]\nproto = \"udp\"").starts_with("socket.proto"));
    }

    #[test]
    fn copies_and_frees_pair_by_head_and_heads_are_reused() {
        let lines: Vec<String> = [
            "copy 1 100 1000 0",
            "copy 2 100 448 0",
            "page 3 0 3",
            "free 4 100 0",
            "copy 5 100 7 0",
            "free 6 999 1",
            "free 7 100 1",
            "page 8 1 0",
            "page 9 0 3",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let (side, pages) = kernel_side(&lines).unwrap();
        let got: Vec<_> = side.skbs.iter().map(|s| (s.len, s.free_cpu)).collect();
        assert_eq!(got, [(1448, Some(0)), (7, Some(1))]);
        assert_eq!(pages, [BTreeMap::from([(3, 2)]), BTreeMap::from([(0, 1)])]);
        assert!(kernel_side(&["copy 1 2".to_string()]).is_err());
    }
}

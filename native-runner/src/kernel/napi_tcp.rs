//! Receive coalescing on the running kernel: TCP frames through tun's NAPI frags path, beside
//! the model's `napi-frags` driver (`modern+defer-free`), GRO on or off (`nic.gro`).
//!
//! **The kernel's side.** A TAP with IFF_NAPI | IFF_NAPI_FRAGS and a virtio-net header; the
//! runner's TCP endpoint opens a connection to a kernel socket through it, then writes each
//! of the model's frames as one `writev` from a thread pinned to CPU 0: the headers in the
//! first iovec, the payload in the second. `tun_get_user` -> `tun_napi_alloc_frags`
//! (drivers/net/tun.c, v6.12) puts the headers in the head `napi_get_frags` allocates and the
//! payload in one fragment of CPU 0's frag cache (`netdev_alloc_frag`), then runs
//! `napi_gro_frags` and `napi_complete` (which flushes GRO: a packet never outlives its
//! frame) with BHs off, so `tcp_v4_rcv` queues the frame before `writev` returns. On the
//! receive queue `tcp_queue_rcv` -> `tcp_try_coalesce` -> `skb_try_coalesce`
//! (net/core/skbuff.c) merges a frame whose head holds nothing after the headers are pulled
//! into the tail skb by moving its frag, while the tail has fewer than MAX_SKB_FRAGS, and
//! `kfree_skb_partial` frees the merged skb there, on CPU 0. GRO is switched per
//! `nic.gro` with ETHTOOL_SGRO. A reader on CPU 1 reads what each `recvmsg` op reads.
//!
//! **Where the model's first page starts.** As for UDP ([`super::napi_frags`]): held UDP
//! frames of the first frame's payload, on a UDP socket that never reads, until one is a
//! refill; then as many more as fill that page, so the first TCP frame takes a new page at
//! offset 0.
//!
//! **What is traced.** In the writer's `writev`s: `net:napi_gro_frags_entry` (the frame's
//! frag and its skb), `kmem:mm_page_alloc`, and `kmem:kmem_cache_free` of the frame's own
//! skb (merged: freed at arrival, with the CPU); `kmem:mm_page_free` of those pages anywhere.
//! In the reader: `skb:skb_copy_datagram_iovec` (the skb, bytes, `alloc_cpu`, `nr_frags`),
//! each recvmsg ended by a getsid(2) mark; then `skb:consume_skb` or `kmem:kmem_cache_free`
//! of a read skb, with the CPU (`skb_defer_free_flush` -> `napi_consume_skb` on CPU 0).

use super::napi_frags;
use super::napi_probe::PAGE_PROBES;
use super::napi_writer::{Step, READER, READER_CPU, WRITER};
use super::probe;
use super::run::{Ask, KernelRun, Oracle, Seen};
use super::verdict::{Inconclusive, RunError, Side, SkbView};
use skblab_core::mechanism::Mechanism;
use skblab_core::rx::{DriverStyle, Proto, RxOp, RxScenario};
use skblab_core::RunOptions;
use std::collections::HashMap;

/// The kernel's listening port (a run retried takes the next).
pub const PORT: u16 = 5006;

pub const TRACEPOINTS: &[&str] = &[
    "net/napi_gro_frags_entry",
    "kmem/mm_page_alloc",
    "kmem/mm_page_free",
    "kmem/kmem_cache_free",
    "skb/skb_copy_datagram_iovec",
    "skb/consume_skb",
    "syscalls/sys_enter_writev",
    "syscalls/sys_exit_writev",
    "syscalls/sys_enter_getsid",
    "syscalls/sys_enter_getppid",
];

/// Whether this rx scenario is TCP through tun's NAPI frags path.
pub fn applies(sc: &RxScenario) -> bool {
    sc.nic.driver == DriverStyle::NapiFrags && sc.socket.proto == Proto::Tcp
}

/// Refuses, naming the field, what this run cannot give the kernel.
pub fn check(sc: &RxScenario) -> Result<(), String> {
    let refuse = |field: &str, why: &str| Err(format!("{field}: {why}"));
    if sc.app.cpu != READER_CPU {
        return refuse("app.cpu", "the napi-frags TCP run reads on CPU 1 (1)");
    }
    if sc.nic.rps {
        return refuse("nic.rps", "the napi-frags run has no RPS (false)");
    }
    if sc.app.lag != 0 || sc.app.prompt {
        return refuse(
            "app",
            "the napi-frags TCP run reads only at `recvmsg` ops (lag = 0, prompt = false)",
        );
    }
    for (i, op) in sc.ops.iter().enumerate() {
        match op {
            RxOp::Arrive { .. } | RxOp::Softirq { .. } | RxOp::Recvmsg { skbs: None, .. } => {}
            RxOp::Close if i + 1 == sc.ops.len() => {}
            _ => {
                return refuse(
                    &format!("ops[{i}]"),
                    "the napi-frags TCP run drives arrive, recvmsg (all or `bytes`) and \
                     softirq, and `close` only last",
                )
            }
        }
    }
    Ok(())
}

/// The model's run: its side (pages, then the skbs each recvmsg read), the kernel run's
/// steps, and every frame's payload in order.
pub fn model(sc: &RxScenario, variant: &str) -> Result<(Side, Vec<Step>, Vec<u32>), String> {
    check(sc)?;
    let t = sc
        .run(&RunOptions::traced(Some(variant)))
        .map_err(|e| e.to_string())?;
    let p = sc.params(Some(variant)).map_err(|e| e.to_string())?;
    let (mut steps, mut payloads) = (Vec::new(), Vec::new());
    for ((i, op), step) in sc.ops.iter().enumerate().zip(&t.steps) {
        match op {
            RxOp::Arrive { .. } => {
                let lens = p.frame_lens(op, i).map_err(|e| e.to_string())?;
                let frame: Vec<u32> = lens.iter().map(|l| l - Proto::Tcp.headers()).collect();
                payloads.extend(&frame);
                steps.push(Step::Arrive(frame));
            }
            RxOp::Recvmsg { .. } => steps.push(Step::Read(skblab_core::rx::copied(step))),
            RxOp::Softirq { cpu } => steps.push(Step::Softirq(*cpu)),
            _ => {}
        }
    }
    let side = skblab_core::kernel_report::Side::of_model(
        &skblab_core::Scenario::Rx(sc.clone()),
        &t,
        sc.ops.len(),
    )
    .map_err(|e| e.to_string())?;
    Ok((side, steps, payloads))
}

/// The probe: the page lines of [`napi_frags::script`] (numbered by the writer's writevs),
/// and the skbs (see the module doc). `@r` counts the reader's recvmsg calls.
pub fn script(writer: &str) -> String {
    let body = format!(
        r#"tracepoint:syscalls:sys_enter_writev /pid == $1 && comm == "{writer}"/ {{ @w[tid] = 1; @n++; }}
tracepoint:syscalls:sys_exit_writev /@w[tid]/ {{ delete(@w[tid]); delete(@cur[tid]); }}
tracepoint:syscalls:sys_enter_getsid /pid == $1 && comm == "{writer}"/ {{ printf("mark %d\n", @n); }}
tracepoint:syscalls:sys_enter_getsid /pid == $1 && comm == "{READER}"/ {{ @r++; }}
tracepoint:net:napi_gro_frags_entry /@w[tid]/ {{
  $skb = (struct sk_buff *)args->skbaddr;
  $sh = (struct skb_shared_info *)($skb->head + $skb->end);
  @cur[tid] = (uint64)$skb;
  printf("frag %d %u %llu %u %u %u\n", @n, cpu, (uint64)$sh->frags[0].netmem, $sh->frags[0].offset, $sh->frags[0].len, $sh->nr_frags);
  printf("skb %llu %d %llu\n", nsecs, @n, (uint64)$skb);
}}
tracepoint:kmem:kmem_cache_free /@w[tid] && @cur[tid] == (uint64)args->ptr/ {{
  printf("merged %llu %d %u\n", nsecs, @n, cpu);
  delete(@cur[tid]);
}}
tracepoint:skb:skb_copy_datagram_iovec /pid == $1 && comm == "{READER}"/ {{
  $skb = (struct sk_buff *)args->skbaddr;
  $sh = (struct skb_shared_info *)($skb->head + $skb->end);
  @read[(uint64)$skb] = 1;
  printf("copy %llu %d %llu %u %u %u\n", nsecs, @r, (uint64)$skb, args->len, $skb->alloc_cpu, $sh->nr_frags);
}}
tracepoint:skb:consume_skb /@read[(uint64)args->skbaddr]/ {{
  printf("sfree %llu %llu %u\n", nsecs, (uint64)args->skbaddr, cpu);
  delete(@read[(uint64)args->skbaddr]);
}}
tracepoint:kmem:kmem_cache_free /@read[(uint64)args->ptr]/ {{
  printf("sfree %llu %llu %u\n", nsecs, (uint64)args->ptr, cpu);
  delete(@read[(uint64)args->ptr]);
}}
"#
    );
    format!("{body}{}{}", PAGE_PROBES, probe::END_PROBE)
}

/// One skb line: `(nsecs, kind, numbers)`.
type SkbLine = (u64, Kind, Vec<u64>);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// A frame's skb: writev number, address.
    Skb,
    /// That skb freed in its own writev: writev number, CPU.
    Merged,
    /// A copy: recvmsg, address, bytes, alloc_cpu, nr_frags.
    Copy,
    /// A read skb freed: address, CPU.
    Free,
}

fn parse_skb_line(l: &str) -> Result<Option<SkbLine>, String> {
    let mut w = l.split_whitespace();
    let (kind, want) = match w.next().unwrap_or_default() {
        "skb" => (Kind::Skb, 3),
        "merged" => (Kind::Merged, 3),
        "copy" => (Kind::Copy, 6),
        "sfree" => (Kind::Free, 3),
        _ => return Ok(None),
    };
    let v: Vec<u64> = w
        .map(str::parse)
        .collect::<Result<_, _>>()
        .map_err(|e| format!("probe line {l:?}: {e}"))?;
    if v.len() != want {
        return Err(format!("probe line {l:?}: expected {want} numbers"));
    }
    Ok(Some((v[0], kind, v[1..].to_vec())))
}

/// The kernel's side: the frag cache's pages of frames `first..` ([`napi_frags::kernel_pages`])
/// and every skb the reader read, in the order it began them, with the frames merged into it
/// at arrival. Judged only if the trace can be trusted: every frame traced once, every byte
/// written read once.
pub fn kernel_side(lines: &[String], first: u64, payloads: &[u32]) -> Result<Side, Inconclusive> {
    let bad = |why: String| Inconclusive(why);
    let mut page_lines = Vec::new();
    let mut skb_lines = Vec::new();
    for l in lines {
        match parse_skb_line(l).map_err(bad)? {
            Some(s) => skb_lines.push(s),
            None => page_lines.push(l.clone()),
        }
    }
    let cache = napi_frags::kernel_pages(&page_lines, first, payloads)?;
    let skbs = read_skbs(skb_lines, first, payloads)?;
    Ok(Side {
        frag_cache: Some(cache),
        skbs,
        ..Side::default()
    })
}

/// The skbs the reader read (module doc): a frame freed in its own writev was merged into
/// the receive queue's tail, the last frame before it not merged.
fn read_skbs(
    mut lines: Vec<SkbLine>,
    first: u64,
    payloads: &[u32],
) -> Result<Vec<SkbView>, Inconclusive> {
    let bad = |why: String| Inconclusive(why);
    lines.sort_by_key(|l| l.0);
    let last = first + payloads.len() as u64;
    let ours = |n: u64| (first..last).contains(&n);
    // The frame each address names now; the queue's tail before each frame; merges.
    let (mut queued, mut before) = (HashMap::new(), HashMap::new());
    let (mut merged, mut tail) = (HashMap::<u64, u64>::new(), None);
    let mut out: Vec<SkbView> = Vec::new();
    let mut open: HashMap<u64, usize> = HashMap::new();
    let (mut frames, mut bytes) = (0, 0);
    for (_, kind, v) in lines {
        match kind {
            Kind::Skb if ours(v[0]) => {
                frames += 1;
                queued.insert(v[1], v[0]);
                before.insert(v[0], tail);
                tail = Some(v[0]);
            }
            Kind::Merged if ours(v[0]) => {
                let into = before.get(&v[0]).copied().flatten().ok_or_else(|| {
                    bad(format!(
                        "frame {}: freed at arrival, no skb before it",
                        v[0]
                    ))
                })?;
                if v[1] != 0 {
                    return Err(bad(format!(
                        "frame {}: merged skb freed on CPU {}",
                        v[0], v[1]
                    )));
                }
                *merged.entry(into).or_default() += 1;
                tail = Some(into);
            }
            Kind::Copy => {
                let Some(&frame) = queued.get(&v[1]) else {
                    continue;
                };
                bytes += v[2];
                let i = *open.entry(frame).or_insert_with(|| {
                    out.push(SkbView {
                        recvmsg: Some(v[0]),
                        alloc_cpu: Some(v[3]),
                        nr_frags: Some(v[4]),
                        ..SkbView::default()
                    });
                    out.len() - 1
                });
                out[i].len += v[2];
            }
            Kind::Free => {
                if let Some(frame) = queued.remove(&v[0]) {
                    if let Some(&i) = open.get(&frame) {
                        out[i].free_cpu = Some(v[1]);
                    }
                }
            }
            _ => {}
        }
    }
    for (&frame, &i) in &open {
        out[i].merged = Some(merged.get(&frame).copied().unwrap_or(0));
    }
    let written: u64 = payloads.iter().map(|&p| u64::from(p)).sum();
    if frames != payloads.len() || bytes != written {
        return Err(bad(format!(
            "{frames} of {} frames traced, {bytes} of {written} bytes read",
            payloads.len()
        )));
    }
    Ok(out)
}

/// The oracle's run of TCP receive coalescing through tun's NAPI frags path.
pub struct NapiTcp {
    variant: String,
    gro: bool,
    model: Side,
    steps: Vec<Step>,
    payloads: Vec<u32>,
}

impl KernelRun for NapiTcp {
    type Ask = Ask<RxScenario>;
    type Seen = Seen;

    fn plan(ask: Ask<RxScenario>) -> Result<NapiTcp, String> {
        let (model, steps, payloads) = model(&ask.sc, &ask.variant)?;
        Ok(NapiTcp {
            variant: ask.variant,
            gro: ask.sc.nic.gro,
            model,
            steps,
            payloads,
        })
    }

    fn tracepoints(&self) -> Vec<&'static str> {
        TRACEPOINTS.to_vec()
    }

    fn script(&self) -> String {
        script(WRITER)
    }

    fn once(&self, n: u16) -> Result<Seen, RunError> {
        let port = PORT + n;
        let (lines, first) = super::napi_writer::run_tcp(
            port,
            self.gro,
            &self.steps,
            &self.payloads,
            &self.script(),
        )?;
        let side = kernel_side(&lines, first, &self.payloads)?;
        let setup = serde_json::json!({
            "path": "TAP with IFF_NAPI | IFF_NAPI_FRAGS: writev -> tun_napi_alloc_frags -> \
                napi_gro_frags, napi_complete -> tcp_v4_rcv on CPU 0",
            "frame": "one writev: virtio-net, Ethernet, IPv4 and TCP headers, then the payload",
            "gro": self.gro,
            "reader_cpu": READER_CPU,
            "first_frame": "a fresh page of CPU 0's cache (held UDP frames before it prime it)",
            "merged": "skbs tcp_try_coalesce merged into this one, freed at arrival on CPU 0",
        });
        Ok(Seen::new(side, setup))
    }
}

impl Oracle for NapiTcp {
    const MECHANISM: &'static str = RxScenario::NAME;

    fn variant(&self) -> &str {
        &self.variant
    }

    fn model(&self) -> Side {
        self.model.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Frames 1 to 3: frame 2's skb is freed in its own writev (merged into frame 1's) and
    /// its address comes back for frame 3, which a later read begins on its own.
    #[test]
    fn a_merged_frame_counts_for_the_skb_before_it_and_addresses_are_reused() {
        let lines: Vec<(u64, Kind, Vec<u64>)> = [
            "skb 1 1 100",
            "skb 2 2 200",
            "merged 3 2 0",
            "copy 4 0 100 2896 0 2",
            "skb 5 3 200",
            "copy 6 1 200 1448 0 1",
            "sfree 7 100 0",
            "sfree 8 200 0",
        ]
        .iter()
        .map(|l| parse_skb_line(l).unwrap().unwrap())
        .collect();
        let got = read_skbs(lines.clone(), 1, &[1448; 3]).unwrap();
        let view = |s: &SkbView| (s.len, s.nr_frags, s.recvmsg, s.merged, s.free_cpu);
        let got: Vec<_> = got.iter().map(view).collect();
        assert_eq!(
            got,
            [
                (2896, Some(2), Some(0), Some(1), Some(0)),
                (1448, Some(1), Some(1), Some(0), Some(0))
            ]
        );
        // A byte short of what was written, or a merged skb freed off CPU 0: untrusted.
        assert!(read_skbs(lines.clone(), 1, &[1448, 1448, 1449]).is_err());
        let mut off = lines;
        off[2].2[1] = 1;
        assert!(read_skbs(off, 1, &[1448; 3]).is_err());
    }
}

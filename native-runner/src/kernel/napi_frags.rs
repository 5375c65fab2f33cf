//! Seed 001 on the running kernel: a NIC driver's frag cache, fed through tun's NAPI frags
//! path, beside the model's `napi-frags` driver (`modern`).
//!
//! **The kernel's side.** A TAP opened with IFF_NAPI | IFF_NAPI_FRAGS (CAP_NET_ADMIN) and
//! no virtio-net header. Each frame is one `writev` of two iovecs, the Ethernet, IPv4 and UDP
//! headers then the payload: `tun_get_user` -> `tun_napi_alloc_frags` (drivers/net/tun.c,
//! v6.13 on) puts the first iovec in the head of `napi_get_frags` and takes the second from
//! `netdev_alloc_frag(iov_len)`, which in process context is `__napi_alloc_frag_align`
//! (net/core/skbuff.c): `SKB_DATA_ALIGN(iov_len)` bytes of the writer's CPU's
//! `napi_alloc_cache.page`, a `page_frag_cache` (mm/page_frag_cache.c): 32 KiB order-3 pages,
//! `pagecnt_bias`, the page started over when it runs out and every fragment came back. Then
//! `napi_gro_frags` and `napi_complete` deliver it to a UDP socket, all before `writev`
//! returns. The writer, pinned to CPU 0, is also the reader (`app.cpu = 0`): a prompt reader
//! reads each datagram before the next write; a lagging one reads none until it closes.
//!
//! **Where the model's first page starts.** CPU 0's cache holds whatever page earlier
//! traffic left, at any offset. So the run primes it: frames the socket holds, one at a time,
//! until one lands at offset 0 of a page just allocated in its own `writev` (a refill: the
//! probe's lines are read after each frame). That frame is the model's first; the held ones
//! before it are read at once (prompt) or stay (lagging), on the old page, which is not
//! counted. The writing side is [`super::napi_writer`].
//!
//! **What is traced.** In the writer's `writev`: `net:napi_gro_frags_entry` (the frame's frag:
//! its `struct page` and offset, through BTF) and `kmem:mm_page_alloc`; anywhere, after that,
//! `kmem:mm_page_free` of a page allocated there. A page's `struct page` address is
//! `vmemmap_base + 64 * pfn`; the refill that starts the run gives vmemmap_base (it must be
//! 1 GiB aligned), and every later page is matched through it. A trace is judged only when it
//! can be trusted: every frame at the offset the cache's stride gives it (no other user of
//! CPU 0's cache in between), every new page allocated in the frame's own `writev`.

use super::napi_probe::{parse, refill_base, Line, PAGE_PROBES, STRUCT_PAGE};
use super::napi_writer::{Reader, WRITER};
use super::probe;
use super::run::{Ask, KernelRun, Oracle, Seen};
use super::verdict::{Inconclusive, RunError, Side};
use skblab_core::kernel_report::{FragCache, PageView};
use skblab_core::mechanism::Mechanism;
use skblab_core::rx::{napi_frag_stride, DriverStyle, Proto, RxOp, RxScenario};
use skblab_core::RunOptions;
use std::collections::{BTreeMap, HashMap};

pub const TRACEPOINTS: &[&str] = &[
    "net/napi_gro_frags_entry",
    "kmem/mm_page_alloc",
    "kmem/mm_page_free",
    "syscalls/sys_enter_writev",
    "syscalls/sys_exit_writev",
    "syscalls/sys_enter_getsid",
    "syscalls/sys_enter_getppid",
];

/// Whether this rx scenario is seed 001's NAPI frags run.
pub fn applies(sc: &RxScenario) -> bool {
    sc.nic.driver == DriverStyle::NapiFrags
}

/// Refuses, naming the field, what this run cannot give the kernel.
pub fn check(sc: &RxScenario) -> Result<Reader, String> {
    let refuse = |field: &str, why: &str| Err(format!("{field}: {why}"));
    if sc.socket.proto != Proto::Udp {
        return refuse("socket.proto", "the napi-frags run receives UDP (\"udp\")");
    }
    if sc.app.cpu != 0 {
        return refuse(
            "app.cpu",
            "the napi-frags run reads on the writer's CPU (0)",
        );
    }
    if sc.nic.rps {
        return refuse("nic.rps", "the napi-frags run has no RPS (false)");
    }
    let reader = match (sc.app.prompt, sc.app.lag, sc.nic.budget) {
        (true, 0, 1) => Reader::Prompt,
        (false, _, _) => Reader::Lagging,
        _ => {
            return refuse(
                "app",
                "a prompt reader reads every frame before the next (prompt = true, lag = 0, \
                 nic.budget = 1); otherwise prompt = false reads nothing until `close`",
            )
        }
    };
    let last = sc.ops.len().saturating_sub(1);
    if !matches!(sc.ops.last(), Some(RxOp::Close)) {
        return refuse(
            &format!("ops[{last}]"),
            "the napi-frags run ends with `close` (the frees it judges happen there)",
        );
    }
    for (i, op) in sc.ops.iter().enumerate() {
        match op {
            RxOp::Arrive { .. } => {}
            RxOp::Close if i == last => {}
            _ => {
                return refuse(
                    &format!("ops[{i}]"),
                    "the napi-frags run drives `arrive` ops, then `close` last",
                )
            }
        }
    }
    Ok(reader)
}

/// The model's run: the payload of each frame, and its frag cache's pages
/// ([`FragCache::of`], as `kernel_report::Side::of_model` reads them).
pub fn model(sc: &RxScenario, variant: &str) -> Result<(Vec<u32>, FragCache), String> {
    check(sc)?;
    let t = sc
        .run(&RunOptions::traced(Some(variant)))
        .map_err(|e| e.to_string())?;
    let p = sc.params(Some(variant)).map_err(|e| e.to_string())?;
    let mut payloads = Vec::new();
    for (i, op) in sc.ops.iter().enumerate() {
        let lens = p.frame_lens(op, i).map_err(|e| e.to_string())?;
        payloads.extend(lens.iter().map(|l| l - Proto::Udp.headers()));
    }
    Ok((payloads, FragCache::of(&t)))
}

/// The probe: every line carries the writer's frame number (`@n`, its writev count).
/// getsid(2) from the writer marks the end of a frame's lines.
pub fn script() -> String {
    let body = format!(
        r#"tracepoint:syscalls:sys_enter_writev /pid == $1 && comm == "{WRITER}"/ {{ @w[tid] = 1; @n++; }}
tracepoint:syscalls:sys_exit_writev /@w[tid]/ {{ delete(@w[tid]); }}
tracepoint:syscalls:sys_enter_getsid /pid == $1 && comm == "{WRITER}"/ {{ printf("mark %d\n", @n); }}
tracepoint:net:napi_gro_frags_entry /@w[tid]/ {{
  $skb = (struct sk_buff *)args->skbaddr;
  $sh = (struct skb_shared_info *)($skb->head + $skb->end);
  printf("frag %d %u %llu %u %u %u\n", @n, cpu, (uint64)$sh->frags[0].netmem, $sh->frags[0].offset, $sh->frags[0].len, $sh->nr_frags);
}}
"#
    );
    format!("{body}{PAGE_PROBES}{}", probe::END_PROBE)
}

/// The kernel's pages from the probe's lines: frames `first..first + payloads.len()` (the
/// writev numbers, from 1), judged only if the trace can be trusted (module doc).
pub fn kernel_pages(
    lines: &[String],
    first: u64,
    payloads: &[u32],
) -> Result<FragCache, Inconclusive> {
    let bad = |why: String| Inconclusive(why);
    let lines: Vec<Line> = lines
        .iter()
        .map(|l| parse(l))
        .collect::<Result<_, _>>()
        .map_err(bad)?;
    let base = refill_base(&lines, first)
        .ok_or_else(|| bad(format!("frame {first} is not a refill at offset 0")))?;
    let mut allocs: HashMap<u64, Vec<(u64, u64, u64)>> = HashMap::new();
    let mut freed = Vec::new();
    let mut frags = BTreeMap::new();
    for l in &lines {
        match *l {
            Line::Alloc { n, cpu, pfn, order } => {
                allocs.entry(n).or_default().push((pfn, order, cpu))
            }
            Line::Free { pfn } => freed.push(pfn),
            Line::Frag { n, .. } => {
                if frags.insert(n, *l).is_some() {
                    return Err(bad(format!("frame {n} traced twice")));
                }
            }
            Line::Mark => {}
        }
    }
    let mut out = FragCache::default();
    let mut pfns: Vec<u64> = Vec::new();
    let (mut cur, mut next_offset) = (None, 0);
    for (i, &payload) in payloads.iter().enumerate() {
        let n = first + i as u64;
        let Some(&Line::Frag {
            page,
            offset,
            len,
            nr_frags,
            ..
        }) = frags.get(&n)
        else {
            return Err(bad(format!("frame {n}: no fragment traced")));
        };
        if len != u64::from(payload) || nr_frags != 1 {
            return Err(bad(format!(
                "frame {n}: {nr_frags} frags, the first of {len} bytes; {payload} written"
            )));
        }
        let pfn = page.wrapping_sub(base) / STRUCT_PAGE;
        if Some(pfn) != cur {
            let alloc = allocs.get(&n).and_then(|a| a.iter().find(|a| a.0 == pfn));
            let (Some(&(_, order, cpu)), 0) = (alloc, offset) else {
                return Err(bad(format!(
                    "frame {n}: a page not allocated in its writev, or not at offset 0 \
                     (another user of CPU 0's frag cache)"
                )));
            };
            out.pages.push(PageView {
                order,
                cpu,
                ..PageView::default()
            });
            pfns.push(pfn);
            cur = Some(pfn);
        } else if offset == 0 {
            out.reuses += 1;
        } else if offset != next_offset {
            return Err(bad(format!(
                "frame {n}: offset {offset}, the cache's stride gives {next_offset} (another \
                 user of CPU 0's frag cache)"
            )));
        }
        next_offset = offset + u64::from(napi_frag_stride(payload));
        out.fragments += 1;
        if let Some(p) = out.pages.last_mut() {
            p.fragments += 1;
        }
    }
    for (p, pfn) in out.pages.iter_mut().zip(&pfns) {
        p.freed = freed.contains(pfn);
    }
    Ok(out)
}

/// Seed 001's oracle run: the frag cache's pages through tun's NAPI frags path.
pub struct NapiFrags {
    variant: String,
    reader: Reader,
    payloads: Vec<u32>,
    model: FragCache,
}

impl KernelRun for NapiFrags {
    type Ask = Ask<RxScenario>;
    type Seen = Seen;

    fn plan(ask: Ask<RxScenario>) -> Result<NapiFrags, String> {
        let reader = check(&ask.sc)?;
        let (payloads, model) = model(&ask.sc, &ask.variant)?;
        Ok(NapiFrags {
            variant: ask.variant,
            reader,
            payloads,
            model,
        })
    }

    fn tracepoints(&self) -> Vec<&'static str> {
        TRACEPOINTS.to_vec()
    }

    fn script(&self) -> String {
        script()
    }

    fn once(&self, _: u16) -> Result<Seen, RunError> {
        let (lines, first) =
            super::napi_writer::run_kernel(&self.payloads, self.reader, &self.script())?;
        let kernel = kernel_pages(&lines, first, &self.payloads)?;
        let setup = serde_json::json!({
            "path": "TAP with IFF_NAPI | IFF_NAPI_FRAGS: writev -> tun_napi_alloc_frags \
                (netdev_alloc_frag: CPU 0's napi_alloc_cache.page) -> napi_gro_frags",
            "frame": "one writev: Ethernet + IPv4 + UDP headers, then the payload",
            "reader": format!("{:?} on CPU 0", self.reader),
            "first_frame": "the first refill of CPU 0's cache (held frames before it prime it)",
        });
        Ok(Seen::new(pages(kernel), setup))
    }
}

impl Oracle for NapiFrags {
    const MECHANISM: &'static str = RxScenario::NAME;

    fn variant(&self) -> &str {
        &self.variant
    }

    fn model(&self) -> Side {
        pages(self.model.clone())
    }
}

/// A side of pages only.
fn pages(cache: FragCache) -> Side {
    Side {
        frag_cache: Some(cache),
        ..Side::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::kernel::rx_scenario as scenario;

    const BASE: u64 = 0xffff_ea00_0000_0000;

    /// Probe lines for frames of 1,448 bytes (stride 1,472): `(n, pfn, offset)` each, an
    /// alloc line where `alloc` says so.
    fn lines(frames: &[(u64, u64, u64, bool)]) -> Vec<String> {
        let mut out = Vec::new();
        for &(n, pfn, offset, alloc) in frames {
            if alloc {
                out.push(format!("alloc {n} 0 {pfn} 3"));
            }
            let page = BASE + pfn * STRUCT_PAGE;
            out.push(format!("frag {n} 0 {page} {offset} 1448 1"));
            out.push(format!("mark {n}"));
        }
        out
    }

    #[test]
    fn pages_reuses_and_frees_come_from_the_frames_offsets() {
        // Frame 1 on a foreign page; frame 2 the refill; 22 a page, then a new page.
        let mut f = vec![(1, 7, 4416, false), (2, 100, 0, true)];
        f.extend((1..22).map(|i| (2 + i, 100, i * 1472, false)));
        f.push((24, 200, 0, true));
        let mut l = lines(&f);
        l.push("alloc 5 0 999 1".into());
        l.push("free 30 1 100 3".into());
        l.push("free 30 1 999 1".into());
        let payloads = vec![1448; 23];
        let p = kernel_pages(&l, 2, &payloads).unwrap();
        assert_eq!(p.fragments, 23);
        assert_eq!(p.reuses, 0);
        let got: Vec<_> = p
            .pages
            .iter()
            .map(|p| (p.order, p.fragments, p.freed))
            .collect();
        assert_eq!(got, [(3, 22, true), (3, 1, false)]);
        // The same page again at offset 0: the cache started over on it.
        let mut l2 = lines(&f[..23]);
        l2.extend(lines(&[(24, 100, 0, false)]));
        let p = kernel_pages(&l2, 2, &payloads).unwrap();
        assert_eq!((p.pages.len(), p.reuses), (1, 1));
    }

    #[test]
    fn a_foreign_fragment_in_between_makes_the_trace_untrusted() {
        // Frame 3 one stride too far: something else took a fragment of CPU 0's cache.
        let l = lines(&[
            (1, 100, 0, true),
            (2, 100, 1472, false),
            (3, 100, 4416, false),
        ]);
        let e = kernel_pages(&l, 1, &[1448; 3]).unwrap_err();
        assert!(e.0.contains("another user"), "{e:?}");
        // A new page not allocated in the frame's writev.
        let l = lines(&[(1, 100, 0, true), (2, 300, 0, false)]);
        assert!(kernel_pages(&l, 1, &[1448; 2]).is_err());
        // A start that is no refill: vmemmap_base would not be 1 GiB aligned.
        let mut l = lines(&[(1, 100, 0, false)]);
        l.insert(0, "alloc 1 0 101 3".into());
        assert!(refill_base(&l.iter().map(|l| parse(l).unwrap()).collect::<Vec<_>>(), 1).is_none());
        assert!(kernel_pages(&l, 1, &[1448]).is_err());
        // A frame missing.
        assert!(kernel_pages(&lines(&[(1, 100, 0, true)]), 1, &[1448; 2]).is_err());
    }

    #[test]
    fn the_model_counts_its_frag_cache_pages_only() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenarios/");
        let read = |f: &str| scenario(&std::fs::read_to_string(format!("{dir}{f}")).unwrap());
        let (payloads, p) = model(&read("rx-napi-frags-lagging.toml"), "modern").unwrap();
        assert_eq!(payloads, [1448; 100]);
        let frames: Vec<_> = p
            .pages
            .iter()
            .map(|p| (p.order, p.fragments, p.freed))
            .collect();
        let mut want = vec![(3, 22, true); 4];
        want.push((3, 12, false));
        assert_eq!(frames, want);
        let (_, p) = model(&read("rx-napi-frags-prompt.toml"), "modern").unwrap();
        assert_eq!((p.pages.len(), p.reuses, p.pages[0].fragments), (1, 4, 100));
    }

    #[test]
    fn what_the_run_cannot_hold_is_refused_by_name() {
        let refused = |extra: &str| {
            let sc = scenario(&format!(
                "mechanism = \"rx\"\n[nic]\ndriver = \"napi-frags\"\n{extra}\n\
                 [[ops]]\nop = \"arrive\"\nframes = 1\n"
            ));
            check(&sc).err().unwrap()
        };
        assert!(refused("[socket]\nproto = \"tcp\"").starts_with("socket.proto"));
        assert!(refused("[socket]\nproto = \"udp\"\n[app]\ncpu = 1").starts_with("app.cpu"));
        assert!(
            refused("rps = true\n[socket]\nproto = \"udp\"\n[app]\ncpu = 0").starts_with("nic.rps")
        );
        assert!(
            refused("[socket]\nproto = \"udp\"\n[app]\ncpu = 0\nprompt = true").starts_with("app:")
        );
        let sc = scenario(
            "mechanism = \"rx\"\n[nic]\ndriver = \"napi-frags\"\n[socket]\nproto = \"udp\"\n\
             [app]\ncpu = 0\n[[ops]]\nop = \"recvmsg\"\n[[ops]]\nop = \"close\"\n",
        );
        assert!(check(&sc).unwrap_err().starts_with("ops[0]"));
        let sc = scenario(
            "mechanism = \"rx\"\n[nic]\ndriver = \"napi-frags\"\n[socket]\nproto = \"udp\"\n\
             [app]\ncpu = 0\n[[ops]]\nop = \"arrive\"\nframes = 1\n",
        );
        assert!(check(&sc).unwrap_err().contains("ends with `close`"));
    }
}

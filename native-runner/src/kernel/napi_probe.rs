//! The page lines both NAPI frags runs trace of CPU 0's frag cache: their probes, each probe
//! line parsed, and the refill that starts a run.

/// sizeof(struct page) on x86_64: vmemmap is an array of them.
pub(super) const STRUCT_PAGE: u64 = 64;
/// vmemmap_base is aligned to PUD_SIZE (1 GiB) under KASLR (arch/x86/mm/kaslr.c).
const VMEMMAP_ALIGN: u64 = 1 << 30;

/// The page lines: every page allocated in one of the writer's writevs (`@w`, numbered by
/// `@n`), and any later free of one of them.
pub(super) const PAGE_PROBES: &str = r#"tracepoint:kmem:mm_page_alloc /@w[tid]/ {
  printf("alloc %d %u %llu %u\n", @n, cpu, (uint64)args->pfn, args->order);
  @ours[(uint64)args->pfn] = 1;
}
tracepoint:kmem:mm_page_free /@ours[(uint64)args->pfn]/ {
  printf("free %d %u %llu %u\n", @n, cpu, (uint64)args->pfn, args->order);
  delete(@ours[(uint64)args->pfn]);
}
"#;

/// One probe line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Line {
    /// Frame `n`'s fragment: its `struct page`, offset, length, and the skb's nr_frags.
    Frag {
        n: u64,
        page: u64,
        offset: u64,
        len: u64,
        nr_frags: u64,
    },
    /// A page allocated in frame `n`'s writev.
    Alloc {
        n: u64,
        cpu: u64,
        pfn: u64,
        order: u64,
    },
    /// One of those freed (anywhere).
    Free {
        pfn: u64,
    },
    Mark,
}

pub(super) fn parse(l: &str) -> Result<Line, String> {
    let mut w = l.split_whitespace();
    let kind = w.next().unwrap_or_default();
    let v: Vec<u64> = w
        .map(str::parse)
        .collect::<Result<_, _>>()
        .map_err(|e| format!("probe line {l:?}: {e}"))?;
    let want = match kind {
        "frag" => 6,
        "alloc" | "free" => 4,
        "mark" => 1,
        _ => return Err(format!("unexpected probe line: {l}")),
    };
    if v.len() != want {
        return Err(format!("probe line {l:?}: expected {want} numbers"));
    }
    Ok(match kind {
        "frag" => Line::Frag {
            n: v[0],
            page: v[2],
            offset: v[3],
            len: v[4],
            nr_frags: v[5],
        },
        "alloc" => Line::Alloc {
            n: v[0],
            cpu: v[1],
            pfn: v[2],
            order: v[3],
        },
        "free" => Line::Free { pfn: v[2] },
        _ => Line::Mark,
    })
}

/// The refill that starts the run, if frame `n` is one: its fragment at offset 0 of a page
/// allocated in its own writev, with vmemmap_base (`page - 64 * pfn`) 1 GiB aligned.
/// Returns vmemmap_base.
pub(super) fn refill_base(lines: &[Line], n: u64) -> Option<u64> {
    let frag = lines.iter().find_map(|l| match *l {
        Line::Frag {
            n: f,
            page,
            offset: 0,
            ..
        } if f == n => Some(page),
        _ => None,
    })?;
    lines.iter().find_map(|l| match *l {
        Line::Alloc { n: a, pfn, .. } if a == n => {
            let base = frag.wrapping_sub(pfn * STRUCT_PAGE);
            (base % VMEMMAP_ALIGN == 0).then_some(base)
        }
        _ => None,
    })
}

//! The per-CPU receive frag caches: `netdev_alloc_frag` (v3.5 before seed 001, the seed as
//! posted, and v3.6 as shipped), today's `page_frag_cache` (v6.12), and v6.12's 1 KiB
//! small-head cache beside it ([`FragCache1k`]).
//!
//! A cache is `{page, offset}` on one CPU. It hands out `fragsz`-byte pieces of its page and
//! each piece holds one page reference, dropped with `put_page` when the skb that uses it is
//! freed. The allocators ([`Allocator`]) share refill, release and accounting; v3.5 and the
//! seed as posted `get_page` per piece, v3.6 and v6.12 take the references in advance
//! (`pagecnt_bias`) and differ only in constants and in which way the offset counts.

use super::kernel::{self, Mem};
use super::variant::Allocator;
use crate::consts::KernelConsts;
use crate::events::{Cpu, Event, PageId};
use crate::page::Refill;
use crate::replay::Log;
use crate::skb::Frag;
use crate::trace::Cursor;
use crate::NR_CPUS;

/// PAGE_FRAG_CACHE_MAX_SIZE = `__ALIGN_MASK(32768, ~PAGE_MASK)` = 32 KiB
/// (include/linux/mm_types.h in v6.12; include/linux/page_frag_cache.h from 6.13); its order
/// is PAGE_FRAG_CACHE_MAX_ORDER = 3.
pub const PAGE_FRAG_CACHE_MAX_SIZE: u32 = 32768;
const PAGE_FRAG_CACHE_MAX_ORDER: u32 = 3;

/// SZ_1K: the piece v6.12's small-head cache hands out (include/linux/sizes.h).
pub const SZ_1K: u32 = 1024;

/// One CPU's cache: `struct netdev_alloc_cache` (v3.5, v3.6) or `struct page_frag_cache`
/// (v6.12, `napi_alloc_cache.page`). Its page, offset, size and `pagecnt_bias` are the
/// state's cursor `cpu` ([`Cursor`]); this holds only what the state does not.
#[derive(Clone, Debug, Default)]
pub struct FragCache {
    pub cpu: Cpu,
    /// Which of the kernels' caches this is.
    pub alloc: Allocator,
    /// How its refills behave.
    pub knobs: RefillKnobs,
    /// PAGE_SIZE.
    pub page_size: u32,
    /// SMP_CACHE_BYTES (v3.6's NETDEV_PAGECNT_BIAS is PAGE_SIZE / SMP_CACHE_BYTES).
    pub smp_cache_bytes: u32,
    /// v6.12 `nc->pfmemalloc`: the page came from the emergency reserves.
    pub pfmemalloc: bool,
    /// Fragments handed out.
    pub frags: u64,
    /// Pages taken by refills.
    pub pages: u64,
}

/// A cursor as a cache reads it: the offset counts up (v3.5 before and v3.6: bytes handed
/// out) or down (the seed as posted and v6.12: bytes still free, from the page size).
#[derive(Clone, Copy, Debug)]
struct At {
    page: Option<PageId>,
    offset: u32,
    size: u32,
    bias: u32,
}

impl At {
    fn of(c: &Cursor) -> At {
        At {
            page: c.page,
            offset: c.offset,
            size: c.size,
            bias: c.bias.unwrap_or(0),
        }
    }
}

/// How the modern cache's refill behaves (scenario knobs).
#[derive(Clone, Copy, Debug, Default)]
pub struct RefillKnobs {
    /// The order-3 allocation fails (fragmented memory): fall back to an order-0 page.
    pub high_order_fails: bool,
    /// Pages come from the pfmemalloc reserves (memory pressure): never reused. Only the
    /// order-0 fallback may dip into the reserves, so this implies `high_order_fails`.
    pub pfmemalloc: bool,
}

impl FragCache {
    pub fn new(cpu: Cpu, alloc: Allocator, knobs: RefillKnobs, k: &KernelConsts) -> FragCache {
        FragCache {
            cpu,
            alloc,
            knobs,
            page_size: k.page_size,
            smp_cache_bytes: k.smp_cache_bytes,
            ..Default::default()
        }
    }

    /// The name of its cursor in the state.
    pub fn cursor_name(&self) -> String {
        let name = match self.alloc {
            Allocator::Modern => "napi_alloc_cache.page",
            _ => "netdev_alloc_cache",
        };
        format!("{name} cpu{}", self.cpu)
    }

    /// Its cursor now.
    fn at(&self, log: &Log) -> At {
        At::of(&log.state().cursors[self.cpu as usize])
    }

    /// Whether this cache takes its page references in advance (`pagecnt_bias`).
    fn biased(&self) -> bool {
        matches!(self.alloc, Allocator::Duyck36 | Allocator::Modern)
    }

    /// Whether the offset counts up from 0 (else down from the page size).
    fn counts_up(&self) -> bool {
        matches!(self.alloc, Allocator::Pre2012 | Allocator::Duyck36)
    }

    /// Hands out `fragsz` bytes with one page reference for the caller.
    pub fn alloc(&mut self, mem: &mut Mem, fragsz: u32, log: &mut Log) -> Frag {
        let (page, offset, cursor) = match self.alloc {
            Allocator::Pre2012 => self.alloc_up(mem, fragsz, log),
            Allocator::Duyck2012 => self.alloc_duyck(mem, fragsz, log),
            Allocator::Duyck36 | Allocator::Modern => self.alloc_biased(mem, fragsz, log),
        };
        self.frags += 1;
        let cpu = self.cpu;
        let bias = self.biased().then(|| self.at(log).bias - 1);
        log.emit(Event::FragAlloc {
            cpu,
            page,
            offset,
            size: fragsz,
            cursor,
            bias,
        });
        Frag {
            page,
            offset,
            size: fragsz,
        }
    }

    /// `netdev_alloc_frag` in v3.5 (net/core/skbuff.c, the `-` side of seed 001): the offset
    /// counts up; when the fragment does not fit, `put_page` the cache's reference and take a
    /// brand-new page. `get_page` per fragment. Returns the page, the fragment's offset and
    /// the cursor's after it.
    fn alloc_up(&mut self, mem: &mut Mem, fragsz: u32, log: &mut Log) -> (PageId, u32, u32) {
        let c = self.at(log);
        let page = match c.page {
            Some(p) if c.offset + fragsz <= c.size => p,
            held => {
                if let Some(old) = held {
                    self.release(mem, old, log);
                }
                self.refill_order0(mem, log)
            }
        };
        let offset = self.at(log).offset;
        mem.pages.get(page, log);
        (page, offset, offset + fragsz)
    }

    /// `netdev_alloc_frag` after seed 001 as posted (Duyck, June 2012; v3.6 shipped a revised
    /// form, see docs/mechanisms.md): the offset counts down from
    /// PAGE_SIZE, and on every allocation a page whose count is 1 (only the cache holds it:
    /// every earlier fragment came back) is started over from PAGE_SIZE.
    fn alloc_duyck(&mut self, mem: &mut Mem, fragsz: u32, log: &mut Log) -> (PageId, u32, u32) {
        loop {
            let page = match self.at(log).page {
                Some(p) => p,
                None => self.refill_order0(mem, log),
            };
            let c = self.at(log);
            let mut offset = c.offset;
            let p = kernel::page(log.state(), page);
            if p.count == 1 {
                if p.used > 0 {
                    mem.pages.reuse(page, c.size, None, log);
                }
                offset = c.size;
            }
            if offset < fragsz {
                self.release(mem, page, log);
                continue;
            }
            mem.pages.get(page, log);
            return (page, offset - fragsz, offset - fragsz);
        }
    }

    /// The two caches that take their references in advance:
    /// - v3.6 `__netdev_alloc_frag` (net/core/skbuff.c): the offset counts up from 0 on an
    ///   order-0 page; a fragment fits while `offset + fragsz <= PAGE_SIZE`.
    /// - v6.12 `__page_frag_alloc_align` + `__page_frag_cache_refill` (mm/page_alloc.c; the
    ///   offset counts down until 6.13): a 32 KiB compound page (order-0 fallback), the
    ///   offset counts down from its size.
    ///
    /// A refill gives the page its full bias of references at once ([`Self::full_bias`]);
    /// each fragment spends one from `pagecnt_bias` without touching the page. Only when a
    /// fragment does not fit does the cache compare the page's count with the bias it still
    /// holds (v3.6: `atomic_read(&page->_count) == pagecnt_bias`, else
    /// `atomic_sub_and_test`; v6.12: `page_ref_sub_and_test`): nothing left over means every
    /// fragment came back, so the page is reused from the start (v6.12: unless it is
    /// pfmemalloc); otherwise the cache forgets the page, which the last fragment's
    /// `put_page` frees.
    fn alloc_biased(&mut self, mem: &mut Mem, fragsz: u32, log: &mut Log) -> (PageId, u32, u32) {
        loop {
            let page = match self.at(log).page {
                Some(p) => p,
                None => self.refill_biased(mem, log),
            };
            let c = self.at(log);
            if let Some((offset, cursor)) = self.fit(c, fragsz) {
                return (page, offset, cursor);
            }
            let count = kernel::page(log.state(), page).count - c.bias;
            let cpu = self.cpu;
            if count > 0 || self.pfmemalloc {
                log.emit(Event::FragCacheRelease { cpu, page, count });
            }
            if count > 0 {
                continue;
            }
            if self.pfmemalloc {
                // free_unref_page: nobody else holds it, give it straight back.
                mem.put_released(page, cpu, log);
                continue;
            }
            // v3.6 `goto recycle`, v6.12 `set_page_count`: start over on the same page.
            mem.pages
                .reuse(page, self.start(c.size), Some(self.full_bias()), log);
        }
    }

    /// Where a fragment of `fragsz` bytes goes and where the offset moves to, if it fits.
    fn fit(&self, c: At, fragsz: u32) -> Option<(u32, u32)> {
        if self.counts_up() {
            let end = c.offset + fragsz;
            (end <= c.size).then_some((c.offset, end))
        } else {
            c.offset.checked_sub(fragsz).map(|o| (o, o))
        }
    }

    /// The offset of a fresh or reused page of `size` bytes.
    fn start(&self, size: u32) -> u32 {
        if self.counts_up() {
            0
        } else {
            size
        }
    }

    /// The page's count, and the cache's bias, right after a refill or reuse: v3.6
    /// NETDEV_PAGECNT_BIAS = PAGE_SIZE / SMP_CACHE_BYTES = 64 (`atomic_set`); v6.12
    /// PAGE_FRAG_CACHE_MAX_SIZE + 1 (the allocation's own reference plus `page_ref_add`).
    fn full_bias(&self) -> u32 {
        match self.alloc {
            Allocator::Duyck36 => self.page_size / self.smp_cache_bytes,
            _ => PAGE_FRAG_CACHE_MAX_SIZE + 1,
        }
    }

    /// An order-0 refill (`alloc_page`). v3.5 sets `nc->offset = 0`; the seed as posted drops
    /// that line and leaves the old offset in place, which it never reads: a fresh page's
    /// count is 1, so the allocation starts it at PAGE_SIZE. The cursor shows that start.
    fn refill_order0(&mut self, mem: &mut Mem, log: &mut Log) -> PageId {
        let refill = Refill {
            cursor: Some(self.start(self.page_size)),
            bias: None,
        };
        self.pages += 1;
        mem.pages
            .alloc(0, self.page_size, self.cpu, Some(refill), log)
    }

    /// A biased cache's refill. v3.6: `alloc_page` (order 0). v6.12 `__page_frag_cache_refill`:
    /// the order-3 attempt carries `__GFP_NOMEMALLOC`, so it never dips into the reserves; a
    /// pfmemalloc page can only be the order-0 fallback's.
    fn refill_biased(&mut self, mem: &mut Mem, log: &mut Log) -> PageId {
        let modern = self.alloc == Allocator::Modern;
        let fallback = self.knobs.high_order_fails || self.knobs.pfmemalloc;
        let order = if modern && !fallback {
            PAGE_FRAG_CACHE_MAX_ORDER
        } else {
            0
        };
        let refill = Refill {
            cursor: Some(self.start(self.page_size << order)),
            bias: Some(self.full_bias()),
        };
        self.pages += 1;
        self.pfmemalloc = modern && self.knobs.pfmemalloc;
        mem.pages
            .alloc(order, self.page_size, self.cpu, Some(refill), log)
    }

    /// v3.5: the cache drops its own reference (`put_page`) and forgets the page.
    fn release(&mut self, mem: &mut Mem, page: PageId, log: &mut Log) {
        let cpu = self.cpu;
        let count = kernel::page(log.state(), page).count - 1;
        log.emit(Event::FragCacheRelease { cpu, page, count });
        mem.put_released(page, cpu, log);
    }
}

/// v6.12's small-head cache, `napi_alloc_cache.page_small` (`struct page_frag_1k`,
/// `page_frag_alloc_1k` in net/core/skbuff.c; built where PAGE_SIZE is 4 KiB,
/// NAPI_HAS_SMALL_PAGE_FRAG; from "net: skb: introduce and use a single page frag cache",
/// v6.1, until its revert in 6.14): `napi_alloc_skb` takes every head of at most
/// SKB_WITH_OVERHEAD(1024) bytes as one 1 KiB piece of an order-0 page, counting down from
/// 3072. A refill takes the references for all four pieces at once (`page_ref_add(page, 3)`
/// on top of the allocation's own) and keeps none for itself, so the page goes back when its
/// fourth head is freed, and is never reused. The kernel struct has no `pagecnt_bias`; the
/// cursor shows the references still held for the pieces to come (`offset / SZ_1K`), and
/// lets go of the page once the last piece is handed out.
#[derive(Clone, Debug, Default)]
pub struct FragCache1k {
    pub cpu: Cpu,
    /// PAGE_SIZE.
    pub page_size: u32,
    /// Fragments handed out.
    pub frags: u64,
    /// Pages taken by refills.
    pub pages: u64,
}

impl FragCache1k {
    pub fn new(cpu: Cpu, page_size: u32) -> FragCache1k {
        FragCache1k {
            cpu,
            page_size,
            ..Default::default()
        }
    }

    /// The name of its cursor in the state, which lists these after the frag caches.
    pub fn cursor_name(&self) -> String {
        format!("napi_alloc_cache.page_small cpu{}", self.cpu)
    }

    /// `page_frag_alloc_1k`: `offset = nc->offset - SZ_1K`, on a new page when that is
    /// negative (then `offset = PAGE_SIZE - SZ_1K` and `page_ref_add(page, offset / SZ_1K)`).
    /// The cursor lets go of the page with its last piece, so a held page always has one.
    pub fn alloc(&mut self, mem: &mut Mem, log: &mut Log) -> Frag {
        let cpu = self.cpu;
        let c = &log.state().cursors[NR_CPUS + cpu as usize];
        let (page, offset) = match c.page {
            Some(page) => (page, c.offset - SZ_1K),
            None => {
                let offset = self.page_size - SZ_1K;
                let refill = Refill {
                    cursor: None,
                    bias: Some(offset / SZ_1K + 1),
                };
                self.pages += 1;
                let page = mem.pages.alloc(0, self.page_size, cpu, Some(refill), log);
                (page, offset)
            }
        };
        self.frags += 1;
        // The references still held for the pieces to come (no `pagecnt_bias` in the
        // kernel struct: `offset / SZ_1K`), while the cache holds the page.
        let bias = (offset > 0).then_some(offset / SZ_1K);
        log.emit(Event::FragAlloc1k {
            cpu,
            page,
            offset,
            size: SZ_1K,
            bias,
        });
        Frag {
            page,
            offset,
            size: SZ_1K,
        }
    }
}

//! The per-CPU receive frag cache: `netdev_alloc_frag` (v3.5, before and after seed 001) and
//! today's `page_frag_cache` (v6.12).
//!
//! A cache is `{page, offset}` on one CPU. It hands out `fragsz`-byte pieces of its page and
//! each piece holds one page reference, dropped with `put_page` when the skb that uses it is
//! freed. The three variants ([`Allocator`]) share refill, release and accounting; each is one
//! short function saying how the cursor moves and when a page is reused.

use super::{Allocator, Kernel};
use crate::page::{PageId, Refill};
use crate::skb::Frag;
use crate::trace::{Cursor, Event, Events};
use crate::Cpu;

/// PAGE_FRAG_CACHE_MAX_SIZE = `__ALIGN_MASK(32768, ~PAGE_MASK)` = 32 KiB
/// (include/linux/mm_types.h, v6.12); its order is PAGE_FRAG_CACHE_MAX_ORDER = 3.
pub const PAGE_FRAG_CACHE_MAX_SIZE: u32 = 32768;
const PAGE_FRAG_CACHE_MAX_ORDER: u32 = 3;

/// One CPU's cache: `struct netdev_alloc_cache` (v3.5) or `struct page_frag_cache` (v6.12).
#[derive(Clone, Debug, Default)]
pub struct FragCache {
    pub cpu: Cpu,
    pub page: Option<PageId>,
    /// v3.5 before: bytes handed out (counts up). Duyck 2012 and v6.12: bytes still free
    /// (counts down from the page size).
    pub offset: u32,
    /// Bytes in the page (`nc->size`, PAGE_SIZE << order).
    pub size: u32,
    /// v6.12 `pagecnt_bias`: references taken in advance at refill and not yet handed out.
    pub bias: u32,
    /// v6.12 `nc->pfmemalloc`: the page came from the emergency reserves.
    pub pfmemalloc: bool,
}

/// How the modern cache's refill behaves (scenario knobs).
#[derive(Clone, Copy, Debug, Default)]
pub struct RefillKnobs {
    /// The order-3 allocation fails (fragmented memory): fall back to an order-0 page.
    pub high_order_fails: bool,
    /// Pages come from the pfmemalloc reserves (memory pressure): never reused.
    pub pfmemalloc: bool,
}

impl FragCache {
    pub fn new(cpu: Cpu) -> FragCache {
        FragCache {
            cpu,
            ..Default::default()
        }
    }

    /// Hands out `fragsz` bytes with one page reference for the caller.
    pub fn alloc(
        &mut self,
        k: &mut Kernel,
        fragsz: u32,
        knobs: RefillKnobs,
        ev: &mut Events,
    ) -> Frag {
        let offset = match k.variant.alloc {
            Allocator::Pre2012 => self.alloc_up(k, fragsz, ev),
            Allocator::Duyck2012 => self.alloc_duyck(k, fragsz, ev),
            Allocator::Modern => self.alloc_biased(k, fragsz, knobs, ev),
        };
        let page = self.page.expect("model bug: frag cache without a page");
        k.pool.page_mut(page).used += fragsz;
        k.stats.frags_allocated += 1;
        let (cpu, cursor) = (self.cpu, self.offset);
        let bias = (k.variant.alloc == Allocator::Modern).then_some(self.bias);
        ev.emit(|| Event::FragAlloc {
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
    /// brand-new page. `get_page` per fragment.
    fn alloc_up(&mut self, k: &mut Kernel, fragsz: u32, ev: &mut Events) -> u32 {
        let page = match self.page {
            Some(p) if self.offset + fragsz <= self.size => p,
            held => {
                if let Some(old) = held {
                    self.release(k, old, ev);
                }
                self.offset = 0;
                self.refill_order0(k, ev)
            }
        };
        let offset = self.offset;
        self.offset += fragsz;
        k.pool.get(page, ev);
        offset
    }

    /// `netdev_alloc_frag` after seed 001 (Duyck, v3.6): the offset counts down from
    /// PAGE_SIZE, and on every allocation a page whose count is 1 (only the cache holds it:
    /// every earlier fragment came back) is started over from PAGE_SIZE.
    fn alloc_duyck(&mut self, k: &mut Kernel, fragsz: u32, ev: &mut Events) -> u32 {
        loop {
            let page = match self.page {
                Some(p) => p,
                None => self.refill_order0(k, ev),
            };
            let mut offset = self.offset;
            if k.pool.count(page) == 1 {
                if k.pool.page(page).used > 0 {
                    k.pool.note_reuse(page, self.size, None, ev);
                }
                offset = self.size;
            }
            if offset < fragsz {
                self.release(k, page, ev);
                continue;
            }
            self.offset = offset - fragsz;
            k.pool.get(page, ev);
            return self.offset;
        }
    }

    /// `__page_frag_alloc_align` + `__page_frag_cache_refill` in v6.12 (mm/page_alloc.c;
    /// the offset counts down until 6.13): refill takes a 32 KiB compound page (order-0
    /// fallback) and adds PAGE_FRAG_CACHE_MAX_SIZE references at once (`page_ref_add`),
    /// recording them in `pagecnt_bias`; each fragment spends one from the bias without
    /// touching the page. Only when a fragment does not fit does the cache subtract its unused
    /// bias (`page_ref_sub_and_test`): zero means every fragment came back, so the page is
    /// reused from the top (unless it is pfmemalloc); otherwise the cache forgets the page,
    /// which the last fragment's `put_page` frees.
    fn alloc_biased(
        &mut self,
        k: &mut Kernel,
        fragsz: u32,
        knobs: RefillKnobs,
        ev: &mut Events,
    ) -> u32 {
        loop {
            let page = match self.page {
                Some(p) => p,
                None => self.refill_biased(k, knobs, ev),
            };
            if let Some(offset) = self.offset.checked_sub(fragsz) {
                self.bias -= 1;
                self.offset = offset;
                return offset;
            }
            let count = k.pool.count(page) - self.bias;
            k.pool.page_mut(page).count = count;
            let cpu = self.cpu;
            self.page = None;
            if count > 0 || self.pfmemalloc {
                ev.emit(|| Event::FragCacheRelease { cpu, page, count });
            }
            if count > 0 {
                continue;
            }
            if self.pfmemalloc {
                // free_unref_page: nobody else holds it, give it straight back.
                k.pool.page_mut(page).count = 1;
                k.put_page(page, cpu, ev);
                continue;
            }
            // set_page_count(page, PAGE_FRAG_CACHE_MAX_SIZE + 1): start over on the same page.
            k.pool.page_mut(page).count = PAGE_FRAG_CACHE_MAX_SIZE + 1;
            let bias = Some(PAGE_FRAG_CACHE_MAX_SIZE + 1);
            k.pool.note_reuse(page, self.size, bias, ev);
            self.page = Some(page);
            self.bias = PAGE_FRAG_CACHE_MAX_SIZE + 1;
            self.offset = self.size;
        }
    }

    fn refill_order0(&mut self, k: &mut Kernel, ev: &mut Events) -> PageId {
        let refill = Refill {
            cursor: self.offset,
            bias: None,
        };
        let page = k
            .pool
            .alloc(0, k.consts.page_size, self.cpu, Some(refill), ev);
        k.stats.frag_cache_pages += 1;
        self.page = Some(page);
        self.size = k.consts.page_size;
        page
    }

    fn refill_biased(&mut self, k: &mut Kernel, knobs: RefillKnobs, ev: &mut Events) -> PageId {
        let order = if knobs.high_order_fails {
            0
        } else {
            PAGE_FRAG_CACHE_MAX_ORDER
        };
        let refill = Refill {
            cursor: k.consts.page_bytes(order),
            bias: Some(PAGE_FRAG_CACHE_MAX_SIZE + 1),
        };
        let page = k
            .pool
            .alloc(order, k.consts.page_size, self.cpu, Some(refill), ev);
        k.stats.frag_cache_pages += 1;
        // page_ref_add(page, PAGE_FRAG_CACHE_MAX_SIZE): the count becomes 1 + MAX_SIZE.
        k.pool.page_mut(page).count += PAGE_FRAG_CACHE_MAX_SIZE;
        self.page = Some(page);
        self.size = k.consts.page_bytes(order);
        self.offset = self.size;
        self.bias = PAGE_FRAG_CACHE_MAX_SIZE + 1;
        self.pfmemalloc = knobs.pfmemalloc;
        page
    }

    /// v3.5: the cache drops its own reference (`put_page`) and forgets the page.
    fn release(&mut self, k: &mut Kernel, page: PageId, ev: &mut Events) {
        let cpu = self.cpu;
        self.page = None;
        let count = k.pool.count(page) - 1;
        ev.emit(|| Event::FragCacheRelease { cpu, page, count });
        k.put_page(page, cpu, ev);
    }

    /// References the cache itself holds on its page (1, or the unspent bias).
    pub fn own_refs(&self, alloc: Allocator) -> u32 {
        match (self.page, alloc) {
            (None, _) => 0,
            (Some(_), Allocator::Modern) => self.bias,
            (Some(_), _) => 1,
        }
    }

    /// The trace's view of this cache.
    pub fn cursor(&self, alloc: Allocator) -> Cursor {
        let name = match alloc {
            Allocator::Modern => "napi_alloc_cache.page",
            _ => "netdev_alloc_cache",
        };
        Cursor {
            name: format!("{name} cpu{}", self.cpu),
            page: self.page,
            offset: self.offset,
            size: if self.page.is_some() { self.size } else { 0 },
            bias: (alloc == Allocator::Modern && self.page.is_some()).then_some(self.bias),
        }
    }
}

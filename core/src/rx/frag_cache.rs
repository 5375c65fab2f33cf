//! The per-CPU receive frag cache: `netdev_alloc_frag` (v3.5, before and after seed 001) and
//! today's `page_frag_cache` (v6.12).
//!
//! A cache is `{page, offset}` on one CPU. It hands out `fragsz`-byte pieces of its page and
//! each piece holds one page reference, dropped with `put_page` when the skb that uses it is
//! freed. The three variants ([`Allocator`]) share refill, release and accounting; each is one
//! short function saying how the cursor moves and when a page is reused.

use super::kernel::Mem;
use super::variant::Allocator;
use crate::events::{Cpu, Event, Events, PageId};
use crate::page::Refill;
use crate::skb::Frag;
use crate::trace::Cursor;

/// PAGE_FRAG_CACHE_MAX_SIZE = `__ALIGN_MASK(32768, ~PAGE_MASK)` = 32 KiB
/// (include/linux/page_frag_cache.h, v6.12); its order is PAGE_FRAG_CACHE_MAX_ORDER = 3.
pub const PAGE_FRAG_CACHE_MAX_SIZE: u32 = 32768;
const PAGE_FRAG_CACHE_MAX_ORDER: u32 = 3;

/// One CPU's cache: `struct netdev_alloc_cache` (v3.5) or `struct page_frag_cache` (v6.12).
#[derive(Clone, Debug, Default)]
pub struct FragCache {
    pub cpu: Cpu,
    /// Which of the three kernels' caches this is.
    pub alloc: Allocator,
    /// How its refills behave.
    pub knobs: RefillKnobs,
    /// PAGE_SIZE.
    pub page_size: u32,
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
    /// Fragments handed out.
    pub frags: u64,
    /// Pages taken by refills.
    pub pages: u64,
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
    pub fn new(cpu: Cpu, alloc: Allocator, knobs: RefillKnobs, page_size: u32) -> FragCache {
        FragCache {
            cpu,
            alloc,
            knobs,
            page_size,
            ..Default::default()
        }
    }

    /// Hands out `fragsz` bytes with one page reference for the caller.
    pub fn alloc(&mut self, mem: &mut Mem, fragsz: u32, ev: &mut Events) -> Frag {
        let offset = match self.alloc {
            Allocator::Pre2012 => self.alloc_up(mem, fragsz, ev),
            Allocator::Duyck2012 => self.alloc_duyck(mem, fragsz, ev),
            Allocator::Modern => self.alloc_biased(mem, fragsz, ev),
        };
        let page = self.page.expect("model bug: frag cache without a page");
        mem.pool.page_mut(page).used += fragsz;
        self.frags += 1;
        let (cpu, cursor) = (self.cpu, self.offset);
        let bias = (self.alloc == Allocator::Modern).then_some(self.bias);
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
    fn alloc_up(&mut self, mem: &mut Mem, fragsz: u32, ev: &mut Events) -> u32 {
        let page = match self.page {
            Some(p) if self.offset + fragsz <= self.size => p,
            held => {
                if let Some(old) = held {
                    self.release(mem, old, ev);
                }
                self.offset = 0;
                self.refill_order0(mem, ev)
            }
        };
        let offset = self.offset;
        self.offset += fragsz;
        mem.pool.get(page, ev);
        offset
    }

    /// `netdev_alloc_frag` after seed 001 as posted (Duyck, June 2012; v3.6 shipped a revised
    /// form, see docs/mechanisms.md): the offset counts down from
    /// PAGE_SIZE, and on every allocation a page whose count is 1 (only the cache holds it:
    /// every earlier fragment came back) is started over from PAGE_SIZE.
    fn alloc_duyck(&mut self, mem: &mut Mem, fragsz: u32, ev: &mut Events) -> u32 {
        loop {
            let page = match self.page {
                Some(p) => p,
                None => self.refill_order0(mem, ev),
            };
            let mut offset = self.offset;
            if mem.pool.count(page) == 1 {
                if mem.pool.page(page).used > 0 {
                    mem.pool.note_reuse(page, self.size, None, ev);
                }
                offset = self.size;
            }
            if offset < fragsz {
                self.release(mem, page, ev);
                continue;
            }
            self.offset = offset - fragsz;
            mem.pool.get(page, ev);
            return self.offset;
        }
    }

    /// `__page_frag_alloc_align` + `__page_frag_cache_refill` in v6.12 (mm/page_frag_cache.c;
    /// the offset counts down until 6.13): refill takes a 32 KiB compound page (order-0
    /// fallback) and adds PAGE_FRAG_CACHE_MAX_SIZE references at once (`page_ref_add`),
    /// recording them in `pagecnt_bias`; each fragment spends one from the bias without
    /// touching the page. Only when a fragment does not fit does the cache subtract its unused
    /// bias (`page_ref_sub_and_test`): zero means every fragment came back, so the page is
    /// reused from the top (unless it is pfmemalloc); otherwise the cache forgets the page,
    /// which the last fragment's `put_page` frees.
    fn alloc_biased(&mut self, mem: &mut Mem, fragsz: u32, ev: &mut Events) -> u32 {
        loop {
            let page = match self.page {
                Some(p) => p,
                None => self.refill_biased(mem, ev),
            };
            if let Some(offset) = self.offset.checked_sub(fragsz) {
                self.bias -= 1;
                self.offset = offset;
                return offset;
            }
            let count = mem.pool.count(page) - self.bias;
            mem.pool.page_mut(page).count = count;
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
                mem.pool.page_mut(page).count = 1;
                mem.put_page(page, cpu, ev);
                continue;
            }
            // set_page_count(page, PAGE_FRAG_CACHE_MAX_SIZE + 1): start over on the same page.
            mem.pool.page_mut(page).count = PAGE_FRAG_CACHE_MAX_SIZE + 1;
            let bias = Some(PAGE_FRAG_CACHE_MAX_SIZE + 1);
            mem.pool.note_reuse(page, self.size, bias, ev);
            self.page = Some(page);
            self.bias = PAGE_FRAG_CACHE_MAX_SIZE + 1;
            self.offset = self.size;
        }
    }

    fn refill_order0(&mut self, mem: &mut Mem, ev: &mut Events) -> PageId {
        let refill = Refill {
            cursor: self.offset,
            bias: None,
        };
        let page = mem
            .pool
            .alloc(0, self.page_size, self.cpu, Some(refill), ev);
        self.pages += 1;
        self.page = Some(page);
        self.size = self.page_size;
        page
    }

    /// `__page_frag_cache_refill`: the order-3 attempt carries `__GFP_NOMEMALLOC`, so it
    /// never dips into the reserves; a pfmemalloc page can only be the order-0 fallback's.
    fn refill_biased(&mut self, mem: &mut Mem, ev: &mut Events) -> PageId {
        let order = if self.knobs.high_order_fails || self.knobs.pfmemalloc {
            0
        } else {
            PAGE_FRAG_CACHE_MAX_ORDER
        };
        let refill = Refill {
            cursor: self.page_size << order,
            bias: Some(PAGE_FRAG_CACHE_MAX_SIZE + 1),
        };
        let page = mem
            .pool
            .alloc(order, self.page_size, self.cpu, Some(refill), ev);
        self.pages += 1;
        // page_ref_add(page, PAGE_FRAG_CACHE_MAX_SIZE): the count becomes 1 + MAX_SIZE.
        mem.pool.page_mut(page).count += PAGE_FRAG_CACHE_MAX_SIZE;
        self.page = Some(page);
        self.size = self.page_size << order;
        self.offset = self.size;
        self.bias = PAGE_FRAG_CACHE_MAX_SIZE + 1;
        self.pfmemalloc = self.knobs.pfmemalloc;
        page
    }

    /// v3.5: the cache drops its own reference (`put_page`) and forgets the page.
    fn release(&mut self, mem: &mut Mem, page: PageId, ev: &mut Events) {
        let cpu = self.cpu;
        self.page = None;
        let count = mem.pool.count(page) - 1;
        ev.emit(|| Event::FragCacheRelease { cpu, page, count });
        mem.put_page(page, cpu, ev);
    }

    /// The trace's view of this cache.
    pub fn cursor(&self) -> Cursor {
        let name = match self.alloc {
            Allocator::Modern => "napi_alloc_cache.page",
            _ => "netdev_alloc_cache",
        };
        Cursor {
            name: format!("{name} cpu{}", self.cpu),
            page: self.page,
            offset: self.offset,
            size: if self.page.is_some() { self.size } else { 0 },
            bias: (self.alloc == Allocator::Modern && self.page.is_some()).then_some(self.bias),
        }
    }
}

//! Pages and their reference counts (`struct page`, `get_page`, `put_page`, `alloc_pages`).
//!
//! A page is 4096 << order bytes with a count; it goes back to the allocator when the count
//! reaches zero. Every allocation and free records the CPU it ran on, so the receive side can
//! count remote frees. Page ids grow monotonically and are never reused, so a trace can name
//! "page 3" without ambiguity.

pub use crate::events::PageId;
use crate::events::{Cpu, Event, Events};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// One live page, as the trace shows it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Page {
    pub id: PageId,
    /// Compound order: the page holds `PAGE_SIZE << order` bytes.
    pub order: u32,
    /// Bytes in the page (`PAGE_SIZE << order`).
    pub size: u32,
    /// The reference count (`page_ref_count`).
    pub count: u32,
    /// The CPU that allocated it.
    pub cpu: Cpu,
    /// Bytes an allocator has handed out of it so far (how full it is).
    pub used: u32,
}

/// Allocation accounting for every page the model ever touched.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PageStats {
    pub allocated: u64,
    pub freed: u64,
    /// Times an allocator started over on a page it already held (instead of a new page).
    pub reused: u64,
    pub put_page: [u64; crate::NR_CPUS],
    pub freed_on: [u64; crate::NR_CPUS],
}

/// The page allocator plus every live page.
///
/// Pages sit in id order, and ids only grow, so a new page goes at the back and a lookup is
/// a binary search (after the newest page, the one allocators are filling, and the oldest,
/// the one acknowledgements free first). A freed page leaves an empty slot, dropped once it
/// reaches the front or once empty slots outnumber live pages: freeing costs O(1) amortised,
/// walking the live pages at most twice their number.
#[derive(Clone, Debug, Default)]
pub struct PagePool {
    slots: VecDeque<(PageId, Option<Page>)>,
    freed_slots: usize,
    next_id: PageId,
    pub stats: PageStats,
}

/// A page-frag cache taking a freshly allocated page: where its cursor starts (none for
/// v6.12's 1 KiB cache, whose cursor each fragment sets) and, where the cache takes its
/// references in advance (v3.6, v6.12), the page's count once it has (the caller sets it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Refill {
    pub cursor: Option<u32>,
    pub bias: Option<u32>,
}

/// Whose reference a put drops: an skb frag's, a page-frag cursor's own, an skb head's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ref {
    Frag,
    Cursor,
    Head,
    /// A cursor's own reference dropped as its socket is destroyed.
    Destroy,
}

impl PagePool {
    /// `alloc_pages(gfp, order)`: a fresh page with count 1, owned by the caller, or by the
    /// page-frag cursor it `refill`s.
    pub fn alloc(
        &mut self,
        order: u32,
        page_size: u32,
        cpu: Cpu,
        refill: Option<Refill>,
        ev: &mut Events,
    ) -> PageId {
        let id = self.next_id;
        self.next_id += 1;
        let size = page_size << order;
        let page = Page {
            id,
            order,
            size,
            count: 1,
            cpu,
            used: 0,
        };
        self.slots.push_back((id, Some(page)));
        self.stats.allocated += 1;
        ev.emit(|| Event::AllocPage {
            page: id,
            order,
            cpu,
            size,
            cursor: refill.and_then(|r| r.cursor),
            bias: refill.and_then(|r| r.bias),
        });
        id
    }

    /// `get_page`: one more reference.
    pub fn get(&mut self, id: PageId, ev: &mut Events) {
        let p = self.page_mut(id);
        p.count += 1;
        let count = p.count;
        ev.emit(|| Event::GetPage { page: id, count });
    }

    /// `put_page`: drop one reference; frees the page when it was the last. Returns whether
    /// the page was freed.
    pub fn put(&mut self, id: PageId, cpu: Cpu, ev: &mut Events) -> bool {
        self.put_ref(id, cpu, Ref::Frag, ev)
    }

    /// `put_page` of a page-frag cursor's own reference: the cursor lets go of the page.
    pub fn release(&mut self, id: PageId, cpu: Cpu, ev: &mut Events) -> bool {
        self.put_ref(id, cpu, Ref::Cursor, ev)
    }

    /// A socket's own page dropped as the socket is destroyed: the cursor lets go of it, by
    /// another function than `put_page` (2.6.33 `tcp_v4_destroy_sock`: `__free_page`).
    pub fn release_at_destroy(&mut self, id: PageId, cpu: Cpu, ev: &mut Events) -> bool {
        self.put_ref(id, cpu, Ref::Destroy, ev)
    }

    /// The put of an skb's head fragment (`skb_free_head`): `put_page` until v6.12's
    /// `skb_free_frag`, which the event tells apart.
    pub fn put_head(&mut self, id: PageId, cpu: Cpu, ev: &mut Events) -> bool {
        self.put_ref(id, cpu, Ref::Head, ev)
    }

    fn put_ref(&mut self, id: PageId, cpu: Cpu, r: Ref, ev: &mut Events) -> bool {
        self.stats.put_page[cpu as usize] += 1;
        let p = self.page_mut(id);
        p.count -= 1;
        let count = p.count;
        let head = r == Ref::Head;
        ev.emit(|| Event::PutPage {
            page: id,
            cpu,
            count,
            release: matches!(r, Ref::Cursor | Ref::Destroy),
            head,
            destroy: r == Ref::Destroy,
        });
        if count > 0 {
            return false;
        }
        self.free_slot(id);
        self.stats.freed += 1;
        self.stats.freed_on[cpu as usize] += 1;
        ev.emit(|| Event::FreePage {
            page: id,
            cpu,
            head,
        });
        true
    }

    /// `page_ref_count`.
    pub fn count(&self, id: PageId) -> u32 {
        self.page(id).count
    }

    #[inline]
    pub fn page(&self, id: PageId) -> &Page {
        self.slot(id)
            .and_then(|i| self.slots[i].1.as_ref())
            .unwrap_or_else(|| panic!("model bug: page {id} is not live"))
    }

    #[inline]
    pub fn page_mut(&mut self, id: PageId) -> &mut Page {
        self.slot(id)
            .and_then(|i| self.slots[i].1.as_mut())
            .unwrap_or_else(|| panic!("model bug: page {id} is not live"))
    }

    /// The index of `id`'s slot, live or freed.
    #[inline]
    fn slot(&self, id: PageId) -> Option<usize> {
        match (self.slots.back(), self.slots.front()) {
            (Some(&(newest, _)), _) if newest == id => Some(self.slots.len() - 1),
            (_, Some(&(oldest, _))) if oldest == id => Some(0),
            _ => self.slots.binary_search_by_key(&id, |s| s.0).ok(),
        }
    }

    fn free_slot(&mut self, id: PageId) {
        if let Some(i) = self.slot(id) {
            self.slots[i].1 = None;
            self.freed_slots += 1;
        }
        while let Some((_, None)) = self.slots.front() {
            self.slots.pop_front();
            self.freed_slots -= 1;
        }
        if self.freed_slots > self.live_count() {
            self.compact();
        }
    }

    /// Drops every empty slot (rare: out of line keeps `put_page` small enough to inline).
    #[cold]
    #[inline(never)]
    fn compact(&mut self) {
        self.slots.retain(|s| s.1.is_some());
        self.freed_slots = 0;
    }

    /// Records that an allocator starts over on a page it still holds, its cursor now at
    /// `cursor` (and, v6.12, count and bias reset to `bias`).
    pub fn note_reuse(&mut self, id: PageId, cursor: u32, bias: Option<u32>, ev: &mut Events) {
        self.stats.reused += 1;
        self.page_mut(id).used = 0;
        ev.emit(|| Event::ReusePage {
            page: id,
            cursor: Some(cursor),
            bias,
        });
    }

    pub fn is_live(&self, id: PageId) -> bool {
        self.slot(id).is_some_and(|i| self.slots[i].1.is_some())
    }

    /// Live pages in id order (deterministic).
    pub fn live(&self) -> impl Iterator<Item = &Page> {
        self.slots.iter().filter_map(|s| s.1.as_ref())
    }

    pub fn live_count(&self) -> usize {
        self.slots.len() - self.freed_slots
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn last_put_frees_and_counts_cpu() {
        let mut pool = PagePool::default();
        let mut ev = Events::on();
        let p = pool.alloc(0, 4096, 0, None, &mut ev);
        pool.get(p, &mut ev);
        assert!(!pool.put(p, 1, &mut ev));
        assert!(pool.put(p, 1, &mut ev));
        assert!(!pool.is_live(p));
        assert_eq!(pool.stats.freed_on, [0, 1]);
        assert_eq!(pool.stats.put_page, [0, 2]);
        assert_eq!(ev.take().len(), 5);
    }

    proptest::proptest! {
        /// Against a plain map: any mix of allocations, gets and puts leaves the same live
        /// pages with the same counts, in id order, and never more empty slots than pages.
        #[test]
        fn matches_a_map(acts in proptest::collection::vec((0u8..3, 0usize..64), 0..400)) {
            let (mut pool, mut ev) = (PagePool::default(), Events::off());
            let mut model = std::collections::BTreeMap::new();
            for (act, pick) in acts {
                let ids: Vec<PageId> = model.keys().copied().collect();
                match (act, ids.get(pick % ids.len().max(1))) {
                    (0, _) | (_, None) => {
                        model.insert(pool.alloc(0, 4096, 0, None, &mut ev), 1);
                    }
                    (1, Some(&id)) => {
                        pool.get(id, &mut ev);
                        *model.get_mut(&id).unwrap() += 1;
                    }
                    (_, Some(&id)) => {
                        let c = model.get_mut(&id).unwrap();
                        *c -= 1;
                        let freed = *c == 0;
                        if freed {
                            model.remove(&id);
                        }
                        proptest::prop_assert_eq!(pool.put(id, 0, &mut ev), freed);
                    }
                }
                let live: Vec<(PageId, u32)> = pool.live().map(|p| (p.id, p.count)).collect();
                let want: Vec<(PageId, u32)> = model.iter().map(|(&i, &c)| (i, c)).collect();
                proptest::prop_assert_eq!(live, want);
                proptest::prop_assert_eq!(pool.live_count(), model.len());
                proptest::prop_assert!(pool.freed_slots <= pool.live_count());
            }
        }
    }
}

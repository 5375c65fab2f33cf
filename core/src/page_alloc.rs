//! The page allocator over a [`Log`]: `alloc_pages`, `get_page`, `put_page` and their
//! variants as events. The pages themselves are the [`State`](crate::trace::State)'s: a
//! reference count is read there and changed only by the event that says so, so every
//! mechanism that writes through a `Log` shares this one allocator.
//!
//! Page ids grow monotonically and are never reused, so a trace can name "page 3" without
//! ambiguity.

use crate::events::{Cpu, Event, PageId};
use crate::page::{Page, PageStats, Refill};
use crate::replay::Log;
use crate::trace::State;

/// Page numbering and the allocation tallies of a run.
#[derive(Clone, Debug, Default)]
pub struct PageAlloc {
    next_page: PageId,
    pub stats: PageStats,
}

/// Whose reference a put drops, which the `put_page` event tells apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ref {
    /// An skb frag's, or a receive frag cache's own.
    Frag,
    /// A page-frag cursor's own: the cursor lets go of the page.
    Cursor,
    /// An skb head fragment's (`skb_free_head`).
    Head,
    /// A socket's own page dropped as the socket is destroyed (2.6.33
    /// `tcp_v4_destroy_sock`: `__free_page`): the cursor lets go of it.
    Destroy,
}

/// Live page `id` of `s`; a mechanism names only pages it holds references to. Inlined, with
/// the panic out of line: called out of line, its frame cost a `get_page` a third of its
/// instructions.
#[inline]
pub fn page(s: &State, id: PageId) -> &Page {
    match s.find_page(id) {
        Some(p) => p,
        None => not_live(id),
    }
}

#[cold]
#[inline(never)]
fn not_live(id: PageId) -> ! {
    panic!("model bug: page {id} is not live")
}

impl PageAlloc {
    /// `alloc_pages(gfp, order)` on `cpu`: a fresh page with count 1, owned by the caller,
    /// or by the page-frag cursor it `refill`s (with the count the refill sets).
    pub fn alloc(
        &mut self,
        order: u32,
        page_size: u32,
        cpu: Cpu,
        refill: Option<Refill>,
        log: &mut Log,
    ) -> PageId {
        let page = self.next_page;
        self.next_page += 1;
        self.stats.allocated += 1;
        log.emit(Event::AllocPage {
            page,
            order,
            cpu,
            size: page_size << order,
            cursor: refill.and_then(|r| r.cursor),
            bias: refill.and_then(|r| r.bias),
        });
        page
    }

    /// `get_page`: one more reference.
    #[inline]
    pub fn get(&mut self, page: PageId, log: &mut Log) {
        let count = self::page(log.state(), page).count + 1;
        log.emit(Event::GetPage { page, count });
    }

    /// An allocator starts over on a page it still holds, its cursor now at `cursor` (and,
    /// v6.12, count and bias reset to `bias`).
    pub fn reuse(&mut self, page: PageId, cursor: u32, bias: Option<u32>, log: &mut Log) {
        self.stats.reused += 1;
        let cursor = Some(cursor);
        log.emit(Event::ReusePage { page, cursor, bias });
    }

    /// Drops one reference of kind `r` on `cpu`: `put_page`, or the put a [`Ref`] names.
    pub fn put(&mut self, page: PageId, cpu: Cpu, r: Ref, log: &mut Log) {
        let count = self::page(log.state(), page).count - 1;
        self.put_leaving(page, cpu, r, count, log);
    }

    /// The put of a reference that leaves the count at `count`; frees the page when that is
    /// zero. (A receive frag cache's release takes its reference off the count first.)
    pub fn put_leaving(&mut self, page: PageId, cpu: Cpu, r: Ref, count: u32, log: &mut Log) {
        self.stats.put_page[cpu as usize] += 1;
        let head = r == Ref::Head;
        log.emit(Event::PutPage {
            page,
            cpu,
            count,
            release: matches!(r, Ref::Cursor | Ref::Destroy),
            head,
            destroy: r == Ref::Destroy,
        });
        if count == 0 {
            self.stats.freed += 1;
            self.stats.freed_on[cpu as usize] += 1;
            log.emit(Event::FreePage { page, cpu, head });
        }
    }
}

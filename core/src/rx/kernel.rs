//! The kernel objects every receive stage shares: pages and skb lifetimes. [`Mem`] is the
//! page allocator ([`PageAlloc`]), skb numbering and `__kfree_skb`, with the tallies of what
//! was freed where.
//! Each stage gets `&mut Mem` next to its own state, never the whole machine. The pages
//! themselves are the [`State`]'s: `Mem` reads them there and changes them by events.

use crate::events::{Cpu, Event, PageId, SkbId};
pub use crate::page_alloc::page;
use crate::page_alloc::{PageAlloc, Ref};
use crate::replay::Log;
use crate::skb::Skb;
use crate::trace::State;
use crate::NR_CPUS;

/// The page allocator, skb numbering, and the tallies of what was freed where.
#[derive(Clone, Debug, Default)]
pub struct Mem {
    pub pages: PageAlloc,
    next_skb: SkbId,
    pub tally: MemTally,
}

/// What [`Mem`] counts beyond the page statistics.
#[derive(Clone, Copy, Debug, Default)]
pub struct MemTally {
    pub skbs_allocated: u64,
    /// `__kfree_skb` calls per CPU.
    pub skb_frees: [u64; NR_CPUS],
    /// skbs freed away from the CPU that allocated them.
    pub remote_skb_frees: u64,
    /// `put_page` calls away from the page's CPU.
    pub remote_put_page: u64,
}

/// Skb `id` of `s`, wherever it is.
pub fn skb(s: &State, id: SkbId) -> &Skb {
    s.find_skb(id)
        .unwrap_or_else(|| panic!("model bug: skb {id} is not in the state"))
}

impl Mem {
    /// The id of a new skb.
    pub fn new_skb_id(&mut self) -> SkbId {
        let id = self.next_skb;
        self.next_skb += 1;
        self.tally.skbs_allocated += 1;
        id
    }

    /// put_page on `cpu`, noting a reference dropped away from the page's CPU.
    pub fn put_page(&mut self, page: PageId, cpu: Cpu, log: &mut Log) {
        self.note_remote(page, cpu, log);
        self.pages.put(page, cpu, Ref::Frag, log);
    }

    /// The `put_page` of a reference a frag cache's `frag_cache_release` already took off
    /// the count (v3.5's own reference, or v6.12's pfmemalloc page whose bias was all that
    /// held it: `free_unref_page`): the count stays where that event left it.
    pub fn put_released(&mut self, page: PageId, cpu: Cpu, log: &mut Log) {
        self.note_remote(page, cpu, log);
        let count = self::page(log.state(), page).count;
        self.pages.put_leaving(page, cpu, Ref::Frag, count, log);
    }

    /// skb_free_head's put of a head fragment on `cpu`, likewise.
    fn put_head(&mut self, page: PageId, cpu: Cpu, log: &mut Log) {
        self.note_remote(page, cpu, log);
        self.pages.put(page, cpu, Ref::Head, log);
    }

    fn note_remote(&mut self, page: PageId, cpu: Cpu, log: &Log) {
        if self::page(log.state(), page).cpu != cpu {
            self.tally.remote_put_page += 1;
        }
    }

    /// __kfree_skb on `cpu`: the head fragment's and every frag's page reference, then the
    /// skb itself; remote when `cpu` is not the CPU that allocated it.
    pub fn free_skb(&mut self, skb: SkbId, cpu: Cpu, log: &mut Log) {
        self.free(skb, cpu, false, log);
    }

    /// recvmsg frees `skb` on `cpu` once it has read it all (see [`Event::FreeSkb`]'s `read`).
    pub fn free_read_skb(&mut self, skb: SkbId, cpu: Cpu, log: &mut Log) {
        self.free(skb, cpu, true, log);
    }

    fn free(&mut self, id: SkbId, cpu: Cpu, read: bool, log: &mut Log) {
        let s = self::skb(log.state(), id);
        let (head, owner) = (s.head_frag.map(|h| h.page), s.cpu);
        let pages: Vec<PageId> = s.frags.iter().map(|f| f.page).collect();
        let chained: Vec<SkbId> = s.frag_list.iter().map(|c| c.id).collect();
        if let Some(page) = head {
            self.put_head(page, cpu, log);
        }
        for page in pages {
            self.put_page(page, cpu, log);
        }
        // skb_drop_fraglist: the chained skbs go with it, on the same CPU.
        for c in chained {
            self.free_skb(c, cpu, log);
        }
        self.tally.skb_frees[cpu as usize] += 1;
        if owner != cpu {
            self.tally.remote_skb_frees += 1;
        }
        log.emit(Event::FreeSkb { skb: id, cpu, read });
    }
}

/// An skb and the skbs on its frag_list.
pub fn skbs_in(skb: &Skb) -> usize {
    1 + skb.frag_list.iter().map(skbs_in).sum::<usize>()
}

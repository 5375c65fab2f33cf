//! The kernel objects every receive stage shares: pages and skb lifetimes. [`Mem`] is the
//! page allocator, skb numbering and `__kfree_skb`, with the tallies of what was freed where.
//! Each stage gets `&mut Mem` next to its own state, never the whole machine.

use crate::events::{Cpu, Event, Events, PageId, SkbId};
use crate::page::PagePool;
use crate::skb::Skb;
use crate::NR_CPUS;

/// Pages and skbs: allocation, reference drops and frees, with the CPU of each.
#[derive(Clone, Debug, Default)]
pub struct Mem {
    pub pool: PagePool,
    next_skb: SkbId,
    pub tally: MemTally,
}

/// What [`Mem`] counts beyond the page pool's own statistics.
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

impl Mem {
    /// The id of a new skb.
    pub fn new_skb_id(&mut self) -> SkbId {
        let id = self.next_skb;
        self.next_skb += 1;
        self.tally.skbs_allocated += 1;
        id
    }

    /// put_page on `cpu`, noting a reference dropped away from the page's CPU.
    pub fn put_page(&mut self, page: PageId, cpu: Cpu, ev: &mut Events) {
        self.note_remote(page, cpu);
        self.pool.put(page, cpu, ev);
    }

    /// skb_free_head's put of a head fragment on `cpu`, likewise.
    fn put_head(&mut self, page: PageId, cpu: Cpu, ev: &mut Events) {
        self.note_remote(page, cpu);
        self.pool.put_head(page, cpu, ev);
    }

    fn note_remote(&mut self, page: PageId, cpu: Cpu) {
        if self.pool.page(page).cpu != cpu {
            self.tally.remote_put_page += 1;
        }
    }

    /// __kfree_skb on `cpu`: the head fragment's and every frag's page reference, then the
    /// skb itself; remote when `cpu` is not the CPU that allocated it.
    pub fn free_skb(&mut self, skb: Skb, cpu: Cpu, ev: &mut Events) {
        self.free(skb, cpu, false, ev);
    }

    /// recvmsg frees `skb` on `cpu` once it has read it all (see [`Event::FreeSkb`]'s `read`).
    pub fn free_read_skb(&mut self, skb: Skb, cpu: Cpu, ev: &mut Events) {
        self.free(skb, cpu, true, ev);
    }

    fn free(&mut self, mut skb: Skb, cpu: Cpu, read: bool, ev: &mut Events) {
        if let Some(h) = skb.head_frag {
            self.put_head(h.page, cpu, ev);
        }
        for f in &skb.frags {
            self.put_page(f.page, cpu, ev);
        }
        // skb_drop_fraglist: the chained skbs go with it, on the same CPU.
        for chained in std::mem::take(&mut skb.frag_list) {
            self.free_skb(chained, cpu, ev);
        }
        self.tally.skb_frees[cpu as usize] += 1;
        if skb.cpu != cpu {
            self.tally.remote_skb_frees += 1;
        }
        let id = skb.id;
        ev.emit(|| Event::FreeSkb { skb: id, cpu, read });
    }
}

/// An skb and the skbs on its frag_list.
pub fn skbs_in(skb: &Skb) -> usize {
    1 + skb.frag_list.iter().map(skbs_in).sum::<usize>()
}

//! Where a replayed event's objects are in a [`State`]: a page, an skb (on any queue or
//! frag_list), a dfrag, a cursor; each lookup fails with what it did not find.

use crate::page::{Page, PageId};
use crate::skb::{Skb, SkbId};
use crate::trace::{Cursor, Dfrag, State};

impl State {
    pub(super) fn page_at(&self, id: PageId) -> Result<usize, String> {
        self.pages
            .binary_search_by_key(&id, |p| p.id)
            .map_err(|_| format!("page {id} is not live"))
    }

    pub(super) fn page(&mut self, id: PageId) -> Result<&mut Page, String> {
        let at = self.page_at(id)?;
        Ok(&mut self.pages[at])
    }

    pub(super) fn queue(&mut self, name: &str) -> Result<&mut Vec<Skb>, String> {
        self.queues
            .iter_mut()
            .find(|q| q.name == name)
            .map(|q| &mut q.skbs)
            .ok_or_else(|| format!("no queue `{name}`"))
    }

    /// Every skb the state holds, frag_list members included.
    pub(super) fn skb(&mut self, id: SkbId) -> Result<&mut Skb, String> {
        let lists = self.queues.iter_mut().map(|q| &mut q.skbs);
        lists
            .chain([&mut self.in_flight])
            .find_map(|l| find(l, id))
            .ok_or_else(|| format!("skb {id} is not in the state"))
    }

    /// Unlinks `id` from wherever it is.
    pub(super) fn take_skb(&mut self, id: SkbId) -> Result<Skb, String> {
        let lists = self.queues.iter_mut().map(|q| &mut q.skbs);
        lists
            .chain([&mut self.in_flight])
            .find_map(|l| unlink(l, id))
            .ok_or_else(|| format!("skb {id} is not in the state"))
    }

    pub(super) fn move_skb(&mut self, id: SkbId, to: &str) -> Result<(), String> {
        let s = self.take_skb(id)?;
        self.queue(to)?.push(s);
        Ok(())
    }

    pub(super) fn dfrag_at(&self, data_seq: u64) -> Result<usize, String> {
        self.dfrags
            .iter()
            .position(|d| d.data_seq <= data_seq && data_seq < d.data_seq + d.data_len as u64)
            .or_else(|| self.dfrags.iter().position(|d| d.data_seq == data_seq))
            .ok_or_else(|| format!("no dfrag holds data_seq {data_seq}"))
    }

    pub(super) fn dfrag(&mut self, data_seq: u64) -> Result<&mut Dfrag, String> {
        let at = self.dfrag_at(data_seq)?;
        Ok(&mut self.dfrags[at])
    }

    /// The page frag `idx` of skb `id` points into.
    pub(super) fn frag_page(&self, id: SkbId, idx: u32) -> Option<PageId> {
        let lists = self.queues.iter().map(|q| &q.skbs);
        let mut all = lists.chain([&self.in_flight]).flatten();
        let s = all.find(|s| s.id == id)?;
        s.frags.get(idx as usize).map(|f| f.page)
    }

    /// The cursor on `page`, if any.
    pub(super) fn holder(&self, page: PageId) -> Option<usize> {
        self.cursors.iter().position(|c| c.page == Some(page))
    }

    /// `cpu`'s cursor: the receive side keeps one per CPU, the send side one (on CPU 0).
    pub(super) fn cpu_cursor(&mut self, cpu: crate::Cpu) -> Result<&mut Cursor, String> {
        self.cursors
            .get_mut(cpu as usize)
            .ok_or_else(|| format!("no page-frag cursor for cpu{cpu}"))
    }

    /// The socket's page frag, which a copy to `page` leaves on it: the one on the page, or
    /// the send side's one cursor when it takes a fresh page.
    pub(super) fn socket_cursor(&self, page: PageId) -> Result<usize, String> {
        let fresh = || (self.cursors.len() == 1).then_some(0);
        (self.holder(page).or_else(fresh))
            .ok_or_else(|| format!("no page-frag cursor takes page {page}"))
    }

    /// `cpu`'s 1 KiB small-head cursor (v6.12 `napi_alloc_cache.page_small`): the receive
    /// side lists these after its per-CPU frag caches.
    pub(super) fn small_cursor(&mut self, cpu: crate::Cpu) -> Result<&mut Cursor, String> {
        self.cursors
            .get_mut(crate::NR_CPUS + cpu as usize)
            .ok_or_else(|| format!("no small-head cursor for cpu{cpu}"))
    }

    pub(super) fn release_cursor(&mut self, i: Option<usize>) -> Result<(), String> {
        let c = self
            .cursors
            .get_mut(i.ok_or("no cursor holds the page")?)
            .ok_or("no such cursor")?;
        *c = Cursor {
            name: std::mem::take(&mut c.name),
            page: None,
            offset: 0,
            size: 0,
            bias: None,
        };
        Ok(())
    }

    /// The cursor on `page` moved to `offset` (`pfrag->offset`), filling the page that far.
    pub(super) fn advance_cursor(&mut self, page: PageId, offset: u32) -> Result<(), String> {
        let p = self.page(page)?;
        p.used = p.used.max(offset);
        let i = self.holder(page).ok_or("no cursor holds the page")?;
        self.cursors[i].offset = offset;
        Ok(())
    }
}

fn find(list: &mut [Skb], id: SkbId) -> Option<&mut Skb> {
    for s in list {
        if s.id == id {
            return Some(s);
        }
        if let Some(s) = find(&mut s.frag_list, id) {
            return Some(s);
        }
    }
    None
}

fn unlink(list: &mut Vec<Skb>, id: SkbId) -> Option<Skb> {
    if let Some(at) = list.iter().position(|s| s.id == id) {
        return Some(list.remove(at));
    }
    list.iter_mut().find_map(|s| unlink(&mut s.frag_list, id))
}

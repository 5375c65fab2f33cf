//! Where a replayed event's objects are in a [`State`]: a page, an skb (on any queue or
//! frag_list), a dfrag, a cursor; each lookup fails with what it did not find.

use crate::page::{Page, PageId};
use crate::skb::{Skb, SkbId};
use crate::trace::{Cursor, Dfrag, Queue, State};
use std::collections::VecDeque;

impl State {
    /// Where live page `id` sits, or where it would go: pages sit in id order (`apply` and
    /// [`State::insert_page`] keep them so). The one search every reader shares. Ids count
    /// up and pages mostly go oldest first, so page `id` is most often `id - front` from the
    /// front (the front itself included): that slot is tried before the search.
    pub fn page_slot(&self, id: PageId) -> Result<usize, usize> {
        let guess = (self.pages.front()).map_or(usize::MAX, |f| id.wrapping_sub(f.id) as usize);
        match self.pages.get(guess) {
            Some(p) if p.id == id => Ok(guess),
            _ => self.pages.binary_search_by_key(&id, |p| p.id),
        }
    }

    /// Puts `page` in its place in id order: at the back, where a new page goes, then moved
    /// down past any younger one (a drawing puts a freed page back among the live).
    pub fn insert_page(&mut self, page: Page) {
        self.pages.push_back(page);
        let mut at = self.pages.len() - 1;
        while at > 0 && self.pages[at - 1].id > self.pages[at].id {
            self.pages.swap(at - 1, at);
            at -= 1;
        }
    }

    /// Pages sit in id order; the newest (the one allocators fill) is tried first, then
    /// [`State::page_slot`]. Inlined where an event is applied, as most find the newest at
    /// once.
    #[inline]
    pub(super) fn page_at(&self, id: PageId) -> Result<usize, Missing> {
        match self.pages.back() {
            Some(p) if p.id == id => Ok(self.pages.len() - 1),
            _ => self.page_elsewhere(id),
        }
    }

    #[inline(never)]
    fn page_elsewhere(&self, id: PageId) -> Result<usize, Missing> {
        (self.page_slot(id)).map_err(|_| Missing::Page(id))
    }

    /// Live page `id`.
    pub fn find_page(&self, id: PageId) -> Option<&Page> {
        self.page_at(id).ok().map(|at| &self.pages[at])
    }

    #[inline]
    pub(super) fn page(&mut self, id: PageId) -> Result<&mut Page, Missing> {
        let at = self.page_at(id)?;
        Ok(&mut self.pages[at])
    }

    pub(super) fn queue(&mut self, name: &str) -> Result<&mut VecDeque<Skb>, String> {
        self.queues
            .iter_mut()
            .find(|q| q.name == name)
            .map(|q| &mut q.skbs)
            .ok_or_else(|| format!("no queue `{name}`"))
    }

    /// The skbs on queue `name`, front first (empty if there is no such queue).
    pub fn skbs_on(&self, name: &str) -> &VecDeque<Skb> {
        static NONE: VecDeque<Skb> = VecDeque::new();
        (self.queues.iter().find(|q| q.name == name)).map_or(&NONE, |q| &q.skbs)
    }

    /// Skb `id`, wherever the state holds it (frag_list members included).
    pub fn find_skb(&self, id: SkbId) -> Option<&Skb> {
        if let Some(q) = self.tail_of(id) {
            return self.queues[q].skbs.back();
        }
        let (list, i, chained) = self.locate(id)?;
        let s = &self.list(list)[i];
        Some(chained.map_or(s, |c| &s.frag_list[c]))
    }

    /// Every skb the state holds, frag_list members included. Inlined where an event is
    /// applied, as most find their skb at a queue's tail at once.
    #[inline]
    pub(super) fn skb(&mut self, id: SkbId) -> Result<&mut Skb, Missing> {
        match self.tail_of(id) {
            Some(q) => Ok(self.queues[q].skbs.back_mut().expect("a tail")),
            None => self.skb_elsewhere(id),
        }
    }

    #[inline(never)]
    fn skb_elsewhere(&mut self, id: SkbId) -> Result<&mut Skb, Missing> {
        let (list, i, chained) = self.locate(id).ok_or(Missing::Skb(id))?;
        let s = &mut self.list_mut(list)[i];
        Ok(match chained {
            Some(c) => &mut s.frag_list[c],
            None => s,
        })
    }

    /// Unlinks `id` from wherever it is: most often the front of its queue (an skb
    /// acknowledged, read or purged), which is tried first.
    pub(super) fn take_skb(&mut self, id: SkbId) -> Result<Skb, String> {
        let front = |q: &Queue| q.skbs.front().is_some_and(|s| s.id == id);
        if let Some(q) = self.queues.iter().position(front) {
            return self.queues[q].skbs.pop_front().ok_or_else(|| missing(id));
        }
        let (list, i, chained) = self.locate(id).ok_or_else(|| missing(id))?;
        let l = self.list_mut(list);
        Ok(match chained {
            Some(c) => l[i].frag_list.remove(c),
            None => l.remove(i).ok_or_else(|| missing(id))?,
        })
    }

    pub(super) fn move_skb(&mut self, id: SkbId, to: &str) -> Result<(), String> {
        let s = self.take_skb(id)?;
        self.queue(to)?.push_back(s);
        Ok(())
    }

    /// List 0 is `in_flight`, list `n` is queue `n - 1`.
    fn list(&self, n: usize) -> &VecDeque<Skb> {
        match n {
            0 => &self.in_flight,
            n => &self.queues[n - 1].skbs,
        }
    }

    fn list_mut(&mut self, n: usize) -> &mut VecDeque<Skb> {
        match n {
            0 => &mut self.in_flight,
            n => &mut self.queues[n - 1].skbs,
        }
    }

    /// The queue whose tail is skb `id`: the skb a write or a frame is filling, which most
    /// events touch, found before any other place is tried.
    #[inline]
    fn tail_of(&self, id: SkbId) -> Option<usize> {
        (self.queues.iter()).position(|q| q.skbs.back().is_some_and(|s| s.id == id))
    }

    /// Where skb `id` is: its list ([`Self::list`]), its index there and, for an skb on a
    /// frag_list (GRO chains one deep), its index on that. Skbs come and go at the ends of
    /// their lists, so every list's ends are tried first, then their frag_lists, and only
    /// then is every list searched through: a long receive queue costs nothing to an skb
    /// elsewhere.
    fn locate(&self, id: SkbId) -> Option<(usize, usize, Option<usize>)> {
        let n = self.queues.len() + 1;
        for l in 0..n {
            let list = self.list(l);
            match (list.front(), list.back()) {
                (_, Some(b)) if b.id == id => return Some((l, list.len() - 1, None)),
                (Some(f), _) if f.id == id => return Some((l, 0, None)),
                _ => {}
            }
        }
        let chained =
            |list: &VecDeque<Skb>, i: usize| list[i].frag_list.iter().position(|c| c.id == id);
        for l in 0..n {
            let list = self.list(l);
            for i in [list.len().wrapping_sub(1), 0]
                .into_iter()
                .filter(|&i| i < list.len())
            {
                if let Some(c) = chained(list, i) {
                    return Some((l, i, Some(c)));
                }
            }
        }
        for l in 0..n {
            let list = self.list(l);
            for i in 0..list.len() {
                if list[i].id == id {
                    return Some((l, i, None));
                }
                if let Some(c) = chained(list, i) {
                    return Some((l, i, Some(c)));
                }
            }
        }
        None
    }

    /// The dfrag holding `data_seq`, else the empty one just carved there. Dfrags sit in
    /// data-sequence order, one after another, so a binary search finds it: a run writes
    /// through this on every copy and mapping, and may hold many dfrags. Copies go to the
    /// last one and acknowledgements clear the first, so those two are tried first.
    pub(super) fn dfrag_at(&self, data_seq: u64) -> Result<usize, String> {
        let end = |d: &Dfrag| d.data_seq + d.data_len as u64;
        let last = self.dfrags.len().wrapping_sub(1);
        match (self.dfrags.front(), self.dfrags.back()) {
            (_, Some(d)) if d.data_seq == data_seq || (d.data_seq..end(d)).contains(&data_seq) => {
                return Ok(last)
            }
            (Some(d), _) if (d.data_seq..end(d)).contains(&data_seq) => return Ok(0),
            _ => {}
        }
        let i = self.dfrags.partition_point(|d| end(d) <= data_seq);
        let holds = (self.dfrags.get(i)).is_some_and(|d| d.data_seq <= data_seq);
        let carved = || (i.checked_sub(1)).filter(|&j| self.dfrags[j].data_seq == data_seq);
        (holds.then_some(i).or_else(carved))
            .ok_or_else(|| format!("no dfrag holds data_seq {data_seq}"))
    }

    pub(super) fn dfrag(&mut self, data_seq: u64) -> Result<&mut Dfrag, String> {
        let at = self.dfrag_at(data_seq)?;
        Ok(&mut self.dfrags[at])
    }

    /// The page frag `idx` of skb `id` points into.
    pub(super) fn frag_page(&self, id: SkbId, idx: u32) -> Option<PageId> {
        let s = self.find_skb(id)?;
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

fn missing(id: SkbId) -> String {
    Missing::Skb(id).into()
}

/// What a lookup did not find: the error of the lookups every applied event makes, small
/// enough to come back in registers; it is made the replay's message only when a replay
/// fails.
#[derive(Clone, Copy, Debug)]
pub(super) enum Missing {
    Page(PageId),
    Skb(SkbId),
}

impl From<Missing> for String {
    fn from(m: Missing) -> String {
        match m {
            Missing::Page(id) => format!("page {id} is not live"),
            Missing::Skb(id) => format!("skb {id} is not in the state"),
        }
    }
}

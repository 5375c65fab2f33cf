//! The page frag (`struct page_frag`) that `sk_page_frag()` returns, refilled by
//! `skb_page_frag_refill` (net/core/sock.c, v3.7 to today): the page tcp_sendmsg (modern) and
//! MPTCP copy user data into.
//!
//! For a socket used from process context this is `current->task_frag`, the task's, not the
//! socket's (v5.10: when `gfpflags_normal_context(sk->sk_allocation)`; v6.12: when
//! `sk->sk_use_task_frag`, which sock_init_data sets). Closing the socket does not put it: the
//! task keeps the page for its next socket and drops it at exit. Every user of the task frag
//! shares it; "mptcp: fix data stream corruption" (2021) came from another user moving the
//! offset under MPTCP. The model runs one socket per task.
//!
//! The frag holds one reference on its page. Before each copy it asks for `sz` bytes: if it
//! is the page's only owner (every frag pointing into it is gone) it rewinds to offset 0 and
//! reuses the page; if the bytes fit after `offset` it keeps going; otherwise it drops its
//! reference and takes a new page: first a compound page of SKB_FRAG_PAGE_ORDER (32 KiB),
//! falling back to order 0 when that fails or `net.core.high_order_alloc_disable` is set.

use crate::consts::KernelConsts;
use crate::events::Events;
use crate::page::{Page, PageId, PagePool, Refill};
use crate::Cpu;
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PageFrag {
    pub page: Option<PageId>,
    pub offset: u32,
    pub size: u32,
}

/// A page-frag allocator's cursor: the socket's TCP_PAGE/TCP_OFF, the task's page frag
/// (`current->task_frag`, what `sk_page_frag` returns), or a CPU's netdev_alloc_cache.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cursor {
    pub name: String,
    pub page: Option<PageId>,
    pub offset: u32,
    /// Bytes in the page (`pfrag->size`), 0 when there is no page.
    pub size: u32,
    /// page_frag_cache's pagecnt_bias (references taken in advance), where the era has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bias: Option<u32>,
}

impl Cursor {
    /// The references the fragments handed out of `page` still hold, for a cache that takes
    /// its references in advance: the page's count less the `pagecnt_bias` the cache has not
    /// handed out yet (v3.6 `__netdev_alloc_frag` compares the two to reuse the page; v6.12
    /// `__page_frag_alloc_align` subtracts them with `page_ref_sub_and_test`). `None` when the
    /// era has no bias or this cursor is on another page.
    pub fn frags_out(&self, page: &Page) -> Option<u32> {
        let bias = self.bias.filter(|_| self.page == Some(page.id))?;
        Some(page.count.saturating_sub(bias))
    }
}

impl PageFrag {
    /// `skb_page_frag_refill(sz, pfrag, gfp)`: makes at least `sz` bytes available at
    /// `offset`. `high_order` is false when high-order allocation is disabled or fails.
    pub fn refill(
        &mut self,
        sz: u32,
        high_order: bool,
        k: &KernelConsts,
        pool: &mut PagePool,
        cpu: Cpu,
        ev: &mut Events,
    ) {
        if let Some(page) = self.page {
            if pool.count(page) == 1 {
                if self.offset > 0 {
                    pool.note_reuse(page, 0, None, ev);
                }
                self.offset = 0;
                return;
            }
            if self.offset + sz <= self.size {
                return;
            }
            pool.release(page, cpu, ev);
        }
        let order = if high_order { k.skb_frag_page_order } else { 0 };
        let refill = Refill {
            cursor: Some(0),
            bias: None,
        };
        let page = pool.alloc(order, k.page_size, cpu, Some(refill), ev);
        *self = PageFrag {
            page: Some(page),
            offset: 0,
            size: k.page_bytes(order),
        };
    }

    /// Moves the cursor past `n` bytes just copied, recording how full the page is.
    pub fn advance(&mut self, n: u32, pool: &mut PagePool) {
        self.offset += n;
        if let Some(page) = self.page {
            let p = pool.page_mut(page);
            p.used = p.used.max(self.offset);
        }
    }

    pub fn cursor(&self, name: &str) -> Cursor {
        Cursor {
            name: name.to_string(),
            page: self.page,
            offset: self.offset,
            size: self.size,
            bias: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::consts::Era;

    #[test]
    fn refill_takes_32k_then_rewinds_when_sole_owner() {
        let k = Era::V6_12.consts();
        let (mut pool, mut ev, mut pf) = (PagePool::default(), Events::off(), PageFrag::default());
        pf.refill(32, true, &k, &mut pool, 0, &mut ev);
        assert_eq!((pf.size, pool.stats.allocated), (32768, 1));
        pf.advance(1000, &mut pool);
        // Nobody else holds the page: rewind instead of moving on.
        pf.refill(32, true, &k, &mut pool, 0, &mut ev);
        assert_eq!((pf.offset, pool.stats.reused), (0, 1));
    }

    #[test]
    fn full_shared_page_is_replaced_and_order0_fallback() {
        let k = Era::V6_12.consts();
        let (mut pool, mut ev, mut pf) = (PagePool::default(), Events::off(), PageFrag::default());
        pf.refill(32, false, &k, &mut pool, 0, &mut ev);
        assert_eq!(pf.size, 4096);
        let first = pf.page.unwrap();
        pool.get(first, &mut ev); // a frag holds it
        pf.advance(4090, &mut pool);
        pf.refill(32, false, &k, &mut pool, 0, &mut ev);
        assert_ne!(pf.page, Some(first));
        assert_eq!(
            pool.count(first),
            1,
            "the socket dropped its reference; the frag keeps one"
        );
    }
}

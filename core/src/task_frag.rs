//! `skb_page_frag_refill` (net/core/sock.c, v3.7 to today) on the page frag `sk_page_frag()`
//! returns: the page tcp_sendmsg (modern) and MPTCP copy user data into, a cursor of the
//! [`State`](crate::trace::State) that only events move.
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
use crate::page::Refill;
use crate::page_alloc::{page, PageAlloc, Ref};
use crate::replay::Log;
use crate::trace::Cursor;
use crate::Cpu;

/// The task frag of a task running on `cpu`: the state's cursor `cpu` (the one an
/// `alloc_page` event with a cursor moves).
pub fn cursor<'a>(log: &'a Log, cpu: Cpu) -> &'a Cursor {
    &log.state().cursors[cpu as usize]
}

/// `skb_page_frag_refill(sz, pfrag, gfp)` on `cpu`'s task frag: makes at least `sz` bytes
/// available at its offset. `high_order` is false when high-order allocation is disabled or
/// fails.
pub fn refill(
    sz: u32,
    high_order: bool,
    k: &KernelConsts,
    pages: &mut PageAlloc,
    cpu: Cpu,
    log: &mut Log,
) {
    let c = cursor(log, cpu);
    let (offset, size) = (c.offset, c.size);
    if let Some(p) = c.page {
        if page(log.state(), p).count == 1 {
            if offset > 0 {
                pages.reuse(p, 0, None, log);
            }
            return;
        }
        if offset + sz <= size {
            return;
        }
        pages.put(p, cpu, Ref::Cursor, log);
    }
    let order = if high_order { k.skb_frag_page_order } else { 0 };
    let refill = Refill {
        cursor: Some(0),
        bias: None,
    };
    pages.alloc(order, k.page_size, cpu, Some(refill), log);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::consts::Era;
    use crate::events::Events;
    use crate::replay::Live;

    fn live() -> Live {
        Live::new([], ["task_frag".to_string()])
    }

    #[test]
    fn refill_takes_32k_then_rewinds_when_sole_owner() {
        let k = Era::V6_12.consts();
        let (mut live, mut ev, mut pages) = (live(), Events::off(), PageAlloc::default());
        let log = &mut live.log(&mut ev);
        refill(32, true, &k, &mut pages, 0, log);
        assert_eq!((cursor(log, 0).size, pages.stats.allocated), (32768, 1));
        let p = cursor(log, 0).page.unwrap();
        log.emit(crate::events::Event::CopyToPage {
            skb: 0,
            page: p,
            offset: 0,
            bytes: 1000,
            cursor: Some(1000),
        });
        // Nobody else holds the page: rewind instead of moving on.
        refill(32, true, &k, &mut pages, 0, log);
        assert_eq!((cursor(log, 0).offset, pages.stats.reused), (0, 1));
    }

    #[test]
    fn full_shared_page_is_replaced_and_order0_fallback() {
        let k = Era::V6_12.consts();
        let (mut live, mut ev, mut pages) = (live(), Events::off(), PageAlloc::default());
        let log = &mut live.log(&mut ev);
        refill(32, false, &k, &mut pages, 0, log);
        assert_eq!(cursor(log, 0).size, 4096);
        let first = cursor(log, 0).page.unwrap();
        pages.get(first, log); // a frag holds it
        log.emit(crate::events::Event::CopyToPage {
            skb: 0,
            page: first,
            offset: 0,
            bytes: 4090,
            cursor: Some(4090),
        });
        refill(32, false, &k, &mut pages, 0, log);
        assert_ne!(cursor(log, 0).page, Some(first));
        assert_eq!(
            page(log.state(), first).count,
            1,
            "the socket dropped its reference; the frag keeps one"
        );
    }
}

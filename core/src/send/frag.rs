//! Where tcp_sendmsg copies a frag, and the copy: the variant's page rules (2.6.33's
//! TCP_PAGE/TCP_OFF, today's task frag, both the state's one page-frag cursor), then
//! skb_copy_to_page, the frag added or grown, and the page references.

use super::sock::{Tail, TcpSock, CPU};
use crate::events::Event;
use crate::page::PageId;
use crate::page_alloc::Ref;
use crate::replay::{frag_event, Log};
use crate::task_frag;

/// What `skb_page_frag_refill` is asked for in tcp_sendmsg_locked (`sk_page_frag_refill`):
/// 32 bytes.
const PAGE_FRAG_REFILL_SZ: u32 = 32;

/// Where the next frag copy goes, as the variant's page rules decided.
pub(super) struct FragTarget {
    page: PageId,
    off: u32,
    /// Room left in the page at `off`.
    pub(super) room: u32,
    merge: bool,
    /// 2.6.33 took a fresh page for this copy (the socket had none): the socket keeps it
    /// only if the copy leaves room in it.
    fresh: bool,
}

impl TcpSock {
    /// The variant's page rules: which page and offset the next frag copy uses.
    pub(super) fn frag_target(&mut self, skb: &Tail, log: &mut Log) -> Option<FragTarget> {
        if self.cfg.variant.uses_task_frag() {
            self.task_frag_target(skb, log)
        } else {
            self.tcp_page_target(skb, log)
        }
    }

    /// tcp_sendmsg, 2.6.33 (both sides of the seed's diff): the socket's TCP_PAGE at TCP_OFF.
    fn tcp_page_target(&mut self, skb: &Tail, log: &mut Log) -> Option<FragTarget> {
        let (k, v) = (&self.cfg.k, self.cfg.variant);
        let page_size = k.page_size;
        let c = &log.state().cursors[0];
        let (mut page, mut off) = (c.page, c.offset);
        let i = skb.nr_frags;
        let merge = page.is_some_and(|p| skb.can_coalesce(p, off)) && off != page_size;
        if !merge {
            if i >= k.max_skb_frags || (v.frags_need_sg() && !self.cfg.device.sg) {
                return None;
            }
            match page {
                Some(p) if off == page_size => {
                    // The socket's page is full: drop the socket's reference.
                    self.pages.put(p, CPU, Ref::Cursor, log);
                    (page, off) = (None, 0);
                }
                Some(_) => {}
                None => off = 0,
            }
        }
        let p = match page {
            Some(p) => p,
            // sk_stream_alloc_page; the socket keeps it only if room is left.
            None => self.pages.alloc(0, page_size, CPU, None, log),
        };
        Some(FragTarget {
            page: p,
            off,
            room: page_size - off,
            merge,
            fresh: page.is_none(),
        })
    }

    /// tcp_sendmsg_locked, v6.12: the task frag, refilled first.
    fn task_frag_target(&mut self, skb: &Tail, log: &mut Log) -> Option<FragTarget> {
        let k = &self.cfg.k;
        let high_order = !self.cfg.device.high_order_alloc_disable;
        task_frag::refill(
            PAGE_FRAG_REFILL_SZ,
            high_order,
            k,
            &mut self.pages,
            CPU,
            log,
        );
        let pf = task_frag::cursor(log, CPU);
        let p = pf.page.expect("model bug: refill gives a page");
        let merge = skb.can_coalesce(p, pf.offset);
        if !merge && skb.nr_frags >= k.max_skb_frags {
            return None;
        }
        Some(FragTarget {
            page: p,
            off: pf.offset,
            room: pf.size - pf.offset,
            merge,
            fresh: false,
        })
    }

    /// skb_copy_to_page, then the skb update and the page references: a new frag holds one
    /// reference; the socket holds its own while it keeps the page.
    pub(super) fn copy_to_page(&mut self, skb: &Tail, t: &FragTarget, n: u32, log: &mut Log) {
        let end = t.off + n;
        // Where the socket's page frag stands after the copy: on this page, at `end`, unless
        // 2.6.33 took a fresh page the copy filled (it keeps one only if room is left).
        let kept = !t.fresh || end < self.cfg.k.page_size;
        let (id, i) = (skb.id, skb.nr_frags);
        log.emit(Event::CopyToPage {
            skb: id,
            page: t.page,
            offset: t.off,
            bytes: n,
            cursor: kept.then_some(end),
        });
        self.wmem_queued += n as u64;
        let e = frag_event((id, i, skb.truesize), t.merge, t.page, t.off, n);
        log.emit(e);
        if !t.merge {
            self.c.frags += 1;
            self.c.max_frags_per_skb = self.c.max_frags_per_skb.max(i as u64 + 1);
            // A fresh page's first reference is the frag's; the socket takes one of its own
            // (get_page) when it keeps the page, as it always does a page it already held.
            if kept {
                self.pages.get(t.page, log);
            }
        }
        self.c.frag_bytes += n as u64;
        self.c.sendmsg_copy_bytes += n as u64;
    }
}

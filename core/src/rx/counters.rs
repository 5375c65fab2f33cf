//! The receive side's counters, in trace order. [`super::machine`] fills them from the tallies
//! each stage keeps.

use crate::counters::counters;

counters! {
    /// Cumulative counters of the receive path.
    pub struct RxCounters {
        /// Frames NAPI received.
        frames_arrived,
        /// Their payload bytes.
        bytes_arrived,
        /// NAPI polls (net_rx_action rounds on the BH CPU).
        napi_polls,
        /// skbs the driver built.
        skbs_allocated,
        /// Segments GRO merged into a held skb.
        gro_merged,
        /// skbs tcp_v4_rcv got (queued, backlogged or dropped).
        skbs_delivered,
        /// Of those, the ones that went to the backlog (the user owned the socket).
        backlog_deliveries,
        /// skbs tcp_try_coalesce merged into the receive queue's tail (TCPRcvCoalesce).
        rcv_coalesced,
        /// Fragments the frag caches handed out.
        frags_allocated,
        /// Pages the frag caches took.
        frag_cache_pages,
        /// frags_allocated / frag_cache_pages, rounded.
        frags_per_page,
        /// Pages allocated (frag caches and driver pages).
        page_allocs,
        /// Times an allocator started over on a page it still held.
        page_reuses,
        /// Pages freed, and on which CPU.
        page_frees,
        page_frees_cpu0,
        page_frees_cpu1,
        /// put_page calls per CPU, and those away from the page's CPU.
        put_page_cpu0,
        put_page_cpu1,
        remote_put_page,
        /// __kfree_skb calls per CPU, and those away from the skb's CPU.
        skb_frees_cpu0,
        skb_frees_cpu1,
        remote_skb_frees,
        /// skbs parked in sk_rx_skb_cache, and parked skbs freed by a later delivery.
        rx_cache_parked,
        rx_cache_freed,
        /// skbs queued on another CPU's defer list.
        skbs_deferred,
        /// recvmsg calls.
        recvmsg_calls,
        /// skbs recvmsg freed itself (not parked, not deferred).
        recvmsg_skbs_freed,
        /// put_page calls and page frees on the application's CPU during recvmsg.
        recvmsg_put_page,
        recvmsg_page_frees,
        /// Payload bytes copied to the user.
        bytes_read,
        /// Payload bytes freed unread (disconnect, close, a closed socket).
        bytes_purged,
        /// skbs alive now (GRO, socket, defer lists; frag_list members included).
        skbs_live,
        /// Pages alive now.
        pages_live,
    }
}

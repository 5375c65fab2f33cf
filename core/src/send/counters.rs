//! The send side's counters: plain integers in a struct (the benchmark's hot path touches
//! nothing else), turned into the trace's ordered, named
//! [`Counters`](crate::counters::Counters) only on request.

use crate::counters::counters;

counters! {
    /// Cumulative counters of one socket (or, summed, of many).
    pub struct SendCounters {
        /// Bytes sendmsg accepted (tp->write_seq advanced).
        bytes_written,
        /// Bytes the peer acknowledged.
        bytes_acked,
        /// sk_stream_alloc_skb / tcp_stream_alloc_skb calls.
        skbs_allocated,
        /// skbs freed (acknowledged, or purged at close).
        skbs_freed,
        /// Bytes of skb heads kmalloc'ed by sendmsg (headroom + linear room + shared info).
        skb_head_bytes,
        /// Payload bytes copied into linear areas.
        linear_bytes,
        /// Payload bytes copied into page frags.
        frag_bytes,
        /// Frags added (skb_fill_page_desc), not counting coalesced copies.
        frags,
        /// The most frags any one skb held.
        max_frags_per_skb,
        /// Pages allocated (each compound page counts once).
        pages_allocated,
        /// Pages freed (their count reached zero).
        pages_freed,
        /// Times the page frag rewound a page it alone still held (modern).
        pages_reused,
        /// Pages alive now.
        pages_live,
        /// The sum of the live pages' reference counts (frags + the page frag's).
        page_refs,
        /// Bytes copied from user memory in sendmsg (linear_bytes + frag_bytes).
        sendmsg_copy_bytes,
        /// skbs handed to the device.
        xmit_skbs,
        /// Segments on the wire (after GSO/TSO).
        wire_segments,
        /// Payload bytes on the wire.
        wire_bytes,
        /// Wire segments carrying PSH.
        psh_segments,
        /// skb_linearize calls (each allocates a new head) for a non-SG device.
        linearize_copies,
        /// Bytes those new heads took.
        linearize_head_bytes,
        /// Frag bytes skb_linearize copied into the new heads.
        linearize_copy_bytes,
    }
}

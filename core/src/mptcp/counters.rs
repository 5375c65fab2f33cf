//! The MPTCP send path's counters, in trace order; filled from [`super::Stats`], the page
//! pool and the subflows' queues.

use crate::counters::counters;

counters! {
    /// Cumulative counters of one MPTCP socket and its subflows.
    pub struct MptcpCounters {
        /// The first subflow's size goal (tcp_send_mss).
        size_goal,
        /// Subflow skbs allocated (tcp_build_frag).
        skbs_allocated,
        /// bytes_mapped / skbs_allocated.
        avg_skb_bytes,
        /// The largest subflow skb.
        max_skb_bytes,
        /// Subflow skbs carrying PSH (freed and live).
        psh_skbs,
        /// DSS mappings created.
        dss_mappings,
        /// Times mptcp_sendmsg_frag collapsed onto a subflow's tail skb.
        collapses,
        /// Tails marked EOR.
        eor_marks,
        /// Data fragments carved.
        dfrags,
        /// Pages allocated and freed.
        pages_allocated,
        pages_freed,
        /// Bytes sendmsg copied into dfrags.
        bytes_written,
        /// Bytes mapped onto subflows.
        bytes_mapped,
    }
}

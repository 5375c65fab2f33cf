//! What every part of MPTCP's send path shares.

use crate::consts::KernelConsts;
use crate::page::PagePool;
use crate::skb::SkbId;

/// Running tallies behind the counters.
#[derive(Debug, Default)]
pub struct Stats {
    pub skbs_allocated: u64,
    pub psh_freed: u64,
    pub dss_mappings: u64,
    pub collapses: u64,
    pub eor_marks: u64,
    pub dfrags: u64,
    pub bytes_written: u64,
    pub bytes_mapped: u64,
    pub max_skb_bytes: u64,
}

/// What every part of the send path shares: constants, pages, skb numbering, tallies.
pub struct Tx {
    pub k: KernelConsts,
    pub pool: PagePool,
    pub next_skb: SkbId,
    pub stats: Stats,
}

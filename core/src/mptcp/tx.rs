//! What every part of MPTCP's send path shares.

use crate::consts::KernelConsts;
use crate::page_alloc::PageAlloc;
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

/// What every part of the send path shares: constants, the page allocator, skb numbering,
/// tallies. The pages, dfrags and skbs themselves are the run's state, which only events
/// change.
pub struct Tx {
    pub k: KernelConsts,
    pub pages: PageAlloc,
    pub next_skb: SkbId,
    pub stats: Stats,
}

impl Tx {
    pub fn new(k: KernelConsts) -> Tx {
        Tx {
            k,
            pages: PageAlloc::default(),
            next_skb: 0,
            stats: Stats::default(),
        }
    }
}

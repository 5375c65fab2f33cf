//! Pages and their reference counts (`struct page`, `get_page`, `put_page`, `alloc_pages`).
//!
//! A page is 4096 << order bytes with a count; it goes back to the allocator when the count
//! reaches zero. Every allocation and free records the CPU it ran on, so the receive side can
//! count remote frees. The allocator itself, which changes pages only by events, is
//! [`crate::page_alloc`].

use crate::events::Cpu;
pub use crate::events::PageId;
use serde::{Deserialize, Serialize};

/// One live page, as the trace shows it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Page {
    pub id: PageId,
    /// Compound order: the page holds `PAGE_SIZE << order` bytes.
    pub order: u32,
    /// Bytes in the page (`PAGE_SIZE << order`).
    pub size: u32,
    /// The reference count (`page_ref_count`).
    pub count: u32,
    /// The CPU that allocated it, unless `cpu_unread`.
    pub cpu: Cpu,
    /// A capture's page: its allocating CPU is not read (`cpu` is that of the skb it was first
    /// seen in), so a host shows none.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cpu_unread: bool,
    /// Bytes an allocator has handed out of it so far (how full it is).
    pub used: u32,
}

impl Page {
    /// Its CPU as a host labels it (`alloc cpu N`); none where a capture did not read it.
    pub fn cpu_fact(&self) -> Option<String> {
        (!self.cpu_unread).then(|| format!("alloc cpu {}", self.cpu))
    }
}

/// Allocation accounting for every page the model ever touched.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PageStats {
    pub allocated: u64,
    pub freed: u64,
    /// Times an allocator started over on a page it already held (instead of a new page).
    pub reused: u64,
    pub put_page: [u64; crate::NR_CPUS],
    pub freed_on: [u64; crate::NR_CPUS],
}

/// A page-frag cache taking a freshly allocated page: where its cursor starts (none for
/// v6.12's 1 KiB cache, whose cursor each fragment sets) and, where the cache takes its
/// references in advance (v3.6, v6.12), the page's count once it has (the caller sets it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Refill {
    pub cursor: Option<u32>,
    pub bias: Option<u32>,
}

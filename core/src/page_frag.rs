//! The page-frag cursor (`struct page_frag`, a page_frag_cache's offset and bias) as a trace
//! shows it: the socket's TCP_PAGE/TCP_OFF, the task's page frag (refilled by
//! [`crate::task_frag`]), or a CPU's receive frag cache.

use crate::page::{Page, PageId};
use serde::{Deserialize, Serialize};

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

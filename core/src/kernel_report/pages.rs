//! A report's page side (seed 001): the pages a NIC driver's frag cache took, as the model's
//! `FragAlloc` events and the kernel's `napi_gro_frags_entry` fragments show them.

use crate::events::Event;
use crate::Trace;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The frag cache's pages, in the order it took them, and its restarts: the kernel's
/// `napi_alloc_cache.page` (`__napi_alloc_frag_align`, net/core/skbuff.c, 6.18) or the
/// model's `napi-frags` driver's.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FragCache {
    /// Fragments the cache cut, one a frame.
    pub fragments: u64,
    /// Times the cache started over on the page it held (every fragment came back).
    pub reuses: u64,
    pub pages: Vec<PageView>,
}

/// One page the frag cache took.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PageView {
    /// The allocation's order (3: a 32 KiB PAGE_FRAG_CACHE_MAX_SIZE page).
    pub order: u64,
    /// The CPU whose cache took it.
    pub cpu: u64,
    /// Fragments cut from it.
    pub fragments: u64,
    /// Freed by the end of the run.
    pub freed: bool,
}

/// Reads one field of a page.
pub type PageField = fn(&PageView) -> u64;

/// The judged fields of each page, in the order they are written: the lane's columns.
pub const PAGE_FIELDS: [(&str, PageField); 4] = [
    ("order", |p| p.order),
    ("cpu", |p| p.cpu),
    ("fragments", |p| p.fragments),
    ("freed", |p| p.freed.into()),
];

/// Reads one total of a frag cache.
type Total = fn(&FragCache) -> u64;

/// The judged totals, each a row of its own before the pages'.
pub const TOTALS: [(&str, Total); 4] = [
    ("fragments", |c| c.fragments),
    ("frag_cache_pages", |c| c.pages.len() as u64),
    ("page_reuses", |c| c.reuses),
    ("page_frees", |c| {
        c.pages.iter().filter(|p| p.freed).count() as u64
    }),
];

impl FragCache {
    /// The pages the model's frag cache used, read from its events (`FragAlloc`: the 1 KiB
    /// small-head cache of v6.12, `FragAlloc1k`, is left out: 6.18's `napi_get_frags` heads
    /// are slab).
    pub fn of(t: &Trace) -> FragCache {
        let mut out = FragCache::default();
        let mut index: BTreeMap<u32, usize> = BTreeMap::new();
        let mut alloc = BTreeMap::new();
        let events = || t.steps.iter().flat_map(|s| &s.events);
        for e in events() {
            if let Event::AllocPage {
                page, order, cpu, ..
            } = *e
            {
                alloc.insert(page, (order, cpu));
            }
        }
        for e in events() {
            match *e {
                Event::FragAlloc { page, .. } => {
                    out.fragments += 1;
                    let i = *index.entry(page).or_insert_with(|| {
                        let (order, cpu) = alloc.get(&page).copied().unwrap_or_default();
                        out.pages.push(PageView {
                            order: order.into(),
                            cpu: cpu.into(),
                            ..PageView::default()
                        });
                        out.pages.len() - 1
                    });
                    out.pages[i].fragments += 1;
                }
                Event::ReusePage { page, .. } if index.contains_key(&page) => out.reuses += 1,
                Event::FreePage { page, .. } => {
                    if let Some(&i) = index.get(&page) {
                        out.pages[i].freed = true;
                    }
                }
                _ => {}
            }
        }
        out
    }
}

/// A frag cache's pages, or none.
pub(super) fn pages(c: Option<&FragCache>) -> &[PageView] {
    c.map_or(&[], |c| &c.pages)
}

//! Replaying page and page-frag cursor events: pages allocated, referenced, filled and
//! freed, and the cursors that carve them (the send side's socket page frag, the receive
//! side's per-CPU frag caches and small-head caches).

use crate::page::Page;
use crate::trace::{Cursor, Event, State};

impl State {
    /// Applies a page or page-frag cursor event; [`State::apply`] sends each event to its family.
    pub(super) fn apply_page(&mut self, e: &Event) -> Result<(), String> {
        use Event::*;
        match *e {
            AllocPage {
                page,
                order,
                cpu,
                size,
                cursor,
                bias,
            } => {
                if self.page_slot(page).is_ok() {
                    return Err(format!("page {page} is already live"));
                }
                let count = bias.unwrap_or(1);
                self.insert_page(Page {
                    id: page,
                    order,
                    size,
                    count,
                    cpu,
                    cpu_unread: false,
                    used: 0,
                });
                if let Some(offset) = cursor {
                    let c = self.cpu_cursor(cpu)?;
                    *c = Cursor {
                        page: Some(page),
                        offset,
                        size,
                        bias,
                        name: std::mem::take(&mut c.name),
                    };
                }
            }
            GetPage { page, count } => self.page(page)?.count = count,
            PutPage {
                page,
                count,
                release,
                ..
            } => {
                self.page(page)?.count = count;
                if release {
                    self.release_cursor(self.holder(page))?;
                }
            }
            FreePage { page, .. } => {
                let at = self.page_at(page)?;
                self.pages.remove(at);
            }
            ReusePage { page, cursor, bias } => {
                let p = self.page(page)?;
                p.used = 0;
                if let Some(b) = bias {
                    p.count = b;
                }
                if let Some(c) = self.holder(page).map(|i| &mut self.cursors[i]) {
                    c.offset = cursor.unwrap_or(c.offset);
                    c.bias = bias.or(c.bias);
                }
            }
            CopyToPage {
                page,
                offset,
                bytes,
                cursor,
                ..
            } => {
                let p = self.page(page)?;
                p.used = p.used.max(offset + bytes);
                let size = p.size;
                if let Some(at) = cursor {
                    let i = self.socket_cursor(page)?;
                    let c = &mut self.cursors[i];
                    (c.page, c.offset, c.size) = (Some(page), at, size);
                }
            }
            FragAlloc {
                cpu,
                page,
                size,
                cursor,
                bias,
                ..
            } => {
                self.page(page)?.used += size;
                let c = self.cpu_cursor(cpu)?;
                if c.page != Some(page) {
                    return Err(format!("cpu{cpu}'s cursor is not on page {page}"));
                }
                c.offset = cursor;
                c.bias = bias;
            }
            FragAlloc1k {
                cpu,
                page,
                offset,
                size,
                bias,
            } => {
                let p = self.page(page)?;
                p.used += size;
                let page_size = p.size;
                let c = self.small_cursor(cpu)?;
                let held = bias.map(|_| page);
                *c = Cursor {
                    name: std::mem::take(&mut c.name),
                    page: held,
                    offset,
                    size: if held.is_some() { page_size } else { 0 },
                    bias,
                };
            }
            FragCacheRelease { cpu, page, count } => {
                self.page(page)?.count = count;
                self.release_cursor(Some(cpu as usize))?;
            }
            _ => {
                return Err(format!(
                    "{} is not a page or page-frag cursor event",
                    e.kind()
                ))
            }
        }
        Ok(())
    }
}

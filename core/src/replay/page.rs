//! Replaying page and page-frag cursor events: pages allocated, referenced, filled and
//! freed, and the cursors that carve them (the send side's socket page frag, the receive
//! side's per-CPU frag caches and small-head caches).

use crate::page::{Page, PageId};
use crate::trace::{Cursor, Event, State};
use crate::Cpu;

impl State {
    /// Applies a page or page-frag cursor event; [`State::apply`] sends each event to its
    /// family. Inlined where an event is emitted, so only its kind's arm is left there: a
    /// count set in place, or a call of the kind's own method.
    #[inline(always)]
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
                let count = bias.unwrap_or(1);
                let p = Page {
                    id: page,
                    order,
                    size,
                    count,
                    cpu,
                    cpu_unread: false,
                    used: 0,
                };
                self.alloc_page(p, cursor, bias)
            }
            GetPage { page, count } => {
                self.page(page)?.count = count;
                Ok(())
            }
            PutPage {
                page,
                count,
                release,
                ..
            } => self.put_page(page, count, release),
            FreePage { page, .. } => self.free_page(page),
            ReusePage { page, cursor, bias } => self.reuse_page(page, cursor, bias),
            CopyToPage {
                page,
                offset,
                bytes,
                cursor,
                ..
            } => self.copy_to_page(page, offset + bytes, cursor),
            FragAlloc {
                cpu,
                page,
                size,
                cursor,
                bias,
                ..
            } => self.frag_alloc(cpu, page, size, cursor, bias),
            FragAlloc1k {
                cpu,
                page,
                offset,
                size,
                bias,
            } => self.frag_alloc_1k(cpu, page, offset, size, bias),
            FragCacheRelease { cpu, page, count } => {
                self.page(page)?.count = count;
                self.release_cursor(Some(cpu as usize))
            }
            _ => Err(format!(
                "{} is not a page or page-frag cursor event",
                e.kind()
            )),
        }
    }

    /// Page `p` allocated; with `cursor`, its CPU's cursor takes it at that offset.
    #[inline(never)]
    fn alloc_page(
        &mut self,
        p: Page,
        cursor: Option<u32>,
        bias: Option<u32>,
    ) -> Result<(), String> {
        let (page, cpu, size) = (p.id, p.cpu, p.size);
        if self.page_slot(page).is_ok() {
            return Err(format!("page {page} is already live"));
        }
        self.insert_page(p);
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
        Ok(())
    }

    #[inline(never)]
    fn put_page(&mut self, page: PageId, count: u32, release: bool) -> Result<(), String> {
        self.page(page)?.count = count;
        if release {
            self.release_cursor(self.holder(page))?;
        }
        Ok(())
    }

    #[inline(never)]
    fn free_page(&mut self, page: PageId) -> Result<(), String> {
        let at = self.page_at(page)?;
        self.pages.remove(at);
        Ok(())
    }

    #[inline(never)]
    fn reuse_page(
        &mut self,
        page: PageId,
        cursor: Option<u32>,
        bias: Option<u32>,
    ) -> Result<(), String> {
        let p = self.page(page)?;
        p.used = 0;
        if let Some(b) = bias {
            p.count = b;
        }
        if let Some(c) = self.holder(page).map(|i| &mut self.cursors[i]) {
            c.offset = cursor.unwrap_or(c.offset);
            c.bias = bias.or(c.bias);
        }
        Ok(())
    }

    /// Bytes copied to `page` up to `end`; with `cursor`, the socket's page frag is left on
    /// the page at that offset.
    #[inline(never)]
    fn copy_to_page(&mut self, page: PageId, end: u32, cursor: Option<u32>) -> Result<(), String> {
        let p = self.page(page)?;
        p.used = p.used.max(end);
        let size = p.size;
        if let Some(at) = cursor {
            let i = self.socket_cursor(page)?;
            let c = &mut self.cursors[i];
            (c.page, c.offset, c.size) = (Some(page), at, size);
        }
        Ok(())
    }

    #[inline(never)]
    fn frag_alloc(
        &mut self,
        cpu: Cpu,
        page: PageId,
        size: u32,
        cursor: u32,
        bias: Option<u32>,
    ) -> Result<(), String> {
        self.page(page)?.used += size;
        let c = self.cpu_cursor(cpu)?;
        if c.page != Some(page) {
            return Err(format!("cpu{cpu}'s cursor is not on page {page}"));
        }
        c.offset = cursor;
        c.bias = bias;
        Ok(())
    }

    #[inline(never)]
    fn frag_alloc_1k(
        &mut self,
        cpu: Cpu,
        page: PageId,
        offset: u32,
        size: u32,
        bias: Option<u32>,
    ) -> Result<(), String> {
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
        Ok(())
    }
}

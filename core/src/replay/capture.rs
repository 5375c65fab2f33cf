//! Replaying a capture's facts (`skblab trace`, [`crate::capture`]): an skb appears on its
//! socket's queue, takes its layout at the device, moves to its receiver's queue when handed
//! up and leaves when freed; a page is drawn while an skb of the program's holds a frag on it
//! (its allocating CPU not read).

use crate::page::Page;
use crate::skb::{Frag, Skb, SkbHead};
use crate::trace::{Event, State};

impl State {
    /// Applies a capture's event; [`State::apply`] sends each event to its family.
    #[inline(never)]
    pub(super) fn apply_capture(&mut self, e: &Event) -> Result<(), String> {
        use Event::*;
        match *e {
            SeenSkb {
                skb,
                cpu,
                allocated,
                ref queue,
                ..
            } => {
                let mut new = Skb::new(skb, cpu, SkbHead::default(), 0);
                new.cpu_seen = !allocated;
                self.queue(queue)?.push_back(new);
            }
            SeenXmit {
                skb,
                len,
                linear,
                truesize,
                seq,
                ..
            } => {
                let s = self.skb(skb)?;
                // The layout as the device saw it: headroom and tailroom are not read.
                s.head = SkbHead {
                    head_bytes: linear,
                    truesize,
                    ..SkbHead::default()
                };
                (s.len, s.linear_len, s.data_len) = (linear, linear, 0);
                (s.seq, s.end_seq) = (seq, seq);
                s.frags.clear();
                s.sent = true;
                if len < linear {
                    return Err(format!("skb {skb}: len {len} under its linear {linear}"));
                }
            }
            SeenFrag {
                skb,
                idx,
                page,
                order,
                page_size,
                offset,
                size,
                count,
                ..
            } => {
                let s = self.skb(skb)?;
                if idx as usize != s.frags.len() {
                    return Err(format!("skb {skb} has {} frags, not {idx}", s.frags.len()));
                }
                s.add_frag(Frag { page, offset, size });
                let cpu = s.cpu;
                let new = Page {
                    id: page,
                    order,
                    size: page_size,
                    count,
                    cpu,
                    cpu_unread: true,
                    used: 0,
                };
                self.seen_page(new, offset + size);
            }
            SeenRx {
                skb,
                len,
                ref queue,
                ..
            } => {
                let s = self.skb(skb)?;
                if s.len == 0 {
                    // Not seen at a device here: only its length is read on the way up.
                    (s.len, s.linear_len) = (len, len);
                    s.head.head_bytes = len;
                } else {
                    // The link-layer header is pulled on the way up (eth_type_trans).
                    let pulled = s.len.saturating_sub(len).min(s.linear_len);
                    (s.len, s.linear_len) = (s.len - pulled, s.linear_len - pulled);
                }
                self.move_skb(skb, queue)?;
            }
            SeenFree { skb, .. } => {
                let s = self.take_skb(skb)?;
                for f in &s.frags {
                    if self.holder_skb(f.page).is_none() {
                        let at = self.page_at(f.page)?;
                        self.pages.remove(at);
                    }
                }
            }
            _ => return Err(format!("{} is not a capture's event", e.kind())),
        }
        Ok(())
    }

    /// A page as a frag read at the device shows it: added when first seen, its count the
    /// latest read, its bytes in use up to the furthest frag seen on it (`end`).
    fn seen_page(&mut self, page: Page, end: u32) {
        let (id, count) = (page.id, page.count);
        if self.page_slot(id).is_err() {
            self.insert_page(page);
        }
        if let Ok(p) = self.page(id) {
            p.count = count;
            p.used = p.used.max(end.min(p.size));
        }
    }

    /// An skb on any queue that holds a frag on `page`.
    fn holder_skb(&self, page: u32) -> Option<u32> {
        let skbs = self.queues.iter().flat_map(|q| &q.skbs);
        let mut holders = skbs.filter(|s| s.frags.iter().any(|f| f.page == page));
        holders.next().map(|s| s.id)
    }
}

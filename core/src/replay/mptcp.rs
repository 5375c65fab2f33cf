//! Replaying MPTCP's events: data fragments carved from the page frag and filled, the
//! DSS mappings their skbs carry, subflows sending, and acknowledged data cleared.

use crate::events::PageId;
use crate::skb::{Mapping, SkbId};
use crate::trace::{queue, Dfrag, Event, State};

impl State {
    /// Applies an MPTCP event; [`State::apply`] sends each event to its family. Inlined
    /// where an event is emitted, so only a call of its kind's own method is left there.
    #[inline(always)]
    pub(super) fn apply_mptcp(&mut self, e: &Event) -> Result<(), String> {
        use Event::*;
        match *e {
            CarveDfrag {
                data_seq,
                page,
                overhead,
                ..
            } => self.carve_dfrag(data_seq, page, overhead),
            CopyToDfrag {
                data_seq,
                page,
                offset,
                bytes,
            } => self.copy_to_dfrag(data_seq, page, offset, bytes),
            NewMapping {
                skb,
                data_seq,
                subflow_seq,
                data_len,
            } => self.new_mapping(
                skb,
                Mapping {
                    data_seq,
                    subflow_seq,
                    data_len,
                    frozen: false,
                },
            ),
            ExtendMapping { skb, data_len } => self.extend_mapping(skb, data_len),
            SubflowXmit { subflow, .. } => self.subflow_xmit(subflow),
            ClearDfrag { data_seq, trim } => self.clear_dfrag(data_seq, trim),
            _ => Err(format!("{} is not an MPTCP event", e.kind())),
        }
    }

    #[inline(never)]
    fn carve_dfrag(&mut self, data_seq: u64, page: PageId, overhead: u32) -> Result<(), String> {
        // The page frag moves past the header; the dfrag's data starts there.
        let i = self.holder(page).ok_or("no cursor holds the page")?;
        let data = self.cursors[i].offset + overhead;
        self.dfrags.push_back(Dfrag {
            data_seq,
            page,
            offset: data,
            data_len: 0,
            already_sent: 0,
        });
        self.advance_cursor(page, data)
    }

    #[inline(never)]
    fn copy_to_dfrag(
        &mut self,
        data_seq: u64,
        page: PageId,
        offset: u32,
        bytes: u32,
    ) -> Result<(), String> {
        self.dfrag(data_seq)?.data_len += bytes;
        self.advance_cursor(page, offset + bytes)
    }

    #[inline(never)]
    fn new_mapping(&mut self, skb: SkbId, m: Mapping) -> Result<(), String> {
        self.skb(skb)?.mapping = Some(m);
        self.dfrag(m.data_seq)?.already_sent += m.data_len;
        Ok(())
    }

    #[inline(never)]
    fn extend_mapping(&mut self, skb: SkbId, data_len: u32) -> Result<(), String> {
        let m = self.skb(skb)?.mapping.as_mut().ok_or("no mapping")?;
        let more = data_len
            .checked_sub(m.data_len)
            .ok_or("a mapping never shrinks")?;
        let from = m.data_seq + m.data_len as u64;
        m.data_len = data_len;
        self.dfrag(from)?.already_sent += more;
        Ok(())
    }

    #[inline(never)]
    fn subflow_xmit(&mut self, subflow: u32) -> Result<(), String> {
        // Sent skbs are the queue's prefix: only its unsent tail goes (a queue of skbs
        // waiting for their ack costs each transmit nothing).
        let q = (self.queues.iter_mut())
            .find(|q| queue::is_subflow(&q.name, subflow))
            .ok_or_else(|| format!("no queue of subflow {subflow}"))?;
        for s in q.skbs.iter_mut().rev().take_while(|s| !s.sent) {
            s.sent = true;
        }
        Ok(())
    }

    #[inline(never)]
    fn clear_dfrag(&mut self, data_seq: u64, trim: Option<u32>) -> Result<(), String> {
        let at = self.dfrag_at(data_seq)?;
        match trim {
            None => drop(self.dfrags.remove(at)),
            Some(n) => {
                let d = &mut self.dfrags[at];
                if n > d.already_sent {
                    return Err(format!("{n} bytes acknowledged, {} sent", d.already_sent));
                }
                d.data_seq += n as u64;
                d.offset += n;
                d.data_len -= n;
                d.already_sent -= n;
            }
        }
        Ok(())
    }
}

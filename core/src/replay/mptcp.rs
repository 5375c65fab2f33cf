//! Replaying MPTCP's events: data fragments carved from the page frag and filled, the
//! DSS mappings their skbs carry, subflows sending, and acknowledged data cleared.

use crate::trace::{queue, Dfrag, Event, State};

impl State {
    /// Applies an MPTCP event; [`State::apply`] sends each event to its family.
    pub(super) fn apply_mptcp(&mut self, e: &Event) -> Result<(), String> {
        use Event::*;
        match *e {
            CarveDfrag {
                data_seq,
                page,
                overhead,
                ..
            } => {
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
                self.advance_cursor(page, data)?;
            }
            CopyToDfrag {
                data_seq,
                page,
                offset,
                bytes,
            } => {
                self.dfrag(data_seq)?.data_len += bytes;
                self.advance_cursor(page, offset + bytes)?;
            }
            NewMapping {
                skb,
                data_seq,
                subflow_seq,
                data_len,
            } => {
                self.skb(skb)?.mapping = Some(crate::skb::Mapping {
                    data_seq,
                    subflow_seq,
                    data_len,
                    frozen: false,
                });
                self.dfrag(data_seq)?.already_sent += data_len;
            }
            ExtendMapping { skb, data_len } => {
                let m = self.skb(skb)?.mapping.as_mut().ok_or("no mapping")?;
                let more = data_len
                    .checked_sub(m.data_len)
                    .ok_or("a mapping never shrinks")?;
                let from = m.data_seq + m.data_len as u64;
                m.data_len = data_len;
                self.dfrag(from)?.already_sent += more;
            }
            SubflowXmit { subflow, .. } => {
                // Sent skbs are the queue's prefix: only its unsent tail goes (a queue of
                // skbs waiting for their ack costs each transmit nothing).
                let q = (self.queues.iter_mut())
                    .find(|q| queue::is_subflow(&q.name, subflow))
                    .ok_or_else(|| format!("no queue of subflow {subflow}"))?;
                for s in q.skbs.iter_mut().rev().take_while(|s| !s.sent) {
                    s.sent = true;
                }
            }
            ClearDfrag { data_seq, trim } => {
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
            }
            _ => return Err(format!("{} is not an MPTCP event", e.kind())),
        }
        Ok(())
    }
}

//! Replaying skb events: an skb allocated and freed, its linear bytes and frags filled,
//! its flags set, linearized and sent.

use crate::skb::{Frag, Skb, SkbHead};
use crate::trace::{Event, Linearized, State};

impl State {
    /// Applies an skb event; [`State::apply`] sends each event to its family.
    pub(super) fn apply_skb(&mut self, e: &Event) -> Result<(), String> {
        use Event::*;
        match *e {
            AllocSkb {
                skb,
                cpu,
                head_bytes,
                headroom,
                linear_room,
                seq,
                truesize,
                reserved_tailroom,
                head_page,
                head_offset,
                ref queue,
                size_goal,
            } => {
                // Ids are unique as the mechanisms hand them out (counting up); looking for
                // this one first would make each allocation cost every skb a queue holds.
                let head = SkbHead {
                    headroom,
                    tailroom: linear_room + reserved_tailroom,
                    head_bytes,
                    truesize,
                };
                let mut new = Skb::new(skb, cpu, head, seq);
                new.size_goal = size_goal;
                new.head_frag = head_page.map(|page| Frag {
                    page,
                    offset: head_offset.unwrap_or(0),
                    size: head_bytes,
                });
                match queue {
                    Some(name) => self.queue(name)?.push_back(new),
                    None => self.in_flight.push_back(new),
                }
            }
            FreeSkb { skb, .. } => drop(self.take_skb(skb)?),
            CopyToLinear { skb, bytes } => put_linear(self.skb(skb)?, bytes)?,
            NewFrag {
                skb,
                idx,
                page,
                offset,
                size,
                truesize,
            } => {
                let s = self.skb(skb)?;
                if idx as usize != s.frags.len() {
                    return Err(format!("skb {skb} has {} frags, not {idx}", s.frags.len()));
                }
                s.add_frag(Frag { page, offset, size });
                s.head.truesize = truesize;
                // A page nothing has written yet is a driver's payload buffer, filled by the
                // frame; bytes a copy or a frag cache handed out are counted already (a
                // cache that counts down hands out its top first).
                let p = self.page(page)?;
                if p.used == 0 {
                    p.used = offset + size;
                }
            }
            Coalesce {
                skb,
                idx,
                bytes,
                truesize,
            } => {
                let s = self.skb(skb)?;
                if (idx as usize) + 1 != s.frags.len() {
                    return Err(format!("frag {idx} is not skb {skb}'s last"));
                }
                s.grow_last_frag(bytes);
                s.head.truesize = truesize;
            }
            MarkPsh { skb } => self.skb(skb)?.psh = true,
            ClearPsh { skb } => self.skb(skb)?.psh = false,
            MarkEor { skb } => self.skb(skb)?.eor = true,
            Linearize {
                skb,
                head_bytes,
                copied,
            } => {
                self.skb(skb)?;
                self.linearized.push(Linearized {
                    skb,
                    head_bytes,
                    copied,
                });
            }
            Xmit {
                skb, linearized, ..
            } => {
                self.skb(skb)?.sent = true;
                if linearized {
                    // The device has the copy now.
                    let at = (self.linearized.iter().position(|l| l.skb == skb))
                        .ok_or_else(|| format!("skb {skb} was not linearized"))?;
                    self.linearized.remove(at);
                }
            }
            _ => return Err(format!("{} is not an skb event", e.kind())),
        }
        Ok(())
    }
}

/// `skb_put`: `n` bytes into the linear tailroom.
pub(super) fn put_linear(s: &mut Skb, n: u32) -> Result<(), String> {
    if n > s.head.tailroom {
        return Err(format!(
            "skb {} has {} bytes of tailroom, not {n}",
            s.id, s.head.tailroom
        ));
    }
    s.put_linear(n);
    Ok(())
}

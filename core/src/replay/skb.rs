//! Replaying skb events: an skb allocated and freed, its linear bytes and frags filled,
//! its flags set, linearized and sent.

use crate::skb::{Frag, Skb, SkbHead, SkbId};
use crate::trace::{Event, Linearized, State};

impl State {
    /// Applies an skb event; [`State::apply`] sends each event to its family. Inlined where
    /// an event is emitted, so only its kind's arm is left there: a flag set in place, or a
    /// call of the kind's own method.
    #[inline(always)]
    pub(super) fn apply_skb(&mut self, e: &Event) -> Result<(), String> {
        use Event::*;
        match *e {
            AllocSkb { .. } => self.alloc_skb(e),
            FreeSkb { skb, .. } => self.take_skb(skb).map(drop),
            CopyToLinear { skb, bytes } => put_linear(self.skb(skb)?, bytes),
            NewFrag {
                skb,
                idx,
                page,
                offset,
                size,
                truesize,
            } => self.new_frag(skb, idx, Frag { page, offset, size }, truesize),
            Coalesce {
                skb,
                idx,
                bytes,
                truesize,
            } => self.coalesce(skb, idx, bytes, truesize),
            MarkPsh { skb } => {
                self.skb(skb)?.psh = true;
                Ok(())
            }
            ClearPsh { skb } => {
                self.skb(skb)?.psh = false;
                Ok(())
            }
            MarkEor { skb } => {
                self.skb(skb)?.eor = true;
                Ok(())
            }
            Linearize {
                skb,
                head_bytes,
                copied,
            } => self.linearize(Linearized {
                skb,
                head_bytes,
                copied,
            }),
            Xmit {
                skb, linearized, ..
            } => self.xmit(skb, linearized),
            _ => Err(format!("{} is not an skb event", e.kind())),
        }
    }

    #[inline(never)]
    fn alloc_skb(&mut self, e: &Event) -> Result<(), String> {
        let Event::AllocSkb {
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
        } = *e
        else {
            return Err(format!("{} is not alloc_skb", e.kind()));
        };
        // Ids are unique as the mechanisms hand them out (counting up); looking for this one
        // first would make each allocation cost every skb a queue holds.
        let head = SkbHead {
            headroom,
            tailroom: linear_room + reserved_tailroom,
            head_bytes,
            truesize,
        };
        let list = match queue {
            Some(name) => self.queue(name)?,
            None => &mut self.in_flight,
        };
        // Built where it is pushed: one copy of the skb, not two.
        list.push_back(Skb {
            size_goal,
            head_frag: head_page.map(|page| Frag {
                page,
                offset: head_offset.unwrap_or(0),
                size: head_bytes,
            }),
            ..Skb::new(skb, cpu, head, seq)
        });
        Ok(())
    }

    /// Frag `idx` of `skb`, its truesize now `truesize`.
    #[inline(never)]
    fn new_frag(&mut self, skb: SkbId, idx: u32, f: Frag, truesize: u32) -> Result<(), String> {
        let s = self.skb(skb)?;
        if idx as usize != s.frags.len() {
            return Err(format!("skb {skb} has {} frags, not {idx}", s.frags.len()));
        }
        s.add_frag(f);
        s.head.truesize = truesize;
        // A page nothing has written yet is a driver's payload buffer, filled by the frame;
        // bytes a copy or a frag cache handed out are counted already (a cache that counts
        // down hands out its top first).
        let p = self.page(f.page)?;
        if p.used == 0 {
            p.used = f.offset + f.size;
        }
        Ok(())
    }

    /// Frag `idx`, the last of `skb`, grown by `bytes`; its truesize now `truesize`.
    #[inline(never)]
    fn coalesce(&mut self, skb: SkbId, idx: u32, bytes: u32, truesize: u32) -> Result<(), String> {
        let s = self.skb(skb)?;
        if (idx as usize) + 1 != s.frags.len() {
            return Err(format!("frag {idx} is not skb {skb}'s last"));
        }
        s.grow_last_frag(bytes);
        s.head.truesize = truesize;
        Ok(())
    }

    #[inline(never)]
    fn linearize(&mut self, l: Linearized) -> Result<(), String> {
        self.skb(l.skb)?;
        self.linearized.push(l);
        Ok(())
    }

    #[inline(never)]
    fn xmit(&mut self, skb: SkbId, linearized: bool) -> Result<(), String> {
        self.skb(skb)?.sent = true;
        if linearized {
            // The device has the copy now.
            let at = (self.linearized.iter().position(|l| l.skb == skb))
                .ok_or_else(|| format!("skb {skb} was not linearized"))?;
            self.linearized.remove(at);
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

//! Replaying the receive side's events: a frame into its skb, GRO merging and chaining,
//! the socket's queues and the deferred frees.

use super::skb::put_linear;
use crate::skb::{Absorb, Frag, Skb};
use crate::trace::{queue, Event, State};

impl State {
    /// Applies a receive event; [`State::apply`] sends each event to its family.
    #[inline(never)]
    pub(super) fn apply_rx(&mut self, e: &Event) -> Result<(), String> {
        use Event::*;
        match *e {
            RxFrame {
                skb,
                headers,
                linear,
                ..
            } => {
                let s = self.skb(skb)?;
                s.head.tailroom = s.head.tailroom.checked_sub(headers).ok_or("no room")?;
                s.head.headroom += headers;
                put_linear(s, linear)?;
            }
            GroMerge {
                skb,
                into,
                stolen_head,
                delta_truesize,
            } => {
                let mut s = self.take_skb(skb)?;
                gro_merge(self.skb(into)?, &mut s, stolen_head, delta_truesize)?;
                self.in_flight.push_back(s);
            }
            RcvCoalesce {
                skb,
                into,
                copied,
                stolen_head,
                delta_truesize,
                ..
            } => {
                let mut s = self.take_skb(skb)?;
                let how = Absorb {
                    copied,
                    stolen_head,
                    delta_truesize,
                };
                self.skb(into)?.absorb(&mut s, how)?;
                self.in_flight.push_back(s);
            }
            GroChain { skb, into } => {
                let s = self.take_skb(skb)?;
                let p = self.skb(into)?;
                grow(p, s.len, s.head.truesize);
                p.frag_list.push(s);
            }
            GroFlush { skb, .. } | RxCacheTake { skb, .. } => {
                let s = self.take_skb(skb)?;
                self.in_flight.push_back(s);
            }
            QueueRcv { skb, .. } | BacklogProcess { skb, .. } => {
                self.move_skb(skb, queue::SK_RECEIVE_QUEUE)?
            }
            BacklogAdd { skb, .. } => self.move_skb(skb, queue::SK_BACKLOG)?,
            RxCachePark { skb } => self.move_skb(skb, queue::SK_RX_SKB_CACHE)?,
            DeferFree { skb, to_cpu, .. } => self.move_skb(skb, &queue::defer_list(to_cpu))?,
            _ => return Err(format!("{} is not a receive event", e.kind())),
        }
        Ok(())
    }
}

/// skb_gro_receive: `s`'s payload joins the last skb of `p` (`p`, or the last on its
/// frag_list), as frags or as its stolen head; `p` is charged `delta` more.
fn gro_merge(p: &mut Skb, s: &mut Skb, stolen_head: bool, delta: u32) -> Result<(), String> {
    let chained = !p.frag_list.is_empty();
    let lp = match p.frag_list.last_mut() {
        Some(lp) => lp,
        None => &mut *p,
    };
    if stolen_head {
        let head = s.head_frag.take().ok_or("no head frag to steal")?;
        lp.add_frag(Frag {
            page: head.page,
            offset: head.offset + s.head.headroom,
            size: s.linear_len,
        });
    } else {
        for f in std::mem::take(&mut s.frags) {
            lp.add_frag(f);
        }
    }
    lp.head.truesize += delta;
    if chained {
        grow(p, s.len, delta);
    }
    Ok(())
}

/// `p` carries `len` more bytes on its frag_list (p->len, p->data_len, p->truesize).
fn grow(p: &mut Skb, len: u32, truesize: u32) {
    p.len += len;
    p.data_len += len;
    p.end_seq = p.end_seq.wrapping_add(len);
    p.head.truesize += truesize;
}

//! GRO: one CPU's held packet for the flow (`napi->gro_list` / `gro_hash`), as
//! `dev_gro_receive` -> `tcp_gro_receive` -> `skb_gro_receive` build it (v3.5 and v6.12).
//!
//! In-order segments of a flow are merged into the held skb; the first segment's payload
//! length is its `gso_size`. A segment longer than that is not merged; a shorter one is merged
//! and ends the packet. `skb_gro_receive` refuses (-E2BIG) once the packet would reach 64 KiB
//! (`p->len + len >= 65536`, headers counted) or MAX_SKB_FRAGS frags, and the held packet goes
//! up. A merged segment's payload moves into the held skb:
//! - payload in frags (header split): the frags move, and the segment's head is freed;
//! - payload in a page-fragment head (`skb->head_frag`, build_skb): since commit d7e8883cfcf4
//!   "net: make GRO aware of skb->head_frag" (v3.5) the head page itself becomes a frag of the
//!   held skb (its page reference moves with it), and only the `struct sk_buff` is freed
//!   (NAPI_GRO_FREE_STOLEN_HEAD).
//!
//! Simplification: since v3.19 a held skb whose frags are full chains further segments on its
//! `frag_list` up to 64 KiB; the model passes it up instead, as v3.5 did. A kmalloc'ed head
//! (no head_frag) is not merged either (the kernel would chain it on `frag_list`).

use super::Kernel;
use crate::skb::{Frag, Skb};
use crate::trace::{Event, Events, Queue};
use crate::Cpu;

/// IPv4 + TCP-with-timestamps header bytes that GRO counts in `p->len` (20 + 32).
const GRO_L3L4_HEADERS: u32 = 52;

#[derive(Clone, Debug, Default)]
pub struct Gro {
    held: Option<Skb>,
    /// NAPI_GRO_CB(p)->count: segments in the held skb.
    segs: u32,
    /// skb_shinfo(p)->gso_size: the first segment's payload length.
    gso_size: u32,
}

impl Gro {
    /// Offers one received skb; returns the skbs to pass up now, in order.
    pub fn receive(&mut self, skb: Skb, k: &mut Kernel, cpu: Cpu, ev: &mut Events) -> Vec<Skb> {
        let Some(p) = self.held.as_mut() else {
            self.hold(skb);
            return Vec::new();
        };
        let len = skb.len;
        if len > self.gso_size {
            let out = self.flush(ev);
            self.hold(skb);
            return out;
        }
        assert_eq!(
            p.end_seq, skb.seq,
            "model bug: GRO got an out-of-order segment"
        );
        match merge(p, skb, k, cpu, ev) {
            Err(skb) => {
                let out = self.flush(ev);
                self.hold(skb);
                out
            }
            Ok(()) => {
                self.segs += 1;
                k.stats.gro_merged += 1;
                if len < self.gso_size {
                    self.flush(ev)
                } else {
                    Vec::new()
                }
            }
        }
    }

    /// napi_gro_flush: the held packet goes up.
    pub fn flush(&mut self, ev: &mut Events) -> Vec<Skb> {
        let segs = self.segs;
        self.held
            .take()
            .inspect(|skb| {
                let id = skb.id;
                ev.emit(|| Event::GroFlush { skb: id, segs });
            })
            .into_iter()
            .collect()
    }

    fn hold(&mut self, skb: Skb) {
        self.segs = 1;
        self.gso_size = skb.len;
        self.held = Some(skb);
    }

    pub fn held_count(&self) -> usize {
        usize::from(self.held.is_some())
    }

    pub fn queue(&self, cpu: Cpu) -> Queue {
        Queue {
            name: format!("gro cpu{cpu}"),
            skbs: self.held.iter().cloned().collect(),
        }
    }
}

/// skb_gro_receive: moves `skb`'s payload into `p` and frees what is left of `skb` on `cpu`,
/// or hands `skb` back when `p` is full.
fn merge(p: &mut Skb, mut skb: Skb, k: &mut Kernel, cpu: Cpu, ev: &mut Events) -> Result<(), Skb> {
    let max_frags = k.consts.max_skb_frags as usize;
    if GRO_L3L4_HEADERS + p.len + skb.len >= k.consts.gso_max_size {
        return Err(skb);
    }
    let stolen_head = skb.linear_len > 0;
    if !stolen_head {
        if p.nr_frags() + skb.nr_frags() > max_frags {
            return Err(skb);
        }
        for f in std::mem::take(&mut skb.frags) {
            p.add_frag(f);
        }
    } else {
        let Some(head) = skb.head_frag else {
            return Err(skb);
        };
        if p.nr_frags() + 1 + skb.nr_frags() > max_frags {
            return Err(skb);
        }
        p.add_frag(Frag {
            page: head.page,
            offset: head.offset + skb.head.headroom,
            size: skb.linear_len,
        });
        p.head.truesize += head.size;
        skb.head_frag = None;
    }
    let (id, into) = (skb.id, p.id);
    ev.emit(|| Event::GroMerge {
        skb: id,
        into,
        stolen_head,
    });
    k.free_skb(skb, cpu, ev);
    Ok(())
}

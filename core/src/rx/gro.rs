//! GRO: one CPU's held packet for the flow (`napi->gro_list` / `gro_hash`), as
//! `dev_gro_receive` -> `tcp_gro_receive` -> `skb_gro_receive` build it (v3.5 and v6.12).
//!
//! In-order segments of a flow are merged into the held skb; the first segment's payload
//! length is its `gso_size`. A segment longer than that is not merged; a shorter one is merged
//! and ends the packet. `skb_gro_receive` refuses (-E2BIG) once the packet would reach 64 KiB
//! (`p->len + len >= 65536`, headers counted), and the held packet goes up. A merged segment's
//! payload moves into the held skb:
//! - payload in frags (header split): the frags move, and the segment's head is freed;
//! - payload in a page-fragment head (`skb->head_frag`, build_skb): since commit d7e8883cfcf4
//!   "net: make GRO aware of skb->head_frag" (v3.5) the head page itself becomes a frag of the
//!   held skb (its page reference moves with it), and only the `struct sk_buff` is freed
//!   (NAPI_GRO_FREE_STOLEN_HEAD).
//!
//! When the frags are full, v3.5 passes the packet up (-E2BIG): 18 segments at most with
//! stolen heads. Since commit 8a29111c7ca6 "net: gro: allow to build full sized skb" (v3.19,
//! so `modern`), the segment is chained whole on the held skb's `frag_list`, and later
//! segments fill that chained skb's frags, up to 64 KiB (45 segments of 1448 bytes).
//! Simplification: in v3.5 a kmalloc'ed head (no head_frag) is not merged (the kernel would
//! build a frag_list behind a new head skb).

use super::kernel::{skbs_in, Mem};
use super::scenario::RxParams;
use super::variant::Allocator;
use crate::consts::wire::{IPV4_HLEN, TCP_TS_HLEN};
use crate::events::{Cpu, Event, Events};
use crate::skb::{sk_buff_truesize, Frag, Skb};
use crate::trace::{queue, Queue};

/// IPv4 + TCP-with-timestamps header bytes that GRO counts in `p->len` (20 + 32).
const GRO_L3L4_HEADERS: u32 = IPV4_HLEN + TCP_TS_HLEN;

#[derive(Clone, Debug, Default)]
pub struct Gro {
    cpu: Cpu,
    held: Option<Skb>,
    /// NAPI_GRO_CB(p)->count: segments in the held skb.
    segs: u32,
    /// skb_shinfo(p)->gso_size: the first segment's payload length.
    gso_size: u32,
    /// Segments merged into a held skb.
    pub merged: u64,
}

impl Gro {
    pub fn new(cpu: Cpu) -> Gro {
        Gro {
            cpu,
            ..Gro::default()
        }
    }

    /// Offers one received skb; returns the skbs to pass up now, in order.
    pub fn receive(&mut self, skb: Skb, p: &RxParams, mem: &mut Mem, ev: &mut Events) -> Vec<Skb> {
        let Some(held) = self.held.as_mut() else {
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
            held.end_seq, skb.seq,
            "model bug: GRO got an out-of-order segment"
        );
        match merge(held, skb, p, mem, self.cpu, ev) {
            Some(skb) => {
                let out = self.flush(ev);
                self.hold(skb);
                out
            }
            None => {
                self.segs += 1;
                self.merged += 1;
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
        self.held.iter().map(skbs_in).sum()
    }

    pub fn queue(&self) -> Queue {
        Queue {
            name: queue::gro(self.cpu),
            skbs: self.held.iter().cloned().collect(),
        }
    }
}

/// skb_gro_receive: moves `skb`'s payload into the last skb of `p` (`p` itself, or the last
/// one on its frag_list) and frees what is left of `skb` on `cpu`; since v3.19 (`modern`), when
/// that skb's frags are full, chains `skb` whole on `p`'s frag_list instead. Returns `skb`
/// when `p` is full (-E2BIG).
fn merge(
    p: &mut Skb,
    mut skb: Skb,
    params: &RxParams,
    mem: &mut Mem,
    cpu: Cpu,
    ev: &mut Events,
) -> Option<Skb> {
    let (len, k) = (skb.len, &params.consts);
    if GRO_L3L4_HEADERS + p.len + len >= k.gso_max_size {
        return Some(skb);
    }
    let max_frags = k.max_skb_frags as usize;
    let (id, into) = (skb.id, p.id);
    let sk_buff = sk_buff_truesize(k);
    let stolen = match p.frag_list.last_mut() {
        Some(lp) => steal(lp, &mut skb, max_frags, sk_buff),
        None => steal(p, &mut skb, max_frags, sk_buff),
    };
    let chained = !p.frag_list.is_empty();
    match stolen {
        Some((stolen_head, delta_truesize)) => {
            if chained {
                // `steal` grew the last chained skb; the packet grows with it.
                grow(p, len, delta_truesize);
            }
            ev.emit(|| Event::GroMerge {
                skb: id,
                into,
                stolen_head,
                delta_truesize,
            });
            mem.free_skb(skb, cpu, ev);
        }
        None if params.variant.alloc == Allocator::Modern => {
            grow(p, len, skb.head.truesize);
            ev.emit(|| Event::GroChain { skb: id, into });
            p.frag_list.push(skb);
        }
        None => return Some(skb),
    }
    None
}

/// The two ways a segment's payload joins `lp`'s frags; when it did, whether the head was
/// stolen and the truesize that moved (`delta_truesize`); `sk_buff` is
/// `SKB_DATA_ALIGN(sizeof(struct sk_buff))`:
/// - payload in frags (header split): the frags move (NAPI_GRO_FREE: the head is freed);
///   `delta_truesize = truesize - SKB_TRUESIZE(skb_end_offset)`, the frags' share;
/// - payload in a page-fragment head: the head becomes a frag (NAPI_GRO_FREE_STOLEN_HEAD);
///   `delta_truesize = truesize - SKB_DATA_ALIGN(sizeof(struct sk_buff))`: only the struct
///   is freed.
fn steal(lp: &mut Skb, skb: &mut Skb, max_frags: usize, sk_buff: u32) -> Option<(bool, u32)> {
    if skb.linear_len == 0 {
        if lp.nr_frags() + skb.nr_frags() > max_frags {
            return None;
        }
        for f in std::mem::take(&mut skb.frags) {
            lp.add_frag(f);
        }
        let delta = skb.head.truesize - (skb.head.head_bytes + sk_buff);
        lp.head.truesize += delta;
        return Some((false, delta));
    }
    let head = skb.head_frag?;
    if lp.nr_frags() + 1 + skb.nr_frags() > max_frags {
        return None;
    }
    lp.add_frag(Frag {
        page: head.page,
        offset: head.offset + skb.head.headroom,
        size: skb.linear_len,
    });
    let delta = skb.head.truesize - sk_buff;
    lp.head.truesize += delta;
    skb.head_frag = None;
    Some((true, delta))
}

/// `p` carries `len` more bytes in its frag_list (p->len, p->data_len, p->truesize).
fn grow(p: &mut Skb, len: u32, truesize: u32) {
    p.len += len;
    p.data_len += len;
    p.end_seq = p.end_seq.wrapping_add(len);
    p.head.truesize += truesize;
}

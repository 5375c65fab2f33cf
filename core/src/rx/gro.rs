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

use super::kernel::Mem;
use super::scenario::RxParams;
use super::variant::Allocator;
use crate::consts::wire::{IPV4_HLEN, TCP_TS_HLEN};
use crate::events::{Cpu, Event, SkbId};
use crate::replay::Log;
use crate::skb::{sk_buff_truesize, Skb};
use crate::trace::queue;

/// IPv4 + TCP-with-timestamps header bytes that GRO counts in `p->len` (20 + 32).
const GRO_L3L4_HEADERS: u32 = IPV4_HLEN + TCP_TS_HLEN;

/// One CPU's GRO. The held packet is the state's (the front of queue `gro cpuN`, where the
/// driver puts each new skb); this keeps what the state does not.
#[derive(Clone, Debug, Default)]
pub struct Gro {
    cpu: Cpu,
    /// Its list's name in the state.
    list: std::borrow::Cow<'static, str>,
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
            list: queue::gro(cpu),
            ..Gro::default()
        }
    }

    /// Its list's name in the state, where the driver puts each new skb.
    pub fn list(&self) -> &std::borrow::Cow<'static, str> {
        &self.list
    }

    /// Offers one received skb, the newest on this GRO's list (behind the held packet, if
    /// any); returns the skbs to pass up now, in order.
    pub fn receive(
        &mut self,
        skb: SkbId,
        p: &RxParams,
        mem: &mut Mem,
        log: &mut Log,
    ) -> Vec<SkbId> {
        let list = log.state().skbs_on(&self.list);
        let (Some(held), Some(new)) = (list.front(), list.back()) else {
            unreachable!("model bug: GRO got skb {skb} off its list")
        };
        let len = new.len;
        if held.id == new.id {
            self.hold(len);
            return Vec::new();
        }
        if len > self.gso_size {
            let out = self.flush(log);
            self.hold(len);
            return out;
        }
        assert_eq!(
            held.end_seq, new.seq,
            "model bug: GRO got an out-of-order segment"
        );
        let (into, skb) = (held.id, new.id);
        match join(held, new, p) {
            Some(Join::Merge(stolen_head, delta_truesize)) => {
                log.emit(Event::GroMerge {
                    skb,
                    into,
                    stolen_head,
                    delta_truesize,
                });
                mem.free_skb(skb, self.cpu, log);
            }
            Some(Join::Chain) => log.emit(Event::GroChain { skb, into }),
            None => {
                let out = self.flush(log);
                self.hold(len);
                return out;
            }
        }
        self.segs += 1;
        self.merged += 1;
        if len < self.gso_size {
            self.flush(log)
        } else {
            Vec::new()
        }
    }

    /// napi_gro_flush: the held packet goes up.
    pub fn flush(&mut self, log: &mut Log) -> Vec<SkbId> {
        let Some(held) = log.state().skbs_on(&self.list).front() else {
            return Vec::new();
        };
        let (skb, segs) = (held.id, self.segs);
        log.emit(Event::GroFlush { skb, segs });
        vec![skb]
    }

    fn hold(&mut self, len: u32) {
        self.segs = 1;
        self.gso_size = len;
    }
}

/// How a segment joins the held packet.
enum Join {
    /// Its payload moves into the last skb of the packet (whether its head is stolen, the
    /// truesize that moves), and what is left of it is freed.
    Merge(bool, u32),
    /// Since v3.19 (`modern`), when that skb's frags are full: it is chained whole on the
    /// packet's frag_list.
    Chain,
}

/// skb_gro_receive: how `s` joins `held`, whose last skb (`held` itself, or the last on its
/// frag_list) takes its payload; none when `held` is full (-E2BIG). The moves themselves
/// are the events' ([`State::apply`]).
///
/// [`State::apply`]: crate::trace::State::apply
fn join(held: &Skb, s: &Skb, params: &RxParams) -> Option<Join> {
    let k = &params.consts;
    if GRO_L3L4_HEADERS + held.len + s.len >= k.gso_max_size {
        return None;
    }
    let lp = held.frag_list.last().unwrap_or(held);
    match steal(lp, s, k.max_skb_frags as usize, sk_buff_truesize(k)) {
        Some((stolen_head, delta)) => Some(Join::Merge(stolen_head, delta)),
        None if params.variant.alloc == Allocator::Modern => Some(Join::Chain),
        None => None,
    }
}

/// Whether a segment's payload can join `lp`'s frags, and how; when it can, whether the head
/// is stolen and the truesize that moves (`delta_truesize`); `sk_buff` is
/// `SKB_DATA_ALIGN(sizeof(struct sk_buff))`:
/// - payload in frags (header split): the frags move (NAPI_GRO_FREE: the head is freed);
///   `delta_truesize = truesize - SKB_TRUESIZE(skb_end_offset)`, the frags' share;
/// - payload in a page-fragment head: the head becomes a frag (NAPI_GRO_FREE_STOLEN_HEAD);
///   `delta_truesize = truesize - SKB_DATA_ALIGN(sizeof(struct sk_buff))`: only the struct
///   is freed.
fn steal(lp: &Skb, skb: &Skb, max_frags: usize, sk_buff: u32) -> Option<(bool, u32)> {
    if skb.linear_len == 0 {
        if lp.nr_frags() + skb.nr_frags() > max_frags {
            return None;
        }
        return Some((false, skb.head.truesize - (skb.head.head_bytes + sk_buff)));
    }
    skb.head_frag?;
    if lp.nr_frags() + 1 + skb.nr_frags() > max_frags {
        return None;
    }
    Some((true, skb.head.truesize - sk_buff))
}

//! `struct sk_buff` as the model needs it: a head (headroom, linear data, tailroom) and the
//! shared info's page fragments, plus the TCP control block.
//!
//! `len` = linear bytes + `data_len`, where `data_len` is the sum of the frag sizes, exactly as
//! in `include/linux/skbuff.h`. How big the head is and what `truesize` is charged depend on
//! the allocator of the era; the mechanism that allocates the skb computes [`SkbHead`].

use crate::consts::KernelConsts;
pub use crate::events::SkbId;
use crate::events::{Cpu, PageId};
use serde::{Deserialize, Serialize};

/// sizeof(struct sk_buff) on x86_64 in 2.6.33: **approximate** (232), from adding up the
/// 2.6.32 field list for a distro config (list pointers, sk, tstamp, dev, dst, sp, cb[48],
/// len/data_len, csum, flags, destructor, nfct, nf_bridge, iif, tc, secmark, mark, the
/// header offsets, tail/end, head/data, truesize, users). Not confirmed with pahole.
pub(crate) const SIZEOF_SK_BUFF_2_6_33: u32 = 232;
/// sizeof(struct sk_buff) on x86_64 in 6.x: 232 (pahole of recent kernels; **approximate**
/// for a given config). SKB_TRUESIZE uses SKB_DATA_ALIGN of it, 256.
pub(crate) const SIZEOF_SK_BUFF_6_12: u32 = 232;

/// `SKB_DATA_ALIGN(sizeof(struct sk_buff))`, the part of `SKB_TRUESIZE` that is the sk_buff
/// itself: 256 on x86_64. sizeof is 232 in 6.x (pahole); the v3.5 struct is of about the same
/// size (not confirmed with pahole), and anything from 193 to 256 bytes aligns to 256.
pub(crate) fn sk_buff_truesize(k: &KernelConsts) -> u32 {
    k.skb_data_align(SIZEOF_SK_BUFF_6_12)
}

/// SKB_TRUESIZE(x) = x + SKB_DATA_ALIGN(sizeof(struct sk_buff)) + SKB_DATA_ALIGN(sizeof(shinfo)).
pub fn skb_truesize(k: &KernelConsts, x: u32) -> u32 {
    x + sk_buff_truesize(k) + k.skb_data_align(k.shinfo_size)
}

/// The payload of each wire segment a GSO skb of `len` bytes becomes: `gso_size` bytes
/// each, the last one the rest (`skb_segment`, net/core/skbuff.c, called by
/// `tcp_gso_segment`, v6.12). A `gso_size` of 0 is taken as 1.
pub fn gso_segments(len: u32, gso_size: u32) -> impl Iterator<Item = u32> {
    let seg = gso_size.max(1);
    (0..len.div_ceil(seg)).map(move |i| (len - i * seg).min(seg))
}

/// `skb_frag_t`: a reference to `size` bytes at `offset` in a page. Each frag holds one page
/// reference.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Frag {
    pub page: PageId,
    pub offset: u32,
    pub size: u32,
}

impl Frag {
    pub const fn end(&self) -> u32 {
        self.offset + self.size
    }

    /// Bytes at `off` in `page` continue this frag (`skb_can_coalesce` on the last frag).
    pub fn continued_by(&self, page: PageId, off: u32) -> bool {
        self.page == page && self.end() == off
    }
}

/// The head buffer's geometry, computed by the allocating mechanism.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkbHead {
    /// Bytes reserved in front of the data for headers (`skb_reserve`).
    pub headroom: u32,
    /// Linear room left after the data (`skb_tailroom`).
    pub tailroom: u32,
    /// Bytes the head allocation took (kmalloc size, or a page fragment's size).
    pub head_bytes: u32,
    /// What the skb is charged (`skb->truesize`).
    pub truesize: u32,
}

/// An MPTCP DSS mapping carried by a subflow skb (data_seq, subflow_seq, data_len).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Mapping {
    /// The data sequence number, relative: 0 is the first data byte (msk->write_seq starts
    /// at idsn + 1 in the kernel).
    pub data_seq: u64,
    /// The subflow sequence number relative to the subflow's ISN, as the kernel carries it
    /// (rel_write_seq): 1 is the first data byte, after the SYN.
    pub subflow_seq: u32,
    pub data_len: u32,
    /// A frozen mapping may no longer grow (the kernel sets it for MPTCP zero-window probes;
    /// the model never does, but the collapse rule checks it).
    pub frozen: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Skb {
    pub id: SkbId,
    /// TCP_SKB_CB(skb)->seq and ->end_seq.
    pub seq: u32,
    pub end_seq: u32,
    /// skb->len: linear_len + data_len.
    pub len: u32,
    /// Bytes in the linear area (skb_headlen).
    pub linear_len: u32,
    /// skb->data_len: bytes in frags.
    pub data_len: u32,
    #[serde(flatten)]
    pub head: SkbHead,
    /// skb_shinfo(skb)->frags[0..nr_frags].
    pub frags: Vec<Frag>,
    /// The head itself lives in a page fragment (build_skb, `skb->head_frag`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub head_frag: Option<Frag>,
    /// skb_shinfo(skb)->frag_list: whole skbs chained behind this one; their bytes count in
    /// `len` and `data_len` (GRO builds full-sized skbs this way since v3.19).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub frag_list: Vec<Skb>,
    /// TCPHDR_PSH in TCP_SKB_CB(skb)->tcp_flags.
    pub psh: bool,
    /// TCP_SKB_CB(skb)->eor: nothing may be appended.
    pub eor: bool,
    /// Already handed to the device (no longer the unsent tail).
    pub sent: bool,
    /// The CPU that allocated it; in a capture that did not read that, the CPU it was first
    /// seen on (`cpu_seen`).
    pub cpu: Cpu,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cpu_seen: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mapping: Option<Mapping>,
    /// A send or MPTCP skb's size goal (see `Event::AllocSkb`): it stops growing there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size_goal: Option<u32>,
}

impl Skb {
    /// A new, empty skb whose seq = end_seq = `seq`.
    pub fn new(id: SkbId, cpu: Cpu, head: SkbHead, seq: u32) -> Skb {
        Skb {
            id,
            seq,
            end_seq: seq,
            len: 0,
            linear_len: 0,
            data_len: 0,
            head,
            frags: Vec::new(),
            head_frag: None,
            frag_list: Vec::new(),
            psh: false,
            eor: false,
            sent: false,
            cpu,
            cpu_seen: false,
            mapping: None,
            size_goal: None,
        }
    }

    /// Its CPU as a host labels it: `alloc cpu N`, or `first seen on cpu N` where a capture
    /// did not read the allocating CPU.
    pub fn cpu_fact(&self) -> String {
        let what = if self.cpu_seen {
            "first seen on"
        } else {
            "alloc"
        };
        format!("{what} cpu {}", self.cpu)
    }

    /// The bytes of `data_len` that the skbs on the frag_list hold (the rest is in frags).
    pub fn frag_list_len(&self) -> u32 {
        self.frag_list.iter().map(|c| c.len).sum()
    }

    /// This skb, its frags and everything on its frag_list (what a trace must hold).
    pub fn objects(&self) -> usize {
        1 + self.frags.len() + self.frag_list.iter().map(Skb::objects).sum::<usize>()
    }

    pub fn nr_frags(&self) -> usize {
        self.frags.len()
    }

    /// `skb_put` + copy: `n` bytes into linear tailroom.
    pub fn put_linear(&mut self, n: u32) {
        debug_assert!(n <= self.head.tailroom, "skb_put past tailroom");
        self.head.tailroom -= n;
        self.linear_len += n;
        self.grow(n);
    }

    /// `skb_fill_page_desc`: a new frag (its page reference is the caller's to take).
    pub fn add_frag(&mut self, frag: Frag) {
        self.frags.push(frag);
        self.data_len += frag.size;
        self.grow(frag.size);
    }

    /// Grows the last frag by `n` bytes (the merge case of `skb_can_coalesce`).
    pub fn grow_last_frag(&mut self, n: u32) {
        let last = self.frags.last_mut().expect("coalesce needs a frag");
        last.size += n;
        self.data_len += n;
        self.grow(n);
    }

    /// `skb_can_coalesce(skb, i, page, off)`: the last frag is on `page` and ends at `off`.
    pub fn can_coalesce(&self, page: PageId, off: u32) -> bool {
        self.frags.last().is_some_and(|f| f.continued_by(page, off))
    }

    fn grow(&mut self, n: u32) {
        self.len += n;
        self.end_seq = self.end_seq.wrapping_add(n);
    }

    /// `skb_try_coalesce`'s moves (net/core/skbuff.c, v3.5 to v6.12), `from` into this skb, as
    /// decided ([`Absorb`]): its bytes copied into this skb's tailroom; or its page-fragment
    /// head made a frag here (`from` keeps no head to free), then its frags moved; this skb
    /// is charged `delta_truesize` more. What is left of `from` is the caller's to free.
    pub fn absorb(&mut self, from: &mut Skb, how: Absorb) -> Result<(), String> {
        if how.copied {
            if self.nr_frags() > 0 || from.len > self.head.tailroom {
                return Err(format!(
                    "skb {}: no tailroom for {} bytes",
                    self.id, from.len
                ));
            }
            self.put_linear(from.len);
            return Ok(());
        }
        if how.stolen_head {
            let head = from.head_frag.take().ok_or("no head frag to steal")?;
            self.add_frag(Frag {
                page: head.page,
                offset: head.offset + from.head.headroom,
                size: from.linear_len,
            });
        }
        for f in std::mem::take(&mut from.frags) {
            self.add_frag(f);
        }
        self.head.truesize += how.delta_truesize;
        Ok(())
    }
}

/// How `skb_try_coalesce` merges one skb into another (`Event::RcvCoalesce`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Absorb {
    /// The bytes were copied into the tailroom (`delta_truesize` 0).
    pub copied: bool,
    /// The page-fragment head became a frag (only the `struct sk_buff` is freed).
    pub stolen_head: bool,
    pub delta_truesize: u32,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_super_packet_is_cut_at_gso_size_and_the_last_segment_takes_the_rest() {
        let cut = |len, gso| gso_segments(len, gso).collect::<Vec<_>>();
        assert_eq!(cut(3000, 1448), [1448, 1448, 104]);
        assert_eq!(cut(1448, 1448), [1448]);
        assert_eq!(cut(5, 0), [1, 1, 1, 1, 1]);
        assert!(cut(0, 1448).is_empty());
    }

    #[test]
    fn frag_list_bytes_are_the_chained_skbs_lengths() {
        let mut s = Skb::new(0, 0, SkbHead::default(), 0);
        assert_eq!(s.frag_list_len(), 0);
        for (id, len) in [(1, 1448), (2, 104)] {
            let mut c = Skb::new(id, 0, SkbHead::default(), 0);
            c.len = len;
            s.frag_list.push(c);
        }
        assert_eq!(s.frag_list_len(), 1552);
    }
}

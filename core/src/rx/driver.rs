//! The driver's side of a received frame: which buffer it lands in and the skb built around it.
//!
//! Two driver styles, as `nic.driver` picks:
//! - **full-frame**: every rx buffer is one fragment from the CPU's frag cache, sized for the
//!   largest frame, and the skb is built around it (`__netdev_alloc_skb` -> `build_skb`,
//!   `skb->head_frag`). The whole frame, payload included, sits in the head.
//! - **header-split**: the headers go into a small skb head (`netdev_alloc_skb(dev,
//!   hdr_size)`, ixgbe's IXGBE_RX_HDR_SIZE = 256; ixgbe copies them out of its receive page,
//!   NICs with header split write them there) and the payload stays in a page the driver
//!   owns, attached as a frag. The model gives each frame's payload a fresh
//!   order-0 page (real drivers recycle half pages or use page_pool).

use super::frag_cache::RefillKnobs;
use super::{Allocator, Kernel, RxParams};
use crate::consts::KernelConsts;
use crate::skb::{Frag, Skb, SkbHead};
use crate::trace::{queue, Event, Events};
use crate::Cpu;
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DriverStyle {
    #[default]
    FullFrame,
    HeaderSplit,
}

/// `fragsz` for a head of `length` bytes, as `__netdev_alloc_skb` computes it (v3.5 and
/// v6.12 alike; SKB_HEAD_ALIGN in v6.x):
/// `SKB_DATA_ALIGN(length + NET_SKB_PAD) + SKB_DATA_ALIGN(sizeof(struct skb_shared_info))`.
/// E.g. v3.5, a 1514-byte frame: `SKB_DATA_ALIGN(1578) + SKB_DATA_ALIGN(320)` = 1600 + 320.
pub fn fragsz(c: &KernelConsts, length: u32) -> u32 {
    c.skb_data_align(length + c.net_skb_pad) + c.skb_data_align(c.shinfo_size)
}

/// `SKB_DATA_ALIGN(sizeof(struct sk_buff))`, the part of `SKB_TRUESIZE` that is the sk_buff
/// itself: 256 on x86_64. sizeof is 232 in 6.x (pahole); the v3.5 struct is of about the same
/// size (not confirmed with pahole), and anything from 193 to 256 bytes aligns to 256.
pub fn sk_buff_truesize(c: &KernelConsts) -> u32 {
    c.skb_data_align(crate::send::variant::SIZEOF_SK_BUFF_6_12)
}

/// SKB_SMALL_HEAD_CACHE_SIZE (v6.3+): SKB_HEAD_ALIGN(MAX_TCP_HEADER) = 640, not a power of
/// two, so used as is.
fn small_head_cache_size(c: &KernelConsts) -> u32 {
    let s = c.skb_data_align(c.max_tcp_header) + c.skb_data_align(c.shinfo_size);
    if s.is_power_of_two() {
        s + c.smp_cache_bytes
    } else {
        s
    }
}

/// Whether `__netdev_alloc_skb(dev, length)` puts the head in a page fragment (else kmalloc).
/// v3.5: `fragsz <= PAGE_SIZE` (GFP_ATOMIC). v6.12: kmalloc when `length + NET_SKB_PAD` is
/// at most `SKB_WITH_OVERHEAD(SKB_SMALL_HEAD_CACHE_SIZE)` (tiny heads, since 5.11 / 6.3) or
/// above `SKB_WITH_OVERHEAD(PAGE_SIZE)`.
pub fn head_in_frag(c: &KernelConsts, alloc: Allocator, length: u32) -> bool {
    match alloc {
        Allocator::Pre2012 | Allocator::Duyck2012 => fragsz(c, length) <= c.page_size,
        Allocator::Modern => {
            let len = length + c.net_skb_pad;
            len > c.skb_with_overhead(small_head_cache_size(c))
                && len <= c.skb_with_overhead(c.page_size)
        }
    }
}

/// Bytes of Ethernet, IP and transport headers in front of each frame's payload.
pub fn headers(p: &RxParams) -> u32 {
    p.socket.proto.headers()
}

/// Receives one frame of `frame_len` bytes on `cpu`: allocates its buffer(s) and builds the
/// skb, whose payload starts at `seq`. By the time TCP queues it, the headers are pulled:
/// `skb->len` is the payload.
pub fn rx_frame(
    k: &mut Kernel,
    p: &RxParams,
    frame_len: u32,
    seq: u32,
    cpu: Cpu,
    ev: &mut Events,
) -> Skb {
    let c = k.consts;
    let hdrs = headers(p);
    let payload = frame_len - hdrs;
    let knobs = RefillKnobs {
        high_order_fails: p.nic.high_order_fails,
        pfmemalloc: p.nic.pfmemalloc,
    };
    // Full frame: the buffer is sized for the largest frame; header split: for hdr_size.
    let head_len = match p.nic.driver {
        DriverStyle::FullFrame => p.frame_len(),
        DriverStyle::HeaderSplit => p.nic.hdr_size,
    };
    let head_bytes = fragsz(&c, head_len);
    let head_frag = head_in_frag(&c, k.variant.alloc, head_len)
        .then(|| k.alloc_frag(cpu, head_bytes, knobs, ev));
    let room = head_bytes - c.skb_data_align(c.shinfo_size);
    let in_head = match p.nic.driver {
        DriverStyle::FullFrame => frame_len,
        DriverStyle::HeaderSplit => hdrs,
    };
    let head = SkbHead {
        headroom: c.net_skb_pad + hdrs,
        tailroom: room - c.net_skb_pad - hdrs,
        head_bytes,
        // build_skb: SKB_TRUESIZE(fragsz - SKB_DATA_ALIGN(sizeof(struct skb_shared_info))).
        truesize: head_bytes + sk_buff_truesize(&c),
    };
    let id = k.new_skb_id();
    let mut skb = Skb::new(id, cpu, head, seq);
    skb.head_frag = head_frag;
    // The head as allocated: NET_SKB_PAD reserved, no header pulled yet. GRO will hold it.
    ev.emit(|| Event::AllocSkb {
        skb: id,
        cpu,
        head_bytes,
        headroom: c.net_skb_pad,
        linear_room: room - c.net_skb_pad,
        seq,
        truesize: head.truesize,
        reserved_tailroom: 0,
        head_page: head_frag.map(|f| f.page),
        head_offset: head_frag.map(|f| f.offset),
        queue: p.gro_merges().then(|| queue::gro(cpu)),
    });
    ev.emit(|| Event::RxFrame {
        skb: id,
        len: frame_len,
        seq,
        headers: hdrs,
        linear: in_head - hdrs,
    });
    if p.nic.driver == DriverStyle::FullFrame {
        skb.put_linear(in_head - hdrs);
    } else {
        attach_payload_pages(k, &mut skb, payload, cpu, ev);
    }
    skb
}

/// Header split: the payload lands in driver pages (one reference each, handed to the skb).
fn attach_payload_pages(
    k: &mut Kernel,
    skb: &mut Skb,
    mut payload: u32,
    cpu: Cpu,
    ev: &mut Events,
) {
    let page_size = k.consts.page_size;
    while payload > 0 {
        let size = payload.min(page_size);
        let page = k.pool.alloc(0, page_size, cpu, None, ev);
        k.pool.page_mut(page).used = size;
        let idx = skb.nr_frags() as u32;
        skb.add_frag(Frag {
            page,
            offset: 0,
            size,
        });
        skb.head.truesize += page_size;
        let (id, truesize) = (skb.id, skb.head.truesize);
        ev.emit(|| Event::NewFrag {
            skb: id,
            idx,
            page,
            offset: 0,
            size,
            truesize,
        });
        payload -= size;
    }
}

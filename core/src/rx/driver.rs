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

use super::frag_cache::FragCache;
use super::kernel::Mem;
use super::scenario::{DriverStyle, RxParams};
use super::variant::Allocator;
use crate::consts::KernelConsts;
use crate::events::{Event, Events};
use crate::skb::{Frag, Skb, SkbHead};
use crate::trace::queue;

/// `fragsz` for a head of `length` bytes, as `__netdev_alloc_skb` computes it (v3.5 and
/// v6.12 alike; SKB_HEAD_ALIGN in v6.x):
/// `SKB_DATA_ALIGN(length + NET_SKB_PAD) + SKB_DATA_ALIGN(sizeof(struct skb_shared_info))`.
/// E.g. v3.5, a 1514-byte frame: `SKB_DATA_ALIGN(1578) + SKB_DATA_ALIGN(320)` = 1600 + 320.
pub fn fragsz(k: &KernelConsts, length: u32) -> u32 {
    k.skb_data_align(length + k.net_skb_pad) + k.skb_data_align(k.shinfo_size)
}

/// `SKB_DATA_ALIGN(sizeof(struct sk_buff))`, the part of `SKB_TRUESIZE` that is the sk_buff
/// itself: 256 on x86_64. sizeof is 232 in 6.x (pahole); the v3.5 struct is of about the same
/// size (not confirmed with pahole), and anything from 193 to 256 bytes aligns to 256.
pub fn sk_buff_truesize(k: &KernelConsts) -> u32 {
    k.skb_data_align(crate::send::variant::SIZEOF_SK_BUFF_6_12)
}

/// The kmalloc bucket below which v6.12's `__netdev_alloc_skb` keeps small heads out of the
/// page frag cache: `len <= SKB_WITH_OVERHEAD(1024)`, 704 bytes with a 320-byte shared info
/// ("net: avoid 32 x truesize under-estimation for tiny skbs", v5.11).
const SMALL_HEAD_KMALLOC: u32 = 1024;

/// Whether `__netdev_alloc_skb(dev, length)` puts the head in a page fragment (else kmalloc).
/// v3.5: `fragsz <= PAGE_SIZE` (GFP_ATOMIC). v6.12: kmalloc when `length + NET_SKB_PAD` is
/// at most `SKB_WITH_OVERHEAD(1024)` = 704 (so header-split heads up to 640 bytes) or above
/// `SKB_WITH_OVERHEAD(PAGE_SIZE)`. napi_alloc_skb of the same release takes such small
/// heads from a separate 1 KiB page-frag cache instead (NAPI_HAS_SMALL_PAGE_FRAG, 4 KiB
/// pages only; reverted in 2025); the model's driver calls netdev_alloc_skb.
pub fn head_in_frag(k: &KernelConsts, alloc: Allocator, length: u32) -> bool {
    match alloc {
        Allocator::Pre2012 | Allocator::Duyck2012 => fragsz(k, length) <= k.page_size,
        Allocator::Modern => {
            let len = length + k.net_skb_pad;
            len > k.skb_with_overhead(SMALL_HEAD_KMALLOC) && len <= k.skb_with_overhead(k.page_size)
        }
    }
}

/// Bytes of Ethernet, IP and transport headers in front of each frame's payload.
pub fn headers(p: &RxParams) -> u32 {
    p.socket.proto.headers()
}

/// Receives one frame of `frame_len` bytes on the CPU of `cache`, its frag cache: allocates
/// the frame's buffer(s) and builds the skb, whose payload starts at `seq`. By the time TCP
/// queues it, the headers are pulled: `skb->len` is the payload.
pub fn rx_frame(
    p: &RxParams,
    cache: &mut FragCache,
    mem: &mut Mem,
    frame_len: u32,
    seq: u32,
    ev: &mut Events,
) -> Skb {
    let (k, cpu) = (p.consts, cache.cpu);
    let hdrs = headers(p);
    let payload = frame_len - hdrs;
    // Full frame: the buffer is sized for the largest frame; header split: for hdr_size.
    let head_len = match p.nic.driver {
        DriverStyle::FullFrame => p.frame_len(),
        DriverStyle::HeaderSplit => p.nic.hdr_size,
    };
    let head_bytes = fragsz(&k, head_len);
    let head_frag =
        head_in_frag(&k, p.variant.alloc, head_len).then(|| cache.alloc(mem, head_bytes, ev));
    let room = head_bytes - k.skb_data_align(k.shinfo_size);
    let in_head = match p.nic.driver {
        DriverStyle::FullFrame => frame_len,
        DriverStyle::HeaderSplit => hdrs,
    };
    let head = SkbHead {
        headroom: k.net_skb_pad + hdrs,
        tailroom: room - k.net_skb_pad - hdrs,
        head_bytes,
        // build_skb: SKB_TRUESIZE(fragsz - SKB_DATA_ALIGN(sizeof(struct skb_shared_info))).
        truesize: head_bytes + sk_buff_truesize(&k),
    };
    let id = mem.new_skb_id();
    let mut skb = Skb::new(id, cpu, head, seq);
    skb.head_frag = head_frag;
    // The head as allocated: NET_SKB_PAD reserved, no header pulled yet. GRO will hold it.
    ev.emit(|| Event::AllocSkb {
        skb: id,
        cpu,
        head_bytes,
        headroom: k.net_skb_pad,
        linear_room: room - k.net_skb_pad,
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
        attach_payload_pages(mem, &mut skb, payload, k.page_size, ev);
    }
    skb
}

/// Header split: the payload lands in driver pages (one reference each, handed to the skb).
fn attach_payload_pages(
    mem: &mut Mem,
    skb: &mut Skb,
    mut payload: u32,
    page_size: u32,
    ev: &mut Events,
) {
    while payload > 0 {
        let size = payload.min(page_size);
        let page = mem.pool.alloc(0, page_size, skb.cpu, None, ev);
        mem.pool.page_mut(page).used = size;
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

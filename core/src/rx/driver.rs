//! The driver's side of a received frame: which buffer it lands in and the skb built around it.
//!
//! Two driver styles, as `nic.driver` picks:
//! - **full-frame**: every rx buffer is one fragment from the CPU's frag cache, sized for the
//!   largest frame, and the skb is built around it (`__netdev_alloc_skb` in v3.x,
//!   `napi_alloc_skb` in v6.12, each -> `build_skb`, `skb->head_frag`). The whole frame,
//!   payload included, sits in the head.
//! - **header-split**: the headers go into a small skb head (`netdev_alloc_skb(dev,
//!   hdr_size)` in v3.x, `napi_alloc_skb(napi, hdr_size)` in v6.12, where ixgbe calls it in
//!   `legacy-rx` mode; the era's IXGBE_RX_HDR_SIZE, 512 in v3.5 and 256 later, see
//!   [`super::scenario::ixgbe_rx_hdr_size`]; ixgbe copies them out of its receive page, NICs
//!   with header split write them there) and the payload stays in a buffer the driver owns,
//!   attached as a frag and charged `ixgbe_rx_bufsz` (half a page). The model gives each
//!   buffer a fresh order-0 page (ixgbe recycles half pages; most drivers today use
//!   page_pool).
//! - **napi-frags**: tun with IFF_NAPI_FRAGS (`tun_napi_alloc_frags`, drivers/net/tun.c,
//!   v6.13 on, and 6.12.y since "net: tun: fix tun_napi_alloc_frags()"), fed one frame a
//!   `writev` of two iovecs: the first (the headers) goes into the head `napi_get_frags`
//!   allocates (`napi_alloc_skb(napi, GRO_MAX_HEAD)`, net/core/gro.c), the second (the
//!   payload) into one fragment of `netdev_alloc_frag(iov_len)`, which in process context is
//!   `__napi_alloc_frag_align` on the writer's CPU: `napi_alloc_cache.page`, the CPU's frag
//!   cache, asked for `SKB_DATA_ALIGN(iov_len)` bytes (net/core/skbuff.c, v6.12).
//!
//! Which allocator the head comes from is [`head_source`].

use super::frag_cache::{FragCache, FragCache1k, SZ_1K};
use super::kernel::{self, Mem};
use super::scenario::{DriverStyle, RxParams};
use super::variant::Allocator;
use crate::consts::KernelConsts;
use crate::events::{Cpu, Event, SkbId};
use crate::replay::Log;
use crate::skb::{sk_buff_truesize, Frag};

/// `fragsz` for a head of `length` bytes, as `__netdev_alloc_skb` (v3.x) and `napi_alloc_skb`
/// (v6.12, `SKB_HEAD_ALIGN`, adding NET_IP_ALIGN, 0 on x86) compute it:
/// `SKB_DATA_ALIGN(length + NET_SKB_PAD) + SKB_DATA_ALIGN(sizeof(struct skb_shared_info))`.
/// E.g. v3.5, a 1514-byte frame: `SKB_DATA_ALIGN(1578) + SKB_DATA_ALIGN(320)` = 1600 + 320.
pub fn fragsz(k: &KernelConsts, length: u32) -> u32 {
    k.skb_data_align(length + k.net_skb_pad) + k.skb_data_align(k.shinfo_size)
}

/// What a fragment of `payload` bytes takes from a frag cache: `__napi_alloc_frag_align`
/// (net/core/skbuff.c, v6.12; `netdev_alloc_frag` in v3.x) asks for SKB_DATA_ALIGN(fragsz), so
/// the next fragment starts that far on.
pub fn napi_fragsz(k: &KernelConsts, payload: u32) -> u32 {
    k.skb_data_align(payload)
}

/// GRO_MAX_HEAD = `MAX_HEADER + 128` (net/core/gro.c, v6.12; include/linux/netdevice.h in
/// v3.x): MAX_HEADER = LL_MAX_HEADER 128 + 48 = 176 (with CONFIG_WLAN and tunnels, as
/// MAX_TCP_HEADER 320 assumes), so 304: the head `napi_get_frags` asks for.
pub const GRO_MAX_HEAD: u32 = 304;

/// Where a driver's skb head comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HeadSource {
    /// kmalloc (`__alloc_skb`): no page fragment.
    Kmalloc,
    /// The CPU's frag cache: `netdev_alloc_cache` (v3.x) or `napi_alloc_cache.page` (v6.12).
    Frag,
    /// v6.12's 1 KiB small-head cache, `napi_alloc_cache.page_small`.
    Frag1k,
}

/// Where the driver's head of `length` bytes comes from.
///
/// v3.5 and v3.6: the driver calls `netdev_alloc_skb` (ixgbe's `netdev_alloc_skb_ip_align`),
/// and `__netdev_alloc_skb` takes a fragment when `fragsz <= PAGE_SIZE` (GFP_ATOMIC).
///
/// v6.12: NAPI drivers call `napi_alloc_skb` (ixgbe's `ixgbe_construct_skb` does, with
/// IXGBE_RX_HDR_SIZE), which works on `len = length + NET_SKB_PAD + NET_IP_ALIGN`: kmalloc
/// above `SKB_WITH_OVERHEAD(PAGE_SIZE)` (3776); at most `SKB_WITH_OVERHEAD(1024)` (704) a
/// 1 KiB piece of the small-head cache where NAPI_HAS_SMALL_PAGE_FRAG (PAGE_SIZE == SZ_4K),
/// else kmalloc; between the two a `SKB_HEAD_ALIGN(len)` fragment of `napi_alloc_cache.page`.
/// (`__netdev_alloc_skb` of the same release kmallocs every head up to 704 bytes instead,
/// since "skbuff: back tiny skbs with kmalloc() in __netdev_alloc_skb() too", which followed
/// "net: avoid 32 x truesize under-estimation for tiny skbs", v5.11, the `napi_alloc_skb`
/// side.) ixgbe calls `napi_alloc_skb` only with the `legacy-rx` private flag: by default
/// (`ring_uses_build_skb`) v6.12's ixgbe wraps its own half-page buffer with `napi_build_skb`
/// (`ixgbe_build_skb`) and takes nothing from these caches. The model's full-frame driver goes
/// the same way as `napi_alloc_skb`, as a driver that cuts its buffers from `napi_alloc_cache`
/// as `napi_alloc_skb` sizes them and builds the skb around them.
pub fn head_source(k: &KernelConsts, alloc: Allocator, length: u32) -> HeadSource {
    match alloc {
        Allocator::Pre2012 | Allocator::Duyck2012 | Allocator::Duyck36 => {
            if fragsz(k, length) <= k.page_size {
                HeadSource::Frag
            } else {
                HeadSource::Kmalloc
            }
        }
        Allocator::Modern => {
            let len = length + k.net_skb_pad + k.net_ip_align;
            let napi_has_small_page_frag = k.page_size == 4096;
            if len > k.skb_with_overhead(k.page_size) {
                HeadSource::Kmalloc
            } else if len > k.skb_with_overhead(SZ_1K) {
                HeadSource::Frag
            } else if napi_has_small_page_frag {
                HeadSource::Frag1k
            } else {
                HeadSource::Kmalloc
            }
        }
    }
}

/// The head source of every frame of this scenario: heads are sized for the largest frame
/// (full frame) or for `hdr_size` (header split), whatever each frame's length.
pub fn scenario_head_source(p: &RxParams) -> HeadSource {
    head_source(&p.consts, p.variant.alloc, head_len(p))
}

/// The length the driver asks for: the largest frame (full frame) or `nic.hdr_size`.
fn head_len(p: &RxParams) -> u32 {
    match p.nic.driver {
        DriverStyle::FullFrame => p.frame_len(),
        DriverStyle::HeaderSplit => p.hdr_size(),
        DriverStyle::NapiFrags => GRO_MAX_HEAD,
    }
}

/// Bytes of Ethernet, IP and transport headers in front of each frame's payload.
pub fn headers(p: &RxParams) -> u32 {
    p.socket.proto.headers()
}

/// Receives one frame of `frame_len` bytes on the CPU of `cache`, its frag cache (and
/// `small`, its 1 KiB small-head cache): allocates the frame's buffer(s) and builds the skb,
/// whose payload starts at `seq`. By the time TCP queues it, the headers are pulled:
/// `skb->len` is the payload. The skb goes on `gro`, GRO's list, when GRO merges, else on
/// no list yet.
#[allow(clippy::too_many_arguments)]
pub fn rx_frame(
    p: &RxParams,
    cache: &mut FragCache,
    small: &mut FragCache1k,
    mem: &mut Mem,
    gro: Option<&std::borrow::Cow<'static, str>>,
    frame_len: u32,
    seq: u32,
    log: &mut Log,
) -> SkbId {
    let (k, cpu) = (p.consts, cache.cpu);
    let hdrs = headers(p);
    let payload = frame_len - hdrs;
    let head_len = head_len(p);
    // The small-head cache cuts 1 KiB whatever was asked (napi_alloc_skb: `len = SZ_1K`).
    let (head_bytes, head_frag) = match head_source(&k, p.variant.alloc, head_len) {
        HeadSource::Frag1k => (SZ_1K, Some(small.alloc(mem, log))),
        HeadSource::Frag => {
            let bytes = fragsz(&k, head_len);
            (bytes, Some(cache.alloc(mem, bytes, log)))
        }
        HeadSource::Kmalloc => (fragsz(&k, head_len), None),
    };
    let room = head_bytes - k.skb_data_align(k.shinfo_size);
    let in_head = match p.nic.driver {
        DriverStyle::FullFrame => frame_len,
        DriverStyle::HeaderSplit | DriverStyle::NapiFrags => hdrs,
    };
    let id = mem.new_skb_id();
    // The head as allocated: NET_SKB_PAD reserved, no header pulled yet. GRO will hold it.
    log.emit(Event::AllocSkb {
        skb: id,
        cpu,
        head_bytes,
        headroom: k.net_skb_pad,
        linear_room: room - k.net_skb_pad,
        seq,
        // build_skb: SKB_TRUESIZE(fragsz - SKB_DATA_ALIGN(sizeof(struct skb_shared_info)));
        // a 1 KiB piece: SKB_TRUESIZE(704) = 1280.
        truesize: head_bytes + sk_buff_truesize(&k),
        reserved_tailroom: 0,
        head_page: head_frag.map(|f| f.page),
        head_offset: head_frag.map(|f| f.offset),
        queue: gro.cloned(),
        size_goal: None,
    });
    log.emit(Event::RxFrame {
        skb: id,
        len: frame_len,
        seq,
        headers: hdrs,
        linear: in_head - hdrs,
    });
    match p.nic.driver {
        DriverStyle::FullFrame => {}
        DriverStyle::HeaderSplit => attach_payload_pages(mem, id, cpu, payload, &k, log),
        DriverStyle::NapiFrags => {
            let frag = cache.alloc(mem, napi_fragsz(&k, payload), log);
            let frag = Frag {
                size: payload,
                ..frag
            };
            attach_frag(id, frag, payload, log);
        }
    }
    id
}

/// Puts `frag` in skb `id`'s next frag slot and charges `truesize` more for it.
fn attach_frag(id: SkbId, frag: Frag, truesize: u32, log: &mut Log) {
    let s = kernel::skb(log.state(), id);
    let (idx, truesize) = (s.nr_frags() as u32, s.head.truesize + truesize);
    log.emit(Event::NewFrag {
        skb: id,
        idx,
        page: frag.page,
        offset: frag.offset,
        size: frag.size,
        truesize,
    });
}

/// `ixgbe_rx_bufsz`: the half page each ixgbe receive buffer is, and what ixgbe adds to
/// `skb->truesize` per buffer it attaches (v3.x ixgbe.h: `(PAGE_SIZE / 2) <<
/// ixgbe_rx_pg_order`, order 0 without FCoE; v6.12: `ixgbe_rx_frame_truesize`,
/// `ixgbe_rx_pg_size / 2` where PAGE_SIZE < 8192): 2048 with 4 KiB pages in every era.
pub fn ixgbe_rx_bufsz(k: &KernelConsts) -> u32 {
    k.page_size / 2
}

/// Header split: the payload lands in the driver's receive buffers, `ixgbe_rx_bufsz` bytes
/// each, one reference each handed to the skb, which is charged `ixgbe_rx_bufsz` per buffer as
/// ixgbe charges it. ixgbe's buffer is half a page whose other half a later frame fills, and
/// the driver flips between the halves and keeps the page while the stack has let go of the
/// other half (`page_count(page) == 1`; v6.12 `ixgbe_can_reuse_rx_page`); the model gives
/// each buffer a fresh page of its own and leaves that recycling out, so its payload pages
/// are not ixgbe's page count, only its frag cache is.
fn attach_payload_pages(
    mem: &mut Mem,
    id: SkbId,
    cpu: Cpu,
    mut payload: u32,
    k: &KernelConsts,
    log: &mut Log,
) {
    let bufsz = ixgbe_rx_bufsz(k);
    while payload > 0 {
        let size = payload.min(bufsz);
        // The frame fills the page's first `size` bytes: `new_frag` says so.
        let page = mem.pages.alloc(0, k.page_size, cpu, None, log);
        let frag = Frag {
            page,
            offset: 0,
            size,
        };
        attach_frag(id, frag, bufsz, log);
        payload -= size;
    }
}

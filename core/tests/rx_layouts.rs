//! Hand-derived page counts for each allocator, as a data table: a new case is one line.
//!
//! Derivations (x86_64, 4 KiB pages):
//! - full frame, 1514-byte buffers: fragsz = SKB_DATA_ALIGN(1514 + NET_SKB_PAD 64) +
//!   SKB_DATA_ALIGN(sizeof(skb_shared_info) 320) = 1600 + 320 = 1920, in v3.5 and v6.12.
//!   An order-0 page holds 2 (3840 <= 4096 < 5760); a 32 KiB page_frag_cache page holds
//!   floor(32768 / 1920) = 17.
//! - header split, the era's IXGBE_RX_HDR_SIZE: v3.5 asks for 512 bytes, fragsz =
//!   SKB_DATA_ALIGN(512 + 64) + 320 = 896, 4 per order-0 page (3584 <= 4096 < 4480); v3.6
//!   asks for 256, fragsz = SKB_DATA_ALIGN(256 + 64) + 320 = 640, 6 per
//!   order-0 page (3840 <= 4096 < 4480). In v6.12 a 320-byte head (256 + NET_SKB_PAD) is at
//!   most SKB_WITH_OVERHEAD(1024) = 704, so napi_alloc_skb takes a 1 KiB piece of the
//!   small-head cache (`page_frag_alloc_1k`): 4 per order-0 page, counting down from 3072,
//!   never reused. (__netdev_alloc_skb would kmalloc it.)
//! - v3.6 (duyck-3.6): counts up like v3.5; a refill sets the count to NETDEV_PAGECNT_BIAS
//!   = 4096 / 64 = 64 and each fragment spends one from pagecnt_bias; only a fragment that
//!   does not fit looks at the count, and reuses the page from 0 when count == bias.
//! - "prompt" with budget 1: every frame is its own NAPI poll and is read (and freed) right
//!   after it; "lag k": the newest k skbs stay queued.
//!
//! Cases, with GRO off unless noted:
//! 1. pre-2012, 10 frames, never read: 2 per page -> 5 pages.
//! 2. pre-2012, 10 frames, prompt: the offset only counts up, frees do not matter -> 5.
//! 3. duyck-2012, 10 frames, never read: the count never falls to 1 -> 5 pages, no reuse.
//! 4. duyck-2012, 10 frames, prompt: each frame is freed before the next alloc, the count is
//!    back to 1, so the page restarts at PAGE_SIZE: 1 page, reused by frames 2..10 = 9.
//! 5. duyck-2012, 10 frames, lag 1: the previous frame still holds the page when the next
//!    alloc looks, so pages fill and are replaced as before -> 5 pages, no reuse.
//! 6. pre-2012, 10 frames, lag 1: 5 pages (no loss against case 5).
//! 7. modern, 10 frames, never read: 10 <= 17 -> 1 page.
//! 8. modern, 40 frames, never read: ceil(40 / 17) -> 3 pages.
//! 9. modern, 40 frames, prompt: at frames 18 and 35 the page is exhausted, every fragment
//!    came back (count - bias = 0), so it is reused -> 1 page, 2 reuses.
//! 10. modern, 40 frames, lag 1: at exhaustion one fragment is still out -> 3 pages, 0 reuses.
//! 11. header split + GRO, pre-2012, 17 frames in one poll: ceil(17 / 4) -> 5 pages.
//! 12. header split + GRO, duyck-2012, 17 frames in one poll: heads 1..4 fill page A (head 1
//!     is the held GRO skb's, 2..4 are freed as they merge); head 5 does not fit and A still
//!     has head 1, so B is taken; from then on every head merges and is freed before the next
//!     alloc, so B (count 1) restarts each time: 2 pages, reused by heads 6..17 = 12.
//! 13. header split + GRO, modern, 17 frames in one poll: 1 KiB heads, 4 to a page ->
//!     ceil(17 / 4) = 5 pages, never reused.
//! 14. duyck-3.6, 10 frames, never read: 2 per page, at each exhaustion both fragments are
//!     out -> 5 pages, no reuse.
//! 15. duyck-3.6, 10 frames, prompt: frames 1 and 2 fill the page and come back; frame 3
//!     does not fit, count == bias (62), so the page restarts at 0: 1 page, reused at frames
//!     3, 5, 7, 9 = 4 (the seed as posted, case 4, restarts at every frame: 9).
//! 16. duyck-3.6, 10 frames, lag 1: at each exhaustion the newest frame is still queued ->
//!     5 pages, no reuse.
//! 17. header split + GRO, duyck-3.6, 17 frames in one poll: heads 1..6 fill page A; head 7
//!     does not fit and head 1 (the held GRO skb's) is out, so B is taken; heads 7..12 are
//!     merged and freed, so at head 13 B is recycled: 2 pages, 1 reuse (case 12: 10).

use skblab_core::rx::{
    AppParams, DriverStyle, NicParams, RxMachine, RxParams, SocketParams, Variant,
};
use skblab_core::trace::{Events, Machine};

struct Case {
    variant: &'static str,
    split: bool,
    gro: bool,
    frames: u32,
    prompt: bool,
    lag: u32,
    pages: u64,
    reuses: u64,
}

impl Case {
    /// One GRO'd burst of `frames` with nobody reading (the packet-shape tables).
    fn gro_burst(variant: &'static str, split: bool, frames: u32) -> Case {
        Case {
            variant,
            split,
            gro: true,
            frames,
            prompt: false,
            lag: 0,
            pages: 0,
            reuses: 0,
        }
    }
}

#[rustfmt::skip]
const CASES: &[Case] = &[
    Case { variant: "pre-2012",   split: false, gro: false, frames: 10, prompt: false, lag: 0, pages: 5, reuses: 0 },
    Case { variant: "pre-2012",   split: false, gro: false, frames: 10, prompt: true,  lag: 0, pages: 5, reuses: 0 },
    Case { variant: "duyck-2012", split: false, gro: false, frames: 10, prompt: false, lag: 0, pages: 5, reuses: 0 },
    Case { variant: "duyck-2012", split: false, gro: false, frames: 10, prompt: true,  lag: 0, pages: 1, reuses: 9 },
    Case { variant: "duyck-2012", split: false, gro: false, frames: 10, prompt: true,  lag: 1, pages: 5, reuses: 0 },
    Case { variant: "pre-2012",   split: false, gro: false, frames: 10, prompt: true,  lag: 1, pages: 5, reuses: 0 },
    Case { variant: "modern",     split: false, gro: false, frames: 10, prompt: false, lag: 0, pages: 1, reuses: 0 },
    Case { variant: "modern",     split: false, gro: false, frames: 40, prompt: false, lag: 0, pages: 3, reuses: 0 },
    Case { variant: "modern",     split: false, gro: false, frames: 40, prompt: true,  lag: 0, pages: 1, reuses: 2 },
    Case { variant: "modern",     split: false, gro: false, frames: 40, prompt: true,  lag: 1, pages: 3, reuses: 0 },
    Case { variant: "pre-2012",   split: true,  gro: true,  frames: 17, prompt: false, lag: 0, pages: 5, reuses: 0 },
    Case { variant: "duyck-2012", split: true,  gro: true,  frames: 17, prompt: false, lag: 0, pages: 2, reuses: 12 },
    Case { variant: "modern",     split: true,  gro: true,  frames: 17, prompt: false, lag: 0, pages: 5, reuses: 0 },
    Case { variant: "duyck-3.6",  split: false, gro: false, frames: 10, prompt: false, lag: 0, pages: 5, reuses: 0 },
    Case { variant: "duyck-3.6",  split: false, gro: false, frames: 10, prompt: true,  lag: 0, pages: 1, reuses: 4 },
    Case { variant: "duyck-3.6",  split: false, gro: false, frames: 10, prompt: true,  lag: 1, pages: 5, reuses: 0 },
    Case { variant: "duyck-3.6",  split: true,  gro: true,  frames: 17, prompt: false, lag: 0, pages: 2, reuses: 1 },
];

/// An rx machine for `variant` (one axis name) after `frames` full-sized frames arrive.
fn arrive(
    variant: &str,
    nic: NicParams,
    app: AppParams,
    frames: u32,
    ev: &mut Events,
) -> RxMachine {
    let mut v = Variant::default();
    v.set(variant).unwrap();
    let p = RxParams::new(v, &Default::default(), nic, SocketParams::default(), app).unwrap();
    let mut m = RxMachine::new(p);
    m.arrive(&vec![p.frame_len(); frames as usize], ev).unwrap();
    m
}

fn run(c: &Case) -> RxMachine {
    let nic = NicParams {
        driver: if c.split {
            DriverStyle::HeaderSplit
        } else {
            DriverStyle::FullFrame
        },
        gro: c.gro,
        // Prompt cases read after every frame: one frame per poll.
        budget: if c.prompt { 1 } else { 64 },
        ..NicParams::default()
    };
    let app = AppParams {
        prompt: c.prompt,
        lag: c.lag,
        ..AppParams::default()
    };
    arrive(c.variant, nic, app, c.frames, &mut Events::off())
}

#[test]
fn pages_taken_match_hand_derivations() {
    for (i, c) in CASES.iter().enumerate() {
        let counters = run(c).counters();
        let got = (
            counters.get("frag_cache_pages").unwrap(),
            counters.get("page_reuses").unwrap(),
        );
        assert_eq!(got, (c.pages, c.reuses), "case {} ({})", i + 1, c.variant);
    }
}

#[test]
fn fragsz_follows_the_kernel_formula() {
    use skblab_core::consts::Era;
    use skblab_core::rx::fragsz;
    // (era, buffer length, fragsz)
    let table = [
        (Era::V3_5, 1514, 1920),
        (Era::V3_5, 256, 640),
        (Era::V3_5, 1, 448),
        (Era::V6_12, 1514, 1920),
        (Era::V6_12, 9014, 9408),
    ];
    for (era, len, want) in table {
        assert_eq!(fragsz(&era.consts(), len), want, "{era:?} {len}");
    }
}

/// Where a head comes from, by the length the driver asks for. v3.5 and v3.6
/// `__netdev_alloc_skb`: the frag cache whenever fragsz fits a page (3712 gives
/// SKB_DATA_ALIGN(3776) plus 320 = 4096; 3713 gives 4160). v6.12 `napi_alloc_skb`, on
/// `len = length + NET_SKB_PAD 64`: the 1 KiB cache up to SKB_WITH_OVERHEAD(1024) = 704
/// (length 640), the frag cache up to SKB_WITH_OVERHEAD(PAGE_SIZE) = 3776 (length 3712),
/// kmalloc above. Rows: (allocator, length, source).
#[test]
fn head_source_by_length() {
    use skblab_core::rx::Allocator::{Duyck36, Modern, Pre2012};
    use skblab_core::rx::{head_source, HeadSource::*};
    #[rustfmt::skip]
    let table = [
        (Pre2012, 256, Frag), (Pre2012, 512, Frag), (Pre2012, 3712, Frag),
        (Pre2012, 3713, Kmalloc), (Duyck36, 256, Frag), (Duyck36, 3713, Kmalloc),
        (Modern, 256, Frag1k), (Modern, 512, Frag1k), (Modern, 640, Frag1k),
        (Modern, 641, Frag), (Modern, 3712, Frag), (Modern, 3713, Kmalloc),
    ];
    for (alloc, len, want) in table {
        let v = Variant {
            alloc,
            ..Variant::default()
        };
        let k = v.era().consts();
        assert_eq!(head_source(&k, alloc, len), want, "{alloc:?} {len}");
    }
}

/// 17 header-split frames in one GRO poll, v6.12, by head size, nobody reading: (hdr_size,
/// frag cache pages, pages freed, pages live besides the 17 payload pages).
/// - 512 and 640: 1 KiB pieces, 4 to a page: heads 1..4 on A, ..., 17 on E = 5 pages.
///   Heads 2..17 are merged and freed; head 1 keeps A (count 1), E keeps the 3 references
///   taken for its unused pieces; B, C, D are freed.
/// - 641: SKB_DATA_ALIGN(705) + 320 = 1088-byte fragments, 30 to a 32 KiB page: 1 page, live.
#[test]
fn header_split_pages_by_head_size_v6_12() {
    for (hdr_size, pages, freed, live) in [(512, 5, 3, 2), (640, 5, 3, 2), (641, 1, 0, 1)] {
        let nic = NicParams {
            driver: DriverStyle::HeaderSplit,
            hdr_size: Some(hdr_size),
            ..NicParams::default()
        };
        let m = arrive("modern", nic, AppParams::default(), 17, &mut Events::off());
        let n = m.counters();
        let got = (
            n.get("frag_cache_pages").unwrap(),
            n.get("page_frees").unwrap(),
            n.get("pages_live").unwrap() - 17,
        );
        assert_eq!(got, (pages, freed, live), "hdr_size {hdr_size}");
    }
}

/// v6.12's 1 KiB small-head cache, header split (256-byte heads), 5 frames, one per poll,
/// GRO off, nobody reading. `page_frag_alloc_1k` counts down: offsets 3072, 2048, 1024, 0,
/// then a new page at 3072. A refill adds the references for all four pieces at once
/// (count 4); the cursor holds `offset / 1024` of them and lets go at offset 0. Each head:
/// 1024 bytes, `SKB_TRUESIZE(SKB_WITH_OVERHEAD(1024))` = 704 + 256 + 320 = 1280, plus the
/// payload buffer's ixgbe_rx_bufsz 2048 = 3328; the room behind NET_SKB_PAD is 704 - 64 = 640.
#[test]
fn small_head_cache_layout_v6_12() {
    use skblab_core::trace::Event;
    let nic = NicParams {
        driver: DriverStyle::HeaderSplit,
        gro: false,
        budget: 1,
        ..NicParams::default()
    };
    let mut ev = Events::on();
    let m = arrive("modern", nic, AppParams::default(), 5, &mut ev);
    let events = ev.take();
    let offsets: Vec<(u32, u32)> = events
        .iter()
        .filter_map(|e| match *e {
            Event::FragAlloc1k { page, offset, .. } => Some((page, offset)),
            _ => None,
        })
        .collect();
    // Pages 0 and 5 are the cache's; 1..4 the first four payload pages.
    assert_eq!(
        offsets,
        [(0, 3072), (0, 2048), (0, 1024), (0, 0), (5, 3072)]
    );
    let heads: Vec<(u32, u32, u32)> = events
        .iter()
        .filter_map(|e| match *e {
            Event::AllocSkb {
                head_bytes,
                linear_room,
                truesize,
                ..
            } => Some((head_bytes, linear_room, truesize)),
            _ => None,
        })
        .collect();
    assert_eq!(heads, [(1024, 640, 1280); 5]);
    let st = m.state();
    let queue = st.queues.iter().find(|q| q.name == "sk_receive_queue");
    let truesizes: Vec<u32> = queue
        .unwrap()
        .skbs
        .iter()
        .map(|s| s.head.truesize)
        .collect();
    // The receive queue merges the four later skbs into the first (tcp_try_coalesce: their
    // frags move with 2048 of truesize each) and frees their heads at once.
    assert_eq!(truesizes, [3328 + 4 * 2048]);
    let count = |id| st.pages.iter().find(|p| p.id == id).map(|p| p.count);
    // Page 0: four heads, three of them freed; page 5: the three to come, its head freed.
    assert_eq!((count(0), count(5)), (Some(1), Some(3)));
    let small: Vec<_> = st
        .cursors
        .iter()
        .filter(|c| c.name.contains("page_small"))
        .collect();
    assert_eq!(small.len(), 2);
    assert_eq!(
        (small[0].page, small[0].offset, small[0].bias),
        (Some(5), 3072, Some(3))
    );
}

/// GRO packet shapes, one poll, nobody reading: (variant, header split, frames, packets
/// delivered, sk_buffs alive).
/// - Full frame, v3.5: the first skb keeps its head, each further segment's head is stolen as
///   a frag; MAX_SKB_FRAGS 17 gives 18 segments, and the 19th starts a new packet.
/// - Full frame, v6.12: frame 19 is chained whole on the frag_list, 20..36 fill its frags,
///   37 is chained, up to 64 KiB: 52 + 45 * 1448 = 65212 < 65536 <= 65212 + 1448, so 45
///   segments in 3 sk_buffs, and the 46th starts a new packet.
/// - Header split: payload frags move; the first skb's own payload frag leaves room for 16
///   more, so the 18th segment starts a new packet in v3.5 and is chained in v6.12.
#[test]
fn gro_packet_shapes() {
    #[rustfmt::skip]
    let table = [
        ("pre-2012", false, 18, 1, 1),
        ("pre-2012", false, 19, 2, 2),
        ("modern",   false, 45, 1, 3),
        ("modern",   false, 46, 2, 4),
        ("pre-2012", true,  18, 2, 2),
        ("modern",   true,  18, 1, 2),
    ];
    for (variant, split, frames, packets, live) in table {
        let c = Case::gro_burst(variant, split, frames);
        let n = run(&c).counters();
        let got = (
            n.get("skbs_delivered").unwrap(),
            n.get("skbs_live").unwrap(),
        );
        assert_eq!(
            got,
            (packets, live),
            "{variant} split={split} frames={frames}"
        );
    }
}

/// page_frag_cache refill knobs, 40 full frames, one per poll, read at once:
/// - normal: one 32 KiB page, reused at frames 18 and 35 (every fragment came back);
/// - high_order_fails: order-0 pages, 2 fragments each; at every exhaustion the previous
///   fragments are back, so the same 4 KiB page is reused 19 times (frames 3, 5, ..., 39);
/// - pfmemalloc: the 32 KiB attempt carries __GFP_NOMEMALLOC, so a page from the reserves
///   is an order-0 fallback page; at exhaustion it is freed instead of reused: a new page
///   every 2 frames, 20 pages, 0 reuses (with or without high_order_fails).
#[test]
fn page_frag_cache_refill_knobs() {
    // (high_order_fails, pfmemalloc, frag cache pages, reuses, order of the live page)
    let table = [
        (false, false, 1, 2, 3),
        (true, false, 1, 19, 0),
        (false, true, 20, 0, 0),
        (true, true, 20, 0, 0),
    ];
    for (high_order_fails, pfmemalloc, pages, reuses, order) in table {
        let nic = NicParams {
            gro: false,
            budget: 1,
            high_order_fails,
            pfmemalloc,
            ..NicParams::default()
        };
        let app = AppParams {
            prompt: true,
            ..AppParams::default()
        };
        let m = arrive("modern", nic, app, 40, &mut Events::off());
        let n = m.counters();
        let got = (
            n.get("frag_cache_pages").unwrap(),
            n.get("page_reuses").unwrap(),
        );
        assert_eq!(
            got,
            (pages, reuses),
            "high_order_fails={high_order_fails} pfmemalloc={pfmemalloc}"
        );
        let st = m.state();
        assert_eq!(st.pages.len(), 1);
        assert_eq!(st.pages[0].order, order);
    }
}

/// skb->truesize of the packet GRO delivers, one poll, nobody reading. Every skb is built
/// by build_skb around its buffer: `truesize = SKB_TRUESIZE(fragsz - SKB_DATA_ALIGN(shinfo))`
/// = fragsz + SKB_DATA_ALIGN(sizeof(struct sk_buff)) = fragsz + 256 (sizeof 232 on x86_64).
/// - Full frame, 1 frame: 1920 + 256 = 2176.
/// - Full frame, v3.5, 18 frames: each stolen head adds `truesize - SKB_DATA_ALIGN(sizeof
///   (struct sk_buff))` = 1920: 2176 + 17 * 1920 = 34816.
/// - Full frame, v6.12, 45 frames: two more sk_buffs chained on the frag_list, each adding
///   its whole truesize (2176), plus 17 + 8 stolen heads: 34816 + 2176 + 17 * 1920 + 2176 +
///   8 * 1920 = 87168.
/// - Header split, v3.5, 1 frame: an 896-byte head (IXGBE_RX_HDR_SIZE 512) + 256 + the
///   payload buffer's ixgbe_rx_bufsz 2048 = 3200; 2 frames: the second adds `truesize -
///   SKB_TRUESIZE(skb_end_offset)` = 3200 - SKB_TRUESIZE(576) (1152) = 2048.
/// - Header split, v6.12, 1 frame: a 1 KiB head, 1024 + 256 + 2048 = 3328; 2 frames: the
///   second adds 3328 - SKB_TRUESIZE(704) (1280) = 2048.
/// - v3.6 builds the same skbs as v3.5: 18 full frames, 34816.
#[test]
fn gro_packet_truesize() {
    #[rustfmt::skip]
    let table = [
        ("pre-2012", false, 1, 2176),
        ("pre-2012", false, 18, 34816),
        ("modern",   false, 45, 87168),
        ("pre-2012", true,  1, 3200),
        ("pre-2012", true,  2, 5248),
        ("modern",   true,  1, 3328),
        ("modern",   true,  2, 5376),
        ("duyck-3.6", false, 18, 34816),
    ];
    for (variant, split, frames, want) in table {
        let c = Case::gro_burst(variant, split, frames);
        let state = run(&c).state();
        let queue = state
            .queues
            .iter()
            .find(|q| q.name == "sk_receive_queue")
            .expect("receive queue drawn");
        let got: Vec<u32> = queue.skbs.iter().map(|s| s.head.truesize).collect();
        assert_eq!(got, [want], "{variant} split={split} frames={frames}");
    }
}

/// The alloc_skb event shows the head as allocated, before any header is pulled: headroom
/// NET_SKB_PAD (64) and the room the driver asked for behind it. v3.5, header split: an
/// 896-byte fragment, 896 - 320 (shinfo) - 64 = 512 = IXGBE_RX_HDR_SIZE; full frame:
/// 1920 - 320 - 64 = 1536 >= 1514.
#[test]
fn alloc_skb_event_shows_the_fresh_head() {
    use skblab_core::trace::Event;
    for (split, want) in [(true, (896, 64, 512)), (false, (1920, 64, 1536))] {
        let nic = NicParams {
            driver: if split {
                DriverStyle::HeaderSplit
            } else {
                DriverStyle::FullFrame
            },
            ..NicParams::default()
        };
        let mut ev = Events::on();
        arrive("pre-2012", nic, AppParams::default(), 1, &mut ev);
        let got = ev.take().into_iter().find_map(|e| match e {
            Event::AllocSkb {
                head_bytes,
                headroom,
                linear_room,
                ..
            } => Some((head_bytes, headroom, linear_room)),
            _ => None,
        });
        assert_eq!(got, Some(want), "split={split}");
    }
}

/// Header split asks for the era's IXGBE_RX_HDR_SIZE: 512 bytes in v3.5 (an 896-byte
/// fragment), 256 in v3.6 (640), 256 in v6.12 (a 1 KiB piece); each payload buffer adds
/// ixgbe_rx_bufsz = 2048 to the truesize, on top of the head's fragsz + 256 for the sk_buff.
#[test]
fn header_split_heads_follow_the_era_and_payload_is_charged_half_a_page() {
    for (variant, head_bytes) in [("pre-2012", 896), ("duyck-3.6", 640), ("modern", 1024)] {
        let nic = NicParams {
            driver: DriverStyle::HeaderSplit,
            gro: false,
            ..NicParams::default()
        };
        let mut ev = Events::on();
        arrive(variant, nic, AppParams::default(), 1, &mut ev);
        let ev = ev.take();
        let alloc = ev.iter().find_map(|e| match e {
            skblab_core::events::Event::AllocSkb { head_bytes, .. } => Some(*head_bytes),
            _ => None,
        });
        assert_eq!(alloc, Some(head_bytes), "{variant}");
        let truesize = ev.iter().find_map(|e| match e {
            skblab_core::events::Event::NewFrag { truesize, .. } => Some(*truesize),
            _ => None,
        });
        assert_eq!(truesize, Some(head_bytes + 256 + 2048), "{variant}");
    }
}

/// Seed 001 as posted starts every fresh page at PAGE_SIZE (its count is 1), whatever stale
/// offset the cache still holds: full-frame buffers leave 256 bytes of each page, and every
/// refill's cursor still reads 4096.
#[test]
fn duyck_2012_refills_start_at_page_size() {
    let nic = NicParams {
        gro: false,
        ..NicParams::default()
    };
    let mut ev = Events::on();
    arrive("duyck-2012", nic, AppParams::default(), 5, &mut ev);
    let cursors: Vec<Option<u32>> = ev
        .take()
        .iter()
        .filter_map(|e| match e {
            skblab_core::events::Event::AllocPage { cursor, .. } => Some(*cursor),
            _ => None,
        })
        .collect();
    assert_eq!(cursors, vec![Some(4096); 3]);
}

/// tun's NAPI frags driver (`tun_napi_alloc_frags`): the headers in `napi_get_frags`' head
/// (napi_alloc_skb(GRO_MAX_HEAD 304): 304 + 64 <= 704, a 1 KiB piece of v6.12's small-head
/// cache; v3.5: SKB_DATA_ALIGN(304 + 64) + 320 = 704 bytes of the same netdev_alloc_cache),
/// the payload in one frag-cache fragment of SKB_DATA_ALIGN(1448) = 1472 bytes, charged its
/// 1,448 bytes (`skb->truesize += skb->data_len`). A 32 KiB page holds 22 (32,384), so a
/// 23rd frame that nobody read takes a second page.
#[test]
fn napi_frags_heads_and_payload_fragments() {
    use skblab_core::events::Event;
    let udp = SocketParams {
        proto: skblab_core::rx::Proto::Udp,
        ..SocketParams::default()
    };
    let nic = NicParams {
        driver: DriverStyle::NapiFrags,
        ..NicParams::default()
    };
    for (variant, head_bytes, offset) in [("modern", 1024, 32768 - 1472), ("pre-2012", 704, 704)] {
        let mut v = Variant::default();
        v.set(variant).unwrap();
        let p = RxParams::new(v, &Default::default(), nic, udp, AppParams::default()).unwrap();
        let mut m = RxMachine::new(p);
        let mut ev = Events::on();
        m.arrive(&[p.frame_len()], &mut ev).unwrap();
        let ev = ev.take();
        let head = ev.iter().find_map(|e| match e {
            Event::AllocSkb { head_bytes, .. } => Some(*head_bytes),
            _ => None,
        });
        assert_eq!(head, Some(head_bytes), "{variant}");
        let frag = ev.iter().find_map(|e| match e {
            Event::NewFrag {
                offset,
                size,
                truesize,
                ..
            } => Some((*offset, *size, *truesize)),
            _ => None,
        });
        assert_eq!(
            frag,
            Some((offset, 1448, head_bytes + 256 + 1448)),
            "{variant}"
        );
    }
    let pages = |frames: usize| {
        let p = RxParams::new(
            "modern".parse().unwrap(),
            &Default::default(),
            nic,
            udp,
            AppParams::default(),
        )
        .unwrap();
        let mut m = RxMachine::new(p);
        let mut ev = Events::on();
        m.arrive(&vec![p.frame_len(); frames], &mut ev).unwrap();
        let allocs = ev.take();
        allocs
            .iter()
            .filter(|e| matches!(e, Event::AllocPage { order: 3, .. }))
            .count()
    };
    assert_eq!((pages(22), pages(23)), (1, 2));
    let big = SocketParams { mss: 4097, ..udp };
    let e = RxParams::new(
        Variant::default(),
        &Default::default(),
        nic,
        big,
        AppParams::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("socket.mss") && e.contains("4096"), "{e}");
}

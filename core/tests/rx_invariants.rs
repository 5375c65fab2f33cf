//! Property tests: random arrival/consume interleavings, every variant, random knobs.
//!
//! - no page leaked or freed twice: after close and a softirq on each CPU, the only live pages
//!   are the frag caches' own, holding exactly the cache's references; a double put would hit
//!   a dead page or a zero count and panic ("model bug");
//! - bytes arriving == bytes read (lag 0, everything read before close), and in general
//!   arrived == read + purged + still queued;
//! - every skb freed exactly once: allocated == freed + live at every step;
//! - page counts never below zero (the model panics on underflow) and pages allocated ==
//!   freed + live.

use proptest::prelude::*;
use skblab_core::kernel_fn::{kernel_fn, Flow};
use skblab_core::rx::{
    AppParams, DriverStyle, NicParams, Proto, RxMachine, RxOp, RxParams, SocketParams, Variant,
    ALLOCATORS, CACHES,
};
use skblab_core::trace::{Counters, Events, Machine};

fn knobs() -> impl Strategy<Value = (NicParams, SocketParams, AppParams)> {
    (
        (
            any::<bool>(),
            any::<bool>(),
            1u32..80,
            any::<bool>(),
            any::<bool>(),
            any::<bool>(),
        ),
        (
            any::<bool>(),
            prop_oneof![Just(1448u32), Just(100), 1u32..9000],
        ),
        (0u8..2, prop_oneof![Just(0u32), 0u32..4], any::<bool>()),
    )
        .prop_map(
            |((split, gro, budget, rps, hi, pf), (udp, mss), (cpu, lag, prompt))| {
                let nic = NicParams {
                    driver: if split {
                        DriverStyle::HeaderSplit
                    } else {
                        DriverStyle::FullFrame
                    },
                    gro,
                    budget,
                    rps,
                    high_order_fails: hi,
                    pfmemalloc: pf,
                    ..NicParams::default()
                };
                let socket = SocketParams {
                    proto: if udp { Proto::Udp } else { Proto::Tcp },
                    mss,
                };
                (nic, socket, AppParams { cpu, lag, prompt })
            },
        )
}

fn op() -> impl Strategy<Value = RxOp> {
    prop_oneof![
        4 => (1u64..50, prop::option::of(0u32..100)).prop_map(|(frames, short)| RxOp::Arrive {
            frames: Some(frames),
            // A short frame: `short` percent of the way from the smallest to the largest.
            len: short.map(u64::from),
            lens: None,
        }),
        3 => prop_oneof![
            (1u64..70_000).prop_map(|b| RxOp::Recvmsg { bytes: Some(b), skbs: None }),
            (1u64..5).prop_map(|n| RxOp::Recvmsg { bytes: None, skbs: Some(n) }),
            Just(RxOp::Recvmsg { bytes: None, skbs: None }),
        ],
        1 => Just(RxOp::Lock),
        1 => Just(RxOp::Release),
        1 => (0u8..2).prop_map(|cpu| RxOp::Softirq { cpu }),
        1 => Just(RxOp::Disconnect),
    ]
}

/// Maps the generated `len` percentage onto the scenario's allowed frame lengths.
fn concrete(op: RxOp, p: &RxParams) -> RxOp {
    match op {
        RxOp::Arrive {
            frames,
            len: Some(pct),
            ..
        } => {
            let lo = u64::from(p.socket.proto.headers()) + 1;
            let hi = u64::from(p.frame_len());
            RxOp::Arrive {
                frames,
                len: Some(lo + (hi - lo) * pct / 100),
                lens: None,
            }
        }
        op => op,
    }
}

fn c(m: &RxMachine, name: &str) -> u64 {
    m.counters()
        .get(name)
        .unwrap_or_else(|| panic!("no counter {name}"))
}

fn check_accounting(m: &RxMachine) {
    let counters: Counters = m.counters();
    let g = |n: &str| counters.get(n).unwrap();
    assert_eq!(
        g("skbs_allocated"),
        g("skb_frees_cpu0") + g("skb_frees_cpu1") + g("skbs_live"),
        "every skb freed exactly once"
    );
    assert_eq!(g("page_allocs"), g("page_frees") + g("pages_live"));
    for page in &m.state().pages {
        assert!(page.count > 0, "live page {} with count 0", page.id);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(192))]

    #[test]
    fn interleavings_keep_every_invariant(
        alloc in 0..ALLOCATORS.len(),
        cache in 0..CACHES.len(),
        (nic, socket, app) in knobs(),
        ops in prop::collection::vec(op(), 1..40),
    ) {
        let mut v = Variant::default();
        v.set(&format!("{}+{}", ALLOCATORS[alloc], CACHES[cache])).unwrap();
        let p = RxParams::new(v, &Default::default(), nic, socket, app).unwrap();
        let mut m = RxMachine::new(p);
        let mut ev = Events::on();
        let mut replay = m.state();
        for (i, op) in ops.into_iter().enumerate() {
            // Socket-state errors (release without lock, ...) are fine: the op is refused.
            let _ = m.apply(&concrete(op, &p), i, &mut ev);
            // The events are a complete log: replaying them rebuilds the state.
            for e in ev.take() {
                prop_assert_eq!(replay.apply(&e), Ok(()), "{:?}", e);
                let flow = Flow {
                    udp: p.socket.proto == Proto::Udp,
                    napi_frags: p.nic.driver == DriverStyle::NapiFrags,
                };
                let f = kernel_fn("rx", p.variant.era(), flow, &e);
                prop_assert!(f.is_some(), "no kernel function for {:?}", e);
            }
            prop_assert_eq!(&replay, &m.state());
            check_accounting(&m);
            prop_assert_eq!(
                c(&m, "bytes_arrived"),
                c(&m, "bytes_read") + c(&m, "bytes_purged") + queued_bytes(&m)
            );
        }
        // Drain: give the socket back, read everything, then close.
        let _ = m.apply(&RxOp::Release, 0, &mut ev);
        if app.lag == 0 && c(&m, "bytes_purged") == 0 {
            m.apply(&RxOp::Recvmsg { bytes: None, skbs: None }, 0, &mut ev).unwrap();
            prop_assert_eq!(c(&m, "bytes_arrived"), c(&m, "bytes_read"));
        }
        m.apply(&RxOp::Close, 0, &mut ev).unwrap();
        m.apply(&RxOp::Softirq { cpu: 0 }, 0, &mut ev).unwrap();
        m.apply(&RxOp::Softirq { cpu: 1 }, 0, &mut ev).unwrap();
        check_accounting(&m);
        prop_assert_eq!(c(&m, "skbs_live"), 0);
        prop_assert_eq!(c(&m, "bytes_arrived"), c(&m, "bytes_read") + c(&m, "bytes_purged"));
        // Only the frag caches' own pages remain, each holding just the cache's references.
        let st = m.state();
        for page in &st.pages {
            let cur = st.cursors.iter().find(|cur| cur.page == Some(page.id));
            let cur = cur.unwrap_or_else(|| panic!("page {} leaked", page.id));
            prop_assert_eq!(page.count, cur.bias.unwrap_or(1), "page {} still referenced", page.id);
        }
    }
}

/// Payload bytes in skbs not yet read or purged (GRO lists, socket, defer lists hold read
/// skbs only, so they count zero), minus what was already copied from the first skb.
fn queued_bytes(m: &RxMachine) -> u64 {
    let st = m.state();
    let unread: u64 = st
        .queues
        .iter()
        .filter(|q| {
            q.name.starts_with("gro") || q.name == "sk_receive_queue" || q.name == "sk_backlog"
        })
        .flat_map(|q| &q.skbs)
        .map(|s| u64::from(s.len))
        .sum();
    unread - m.copied_bytes()
}

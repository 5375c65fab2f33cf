//! Invariants of the MPTCP model over random scenarios, for both variants.

mod common;

use proptest::prelude::*;
use skblab_core::mptcp::{MptcpOp, MptcpScenario, SubflowParams, VARIANTS};
use skblab_core::scenario::{Mechanism, RunOptions};
use skblab_core::trace::{State, Trace};
use std::collections::BTreeMap;

fn subflow() -> impl Strategy<Value = SubflowParams> {
    (
        prop_oneof![Just(65536u32), Just(1500), Just(9000), 576u32..=65536],
        any::<bool>(),
        any::<bool>(),
        prop_oneof![Just(0u32), 1000u32..200_000],
    )
        .prop_map(|(mtu, timestamps, gso, max_window)| SubflowParams {
            mtu,
            timestamps,
            gso,
            max_window,
            ..SubflowParams::default()
        })
}

fn op() -> impl Strategy<Value = MptcpOp> {
    prop_oneof![
        6 => (0u64..70_000, 1u64..4).prop_map(|(bytes, count)| MptcpOp::Sendmsg { bytes, count }),
        1 => (0u64..20_000).prop_map(|bytes| MptcpOp::Sendmsg { bytes, count: 30 }),
        1 => Just(MptcpOp::Transmit { subflow: None }),
        1 => Just(MptcpOp::Transmit { subflow: Some(0) }),
        1 => Just(MptcpOp::Ack),
    ]
}

fn scenario() -> impl Strategy<Value = MptcpScenario> {
    (
        prop::collection::vec(subflow(), 1..=3),
        any::<bool>(),
        prop_oneof![Just(65428u32), 1u32..100_000],
        any::<bool>(),
        any::<bool>(),
        prop::collection::vec(op(), 1..12),
    )
        .prop_map(|(subflows, rr, burst, drain, no_high_order, mut ops)| {
            ops.push(MptcpOp::Close);
            let text = format!(
                "mechanism = \"mptcp\"\nscheduler = \"{}\"\nops = []",
                if rr { "round-robin" } else { "first" }
            );
            let mut s = match skblab_core::Scenario::parse(&text).expect("base parses") {
                skblab_core::Scenario::Mptcp(s) => s,
                _ => unreachable!(),
            };
            s.subflows = subflows;
            s.burst = burst;
            s.drain = drain;
            s.high_order_alloc_disable = no_high_order;
            s.ops = ops;
            s
        })
}

fn run(s: &MptcpScenario, variant: &str) -> Trace {
    s.run(&RunOptions::traced(Some(variant)))
        .expect("random scenarios are valid")
}

/// Per subflow: seq/end_seq contiguous, len = frag bytes, frags within the cap, each skb's
/// mapping covering exactly its bytes at its subflow seq, mappings rising in data sequence
/// (and contiguous when there is one subflow), no skb above the size goal.
fn check_subflows(s: &MptcpScenario, t: &Trace, st: &State) {
    let k = t.consts;
    for (q, p) in st.queues.iter().zip(&s.subflows) {
        let (_, goal) = p.mss_and_size_goal(t.era, &k);
        for skb in &q.skbs {
            assert_eq!(skb.end_seq.wrapping_sub(skb.seq), skb.len, "{}", q.name);
            assert_eq!(skb.frags.iter().map(|f| f.size).sum::<u32>(), skb.len);
            assert_eq!(skb.linear_len, 0);
            assert!(skb.frags.len() <= k.max_skb_frags as usize);
            assert!(
                skb.len <= goal,
                "{}: skb {} > size goal {goal}",
                q.name,
                skb.len
            );
            let m = skb.mapping.expect("every subflow skb has a mapping");
            assert_eq!((m.data_len, m.subflow_seq), (skb.len, skb.seq));
        }
        for w in Vec::from_iter(&q.skbs).windows(2) {
            assert_eq!(w[0].end_seq, w[1].seq, "{}: subflow seq gap", q.name);
            let (a, b) = (w[0].mapping.unwrap(), w[1].mapping.unwrap());
            let a_end = a.data_seq + a.data_len as u64;
            if s.subflows.len() == 1 {
                assert_eq!(a_end, b.data_seq, "{}: data seq gap", q.name);
            } else {
                assert!(a_end <= b.data_seq, "{}: mappings overlap", q.name);
            }
        }
    }
}

/// Every data byte written is mapped exactly once: the mappings of all subflows tile
/// [0, write_seq) (checked until the first ack frees some).
fn check_tiling(st: &State, written: u64) {
    let mut maps: Vec<_> = st
        .queues
        .iter()
        .flat_map(|q| q.skbs.iter().map(|s| s.mapping.unwrap()))
        .collect();
    maps.sort_by_key(|m| m.data_seq);
    let mut next = 0;
    for m in maps {
        assert_eq!(m.data_seq, next, "data byte {next} mapped twice or never");
        next += m.data_len as u64;
    }
    assert_eq!(next, written);
}

/// Each live page's count is the sum of its holders: frags, dfrags, the page frag.
fn check_refcounts(st: &State) {
    let mut holders: BTreeMap<u32, u32> = BTreeMap::new();
    for f in st
        .queues
        .iter()
        .flat_map(|q| &q.skbs)
        .flat_map(|s| &s.frags)
    {
        *holders.entry(f.page).or_default() += 1;
    }
    for d in &st.dfrags {
        *holders.entry(d.page).or_default() += 1;
    }
    for c in &st.cursors {
        if let Some(p) = c.page {
            *holders.entry(p).or_default() += 1;
        }
    }
    for p in &st.pages {
        assert_eq!(Some(&p.count), holders.get(&p.id), "page {} count", p.id);
    }
    assert_eq!(
        holders.len(),
        st.pages.len(),
        "a holder points at a freed page"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn invariants_hold(s in scenario()) {
        for variant in VARIANTS {
            let t = run(&s, variant);
            // The events are a complete log: replaying them rebuilds every step's state.
            if let Err(e) = t.check_replay() {
                prop_assert!(false, "{}: {}", variant, e);
            }
            for e in t.steps.iter().flat_map(|s| &s.events) {
                prop_assert!(t.kernel_fn(e).is_some(), "no kernel function for {:?}", e);
            }
            let mut acked = false;
            for (step, op) in t.steps.iter().zip(&s.ops) {
                acked |= *op == MptcpOp::Ack;
                check_subflows(&s, &t, &step.state);
                check_refcounts(&step.state);
                let c = &step.counters;
                prop_assert_eq!(c.get("bytes_mapped"), c.get("bytes_written"));
                if !acked && *op != MptcpOp::Close {
                    check_tiling(&step.state, c.get("bytes_written").unwrap());
                }
            }
            let left = common::only_task_frag_left(&t.steps.last().unwrap().state);
            let freed = t.counters.get("pages_freed").map(|f| f + left);
            prop_assert_eq!(t.counters.get("pages_allocated"), freed);
        }
    }

    /// The fix only ever makes skbs bigger or equal in number: never more skbs than before.
    #[test]
    fn abeni_never_needs_more_skbs_on_one_subflow(
        bytes in 1u64..70_000, count in 1u64..20, sf in subflow()
    ) {
        let text = format!(
            "mechanism = \"mptcp\"\n[[ops]]\nop = \"sendmsg\"\nbytes = {bytes}\ncount = {count}"
        );
        let mut s = match skblab_core::Scenario::parse(&text).unwrap() {
            skblab_core::Scenario::Mptcp(s) => s,
            _ => unreachable!(),
        };
        s.subflows = vec![sf];
        let skbs = |v: &str| run(&s, v).counters.get("skbs_allocated").unwrap();
        prop_assert!(skbs("abeni-2020") <= skbs("pre-2020"));
    }
}

//! Invariants of the send model over random scenarios, for every variant.

mod common;

use proptest::prelude::*;
use skblab_core::send::{DeviceParams, SendOp, SendScenario, SendSock, SocketParams, Variant};
use skblab_core::trace::{Event, Events, Step};
use skblab_core::{RunOptions, Scenario};

fn device() -> impl Strategy<Value = DeviceParams> {
    // Valid feature sets: GSO needs SG, SG needs checksum offload.
    let features = prop_oneof![
        Just((true, true, true)),
        Just((true, false, true)),
        Just((false, false, true)),
        Just((false, false, false)),
    ];
    (
        features,
        prop_oneof![Just(1500u32), Just(9000)],
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(
            |((sg, gso, csum), mtu, drain, high_order_alloc_disable)| DeviceParams {
                sg,
                gso,
                csum,
                mtu,
                drain,
                high_order_alloc_disable,
            },
        )
}

fn op() -> impl Strategy<Value = SendOp> {
    prop_oneof![
        4 => (0u64..70_000, any::<bool>(), 1u64..4)
            .prop_map(|(b, eor, count)| SendOp::Sendmsg { bytes: Some(b), iov: None, eor, count }),
        2 => prop::collection::vec(0u64..20_000, 0..5)
            .prop_map(|iov| SendOp::Sendmsg { bytes: None, iov: Some(iov), eor: false, count: 1 }),
        1 => Just(SendOp::Transmit),
        1 => Just(SendOp::Ack { bytes: None }),
    ]
}

fn scenario() -> impl Strategy<Value = (SendScenario, Variant)> {
    (
        device(),
        200u32..=1448,
        prop_oneof![Just(0u32), 1_000u32..2_000_000],
        prop_oneof![Just(None), (1u32..=20).prop_map(Some)],
        prop::collection::vec(op(), 0..24),
        prop::sample::select(Variant::ALL.to_vec()),
    )
        .prop_map(|(device, mss, max_window, frags, ops, v)| {
            let mut s = SendScenario {
                title: None,
                variant: Some(v.name().to_string()),
                consts: Default::default(),
                socket: SocketParams {
                    mss,
                    max_window,
                    sndbuf: 64 << 20,
                    ..SocketParams::default()
                },
                device,
                ops,
            };
            s.consts.max_skb_frags = frags;
            (s, v)
        })
}

fn check_step(step: &Step, max_frags: u32, size_goal: u32, variant: Variant, sg: bool) {
    let st = &step.state;
    let q = &st.queues[0].skbs;
    let c = |n: &str| step.counters.get(n).expect("counter");
    // Bytes written == bytes in the write queue + bytes freed; a partly acknowledged skb
    // stays whole, so acked - freed is less than the front skb.
    let queued: u64 = q.iter().map(|s| s.len as u64).sum();
    let slack = (queued + c("bytes_acked"))
        .checked_sub(c("bytes_written"))
        .expect("bytes lost");
    assert!(
        slack == 0 || slack < q[0].len as u64,
        "{}: slack {slack}",
        step.op
    );
    for (i, s) in q.iter().enumerate() {
        let frag_bytes: u32 = s.frags.iter().map(|f| f.size).sum();
        assert_eq!(s.len, s.linear_len + frag_bytes);
        assert_eq!(s.end_seq.wrapping_sub(s.seq), s.len);
        assert!(s.frags.len() as u32 <= max_frags, "more than MAX_SKB_FRAGS");
        assert!(
            s.len <= size_goal,
            "skb {} of {} bytes above size_goal {size_goal}",
            s.id,
            s.len
        );
        if let Some(next) = q.get(i + 1) {
            assert_eq!(s.end_seq, next.seq, "seq/end_seq contiguous");
        }
        match variant {
            Variant::Pre2010 if !sg => assert!(s.frags.is_empty(), "non-SG got frags"),
            Variant::Pre2010 => {}
            _ => assert_eq!(s.linear_len, 0, "linear data after the patch"),
        }
    }
    // Every page's count is exactly the references that exist: frags + the socket's.
    for p in &st.pages {
        let frags = q
            .iter()
            .flat_map(|s| &s.frags)
            .filter(|f| f.page == p.id)
            .count() as u32;
        let socket = st
            .cursors
            .iter()
            .filter(|cur| cur.page == Some(p.id))
            .count() as u32;
        assert_eq!(p.count, frags + socket, "page {} refcount", p.id);
    }
    for f in q.iter().flat_map(|s| &s.frags) {
        assert!(
            st.pages.iter().any(|p| p.id == f.page),
            "frag on a freed page"
        );
    }
    // Wire segments: contiguous, MSS-sized, PSH only on an skb's last segment.
    let mut next_seq = None;
    for e in &step.events {
        match e {
            Event::Xmit { seq, .. } => next_seq = Some(*seq),
            Event::Segment { seq, len, .. } => {
                assert_eq!(Some(*seq), next_seq, "segments contiguous");
                next_seq = Some(seq.wrapping_add(*len));
            }
            _ => {}
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn send_invariants((mut s, v) in scenario()) {
        // Finish every scenario: transmit, ack everything, close.
        s.ops.extend([SendOp::Transmit, SendOp::Ack { bytes: None }, SendOp::Close]);
        let cfg = s.config(v).expect("generated scenarios are valid");
        let sc = Scenario::Sendmsg(s.clone());
        let t = sc.run(&RunOptions::default()).expect("runs");
        let sg = s.device.sg;
        // The events are a complete log: replaying them rebuilds every step's state.
        if let Err(e) = t.check_replay() {
            prop_assert!(false, "{}", e);
        }
        for e in t.steps.iter().flat_map(|s| &s.events) {
            prop_assert!(t.kernel_fn(e).is_some(), "no kernel function for {:?}", e);
        }
        for step in &t.steps {
            check_step(step, cfg.k.max_skb_frags, cfg.size_goal(), v, sg);
        }
        let c = |n: &str| t.counters.get(n).expect("counter");
        prop_assert_eq!(c("bytes_written"), c("wire_bytes"));
        prop_assert_eq!(c("bytes_written"), c("bytes_acked"));
        prop_assert_eq!(c("sendmsg_copy_bytes"), c("bytes_written"));
        prop_assert_eq!(c("skbs_allocated"), c("skbs_freed"));
        let left = common::only_task_frag_left(&t.steps.last().expect("steps").state);
        prop_assert_eq!(c("pages_allocated"), c("pages_freed") + left);
        // Deterministic: the same scenario gives the same trace.
        let again = sc.run(&RunOptions::default()).expect("runs");
        prop_assert!(again == t, "two runs of one scenario differ");
        // Counters-only runs agree with traced runs.
        let quiet = sc.run(&RunOptions::counters(None)).expect("runs");
        prop_assert_eq!(quiet.counters, t.counters);
    }
}

/// Driven through the incremental API, with partial acknowledgements (a fraction of the
/// bytes in flight) that scenarios cannot express without knowing the state.
#[derive(Clone, Debug)]
enum Act {
    Write(Vec<u32>),
    Transmit,
    /// Acknowledge this many 256ths of the bytes in flight.
    AckPart(u8),
}

fn act() -> impl Strategy<Value = Act> {
    prop_oneof![
        3 => prop::collection::vec(1u32..30_000, 1..4).prop_map(Act::Write),
        1 => Just(Act::Transmit),
        2 => any::<u8>().prop_map(Act::AckPart),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(150))]

    #[test]
    fn partial_acks_keep_every_reference((s, v) in scenario(), acts in prop::collection::vec(act(), 1..40)) {
        let cfg = s.config(v).expect("valid");
        let mut sock = SendSock::new(cfg);
        let mut ev = Events::on();
        let mut replay = sock.state();
        for a in &acts {
            match a {
                Act::Write(iov) => {
                    sock.sendmsg(iov, false, &mut ev).expect("below sndbuf");
                }
                Act::Transmit => sock.transmit(&mut ev),
                Act::AckPart(f) => {
                    let una = sock.snd_una() + sock.in_flight() * *f as u64 / 256;
                    sock.ack_to(una, &mut ev);
                }
            }
            let step = Step {
                op: format!("{a:?}"),
                name: String::new(),
                events: ev.take(),
                state: sock.state(),
                counters: sock.send_counters().to_counters(),
            };
            check_step(&step, cfg.k.max_skb_frags, cfg.size_goal(), v, s.device.sg);
            for e in &step.events {
                prop_assert_eq!(replay.apply(e), Ok(()), "{:?}", e);
            }
            prop_assert_eq!(&replay, &step.state);
        }
        sock.transmit(&mut ev);
        sock.ack_all(&mut ev);
        sock.close(&mut ev);
        let c = sock.send_counters();
        let left = common::only_task_frag_left(&sock.state());
        prop_assert_eq!(c.pages_allocated, c.pages_freed + left);
        prop_assert_eq!(c.page_refs, left);
        prop_assert_eq!(c.bytes_acked, c.bytes_written);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(100))]

    /// The seed's teaching point: with GSO, select_size() already returned 0, so before and
    /// after the patch build exactly the same skbs, pages and segments.
    #[test]
    fn sg_gso_layout_is_unchanged_by_the_patch((mut s, _) in scenario()) {
        s.device.sg = true;
        s.device.gso = true;
        s.device.csum = true;
        let sc = Scenario::Sendmsg(s);
        let run = |v: &str| {
            let opts = RunOptions::traced(Some(v));
            sc.run(&opts).expect("runs")
        };
        let (before, after) = (run("pre-2010"), run("kumar-2010"));
        prop_assert!(before.steps == after.steps, "pre-2010 and kumar-2010 differ with GSO");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(100))]

    /// `count = n` is n calls in one step: the same final state and counters as n ops.
    #[test]
    fn count_is_that_many_calls_in_one_step((s, v) in scenario()) {
        let mut unrolled = s.clone();
        unrolled.ops = s.ops.iter().flat_map(|op| match op {
            SendOp::Sendmsg { bytes, iov, eor, count } => {
                let one = SendOp::Sendmsg { bytes: *bytes, iov: iov.clone(), eor: *eor, count: 1 };
                vec![one; *count as usize]
            }
            other => vec![other.clone()],
        }).collect();
        let opts = RunOptions::traced(Some(v.name()));
        let (t, u) = (Scenario::Sendmsg(s.clone()).run(&opts), Scenario::Sendmsg(unrolled).run(&opts));
        prop_assert_eq!(t.is_ok(), u.is_ok(), "one runs, the other fails: {:?} {:?}", t.as_ref().err(), u.as_ref().err());
        if let (Ok(t), Ok(u)) = (t, u) {
            prop_assert_eq!(t.steps.len(), s.ops.len());
            prop_assert_eq!(&t.counters, &u.counters);
            prop_assert_eq!(t.steps.last().map(|s| &s.state), u.steps.last().map(|s| &s.state));
        }
    }
}

//! Exact skb layouts derived by hand, one row per case. A new case is one row.
//!
//! Shared facts: a dfrag header (sizeof(struct mptcp_data_frag) = 40 in the seed's tree,
//! aligned to 8) sits in front of its data on a 32 KiB page; a 16 KiB write starting at page
//! offset o lands in one dfrag when o + 40 + 16384 <= 32768, else it is split at the page
//! end. 8 writes of 16 KiB carve 12 dfrags on 5 pages: the page ends split writes 2, 4, 6 and
//! 8 into 16304 + 80, 16184 + 200, 16064 + 320, 15944 + 440. Loopback with timestamps: MSS
//! 65495 - 12 - 24 (the DSS option's room) = 65459 = size goal (the 65215-byte GSO goal is
//! below one MSS). MTU 1500: MSS 1424, size goal 45 x 1424 = 64080, with or without GSO on
//! the device (TCP has done GSO itself since v4.17). "pre" passes `goal - len` to tcp_build_frag, which allows `goal - 2 len` more;
//! "after" passes `goal` and allows `goal - len`.

use skblab_core::scenario::{RunOptions, Scenario};

struct Case {
    name: &'static str,
    variant: &'static str,
    /// The scenario's fields after `mechanism = "mptcp"`.
    scenario: &'static str,
    /// Final skb lengths, per subflow.
    skbs: &'static [&'static [u32]],
}

const LOOPBACK_16K_X8: &str = "[[ops]]\nop = \"sendmsg\"\nbytes = 16384\ncount = 8\n";
const ETH_16K_X4: &str =
    "[[subflows]]\nmtu = 1500\n[[ops]]\nop = \"sendmsg\"\nbytes = 16384\ncount = 4\n";
const ETH_NO_GSO: &str =
    "[[subflows]]\nmtu = 1500\ngso = false\n[[ops]]\nop = \"sendmsg\"\nbytes = 16384\n";
const DRAIN: &str = "drain = true\n[[ops]]\nop = \"sendmsg\"\nbytes = 16384\ncount = 3\n";
const RR: &str = "scheduler = \"round-robin\"\nburst = 16384\n[[subflows]]\n[[subflows]]\n\
                  [[ops]]\nop = \"sendmsg\"\nbytes = 16384\ncount = 4\n";

const CASES: &[Case] = &[
    // Writes 1+2 fill skb 0 to 32768 (write 2 in two dfrags, 16304 + 80: room 32691, then
    // 32771 - 32688 = 83). Write 3: room 32691 - 32768 < 0, new skb. Same for each pair
    // (the second piece t leaves room 2t - 77 >= t, as t >= 80).
    Case {
        name: "loopback 16K x8",
        variant: "pre-2020",
        scenario: LOOPBACK_16K_X8,
        skbs: &[&[32768, 32768, 32768, 32768]],
    },
    // 16384, 32768, 49152, then 16307 more reach 65459; EOR; 77 + 3 x 16384 = 49229, then
    // 16230 reach 65459; EOR; the last 154 bytes.
    Case {
        name: "loopback 16K x8",
        variant: "abeni-2020",
        scenario: LOOPBACK_16K_X8,
        skbs: &[&[65459, 65459, 154]],
    },
    // Size goal 64080. Write 2's 80-byte dfrag finds skb 0 at 32688: room 31392 - 32688 < 0,
    // so skb 1 starts with 80; write 3 (one dfrag) makes 16464; write 4's 16184 fit
    // (47616 - 16464 = 31152), its 200-byte dfrag does not (31432 - 32648 < 0): skb 2.
    Case {
        name: "ethernet 16K x4",
        variant: "pre-2020",
        scenario: ETH_16K_X4,
        skbs: &[&[32688, 32648, 200]],
    },
    // 16384, 32768, 49152; write 4's first dfrag (16184) gives 14928 to reach 64080, the
    // other 1256 start skb 1 after EOR, which takes the 200-byte dfrag too: 1456.
    Case {
        name: "ethernet 16K x4",
        variant: "abeni-2020",
        scenario: ETH_16K_X4,
        skbs: &[&[64080, 1456]],
    },
    // A device without GSO changes nothing in 5.10/5.11: tcp_xmit_size_goal no longer asks
    // it, so the goal stays 64080 and one 16 KiB write is one skb, in both variants.
    Case {
        name: "ethernet no GSO",
        variant: "pre-2020",
        scenario: ETH_NO_GSO,
        skbs: &[&[16384]],
    },
    Case {
        name: "ethernet no GSO",
        variant: "abeni-2020",
        scenario: ETH_NO_GSO,
        skbs: &[&[16384]],
    },
    // A draining subflow sends each write's skb before the next write: nothing to collapse
    // onto, one skb per write, in both variants.
    Case {
        name: "draining",
        variant: "pre-2020",
        scenario: DRAIN,
        skbs: &[&[16384, 16384, 16384]],
    },
    Case {
        name: "draining",
        variant: "abeni-2020",
        scenario: DRAIN,
        skbs: &[&[16384, 16384, 16384]],
    },
    // Burst 16384: write 1 on subflow 0; write 2 (16304 + 80) on subflow 1; write 3 back on
    // subflow 0, whose tail maps data 0..16384, not contiguous with 32768: EOR, new skb;
    // write 4 likewise on subflow 1. Both variants alike: nothing collapses across writes.
    Case {
        name: "round-robin burst 16K",
        variant: "pre-2020",
        scenario: RR,
        skbs: &[&[16384, 16384], &[16384, 16384]],
    },
    Case {
        name: "round-robin burst 16K",
        variant: "abeni-2020",
        scenario: RR,
        skbs: &[&[16384, 16384], &[16384, 16384]],
    },
];

#[test]
fn hand_derived_layouts() {
    for c in CASES {
        let text = format!("mechanism = \"mptcp\"\n{}", c.scenario);
        let t = Scenario::parse(&text)
            .and_then(|s| s.run(&RunOptions::traced(Some(c.variant))))
            .unwrap_or_else(|e| panic!("{} ({}): {e}", c.name, c.variant));
        let state = &t.steps.last().expect("one step at least").state;
        let got: Vec<Vec<u32>> = state
            .queues
            .iter()
            .map(|q| q.skbs.iter().map(|s| s.len).collect())
            .collect();
        assert_eq!(got, c.skbs, "{} ({})", c.name, c.variant);
    }
}

fn run(scenario: &str, variant: &str) -> skblab_core::trace::Trace {
    Scenario::parse(&format!("mechanism = \"mptcp\"\n{scenario}"))
        .and_then(|s| s.run(&RunOptions::traced(Some(variant))))
        .expect("runs")
}

#[test]
fn size_goal_per_path() {
    for (scenario, goal) in [
        (LOOPBACK_16K_X8, 65459),
        (ETH_16K_X4, 64080),
        (ETH_NO_GSO, 64080),
    ] {
        let t = run(scenario, "abeni-2020");
        assert_eq!(t.counters.get("size_goal"), Some(goal), "{scenario}");
    }
}

/// Where 8 writes of 16 KiB land: (page, data offset, data_len) per dfrag. Each header takes
/// 40 bytes at an 8-aligned offset; a write that does not fit splits at the page end, and
/// the rest gets a new header on a new page (skb_page_frag_refill wants 32 + 40 = 72 bytes).
#[test]
fn dfrag_layout_16k_x8() {
    let t = run(LOOPBACK_16K_X8, "abeni-2020");
    let got: Vec<_> = t.steps[0]
        .state
        .dfrags
        .iter()
        .map(|d| (d.page, d.offset, d.data_len))
        .collect();
    #[rustfmt::skip]
    let want = [
        (0, 40, 16384), (0, 16464, 16304),
        (1, 40, 80), (1, 160, 16384), (1, 16584, 16184),
        (2, 40, 200), (2, 280, 16384), (2, 16704, 16064),
        (3, 40, 320), (3, 400, 16384), (3, 16824, 15944),
        (4, 40, 440),
    ];
    assert_eq!(got, want);
    assert_eq!(skblab_core::mptcp::MPTCP_FRAG_REFILL, 72);
    assert_eq!(t.counters.get("pages_allocated"), Some(5));
}

/// The first DSS mapping on a subflow carries subflow_seq 1, the first byte after the SYN
/// (rel_write_seq starts at 1); the next mapping starts where the first one ends.
#[test]
fn first_mapping_subflow_seq_is_1() {
    let t = run(LOOPBACK_16K_X8, "abeni-2020");
    let maps: Vec<_> = t.steps[0].state.queues[0]
        .skbs
        .iter()
        .map(|s| s.mapping.map(|m| (m.data_seq, m.subflow_seq, m.data_len)))
        .collect();
    assert_eq!(
        maps,
        [
            Some((0, 1, 65459)),
            Some((65459, 65460, 65459)),
            Some((130918, 130919, 154))
        ]
    );
}

/// close leaves the task frag's page (page 4, 480 bytes in) alive with one reference: the
/// task's; every other page is freed.
#[test]
fn close_leaves_the_task_frag() {
    let t = run(
        &format!("{LOOPBACK_16K_X8}[[ops]]\nop = \"close\"\n"),
        "abeni-2020",
    );
    let st = &t.steps[1].state;
    let pages: Vec<_> = st.pages.iter().map(|p| (p.id, p.count)).collect();
    assert_eq!(pages, [(4, 1)]);
    assert_eq!((st.cursors[0].page, st.cursors[0].offset), (Some(4), 480));
    assert_eq!(t.counters.get("pages_freed"), Some(4));
}

#[test]
fn errors_name_the_field() {
    for (text, field) in [
        (
            "[[ops]]\nop = \"sendmsg\"\nbytes = 99999999999\n",
            "ops[0].bytes",
        ),
        (
            "[[ops]]\nop = \"sendmsg\"\nbytes = 1\ncount = 0\n",
            "ops[0].count",
        ),
        (
            "[[subflows]]\n[[subflows]]\nmss = 3\n[[ops]]\nop = \"ack\"\n",
            "subflows[1].mss",
        ),
        (
            "[[subflows]]\nmtu = 10\n[[ops]]\nop = \"ack\"\n",
            "subflows[0].mtu",
        ),
        ("subflows = []\n[[ops]]\nop = \"ack\"\n", "subflows"),
        (
            "[[ops]]\nop = \"transmit\"\nsubflow = 1\n",
            "ops[0].subflow",
        ),
        ("[[ops]]\nop = \"close\"\n[[ops]]\nop = \"ack\"\n", "ops[1]"),
        ("[[ops]]\nop = \"sendmsg\"\nbyte = 1\n", "ops[0].byte"),
        ("[[ops]]\nop = \"sendmsg\"\nbytes = -3\n", "ops[0].bytes"),
        ("[[ops]]\nop = \"ack\"\nbytes = 5\n", "ops[0].bytes"),
    ] {
        let err = Scenario::parse(&format!("mechanism = \"mptcp\"\n{text}"))
            .and_then(|s| s.run(&RunOptions::default()))
            .expect_err(text);
        let msg = err.to_string();
        assert!(msg.contains(&format!("`{field}")), "{text}: {msg}");
    }
}

#[test]
fn many_writes_within_the_total_run() {
    // 2000 x 16 KiB = 32 MiB: above one op's 16 MiB cap, within the scenario total.
    let text = "mechanism = \"mptcp\"\n[[ops]]\nop = \"sendmsg\"\nbytes = 16384\ncount = 2000\n";
    let t = Scenario::parse(text)
        .and_then(|s| s.run(&RunOptions::counters(Some("abeni-2020"))))
        .expect("runs");
    assert_eq!(t.counters.get("bytes_mapped"), Some(2000 * 16384));
    assert_eq!(t.counters.get("max_skb_bytes"), Some(65459));
}

/// Sent skbs wait on the subflow until an ack: each push must cost the skbs it adds, not the
/// skbs in flight (100,000 of them here; scanning them on every push took minutes), and the
/// queue stops at MAX_LIVE_SKBS with an error naming the op. A 64-byte window bounds the size
/// goal to one 64-byte MSS (5.10 has GSO on every device), so a 268-byte write takes 5 skbs:
/// 4 x 64 and 12 bytes, and the next write's dfrag (its own page offset) starts a new one.
#[test]
fn unacknowledged_skbs_cost_each_push_nothing_and_stop_at_the_cap() {
    let head = "mechanism = \"mptcp\"\ndrain = true\n[[subflows]]\nmtu = 576\nmss = 64\n\
                max_window = 64\n[[ops]]\nop = \"sendmsg\"\nbytes = 268\n";
    let run = |count: u64| {
        Scenario::parse(&format!("{head}count = {count}\n"))
            .and_then(|s| s.run(&RunOptions::counters(None)))
    };
    let t = run(20_000).expect("runs");
    assert_eq!(t.counters.get("size_goal"), Some(64));
    assert_eq!(t.counters.get("skbs_allocated"), Some(100_000));
    let err = run(200_001).expect_err("past the cap").to_string();
    assert!(
        err.contains("`ops[0]` = 1000005 skbs queued on the subflows after call 200001")
            && err.contains("at most 1000000 at once"),
        "{err}"
    );
}

/// The head of a subflow skb in 5.10 (sk_stream_alloc_skb(sk, 0, ...)): alloc_skb_fclone(320)
/// kmallocs SKB_DATA_ALIGN(320) + SKB_DATA_ALIGN(320 shinfo) = 640, rounded by kmalloc-1k to
/// 1024; __alloc_skb keeps SKB_WITH_OVERHEAD(ksize) = 704 bytes of buffer and charges
/// truesize SKB_TRUESIZE(704) = 704 + 256 + 320 = 1280. skb_reserve(MAX_TCP_HEADER 320), then
/// reserved_tailroom = 704 - 320 - 0 = 384. So headroom 320, tailroom 384, and one 16 KiB
/// frag makes truesize 1280 + 16384.
#[test]
fn subflow_skb_head_5_10() {
    let t = Scenario::parse("mechanism = \"mptcp\"\n[[ops]]\nop = \"sendmsg\"\nbytes = 16384\n")
        .and_then(|s| s.run(&RunOptions::default()))
        .expect("runs");
    let skb = &t.steps[0].state.queues[0].skbs[0];
    assert_eq!(
        (
            skb.head.headroom,
            skb.head.tailroom,
            skb.head.head_bytes,
            skb.head.truesize
        ),
        (320, 384, 1024, 1280 + 16384)
    );
}

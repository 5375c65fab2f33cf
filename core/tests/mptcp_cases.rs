//! Exact skb layouts derived by hand, one row per case. A new case is one row.
//!
//! Shared facts: a dfrag header takes 48 bytes (aligned to 8) in front of its data on a
//! 32 KiB page; a 16 KiB write starting at page offset o lands in one dfrag when
//! o + 48 + 16384 <= 32768, else it is split at the page end. Loopback with timestamps: MSS
//! 65483 = size goal (the 65215-byte GSO goal is below one MSS). MTU 1500: MSS 1448, size
//! goal 45 x 1448 = 65160 with GSO. "pre" passes `goal - len` to tcp_build_frag, which allows
//! `goal - 2 len` more; "after" passes `goal` and allows `goal - len`.

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
    // Writes 1+2 fill skb 0 to 32768 (write 2 in two dfrags, 16288 + 96: room 32715, then
    // 32811 - 32672 = 139). Write 3: room 32715 - 32768 < 0, new skb. Same for each pair.
    Case {
        name: "loopback 16K x8",
        variant: "pre-2020",
        scenario: LOOPBACK_16K_X8,
        skbs: &[&[32768, 32768, 32768, 32768]],
    },
    // 16384, 32768, 49152, then 16331 more reach 65483; EOR; 53 + 3 x 16384 = 49205, then
    // 16278 reach 65483; EOR; the last 106 bytes.
    Case {
        name: "loopback 16K x8",
        variant: "abeni-2020",
        scenario: LOOPBACK_16K_X8,
        skbs: &[&[65483, 65483, 106]],
    },
    // Size goal 65160. Write 2's 96-byte dfrag finds skb 0 at 32672: room 32488 - 32672 < 0,
    // so skb 1 starts with 96; write 3 (one dfrag) makes 16480; write 4's 16144 fit
    // (48680 - 16480 = 32200), its 240-byte dfrag does not (32536 - 32624 < 0): skb 2.
    Case {
        name: "ethernet 16K x4",
        variant: "pre-2020",
        scenario: ETH_16K_X4,
        skbs: &[&[32672, 32624, 240]],
    },
    // 16384, 32768, 49152; write 4's first dfrag (16144) gives 16008 to reach 65160, the
    // other 136 start skb 1 after EOR, which takes the 240-byte dfrag too: 376.
    Case {
        name: "ethernet 16K x4",
        variant: "abeni-2020",
        scenario: ETH_16K_X4,
        skbs: &[&[65160, 376]],
    },
    // Without GSO the size goal is one MSS: a full skb cannot collapse, is marked EOR, and
    // a new one starts: 11 x 1448 + 456, the same in both variants.
    Case {
        name: "ethernet no GSO",
        variant: "pre-2020",
        scenario: ETH_NO_GSO,
        skbs: &[&[
            1448, 1448, 1448, 1448, 1448, 1448, 1448, 1448, 1448, 1448, 1448, 456,
        ]],
    },
    Case {
        name: "ethernet no GSO",
        variant: "abeni-2020",
        scenario: ETH_NO_GSO,
        skbs: &[&[
            1448, 1448, 1448, 1448, 1448, 1448, 1448, 1448, 1448, 1448, 1448, 456,
        ]],
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
    // Burst 16384: write 1 on subflow 0; write 2 (16288 + 96) on subflow 1; write 3 back on
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
            .and_then(|s| {
                s.run(&RunOptions {
                    variant: Some(c.variant.into()),
                    counters_only: false,
                })
            })
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

#[test]
fn loopback_mss_and_size_goal() {
    let t = Scenario::parse(&format!("mechanism = \"mptcp\"\n{LOOPBACK_16K_X8}"))
        .and_then(|s| s.run(&RunOptions::default()))
        .expect("runs");
    assert_eq!(t.counters.get("size_goal"), Some(65483));
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
        .and_then(|s| {
            s.run(&RunOptions {
                variant: Some("abeni-2020".into()),
                counters_only: true,
            })
        })
        .expect("runs");
    assert_eq!(t.counters.get("bytes_mapped"), Some(2000 * 16384));
    assert_eq!(t.counters.get("max_skb_bytes"), Some(65483));
}

/// Sent skbs wait on the subflow until an ack: each push must cost the skbs it adds, not the
/// skbs in flight (100,000 of them here; scanning them on every push took minutes), and the
/// queue stops at MAX_LIVE_SKBS with an error naming the op.
#[test]
fn unacknowledged_skbs_cost_each_push_nothing_and_stop_at_the_cap() {
    let head = "mechanism = \"mptcp\"\ndrain = true\n[[subflows]]\nmtu = 576\nmss = 64\n\
                gso = false\n[[ops]]\nop = \"sendmsg\"\nbytes = 268\n";
    let run = |count: u64| {
        Scenario::parse(&format!("{head}count = {count}\n")).and_then(|s| {
            s.run(&RunOptions {
                variant: None,
                counters_only: true,
            })
        })
    };
    let t = run(20_000).expect("runs");
    // 268 = 64 + 64 + 64 + 64 + 12 on a fresh skb; the next write collapses onto the tail.
    assert!(t.counters.get("skbs_allocated").unwrap() >= 20_000 * 4);
    let err = run(199_708).expect_err("past the cap").to_string();
    assert!(
        err.contains("`ops[0]` = 1000005 skbs queued on the subflows after call 199708")
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

//! The example rx scenarios in `scenarios/` run for every variant, and the numbers the
//! walkthroughs quote from them hold.

use skblab_core::{RunOptions, Scenario, Trace};

const FILES: &[(&str, &str)] = &[
    (
        "rx-page-reuse",
        include_str!("../../scenarios/rx-page-reuse.toml"),
    ),
    (
        "rx-page-reuse-no-gro",
        include_str!("../../scenarios/rx-page-reuse-no-gro.toml"),
    ),
    (
        "rx-lagging-udp",
        include_str!("../../scenarios/rx-lagging-udp.toml"),
    ),
    (
        "rx-skb-cache",
        include_str!("../../scenarios/rx-skb-cache.toml"),
    ),
    (
        "rx-backlog",
        include_str!("../../scenarios/rx-backlog.toml"),
    ),
    (
        "rx-page-frag-cache",
        include_str!("../../scenarios/rx-page-frag-cache.toml"),
    ),
];

fn run(text: &str, variant: &str) -> Trace {
    Scenario::parse(text)
        .unwrap()
        .run(&RunOptions {
            variant: Some(variant.to_string()),
            counters_only: false,
        })
        .unwrap_or_else(|e| panic!("{variant}: {e}"))
}

#[test]
fn every_rx_example_runs_for_every_variant() {
    for (name, text) in FILES {
        let s = Scenario::parse(text).unwrap_or_else(|e| panic!("{name}: {e}"));
        for v in s.variants() {
            let t = run(text, v);
            assert_eq!(t.mechanism, "rx", "{name}");
            assert_eq!(t.steps.len(), s.op_count(), "{name}");
        }
    }
}

/// (file, variant, counter, value): facts the walkthroughs and docs quote.
#[test]
fn quoted_numbers_hold() {
    let table = [
        // rx-page-reuse's outro: without GRO, 21 pages before and 19 after.
        ("rx-page-reuse-no-gro", "pre-2012", "frag_cache_pages", 21),
        ("rx-page-reuse-no-gro", "duyck-2012", "frag_cache_pages", 19),
        // The backlog: 18 frames while locked make one GRO skb, queued on the backlog, and
        // tcp_v4_rcv leaves the parked skb alone (it is taken by the frames after release).
        ("rx-backlog", "dumazet-2019", "backlog_deliveries", 1),
        ("rx-backlog", "dumazet-2019", "rx_cache_freed", 1),
        // page_frag_cache, 40 frames read promptly: one 32 KiB page, reused twice.
        ("rx-page-frag-cache", "modern", "frag_cache_pages", 1),
        ("rx-page-frag-cache", "modern", "page_reuses", 2),
    ];
    for (name, variant, counter, want) in table {
        let text = FILES.iter().find(|(n, _)| *n == name).unwrap().1;
        let got = run(text, variant).counters.get(counter).unwrap();
        assert_eq!(got, want, "{name} {variant} {counter}");
    }
}

#[test]
fn traces_are_deterministic_json() {
    for (name, text) in FILES {
        let a = serde_json::to_string(&run(text, "modern")).unwrap();
        let b = serde_json::to_string(&run(text, "modern")).unwrap();
        assert_eq!(a, b, "{name}");
    }
}

/// A scenario survives JSON and back (permalinks carry scenarios as JSON).
#[test]
fn scenarios_round_trip_through_json() {
    for (name, text) in FILES {
        let s = Scenario::parse(text).unwrap();
        let again = Scenario::parse(&s.to_json()).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(s, again, "{name}");
    }
}

//! The events are a complete log: replaying each step's events from the state before it gives
//! exactly the step's state, for every walkthrough and every scenario in `scenarios/`, under
//! every variant. (The property tests of each mechanism check the same on random scenarios.)

use skblab_core::kernel_fn::{row_of, Row, TABLE};
use skblab_core::replay::empty_like;
use skblab_core::rx::{ALLOCATORS, CACHES};
use skblab_core::{walkthrough, RunOptions, Scenario, Trace};
use std::collections::BTreeSet;

/// Every variant of the scenario's mechanism; for rx, every point on both axes.
fn variants(s: &Scenario) -> Vec<String> {
    match s {
        Scenario::Rx(_) => ALLOCATORS
            .iter()
            .flat_map(|a| CACHES.iter().map(move |c| format!("{a}+{c}")))
            .collect(),
        _ => s.variants().iter().map(|v| v.to_string()).collect(),
    }
}

/// Runs every variant and checks its trace; returns the kernel-function rows its events used
/// (by index in `TABLE`).
fn check_every_variant(name: &str, s: &Scenario) -> BTreeSet<usize> {
    let mut used = BTreeSet::new();
    for v in variants(s) {
        let opts = RunOptions::traced(Some(&v));
        let t = s.run(&opts).unwrap_or_else(|e| panic!("{name} {v}: {e}"));
        assert!(!t.steps.is_empty(), "{name} {v}: no steps");
        t.check_replay()
            .unwrap_or_else(|e| panic!("{name} {v}: {e}"));
        check_state_at(&t);
        check_names(&t, &format!("{name} {v}"));
        used.extend(rows_used(&t));
    }
    used
}

fn rows_used(t: &Trace) -> impl Iterator<Item = usize> + '_ {
    let events = t.steps.iter().flat_map(|s| &s.events);
    events
        .filter_map(|e| row_of(&t.mechanism, t.era, t.flow(), e))
        .map(|r| {
            TABLE
                .iter()
                .position(|x| std::ptr::eq(x, r))
                .expect("a row of TABLE")
        })
}

fn walkthrough_rows() -> BTreeSet<usize> {
    let mut used = BTreeSet::new();
    for w in walkthrough::all().expect("walkthroughs parse") {
        used.extend(check_every_variant(&w.name, &w.scenario));
    }
    used
}

fn scenario_rows() -> BTreeSet<usize> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenarios");
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .expect("scenarios/ is readable")
        .map(|e| e.expect("a directory entry").path())
        .collect();
    files.sort();
    assert!(files.len() >= 10, "scenarios/ holds {} files", files.len());
    let mut used = BTreeSet::new();
    for path in files {
        let text = std::fs::read_to_string(&path).expect("a scenario file");
        let s = Scenario::parse(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        used.extend(check_every_variant(&path.display().to_string(), &s));
    }
    used
}

/// `Trace::state_at` agrees with the steps at both ends of every step.
fn check_state_at(t: &Trace) {
    assert_eq!(t.state_at(0, 0).unwrap(), empty_like(&t.steps[0].state));
    for (n, step) in t.steps.iter().enumerate() {
        assert_eq!(t.state_at(n, step.events.len()).unwrap(), step.state);
    }
    assert!(t.state_at(t.steps.len(), 0).is_err());
    assert!(t.state_at(0, t.steps[0].events.len() + 1).is_err());
}

/// Every event names its kind as the trace tags it, and its kernel function in this era.
fn check_names(t: &Trace, what: &str) {
    for e in t.steps.iter().flat_map(|s| &s.events) {
        let tag = serde_json::to_value(e).expect("events serialize")["ev"].clone();
        assert_eq!(tag, e.kind().name(), "{what}");
        assert!(
            t.kernel_fn(e).is_some(),
            "{what}: no kernel function for {} in {}",
            e.kind(),
            t.era.name()
        );
    }
}

#[test]
fn every_walkthrough_replays() {
    walkthrough_rows();
}

#[test]
fn every_example_scenario_replays() {
    scenario_rows();
}

/// Events no walkthrough or example file happens to emit: a packet after close (TCP and UDP),
/// a write that reuses a page frag once every reference came back, an MPTCP write that grows
/// the subflow's last frag (a device without GSO: MSS-sized skbs take a dfrag in pieces), the
/// defer list's IPI (40 skbs read at once whose kmalloc'ed jumbo heads the receive queue
/// cannot merge).
const EDGES: &[&str] = &[
    r#"mechanism = "rx"
ops = [{ op = "arrive", frames = 2 }, { op = "close" }, { op = "arrive", frames = 1 }]"#,
    r#"mechanism = "rx"
ops = [{ op = "arrive", frames = 2 }, { op = "close" }, { op = "arrive", frames = 1 }]
[socket]
proto = "udp""#,
    r#"mechanism = "mptcp"
ops = [{ op = "sendmsg", bytes = 100 }, { op = "sendmsg", bytes = 100 }, { op = "transmit" },
       { op = "ack" }, { op = "sendmsg", bytes = 100 }]"#,
    r#"mechanism = "mptcp"
subflows = [{ mtu = 1500, gso = false }]
ops = [{ op = "sendmsg", bytes = 64621 }]"#,
    r#"mechanism = "rx"
variant = "modern+defer-free"
ops = [{ op = "arrive", frames = 40 }, { op = "recvmsg" }]
nic = { gro = false }
socket = { mss = 9000 }"#,
];

/// No dead row: each row of the kernel-function table stands for an event some walkthrough
/// or scenario emits, in an era it covers (every event having a row is `check_names`).
#[test]
fn every_kernel_function_row_is_used() {
    let mut used = walkthrough_rows();
    used.extend(scenario_rows());
    for (i, text) in EDGES.iter().enumerate() {
        let s = Scenario::parse(text).unwrap_or_else(|e| panic!("edge {i}: {e}"));
        used.extend(check_every_variant(&format!("edge {i}"), &s));
    }
    let dead: Vec<&Row> = (0..TABLE.len())
        .filter(|i| !used.contains(i))
        .map(|i| &TABLE[i])
        .collect();
    assert!(dead.is_empty(), "rows no event uses: {dead:#?}");
}

//! The events are a complete log: replaying each step's events from the state before it gives
//! exactly the step's state, for every walkthrough and every scenario in `scenarios/`, under
//! every variant. (The property tests of each mechanism check the same on random scenarios.)

use skblab_core::replay::empty_like;
use skblab_core::rx::{ALLOCATORS, CACHES};
use skblab_core::{walkthrough, RunOptions, Scenario, Trace};

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

fn check_every_variant(name: &str, s: &Scenario) {
    for v in variants(s) {
        let opts = RunOptions {
            variant: Some(v.clone()),
            counters_only: false,
        };
        let t = s.run(&opts).unwrap_or_else(|e| panic!("{name} {v}: {e}"));
        assert!(!t.steps.is_empty(), "{name} {v}: no steps");
        t.check_replay()
            .unwrap_or_else(|e| panic!("{name} {v}: {e}"));
        check_state_at(&t);
        check_names(&t, &format!("{name} {v}"));
    }
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
        assert_eq!(tag, e.kind(), "{what}");
        assert!(
            t.kernel_fn(e).is_some(),
            "{what}: no kernel function for {} in {}",
            e.kind(),
            t.era.tag()
        );
    }
}

#[test]
fn every_walkthrough_replays() {
    for w in walkthrough::all().expect("walkthroughs parse") {
        check_every_variant(&w.name, &w.scenario);
    }
}

#[test]
fn every_example_scenario_replays() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenarios");
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .expect("scenarios/ is readable")
        .map(|e| e.expect("a directory entry").path())
        .collect();
    files.sort();
    assert!(files.len() >= 10, "scenarios/ holds {} files", files.len());
    for path in files {
        let text = std::fs::read_to_string(&path).expect("a scenario file");
        let s = Scenario::parse(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        check_every_variant(&path.display().to_string(), &s);
    }
}

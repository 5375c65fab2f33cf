//! Every example scenario under `scenarios/` for `sendmsg` parses and runs under every
//! variant, and its bytes all reach the wire.

mod common;

use skblab_core::send::VARIANTS;
use skblab_core::{run_text, RunOptions};

/// `(name, text)` of a file under `scenarios/`.
macro_rules! scenario {
    ($name:literal) => {
        ($name, include_str!(concat!("../../scenarios/", $name)))
    };
}

const FILES: &[(&str, &str)] = &[
    scenario!("sendmsg-sg-gso.toml"),
    scenario!("sendmsg-sg-nogso.toml"),
    scenario!("sendmsg-nosg.toml"),
    scenario!("sendmsg-pgbreak.toml"),
    scenario!("sendmsg-modern-eor.json"),
];

#[test]
fn example_scenarios_run_under_every_variant() {
    for (name, text) in FILES {
        for v in VARIANTS {
            let opts = RunOptions {
                variant: Some(v.to_string()),
                counters_only: false,
            };
            let t = run_text(text, &opts).unwrap_or_else(|e| panic!("{name} {v}: {e}"));
            let c = &t.counters;
            assert_eq!(c.get("bytes_written"), c.get("wire_bytes"), "{name} {v}");
            let left = common::only_task_frag_left(&t.steps.last().expect("steps").state);
            let freed = c.get("pages_freed").map(|f| f + left);
            assert_eq!(c.get("pages_allocated"), freed, "{name} {v}");
        }
    }
}

#[test]
fn modern_eor_example_shows_eor_and_rewind() {
    let (_, text) = scenario!("sendmsg-modern-eor.json");
    let t = run_text(text, &RunOptions::default()).expect("runs");
    // MSG_EOR on the first write: the second write may not join its skb.
    assert_eq!(t.steps[1].counters.get("skbs_allocated"), Some(2));
    // After the ack the socket alone holds its 32 KiB page: the next write rewinds it.
    assert_eq!(t.counters.get("pages_reused"), Some(1));
    assert_eq!(t.counters.get("pages_allocated"), Some(1));
}

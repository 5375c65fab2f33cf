//! Every example scenario under `scenarios/` for `mptcp` runs under every variant, maps every
//! byte it writes, and gives back every page it closes on but the task frag's.

mod common;

use skblab_core::mptcp::VARIANTS;
use skblab_core::{run_text, RunOptions};

const FILES: &[(&str, &str)] = &[
    (
        "mptcp-max-size.toml",
        include_str!("../../scenarios/mptcp-max-size.toml"),
    ),
    (
        "mptcp-round-robin.toml",
        include_str!("../../scenarios/mptcp-round-robin.toml"),
    ),
    (
        "mptcp-ethernet-drain.toml",
        include_str!("../../scenarios/mptcp-ethernet-drain.toml"),
    ),
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
            let c = |n: &str| t.counters.get(n).unwrap();
            assert!(c("bytes_written") > 0, "{name} {v}");
            assert_eq!(c("bytes_mapped"), c("bytes_written"), "{name} {v}");
            let left = common::only_task_frag_left(&t.steps.last().unwrap().state);
            assert_eq!(c("pages_freed") + left, c("pages_allocated"), "{name} {v}");
        }
    }
}

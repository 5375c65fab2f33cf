//! Every example scenario under `scenarios/` for `sendmsg` parses and runs under every
//! variant, and its bytes all reach the wire.

use skblab_core::send::VARIANTS;
use skblab_core::{run_text, RunOptions};

const FILES: &[(&str, &str)] = &[
    (
        "sendmsg-sg-gso.toml",
        include_str!("../../scenarios/sendmsg-sg-gso.toml"),
    ),
    (
        "sendmsg-sg-nogso.toml",
        include_str!("../../scenarios/sendmsg-sg-nogso.toml"),
    ),
    (
        "sendmsg-nosg.json",
        include_str!("../../scenarios/sendmsg-nosg.json"),
    ),
    (
        "sendmsg-pgbreak.toml",
        include_str!("../../scenarios/sendmsg-pgbreak.toml"),
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
            let c = &t.counters;
            assert_eq!(c.get("bytes_written"), c.get("wire_bytes"), "{name} {v}");
            assert_eq!(c.get("pages_allocated"), c.get("pages_freed"), "{name} {v}");
        }
    }
}

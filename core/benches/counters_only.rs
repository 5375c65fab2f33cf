//! The counters-only rows of docs/scenario-format.md ("What one writer costs"): 1,000,000
//! writes of 256 B on one socket in 256 KiB windows, per sendmsg variant; the MPTCP scenarios
//! at the caps (a million writes acknowledged every 1,000; 200,000 writes never
//! acknowledged), per MPTCP variant. Prints each run's time; under
//! `valgrind --tool=callgrind` the instruction count of one row is repeatable.
//!
//! `cargo bench -p skblab-core --bench counters_only` (add a row's name, `sendmsg`,
//! `mptcp-writes` or `mptcp-live`, to run only that row).

use skblab_core::send::{matrix_config, run_cell, Variant};
use skblab_core::{mptcp, RunOptions, Scenario};
use std::time::Instant;

/// The smallest MPTCP skbs: a 64-byte MSS and a 64-byte window bound the size goal to 64.
const MPTCP: &str = "mechanism = \"mptcp\"\ndrain = true\n[[subflows]]\nmtu = 576\nmss = 64\n\
                     max_window = 64\n";

fn main() {
    let only: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let wanted = |row: &str| only.is_empty() || only.iter().any(|o| o == row);
    if wanted("sendmsg") {
        for &v in Variant::ALL {
            let t = Instant::now();
            let cell = run_cell(&matrix_config(v), 1, 256, 256 * 1_000_000);
            let ms = t.elapsed().as_secs_f64() * 1e3;
            assert_eq!(cell.counters.wire_bytes, cell.bytes);
            println!(
                "sendmsg, 1,000,000 writes of 256 B, {}: {ms:.1} ms",
                v.name()
            );
        }
    }
    // MAX_WRITES writes, acknowledged every 1,000.
    let writes = MPTCP.to_string()
        + &"[[ops]]\nop = \"sendmsg\"\nbytes = 268\ncount = 1000\n[[ops]]\nop = \"ack\"\n"
            .repeat(999)
        + "[[ops]]\nop = \"sendmsg\"\nbytes = 268\ncount = 1000\n";
    // 5 skbs per write, never acknowledged: MAX_LIVE_SKBS queued.
    let live = format!("{MPTCP}[[ops]]\nop = \"sendmsg\"\nbytes = 268\ncount = 200000\n");
    for (row, text) in [("mptcp-writes", writes), ("mptcp-live", live)] {
        if !wanted(row) {
            continue;
        }
        let s = Scenario::parse(&text).expect("a scenario at the caps parses");
        for v in mptcp::VARIANTS {
            let t = Instant::now();
            s.run(&RunOptions::counters(Some(v))).expect("runs");
            let ms = t.elapsed().as_secs_f64() * 1e3;
            println!("{row}, {v}: {ms:.1} ms");
        }
    }
}

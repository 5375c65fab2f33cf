//! What the JSON example scenario shows, step by step (every file under `scenarios/` is
//! run by `scenario_files.rs`).

use skblab_core::{run_text, RunOptions};

#[test]
fn modern_eor_example_shows_eor_and_rewind() {
    let text = include_str!("../../scenarios/sendmsg-modern-eor.json");
    let t = run_text(text, &RunOptions::default()).expect("runs");
    // MSG_EOR on the first write: the second write may not join its skb.
    assert_eq!(t.steps[1].counters.get("skbs_allocated"), Some(2));
    // After the ack the socket alone holds its 32 KiB page: the next write rewinds it.
    assert_eq!(t.counters.get("pages_reused"), Some(1));
    assert_eq!(t.counters.get("pages_allocated"), Some(1));
}

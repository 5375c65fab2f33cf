//! Every `[[check]]` of the MPTCP walkthroughs holds (the generic walkthrough test may cover
//! this too; this one keeps the MPTCP narration honest on its own).

use skblab_core::scenario::RunOptions;
use skblab_core::walkthrough;

#[test]
fn mptcp_walkthrough_checks_hold() {
    let all = walkthrough::all().expect("walkthroughs parse");
    let mine: Vec<_> = all
        .iter()
        .filter(|w| w.name.starts_with("mptcp-"))
        .collect();
    assert!(!mine.is_empty(), "no mptcp walkthrough registered");
    for w in mine {
        assert!(!w.checks.is_empty(), "{}: no checks", w.name);
        for c in &w.checks {
            let t = w
                .scenario
                .run(&RunOptions {
                    variant: Some(c.variant.clone()),
                    counters_only: false,
                })
                .unwrap_or_else(|e| panic!("{}: {e}", w.name));
            let counters = if c.step == 0 {
                &t.counters
            } else {
                &t.steps[c.step - 1].counters
            };
            assert_eq!(
                counters.get(&c.counter),
                Some(c.equals),
                "{}: {} step {} {}",
                w.name,
                c.variant,
                c.step,
                c.counter
            );
        }
    }
}

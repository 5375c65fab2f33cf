//! Every walkthrough parses, runs for each variant it shows, and every `[[check]]` holds.

use skblab_core::walkthrough;
use skblab_core::RunOptions;

#[test]
fn every_walkthrough_check_holds() {
    let all = walkthrough::all().expect("walkthrough files parse");
    for w in &all {
        for v in &w.variants {
            w.scenario
                .run(&RunOptions {
                    variant: Some(v.clone()),
                    counters_only: false,
                })
                .unwrap_or_else(|e| panic!("{} {v}: {e}", w.name));
        }
        for c in &w.checks {
            let t = w
                .scenario
                .run(&RunOptions {
                    variant: Some(c.variant.clone()),
                    counters_only: false,
                })
                .unwrap_or_else(|e| panic!("{} {}: {e}", w.name, c.variant));
            let counters = match c.step {
                0 => &t.counters,
                n => {
                    &t.steps
                        .get(n - 1)
                        .unwrap_or_else(|| panic!("{}: no step {n}", w.name))
                        .counters
                }
            };
            let got = counters
                .get(&c.counter)
                .unwrap_or_else(|| panic!("{}: no counter `{}`", w.name, c.counter));
            assert_eq!(
                got, c.equals,
                "{}: {} after step {} of {}",
                w.name, c.counter, c.step, c.variant
            );
        }
    }
}

#[test]
fn walkthrough_names_are_unique() {
    let all = walkthrough::all().expect("walkthrough files parse");
    let mut names: Vec<_> = all.iter().map(|w| w.name.as_str()).collect();
    names.sort_unstable();
    let n = names.len();
    names.dedup();
    assert_eq!(names.len(), n);
}

//! Every walkthrough in `walkthrough::all()`: each listed variant runs its scenario, and
//! every `[[check]]` (a number the narration states) holds.

use skblab_core::walkthrough;
use skblab_core::RunOptions;

#[test]
fn every_walkthrough_runs_and_its_checks_hold() {
    let all = walkthrough::all().expect("walkthroughs parse");
    for w in &all {
        assert!(!w.variants.is_empty(), "{}: no variants", w.name);
        let variants = w.scenario.variants();
        for c in &w.checks {
            assert!(
                w.variants.contains(&c.variant),
                "{}: check on unlisted variant {}",
                w.name,
                c.variant
            );
        }
        for v in &w.variants {
            assert!(
                variants.contains(&v.as_str()),
                "{}: unknown variant {v}",
                w.name
            );
            let opts = RunOptions {
                variant: Some(v.clone()),
                counters_only: false,
            };
            let t = w
                .scenario
                .run(&opts)
                .unwrap_or_else(|e| panic!("{} {v}: {e}", w.name));
            for c in w.checks.iter().filter(|c| &c.variant == v) {
                let what = c.counter.as_deref().or(c.path.as_deref()).unwrap_or("?");
                assert_eq!(
                    c.read(&t),
                    Ok(c.equals),
                    "{} ({v}) step {}: {what}",
                    w.name,
                    c.step
                );
            }
        }
    }
}

#[test]
fn walkthrough_names_are_unique_and_findable() {
    let all = walkthrough::all().expect("walkthroughs parse");
    for w in &all {
        assert_eq!(
            all.iter().filter(|o| o.name == w.name).count(),
            1,
            "{}",
            w.name
        );
        assert_eq!(walkthrough::find(&w.name).expect("found").name, w.name);
    }
}

/// The lane a walkthrough names as patched runs the later of its two variants: the kernel
/// after the patch, in the order the mechanism lists its variants (oldest first).
#[test]
fn the_patched_lane_is_the_variant_after_the_patch() {
    for w in walkthrough::all().expect("walkthroughs parse") {
        let order = w.scenario.variants();
        let at = |v: &String| order.iter().position(|o| o == v);
        let patched = &w.variants[w.patched()];
        for v in w.variants.iter().filter(|v| *v != patched) {
            assert!(
                at(v) < at(patched),
                "{}: {patched} is not after {v}",
                w.name
            );
        }
    }
    let anatomy = walkthrough::find("anatomy").expect("anatomy");
    assert_eq!(anatomy.patched(), 0, "one lane: it is the patched one");
    let reuse = walkthrough::find("rx-page-reuse").expect("rx-page-reuse");
    assert_eq!(reuse.variants[reuse.patched()], "duyck-2012");
}

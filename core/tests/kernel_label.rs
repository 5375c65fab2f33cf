//! One kernel per lane: a variant is labelled with one release, its era (the release its
//! behaviour is modelled on), and an event whose kernel function is linked at another
//! release says why, in the core's words, so a learner never reads a bare second version as
//! the kernel the lane models.

use skblab_core::kernel_fn::TABLE;
use skblab_core::{walkthrough, RunOptions};
use std::collections::BTreeMap;

/// Every row linked at another release than one of its eras' own gives a reason that names
/// that release; a row linked at its era's own gives none.
#[test]
fn a_row_linked_at_another_release_says_why() {
    for r in TABLE {
        for &era in r.eras {
            let (tag, why) = (r.tag(era), r.why(era));
            match why {
                None => assert_eq!(tag, era.name(), "{r:?} at {era}: no reason"),
                Some(why) => {
                    assert_ne!(
                        tag,
                        era.name(),
                        "{r:?} at {era}: a reason for its own release"
                    );
                    assert!(why.contains(tag), "{r:?} at {era}: {why:?} names not {tag}");
                }
            }
        }
    }
}

/// Every lane of every walkthrough shows one kernel: a variant has the same era in every
/// lesson, and each event's function is at that era or says why it is not.
#[test]
fn every_lane_names_one_kernel() {
    let mut eras = BTreeMap::new();
    for w in walkthrough::all().expect("walkthroughs parse") {
        for v in &w.variants {
            let t = (w.scenario.run(&RunOptions::traced(Some(v))))
                .unwrap_or_else(|e| panic!("{} {v}: {e}", w.name));
            let era = *eras
                .entry((t.mechanism.clone(), v.clone()))
                .or_insert(t.era);
            assert_eq!(t.era, era, "{} {v}: two eras", w.name);
            for e in t.steps.iter().flat_map(|s| &s.events) {
                let Some(f) = t.kernel_fn(e) else { continue };
                let why = f.why.is_some();
                assert!(
                    (f.tag == era.name()) != why,
                    "{} {v}: {e} links {} at {} ({:?}), the lane {era}",
                    w.name,
                    f.name,
                    f.tag,
                    f.why
                );
            }
        }
    }
}

/// rx-skb-cache's lanes model v6.12; its cache's park and take are linked at the releases
/// the cache lived in, each with its reason.
#[test]
fn rx_skb_cache_links_the_cache_elsewhere_with_a_reason() {
    let w = walkthrough::find("rx-skb-cache").expect("a walkthrough");
    let t = (w.scenario.run(&RunOptions::traced(Some("dumazet-2019")))).expect("it runs");
    assert_eq!(t.era.name(), "v6.12");
    let mut why = BTreeMap::new();
    for e in t.steps.iter().flat_map(|s| &s.events) {
        if let Some(f) = t.kernel_fn(e).filter(|f| f.tag != "v6.12") {
            why.insert(e.kind().name(), (f.tag, f.why.expect("a reason")));
        }
    }
    let tags: Vec<_> = why.iter().map(|(k, (tag, _))| (*k, *tag)).collect();
    assert_eq!(
        tags,
        [("rx_cache_park", "v5.2-rc1"), ("rx_cache_take", "v5.11")]
    );
    assert!(why["rx_cache_take"].1.contains("unchanged since 5.2-rc1"));
}

//! The questions of every walkthrough: enough of them, of every kind, judged as the learner
//! answers. That each resolves on its step and is hidden until asked is `skblab lint`'s
//! check, run on every walkthrough by `tests/walkthroughs.rs`.

use skblab_core::question::Kind;
use skblab_core::walkthrough::{self, Walkthrough};
use skblab_core::{RunOptions, Trace};

fn traces(w: &Walkthrough) -> Vec<Trace> {
    w.variants
        .iter()
        .map(|v| {
            let opts = RunOptions {
                variant: Some(v.clone()),
                counters_only: false,
            };
            w.scenario.run(&opts).expect("walkthrough runs")
        })
        .collect()
}

#[test]
fn every_walkthrough_asks_three_and_each_key_point_is_asked_twice() {
    let all = walkthrough::all().expect("walkthroughs parse");
    let asked: Vec<_> = all
        .iter()
        .map(|w| (w.seed(), w.questions().expect("questions parse")))
        .collect();
    for (w, (_, qs)) in all.iter().zip(&asked) {
        assert!(qs.len() >= 3, "{}: {} questions", w.name, qs.len());
    }
    let total: usize = asked.iter().map(|(_, qs)| qs.len()).sum();
    assert!(total >= 40, "{total} questions in all");
    for s in ["000", "001", "002", "003"] {
        let keys = asked
            .iter()
            .filter(|(seed, _)| seed == s)
            .flat_map(|(_, qs)| qs)
            .filter(|q| q.key)
            .count();
        assert!(keys >= 2, "seed {s}: {keys} key questions");
    }
    for kind in [Kind::Number, Kind::Choice, Kind::Pick] {
        let n = asked
            .iter()
            .flat_map(|(_, qs)| qs)
            .filter(|q| q.kind() == kind)
            .count();
        assert!(n >= 3, "{kind:?}: {n} questions");
    }
}

#[test]
fn answers_are_judged_and_bad_input_is_refused() {
    let w = walkthrough::find("send-sg-nogso").expect("walkthrough");
    let traces = traces(&w);
    for q in &w.questions().expect("questions parse") {
        let answer = w.answer(q, &traces).expect("resolves");
        let right = match q.kind() {
            Kind::Choice => q.options()[q
                .choices
                .iter()
                .position(|c| skblab_core::query::Value::Number(c.value) == answer)
                .expect("among the choices")][..1]
                .to_string(),
            _ => answer.to_string(),
        };
        assert_eq!(q.judge(&right, answer), Ok(true), "{}: {right}", q.ask);
        assert!(q.judge("banana", answer).is_err(), "{}", q.ask);
    }
}

#[test]
fn a_visible_answer_is_caught() {
    let w = walkthrough::find("anatomy").expect("walkthrough");
    let t = &traces(&w)[0];
    let mut q = w.questions().expect("questions parse")[0].clone();
    let cases = [
        // Step 2 grows frag 0: skb 0 keeps the one frag step 1 showed.
        (2, "skb 0 nr_frags", Some("the step before already gives 1")),
        // Step 3 starts frag 1 in page 1, which step 2 does not draw: nothing to point at.
        (
            3,
            "event new_frag page",
            Some("page 1 is not drawn before the step"),
        ),
        (3, "skb 0 nr_frags", None),
        // Step 2 grows frag 0, the one frag step 1 draws: nothing to choose from.
        (
            2,
            "event coalesce frag",
            Some("skb 0 frag 0 is the only one of its kind drawn"),
        ),
        // Step 5 frees page 0; step 4 draws pages 0 and 1.
        (5, "event free_page page", None),
        // Before step 1 every counter is 0.
        (1, "counter pages_allocated", None),
        (
            4,
            "counter pages_freed",
            Some("the step before already gives 0"),
        ),
    ];
    for (step, query, why) in cases {
        q.step = step;
        q.query = query.parse().expect("query");
        let seen = q.visible(t);
        match why {
            Some(w) => assert!(
                seen.as_deref().is_some_and(|s| s.starts_with(w)),
                "{query}: {seen:?}"
            ),
            None => assert_eq!(seen, None, "{query}"),
        }
    }
}

/// What a learner can pick: anatomy after step 3 (snapshots/anatomy.snap) draws skb 0 with
/// frag 0 in page 0 and frag 1 in page 1; before step 1, nothing.
#[test]
fn the_objects_drawn_are_the_skbs_their_frags_and_the_pages() {
    use skblab_core::query::Value::{Frag, Page, Skb};
    let w = walkthrough::find("anatomy").expect("walkthrough");
    let t = &traces(&w)[0];
    let drawn = t.steps[2].state.drawn();
    let want = [
        Skb(0),
        Frag { skb: 0, idx: 0 },
        Frag { skb: 0, idx: 1 },
        Page(0),
        Page(1),
    ];
    assert_eq!(drawn, want);
    assert!(t.steps[2].state.draws(Frag { skb: 0, idx: 1 }));
    assert!(!t.steps[2].state.draws(Frag { skb: 0, idx: 2 }));
    assert!(!t.steps[2].state.draws(skblab_core::query::Value::Number(0)));
    assert_eq!(skblab_core::trace::State::default().drawn(), []);
}

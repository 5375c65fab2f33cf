//! The questions of every walkthrough: enough of them, of every kind, judged as the learner
//! answers. That each resolves on its step and is hidden until asked is `skblab lint`'s
//! check, run on every walkthrough by `tests/walkthroughs.rs`.

use skblab_core::query::Value;
use skblab_core::question::Kind;
use skblab_core::quiz::{Outcome, Phase, Quiz, Score};
use skblab_core::walkthrough::{self, Walkthrough};
use skblab_core::{RunOptions, Trace};

fn traces(w: &Walkthrough) -> Vec<Trace> {
    w.variants
        .iter()
        .map(|v| {
            let opts = RunOptions::traced(Some(v));
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
        // Steps 1 and 2 free no page, but step 1's events say nothing of step 2's.
        (2, "events free_page", None),
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

/// anatomy asks before steps 1, 2 and 5: a move from 0 to the end stops before step 1;
/// answering reveals it; the next stop is step 2, and after a skip, step 5.
#[test]
fn a_quiz_stops_asks_and_reveals() {
    let w = walkthrough::find("anatomy").unwrap();
    let traces = traces(&w);
    let mut q = Quiz::new(&w, &traces).unwrap();
    let steps: Vec<usize> = q.items.iter().map(|i| i.q.step).collect();
    // In the file's order, which is the steps' here.
    assert_eq!(steps, [1, 2, 5]);
    assert_eq!(q.stop_in(0, 7), Some(1));
    q.ask(1);
    // page 0's count after sendmsg(1000): the page's own reference and frag 0's.
    assert_eq!(q.current().unwrap().answer, Value::Number(2));
    assert_eq!(q.answer("skb 1"), None);
    let e = q.error().unwrap();
    assert!(e.contains("give a whole number"), "{e}");
    assert_eq!(q.answer("2"), Some((0, true)));
    assert_eq!(q.phase, Phase::Reveal { step: 1 });
    let shown: Vec<_> = q.revealed().collect();
    assert_eq!(shown.len(), 1);
    assert_eq!(shown[0].said(), "2");
    let why = shown[0].why(&traces).unwrap();
    assert!(why.starts_with("page 0's count 2: 1 held by skbs"), "{why}");
    assert_eq!(q.stop_in(0, 7), Some(2));
    q.ask(2);
    q.skip();
    assert_eq!(q.revealed().next().unwrap().outcome, Some(Outcome::Skipped));
    assert_eq!(q.stop_in(2, 7), Some(5));
    assert_eq!(q.stop_in(2, 4), None);
    // A step without questions asks nothing; an input that is no answer can count wrong.
    q.ask(3);
    assert_eq!(q.phase, Phase::Reveal { step: 2 });
    q.ask(5);
    assert_eq!(q.count_wrong(), Some(2));
    assert_eq!(q.score(), Score { right: 1, asked: 2 });
    assert_eq!(q.current().map(|i| i.n), None);
}

//! Every walkthrough in `walkthrough::all()` passes `skblab lint` (each listed variant runs its
//! scenario, every `[[check]]`, a number the narration states, holds), and lint finds what is
//! wrong in a broken one.

use skblab_core::{lint, walkthrough};

/// The checks `skblab lint` runs: each variant runs, every `[[check]]` holds, every question
/// resolves and is hidden until asked.
#[test]
fn every_walkthrough_passes_lint() {
    let all = walkthrough::all().expect("walkthroughs parse");
    let mut problems = Vec::new();
    for w in &all {
        assert!(!w.checks.is_empty(), "{}: no checks", w.name);
        problems.extend(lint::lesson(w).iter().map(|f| format!("{}: {f}", w.name)));
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
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

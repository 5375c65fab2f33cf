//! Every challenge: its starting scenario does not reach the goal and its reference solution
//! (`tests/solutions/NAME.toml`) does; a changed kept field is refused.

use skblab_core::challenge;
use std::path::Path;

fn solution(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/solutions/{name}.toml"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn each_solution_passes_and_each_start_does_not() {
    let all = challenge::all().expect("challenges parse");
    for c in &all {
        let start = c.check(&c.start()).expect("the start runs");
        assert_eq!(
            start.solved_at, None,
            "{}: the start already solves it: {:?}",
            c.name, start.report
        );
        let done = c
            .check(&solution(&c.name))
            .unwrap_or_else(|e| panic!("{}: the solution fails to run: {e}", c.name));
        assert!(
            done.solved_at.is_some(),
            "{}: not solved: {:?}",
            c.name,
            done.report
        );
        assert!(
            done.report.iter().all(|l| l.starts_with('✓')),
            "{:?}",
            done.report
        );
    }
}

#[test]
fn two_challenges_per_seed_with_unique_names() {
    let all = challenge::all().expect("challenges parse");
    assert!(all.len() >= 8);
    for seed in ["000", "001", "002", "003"] {
        assert!(
            all.iter().filter(|c| c.seed == seed).count() >= 2,
            "seed {seed}"
        );
    }
    let mut names: Vec<&str> = all.iter().map(|c| c.name.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), all.len(), "a name is used twice");
    for name in names {
        assert_eq!(challenge::find(name).expect("found").name, name);
    }
}

#[test]
fn a_kept_field_changed_is_an_error_naming_it() {
    let c = challenge::find("one-page-queue").expect("challenge");
    let text = c.start().replace("\"mss\": 1448", "\"mss\": 1000");
    let err = c.check(&text).unwrap_err().to_string();
    assert!(
        err.contains("`socket`") && err.contains("keeps it"),
        "{err}"
    );
    let other = challenge::find("reuse-a-page").expect("challenge").start();
    let err = c.check(&other).unwrap_err().to_string();
    assert!(err.contains("`mechanism`"), "{err}");
}

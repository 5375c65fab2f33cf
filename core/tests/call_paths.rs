//! Every event of every file under `scenarios/`, under every variant of its mechanism, has a
//! call path or a known gap (`call_path::GAPS`) for the op that emitted it, never both:
//! paths chosen by op leave no op of a shipped scenario without one or the other.

use skblab_core::{RunOptions, Scenario};
use std::path::PathBuf;

#[test]
fn every_event_of_the_scenarios_has_a_path_or_a_gap() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scenarios");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("scenarios/ is readable")
        .map(|e| e.expect("a readable entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    let mut seen = 0;
    for f in &files {
        let text = std::fs::read_to_string(f).expect("a readable file");
        let s = Scenario::parse(&text).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        for variant in s.variants() {
            let t = s.run(&RunOptions::traced(Some(variant))).expect("it runs");
            for (i, step) in t.steps.iter().enumerate() {
                for e in step.events.iter().filter(|e| t.kernel_fn(e).is_some()) {
                    let (path, gap) = (t.call_path(i, e), t.call_gap(i, e));
                    assert!(
                        path.is_some() != gap.is_some(),
                        "{} {variant} step {i} ({}): {e:?}",
                        f.display(),
                        step.name
                    );
                    seen += usize::from(path.is_some());
                }
            }
        }
    }
    assert!(seen > 0);
}

//! Every walkthrough's full terminal text is an insta snapshot under `snapshots/` at the
//! repository root, reviewed line by line (`cargo insta review`).

use skblab_core::walkthrough;
use skblab_runner::engine::Engine;
use skblab_runner::{cli, render};

#[test]
fn walkthroughs_match_their_snapshots() {
    let all = walkthrough::all().expect("walkthrough files parse");
    assert!(!all.is_empty(), "no walkthroughs are registered");
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path("../../snapshots");
    settings.set_prepend_module_to_snapshot(false);
    settings.set_omit_expression(true);
    settings.bind(|| {
        for w in &all {
            let traces =
                cli::walkthrough_traces(w, Engine::Native).expect("walkthrough scenarios run");
            insta::assert_snapshot!(
                w.name.as_str(),
                render::walkthrough(
                    w,
                    &w.questions().expect("questions parse"),
                    &traces,
                    render::Style::PLAIN
                )
            );
        }
    });
}

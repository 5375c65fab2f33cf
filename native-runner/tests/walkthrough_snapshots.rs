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

/// Without `--quiz` a walkthrough asks each question before its step and answers it only
/// after the step's state, under its own heading: no answer is printed before its step.
#[test]
fn answers_follow_their_step() {
    let w = walkthrough::find("rx-page-reuse").expect("rx-page-reuse exists");
    let questions = w.questions().expect("questions parse");
    let step = questions
        .first()
        .expect("rx-page-reuse asks questions")
        .step;
    let traces = cli::walkthrough_traces(&w, Engine::Native).expect("scenarios run");
    let text = render::walkthrough(&w, &questions, &traces, render::Style::PLAIN);
    let head = format!("━━ Step {step}/");
    let step_at = text.find(&head).expect("the step is printed");
    let asked_at = text.find("? Predict").expect("a question is asked");
    let answers_at = text.find(&format!("Answers to step {step}:"));
    let first_answer = text.find("answer: ").expect("answers are printed");
    assert!(asked_at < step_at, "asked before the step");
    assert!(answers_at.is_some_and(|a| a > step_at && a < first_answer));
}

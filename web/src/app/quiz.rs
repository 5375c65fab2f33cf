//! Predict, then see: the question card, and the challenges with their goals and verdicts.
//! Every answer, judgement and verdict is the core's ([`crate::predict`] holds them); these
//! views only ask and show.

use crate::predict::{Outcome, Phase, Quiz, Record};
use skblab_core::challenge::{Challenge, Verdict};
use skblab_core::query::Value;
use skblab_core::question::Kind;
use skblab_core::trace::State;
use yew::prelude::*;

/// What the card asks the app for.
pub enum Ask {
    /// The learner's answer, as typed or picked.
    Answer(String),
    Skip,
}

/// The id of the card's answer field (the app reads it on submit).
pub const FIELD: &str = "quiz-answer";

/// The card: the question of the hidden step (`before`: the state the learner sees, whose
/// objects a pick lists), or the step revealed with each question's outcome and answer.
pub fn card(
    quiz: &Quiz,
    before: Option<&State>,
    on: &Callback<Ask>,
    next: &Callback<MouseEvent>,
) -> Html {
    match &quiz.phase {
        Phase::Idle => html! {},
        Phase::Ask { step, error } => {
            let Some(item) = quiz.current() else {
                return html! {};
            };
            let q = &item.q;
            let field = match q.kind() {
                Kind::Number => html! {
                    <>
                        <label for={FIELD}>{ "Your answer (a whole number)" }</label>
                        <input id={FIELD} data-focus="" aria-describedby="quiz-question" type="text" inputmode="numeric" autocomplete="off" />
                    </>
                },
                Kind::Choice => html! {
                    <div role="group" aria-label="Choices" aria-describedby="quiz-question">
                        { for q.options().into_iter().zip('a'..).map(|(text, l)| html! {
                            <button type="button" data-choice={l.to_string()} onclick={on.reform(move |_| Ask::Answer(l.to_string()))}>{ text }</button>
                        }) }
                    </div>
                },
                Kind::Pick => html! {
                    <>
                        <label for={FIELD}>{ "Click it in the diagram, or pick it here" }</label>
                        <select id={FIELD} data-focus="" aria-describedby="quiz-question">
                            { for before.map(State::drawn).unwrap_or_default().into_iter().map(|v| html! { <option>{ v.to_string() }</option> }) }
                        </select>
                    </>
                },
            };
            let onsubmit = on.reform(|e: SubmitEvent| {
                e.prevent_default();
                Ask::Answer(crate::dom::value_of(FIELD).unwrap_or_default())
            });
            html! {
                <section class="quiz" aria-label="Question" data-testid="quiz" data-kind={format!("{:?}", q.kind())}>
                    <h2>{ format!("Predict step {step}") }</h2>
                    <p id="quiz-question" data-testid="question">{ &q.ask }</p>
                    <form {onsubmit}>
                        { field }
                        if q.kind() != Kind::Choice { <button type="submit" data-action="answer">{ "Answer" }</button> }
                        <button type="button" data-action="skip" onclick={on.reform(|_| Ask::Skip)}>{ "Skip: show the step (Esc)" }</button>
                    </form>
                    if let Some(e) = error { <p class="error" role="alert" data-testid="quiz-error">{ e }</p> }
                </section>
            }
        }
        Phase::Reveal { step } => html! {
            <section class="quiz" aria-label="Question" data-testid="quiz" aria-live="polite">
                <h2>{ format!("Step {step}, as it happened") }</h2>
                { for quiz.revealed().map(|i| {
                    let (mark, class) = match i.outcome {
                        Some(Outcome::Right) => ("✓ Right.", "right"),
                        Some(Outcome::Wrong) => ("✗ Not quite.", "wrong"),
                        _ => ("Skipped.", "skipped"),
                    };
                    html! {
                        <p class={classes!("verdict", class)} data-testid="verdict" data-outcome={class}>
                            <strong>{ mark }</strong>{ " " }{ &i.q.ask }{ " " }
                            <span data-testid="answer">{ format!("Answer: {}.", i.q.say(i.answer)) }</span>
                        </p>
                    }
                }) }
                <button data-focus="" data-action="continue" onclick={next.clone()}>{ "Continue ▶" }</button>
            </section>
        },
    }
}

/// The object a click in the diagram points at, named as the core names it: a frag, else its
/// skb, else a page.
pub fn picked(target: &web_sys::Element) -> Option<String> {
    let id = |sel: &str, name: &str| target.closest(sel).ok()??.get_attribute(name)?.parse().ok();
    let v = match (id("[data-frag]", "data-frag"), id("[data-skb]", "data-skb")) {
        (Some(idx), Some(skb)) => Value::Frag { skb, idx },
        (None, Some(skb)) => Value::Skb(skb),
        _ => Value::Page(id("[data-page]", "data-page")?),
    };
    Some(v.to_string())
}

/// The challenge open, and the core's verdict on the learner's last check.
pub struct Open {
    pub i: usize,
    pub verdict: Option<Result<Verdict, String>>,
}

/// Every challenge with its goal and solved mark; the open one with its hint and verdict.
pub fn challenges(
    list: &[Challenge],
    record: &Record,
    open: Option<&Open>,
    on_open: &Callback<usize>,
) -> Html {
    let item = |(i, c): (usize, &Challenge)| {
        let solved = record.solved(&c.name);
        let this = open.filter(|o| o.i == i);
        html! {
            <li data-challenge={c.name.clone()} data-solved={solved.to_string()} aria-current={this.map(|_| "true")}>
                <button aria-label={format!("Open challenge: {}", c.title)} onclick={on_open.reform(move |_| i)}>{ "Open" }</button>
                <strong>{ format!(" {} ", c.title) }</strong>
                <span class="seed">{ format!("seed {} · {}", c.seed, c.variant) }</span>
                if solved { <span class="solved" aria-label="solved">{ " ✓ solved" }</span> }
                <p>{ &c.goal }</p>
                if let Some(o) = this {
                    <p class="hint">{ format!("Hint: {}", c.hint) }</p>
                    { verdict(o.verdict.as_ref()) }
                }
            </li>
        }
    };
    html! {
        <section class="challenges" aria-label="Challenges">
            <h2>{ "Challenges" }</h2>
            <p class="note">{ "Open one, edit its scenario in the editor, then check the goal." }</p>
            <ol>{ for list.iter().enumerate().map(item) }</ol>
        </section>
    }
}

fn verdict(v: Option<&Result<Verdict, String>>) -> Html {
    let (class, head, lines) = match v {
        None => return html! {},
        Some(Err(e)) => ("wrong", e.clone(), &[][..]),
        Some(Ok(v)) => match v.solved_at {
            Some(s) => (
                "right",
                format!("✓ Goal met after step {s}."),
                &v.report[..],
            ),
            None => ("wrong", "✗ Goal not met.".to_string(), &v.report[..]),
        },
    };
    html! {
        <div class={classes!("verdict", class)} role="status" data-testid="goal" data-met={(class == "right").to_string()}>
            <strong>{ head }</strong>
            <ul>{ for lines.iter().map(|l| html! { <li>{ l }</li> }) }</ul>
        </div>
    }
}

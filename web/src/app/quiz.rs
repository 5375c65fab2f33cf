//! Predict, then see: the question card, and the challenges with their goals and verdicts.
//! Every answer, judgement and verdict is the core's ([`crate::predict`] holds them); these
//! views only ask and show.

use super::emit_some;
use crate::diagram::esc;
use crate::predict::{Outcome, Phase, Quiz, Record};
use skblab_core::challenge::{Challenge, Verdict};
use skblab_core::query::Value;
use skblab_core::question::Kind;
use skblab_core::trace::State;
use std::fmt::Write;
use wasm_bindgen::JsCast;
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
/// Drawn as markup (as Yew nodes the list cost the bundle over a kilobyte); one click
/// listener on the section opens the challenge whose button was pressed.
pub fn challenges(
    list: &[Challenge],
    record: &Record,
    open: Option<&Open>,
    on_open: &Callback<usize>,
) -> Html {
    let mut out = String::new();
    for (i, c) in list.iter().enumerate() {
        let solved = record.solved(&c.name);
        let this = open.filter(|o| o.i == i);
        let _ = write!(
            out,
            r#"<li data-challenge="{}" data-solved="{solved}"{}><button data-open="{i}" aria-label="Open challenge: {t}">Open</button> <strong>{t}</strong> <span class="seed">seed {} · {}</span>{}<p>{}</p>"#,
            esc(&c.name),
            if this.is_some() {
                r#" aria-current="true""#
            } else {
                ""
            },
            esc(&c.seed),
            esc(&c.variant),
            if solved {
                r#" <span class="solved">✓ solved</span>"#
            } else {
                ""
            },
            esc(&c.goal),
            t = esc(&c.title),
        );
        if let Some(o) = this {
            let _ = write!(out, r#"<p class="hint">Hint: {}</p>"#, esc(&c.hint));
            verdict(&mut out, o.verdict.as_ref());
        }
        out.push_str("</li>");
    }
    let onclick = emit_some(on_open, |e: MouseEvent| {
        let el = e.target()?.dyn_into::<web_sys::Element>().ok()?;
        el.closest("[data-open]")
            .ok()??
            .get_attribute("data-open")?
            .parse()
            .ok()
    });
    html! {
        <section class="challenges" aria-label="Challenges" {onclick}>
            <h2>{ "Challenges" }</h2>
            <p class="note">{ "Open one, edit its scenario in the editor, then check the goal." }</p>
            <ol>{ Html::from_html_unchecked(out.into()) }</ol>
        </section>
    }
}

/// The core's verdict: met (after which step) or not, with each condition's values.
fn verdict(out: &mut String, v: Option<&Result<Verdict, String>>) {
    let (met, head, lines) = match v {
        None => return,
        Some(Err(e)) => (false, e.clone(), &[][..]),
        Some(Ok(v)) => match v.solved_at {
            Some(s) => (true, format!("✓ Goal met after step {s}."), &v.report[..]),
            None => (false, "✗ Goal not met.".to_string(), &v.report[..]),
        },
    };
    let class = if met { "right" } else { "wrong" };
    let _ = write!(
        out,
        r#"<div class="verdict {class}" role="status" data-testid="goal" data-met="{met}"><strong>{}</strong><ul>"#,
        esc(&head)
    );
    for l in lines {
        let _ = write!(out, "<li>{}</li>", esc(l));
    }
    out.push_str("</ul></div>");
}

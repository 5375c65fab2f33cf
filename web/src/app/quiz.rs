//! Predict, then see: the question card, and the challenges with their goals and verdicts.
//! Every answer, judgement and verdict is the core's ([`crate::predict`] holds them); these
//! views only ask and show.

use super::emit_some;
use crate::diagram::esc;
use crate::navigation::Nav;
use crate::predict::{self, Outcome, Phase, Quiz, Record, Source};
use skblab_core::challenge::{Challenge, Verdict};
use skblab_core::query::Value;
use skblab_core::question::Kind;
use skblab_core::quiz::Item;
use skblab_core::trace::{State, Trace};
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
/// objects a pick lists), or the step revealed with each question's outcome and answer, and
/// how it is made up, read from `traces` (the quiz's).
/// Drawn as markup, like the challenges (as Yew nodes the card cost the bundle 0.6 KB
/// gzip more); one click and one submit listener on the card act for its buttons and
/// its form. The error is markup of its own, so showing it keeps the form and what was typed.
pub fn card(
    quiz: &Quiz,
    before: Option<&State>,
    traces: &[Trace],
    on: &Callback<Ask>,
    on_nav: &Callback<Nav>,
) -> Html {
    let (kind, body, error) = match &quiz.phase {
        Phase::Idle => return html! {},
        Phase::Ask { step, error } => {
            let Some(item) = quiz.current() else {
                return html! {};
            };
            let error = error.as_deref().map_or(String::new(), |e| {
                format!(
                    r#"<p class="error" role="alert" data-testid="quiz-error">{}</p>"#,
                    esc(e)
                )
            });
            let kind = item.q.kind();
            (Some(kind), ask(*step, item, kind, before), error)
        }
        Phase::Reveal { step } => (None, reveal(quiz, *step, traces), String::new()),
    };
    let onsubmit = on.reform(|e: SubmitEvent| {
        e.prevent_default();
        Ask::Answer(crate::dom::value_of(FIELD).unwrap_or_default())
    });
    let (on, on_nav) = (on.clone(), on_nav.clone());
    let onclick = Callback::from(move |e: MouseEvent| {
        let Some(el) = e
            .target()
            .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
        else {
            return;
        };
        let closest = |sel: &str| el.closest(sel).ok().flatten();
        if let Some(choice) = closest("[data-choice]") {
            on.emit(Ask::Answer(
                choice.get_attribute("data-choice").unwrap_or_default(),
            ));
        } else if closest("[data-action=skip]").is_some() {
            on.emit(Ask::Skip);
        } else if closest("[data-action=continue]").is_some() {
            on_nav.emit(Nav::Step(1));
        }
    });
    html! {
        <section class="quiz" aria-label="Question" data-testid="quiz" data-kind={kind.map(|k| format!("{k:?}"))}
            aria-live={kind.is_none().then_some("polite")} {onclick} {onsubmit}>
            { Html::from_html_unchecked(body.into()) }
            { Html::from_html_unchecked(error.into()) }
        </section>
    }
}

/// The question asked before `step`, with its answer field (`before` lists a pick's objects).
fn ask(step: usize, item: &Item, kind: Kind, before: Option<&State>) -> String {
    let q = &item.q;
    let mut out = format!(
        r#"<h2>Predict step {step}</h2><p id="quiz-question" data-testid="question">{}</p><form>"#,
        esc(&q.ask)
    );
    let field = |out: &mut String, label: &str, tag: &str| {
        let _ = write!(
            out,
            r#"<label for="{FIELD}">{label}</label><{tag} id="{FIELD}" data-focus="" aria-describedby="quiz-question""#
        );
    };
    match kind {
        Kind::Number => {
            field(&mut out, "Your answer (a whole number)", "input");
            out.push_str(r#" type="text" inputmode="numeric" autocomplete="off">"#);
        }
        Kind::Choice => {
            out.push_str(
                r#"<div role="group" aria-label="Choices" aria-describedby="quiz-question">"#,
            );
            for (text, l) in q.options().iter().zip('a'..) {
                let _ = write!(
                    out,
                    r#"<button type="button" data-choice="{l}">{}</button>"#,
                    esc(text)
                );
            }
            out.push_str("</div>");
        }
        // Too many to list all: a field to name it in, suggesting the first few.
        Kind::Pick => match predict::picks(before, item.answer) {
            (listed, 0) => {
                field(
                    &mut out,
                    "Click it in the diagram, or pick it here",
                    "select",
                );
                out.push('>');
                for v in listed {
                    let _ = write!(out, "<option>{v}</option>");
                }
                out.push_str("</select>");
            }
            (listed, more) => {
                field(
                    &mut out,
                    "Click it in the diagram, or name it here",
                    "input",
                );
                out.push_str(r#" type="text" autocomplete="off" list="quiz-picks"><datalist id="quiz-picks">"#);
                for v in &listed {
                    let _ = write!(out, "<option>{v}</option>");
                }
                let _ = write!(
                    out,
                    r#"</datalist><p class="note" data-testid="picks-more">The first {} are suggested; {more} more are drawn.</p>"#,
                    listed.len()
                );
            }
        },
    }
    if kind != Kind::Choice {
        out.push_str(r#"<button type="submit" data-action="answer">Answer</button>"#);
    }
    out.push_str(
        r#"<button type="button" data-action="skip">Skip: show the step (Esc)</button></form>"#,
    );
    out
}

/// Step `step` revealed: each of its questions with its outcome, the core's answer and how it
/// is made up.
fn reveal(quiz: &Quiz, step: usize, traces: &[Trace]) -> String {
    let mut out = format!("<h2>Step {step}, as it happened</h2>");
    for i in quiz.revealed() {
        let (mark, class) = match i.outcome {
            Some(Outcome::Right) => ("✓ Right.", "right"),
            Some(Outcome::Wrong) => ("✗ Not quite.", "wrong"),
            _ => ("Skipped.", "skipped"),
        };
        let why = i.why(traces).map_or(String::new(), |w| {
            format!(
                r#" <span class="why" data-testid="why">({})</span>"#,
                esc(w)
            )
        });
        let _ = write!(
            out,
            r#"<p class="verdict {class}" data-testid="verdict" data-outcome="{class}"><strong>{mark}</strong> {} <span data-testid="answer">Answer: {}.</span>{why}</p>"#,
            esc(&i.q.ask),
            esc(&i.said()),
        );
    }
    out.push_str(r#"<button data-focus="" data-action="continue">Continue ▶</button>"#);
    out
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

/// The challenge open, the core's verdict on the learner's last check, and the scenario
/// checked (or run) last, which its link carries.
pub struct Open {
    pub i: usize,
    pub verdict: Option<Result<Verdict, String>>,
    pub work: Option<String>,
}

/// Every challenge with its goal and solved mark; the open one with its hint and verdict.
/// Drawn as markup (as Yew nodes the list cost the bundle over a kilobyte); one click
/// listener on the section opens the challenge whose button was pressed.
pub fn challenges(
    list: &[(Challenge, Source)],
    record: &Record,
    open: Option<&Open>,
    on_open: &Callback<usize>,
) -> Html {
    let mut out = String::new();
    for (i, (c, from)) in list.iter().enumerate() {
        let solved = record.solved(&c.name, *from);
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
    let (met, head, conditions) = match v {
        None => return,
        Some(Err(e)) => (false, e.clone(), &[][..]),
        Some(Ok(v)) => match v.solved_at {
            Some(s) => (
                true,
                format!("✓ Goal met after step {s}."),
                &v.conditions[..],
            ),
            None => (false, "✗ Goal not met.".to_string(), &v.conditions[..]),
        },
    };
    let class = if met { "right" } else { "wrong" };
    let _ = write!(
        out,
        r#"<div class="verdict {class}" role="status" data-testid="goal" data-met="{met}"><strong>{}</strong><ul>"#,
        esc(&head)
    );
    // Each condition in the colour of its own outcome: one that held is green even when the
    // goal as a whole is not met.
    for c in conditions {
        let held = if c.holds { "held" } else { "failed" };
        let _ = write!(out, r#"<li class="{held}">{}</li>"#, esc(&c.to_string()));
    }
    out.push_str("</ul></div>");
}

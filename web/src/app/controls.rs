//! The stepper: first, previous, play, next, last, the speed, the scrubber, the position, the
//! predict toggle and the current operation. It holds no state: it shows the app's position and asks for moves.
//! Every part keeps its place whatever the step (style.css gives each a fixed width and the
//! operation one line, cut short with its whole text in its title).

use super::emit_some;
use crate::diagram::esc;
use crate::navigation::{Nav, SPEEDS};
use wasm_bindgen::JsCast;
use web_sys::{HtmlInputElement, HtmlSelectElement};
use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub pos: usize,
    pub len: usize,
    pub playing: bool,
    pub speed: u32,
    /// The operation that made step `pos` (or what comes before the first).
    pub op: AttrValue,
    /// The event shown and the step's number of events, when stepping by event (play then
    /// runs event by event).
    pub event: Option<(usize, usize)>,
    pub on: Callback<Nav>,
    /// Predict mode: a step with questions is asked before it is shown.
    pub predict: bool,
    pub on_predict: Callback<()>,
}

/// The buttons that only ask for a move, before and after play: static markup, one click
/// listener on the bar acting for all of them (as Yew nodes they cost the bundle 0.5 KiB).
const BEFORE_PLAY: &str = concat!(
    r#"<button data-nav="0" aria-label="First step" title="First (Home)">⇤ first</button>"#,
    r#"<button data-nav="1" aria-label="Previous step" title="Previous (←)">◀ previous</button>"#,
);
const AFTER_PLAY: &str = concat!(
    r#"<button data-nav="2" aria-label="Next step" title="Next (→)">next ▶</button>"#,
    r#"<button data-nav="3" aria-label="Last step" title="Last (End)">last ⇥</button>"#,
    r#"<button data-nav="4" aria-label="Previous event" title="Previous event (↑ or Shift+←)">▲ event</button>"#,
    r#"<button data-nav="5" aria-label="Next event" title="Next event (↓ or Shift+→)">event ▼</button>"#,
);

/// The moves of those buttons, by their `data-nav`.
const MOVES: [Nav; 6] = [
    Nav::Go(0),
    Nav::Step(-1),
    Nav::Step(1),
    Nav::Last,
    Nav::Event(-1),
    Nav::Event(1),
];

/// The move a click on one of those buttons asks for.
fn clicked(e: MouseEvent) -> Option<Nav> {
    let el: web_sys::Element = e.target()?.dyn_into().ok()?;
    let i: usize = el
        .closest("[data-nav]")
        .ok()??
        .get_attribute("data-nav")?
        .parse()
        .ok()?;
    MOVES.get(i).copied()
}

/// The step and, stepping by event, the event shown: nodes, not markup, as they change at
/// every move (new markup is parsed, and the nodes it replaces removed). The event's place
/// is always there (empty outside event mode), so what follows stays put.
fn position(p: &Props) -> Html {
    let (pos, len) = (p.pos, p.len);
    let (k, text) = match p.event {
        Some((k, n)) => (Some(k.to_string()), format!("event {k} / {n}")),
        None => (None, String::new()),
    };
    html! {
        <>
            <output data-testid="step" data-step={pos.to_string()}>{ format!("step {pos} / {len}") }</output>
            <output class="ev" data-testid={k.as_ref().map(|_| "event")} data-event={k}>{ text }</output>
        </>
    }
}

pub fn controls(p: &Props) -> Html {
    let on = &p.on;
    let (pos, len, playing) = (p.pos, p.len, p.playing);
    html! {
        <section class="controls" aria-label="Step controls" onclick={emit_some(on, clicked)}>
            { Html::from_html_unchecked(AttrValue::Static(BEFORE_PLAY)) }
            <button data-action="play" aria-label={if playing { "Pause" } else { "Play" }} aria-pressed={playing.to_string()} title="Play/pause (space)" onclick={on.reform(|_| Nav::TogglePlay)}>{ if playing { "❚❚ pause" } else { "▶ play" } }</button>
            { Html::from_html_unchecked(AttrValue::Static(AFTER_PLAY)) }
            <label>{ "Speed " }
                <select aria-label="Play speed" onchange={emit_some(on, |e: Event| e.target_unchecked_into::<HtmlSelectElement>().value().parse().ok().map(Nav::Speed))}>
                    { for SPEEDS.iter().map(|sp| html! { <option value={sp.to_string()} selected={*sp == p.speed}>{ format!("{sp} {}/s", if p.event.is_some() { "event" } else { "step" }) }</option> }) }
                </select>
            </label>
            <input type="range" class="scrubber" aria-label="Step" min="0" max={len.to_string()} value={pos.to_string()}
                oninput={emit_some(on, |e: InputEvent| e.target_unchecked_into::<HtmlInputElement>().value().parse().ok().map(Nav::Go))} />
            { position(p) }
            <label class="predict" title="Answer each walkthrough question before its step is shown">
                <input type="checkbox" data-testid="predict" checked={p.predict} onchange={p.on_predict.reform(|_| ())} />{ " Predict" }
            </label>
            { Html::from_html_unchecked(format!(r#"<span class="op" data-testid="op" title="{op}">{op}</span>"#, op = esc(&p.op)).into()) }
        </section>
    }
}

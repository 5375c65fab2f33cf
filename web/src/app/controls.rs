//! The stepper: first, previous, play, next, last, the speed, the scrubber, the position, the
//! predict toggle and the current operation. It holds no state: it shows the app's position and asks for moves.

use super::emit_some;
use web_sys::{HtmlInputElement, HtmlSelectElement};
use yew::prelude::*;

/// A move the stepper (or the keyboard) asks the app for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Nav {
    Go(usize),
    Step(isize),
    Last,
    TogglePlay,
    Speed(u32),
    /// One kernel event forward or back, across steps.
    Event(isize),
    /// Event `k` (1-based) of step `pos`: the state after it.
    At {
        pos: usize,
        k: usize,
    },
}

/// Play speeds offered, in steps per second.
pub const SPEEDS: [u32; 4] = [1, 2, 4, 8];

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

pub fn controls(p: &Props) -> Html {
    let on = &p.on;
    let (pos, len, playing) = (p.pos, p.len, p.playing);
    html! {
        <section class="controls" aria-label="Step controls">
            <button data-action="first" aria-label="First step" title="First (Home)" onclick={on.reform(|_| Nav::Go(0))}>{ "⇤ first" }</button>
            <button data-action="prev" aria-label="Previous step" title="Previous (←)" onclick={on.reform(|_| Nav::Step(-1))}>{ "◀ previous" }</button>
            <button data-action="play" aria-label={if playing { "Pause" } else { "Play" }} aria-pressed={playing.to_string()} title="Play/pause (space)" onclick={on.reform(|_| Nav::TogglePlay)}>{ if playing { "❚❚ pause" } else { "▶ play" } }</button>
            <button data-action="next" aria-label="Next step" title="Next (→)" onclick={on.reform(|_| Nav::Step(1))}>{ "next ▶" }</button>
            <button data-action="last" aria-label="Last step" title="Last (End)" onclick={on.reform(|_| Nav::Last)}>{ "last ⇥" }</button>
            <button data-action="prev-event" aria-label="Previous event" title="Previous event (↑ or Shift+←)" onclick={on.reform(|_| Nav::Event(-1))}>{ "▲ event" }</button>
            <button data-action="next-event" aria-label="Next event" title="Next event (↓ or Shift+→)" onclick={on.reform(|_| Nav::Event(1))}>{ "event ▼" }</button>
            <label>{ "Speed " }
                <select aria-label="Play speed" onchange={emit_some(on, |e: Event| e.target_unchecked_into::<HtmlSelectElement>().value().parse().ok().map(Nav::Speed))}>
                    { for SPEEDS.iter().map(|sp| html! { <option value={sp.to_string()} selected={*sp == p.speed}>{ format!("{sp} {}/s", if p.event.is_some() { "event" } else { "step" }) }</option> }) }
                </select>
            </label>
            <input type="range" class="scrubber" aria-label="Step" min="0" max={len.to_string()} value={pos.to_string()}
                oninput={emit_some(on, |e: InputEvent| e.target_unchecked_into::<HtmlInputElement>().value().parse().ok().map(Nav::Go))} />
            <output data-testid="step" data-step={pos.to_string()}>{ format!("step {pos} / {len}") }</output>
            if let Some((k, n)) = p.event {
                <output data-testid="event" data-event={k.to_string()}>{ format!("event {k} / {n}") }</output>
            }
            <label class="predict" title="Answer each walkthrough question before its step is shown">
                <input type="checkbox" data-testid="predict" checked={p.predict} onchange={p.on_predict.reform(|_| ())} />{ " Predict" }
            </label>
            <span class="op" data-testid="op">{ p.op.clone() }</span>
        </section>
    }
}

//! The narration beside the diagram: the walkthrough's text for the position and the events
//! of the step, in the kernel's words.

use super::controls::Nav;
use super::Shared;
use skblab_core::events::Event as TraceEvent;
use skblab_core::Trace;
use yew::prelude::*;

/// A step lists at most this many events: one op with a `count` or a burst of frames can make
/// thousands, and each list item costs the page style and layout on every step.
const EVENTS_LISTED: usize = 200;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub session: Shared,
    pub pos: usize,
    /// The event selected (1-based) in the left trace's list.
    pub event: Option<usize>,
    /// Clicking an event of the left trace selects it.
    pub on_nav: Callback<Nav>,
}

pub fn narration(p: &Props) -> Html {
    let s = &p.session;
    html! {
        // Focusable: a keyboard can scroll it when it overflows (axe: scrollable-region-focusable).
        <aside class="narration" aria-live="polite" tabindex="0">
            <h2 data-testid="title">{ &s.title }</h2>
            if let Some((main, outro)) = s.narration(p.pos) {
                <p data-testid="narration">{ main }</p>
                if let Some(o) = outro { <p class="outro">{ o }</p> }
            }
            { events(p) }
        </aside>
    }
}

/// The events of step `pos`, for every trace shown (side by side, the variants differ most
/// in what the kernel did).
fn events(p: &Props) -> Html {
    if p.pos == 0 {
        return html! {};
    }
    let traces = &p.session.traces;
    html! {
        <>
            if let (Some(_), Some(right)) = (p.event, traces.get(1)) {
                <p class="note">{ format!("Stepping by event follows {}; {} shows the whole step.", traces[0].variant, right.variant) }</p>
            }
            { for traces.iter().enumerate().map(|(n, t)| {
                // Only the left trace's events are stepped through.
                let (event, on) = match n { 0 => (p.event, Some(&p.on_nav)), _ => (None, None) };
                step_events(t, p.pos, event, on)
            }) }
        </>
    }
}

/// The events of step `pos` of trace `t`, the first [`EVENTS_LISTED`] of them; `event`
/// highlighted with the kernel function it stands for, and each clickable when `on` is given.
fn step_events(t: &Trace, pos: usize, event: Option<usize>, on: Option<&Callback<Nav>>) -> Html {
    let events = &t.steps[pos - 1].events;
    if events.is_empty() {
        return html! {};
    }
    let item = |(i, e): (usize, &TraceEvent)| {
        let k = i + 1;
        let onclick = on.map(|on| on.reform(move |_| Nav::At { pos, k }));
        let sel = event == Some(k);
        html! {
            <li class={classes!(sel.then_some("sel"))} aria-current={sel.then_some("step")} {onclick}>{ e.to_string() }</li>
        }
    };
    let selected = event.and_then(|k| events.get(k - 1));
    html! {
        <>
            <h3>{ format!("What the kernel did ({})", t.variant) }</h3>
            if let Some(f) = selected.and_then(|e| t.kernel_fn(e)) {
                <p class="kfn" data-testid="kernel-fn">
                    { "In the kernel: " }
                    <a href={f.url()} target="_blank" rel="noopener"><code>{ f.name }</code></a>
                    { format!(" in {} ({})", f.file, f.tag) }
                </p>
            }
            <ol class="events" data-variant={t.variant.clone()}>
                { for events.iter().enumerate().take(EVENTS_LISTED).map(item) }
                if events.len() > EVENTS_LISTED {
                    <li class="more" data-testid="more-events">
                        { format!("… and {} more (the trace JSON has every one)", events.len() - EVENTS_LISTED) }
                    </li>
                }
            </ol>
        </>
    }
}

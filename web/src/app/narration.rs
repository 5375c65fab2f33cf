//! The narration beside the diagram: the walkthrough's text for the position and the events
//! of the step, in the kernel's words.

use super::Shared;
use serde_json::Value;
use skblab_core::trace::Event as TraceEvent;
use skblab_core::Trace;
use yew::prelude::*;

/// A step lists at most this many events: one op with a `count` or a burst of frames can make
/// thousands, and each list item costs the page style and layout on every step.
const EVENTS_LISTED: usize = 200;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub session: Shared,
    pub pos: usize,
}

pub fn narration(p: &Props) -> Html {
    let s = &p.session;
    html! {
        <aside class="narration" aria-live="polite">
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
    let Some(i) = p.pos.checked_sub(1) else {
        return html! {};
    };
    html! { <>{ for p.session.traces.iter().map(|t| step_events(t, i)) }</> }
}

/// Step `i`'s events of trace `t`, the first [`EVENTS_LISTED`] of them.
fn step_events(t: &Trace, i: usize) -> Html {
    let events = &t.steps[i].events;
    if events.is_empty() {
        return html! {};
    }
    html! {
        <>
            <h3>{ format!("What the kernel did ({})", t.variant) }</h3>
            <ol class="events" data-variant={t.variant.clone()}>
                { for events.iter().take(EVENTS_LISTED).map(|e| html! { <li>{ event_text(e) }</li> }) }
                if events.len() > EVENTS_LISTED {
                    <li class="more" data-testid="more-events">
                        { format!("… and {} more (the trace JSON has every one)", events.len() - EVENTS_LISTED) }
                    </li>
                }
            </ol>
        </>
    }
}

/// `alloc_page page=3 order=0 cpu=0`: an event in the kernel's words, for any mechanism.
fn event_text(e: &TraceEvent) -> String {
    // Every event serializes to a map tagged by `ev`.
    let Ok(Value::Object(o)) = serde_json::to_value(e) else {
        return "?".into();
    };
    let mut out = o
        .get("ev")
        .and_then(Value::as_str)
        .unwrap_or("?")
        .to_string();
    for (k, v) in o.iter().filter(|(k, _)| *k != "ev") {
        out.push_str(&format!(" {k}={v}"));
    }
    out
}

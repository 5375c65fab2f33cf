//! The narration beside the diagram: the walkthrough's text for the position and the events
//! of the step, in the kernel's words.

use super::Shared;
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

/// The events of step `pos` of the left (or only) trace.
fn events(p: &Props) -> Html {
    let t = &p.session.traces[0];
    let events = (p.pos.checked_sub(1))
        .map(|i| t.steps[i].events.as_slice())
        .unwrap_or(&[]);
    if events.is_empty() {
        return html! {};
    }
    html! {
        <>
            <h3>{ format!("What the kernel did ({})", t.variant) }</h3>
            <ol class="events">
                { for events.iter().take(EVENTS_LISTED).map(|e| html! { <li>{ e.to_string() }</li> }) }
                if events.len() > EVENTS_LISTED {
                    <li class="more" data-testid="more-events">
                        { format!("… and {} more (the trace JSON has every one)", events.len() - EVENTS_LISTED) }
                    </li>
                }
            </ol>
        </>
    }
}

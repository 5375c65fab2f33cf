//! The narration beside the diagram: the walkthrough's text for the position and, lane by
//! lane, the events of the step in the kernel's words. Either lane can be stepped: the one
//! that leads moves with the keys, a click on an event leads from it, and in lockstep the
//! other lane follows to the event of the same kind (or says it has none).
//!
//! The lists are markup (as Yew nodes, a step of 700 events cost a frame at every move), each
//! a window of the step's events around the one selected, with one click and one change
//! listener acting for all of them.

use super::controls::Nav;
use super::stepping::Lanes;
use super::{emit_some, Shared};
use crate::diagram::esc;
use crate::session::LANES;
use skblab_core::events::Event as TraceEvent;
use std::fmt::Write;
use wasm_bindgen::JsCast;
use web_sys::{Element, HtmlSelectElement};
use yew::prelude::*;

/// A list holds at most this many events, the window with the selected one; the events
/// before and after it are one click away.
const WINDOW: usize = 100;
/// From this many events on, a lane offers to list one kind only.
const LONG: usize = 20;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub session: Shared,
    pub pos: usize,
    pub lanes: Lanes,
    /// The lane the keys step.
    pub lead: usize,
    pub on_nav: Callback<Nav>,
}

pub fn narration(p: &Props) -> Html {
    let s = &p.session;
    html! {
        <aside class="narration">
            <div aria-live="polite">
                <h2 data-testid="title">{ &s.title }</h2>
                if let Some((main, outro)) = s.narration(p.pos) {
                    <p data-testid="narration">{ main }</p>
                    if let Some(o) = outro { <p class="outro">{ o }</p> }
                }
            </div>
            { events(p) }
        </aside>
    }
}

/// The events of step `pos`, lane by lane (side by side, the variants differ most in what
/// the kernel did), with the lockstep toggle when there are two.
fn events(p: &Props) -> Html {
    let (s, pos) = (&p.session, p.pos);
    if pos == 0 {
        return html! {};
    }
    let lanes = s.traces.len().min(LANES);
    let mut o = String::new();
    if lanes > 1 {
        let on = if p.lanes.lockstep { " checked" } else { "" };
        let _ = write!(
            o,
            r#"<label class="lockstep"><input type="checkbox" data-lockstep=""{on}> Lockstep: the other lane follows to the same kind of event</label>"#
        );
    }
    for lane in 0..lanes {
        lane_events(&mut o, p, lane);
    }
    let onclick = emit_some(&p.on_nav, move |e: MouseEvent| clicked(e, pos));
    let s = s.clone();
    let onchange = emit_some(&p.on_nav, move |e: Event| {
        let el: HtmlSelectElement = e.target()?.dyn_into().ok()?;
        let lane = el.get_attribute("data-filter")?.parse().ok()?;
        let v = el.value();
        let kind = (s.events(lane, pos).iter())
            .map(TraceEvent::kind)
            .find(|k| *k == v);
        Some(Nav::Filter(lane, kind))
    });
    html! {
        <div class="lanes" {onclick} {onchange}>{ Html::from_html_unchecked(o.into()) }</div>
    }
}

/// What a click in the lists asks for: lockstep, or in a lane an event, the next or
/// previous of a kind, or the lane to lead.
fn clicked(e: MouseEvent, pos: usize) -> Option<Nav> {
    let el: Element = e.target()?.dyn_into().ok()?;
    let near = |sel: &str| el.closest(sel).ok().flatten();
    let num = |el: Element, attr: &str| el.get_attribute(attr)?.parse().ok();
    if near("[data-lockstep]").is_some() {
        return Some(Nav::Lockstep);
    }
    let lane = num(near("[data-lane]")?, "data-lane")?;
    if let Some(k) = near("[data-k]").and_then(|el| num(el, "data-k")) {
        return Some(Nav::At { lane, pos, k });
    }
    if let Some(d) = near("[data-kind]").and_then(|el| num(el, "data-kind")) {
        return Some(Nav::Kind(lane, d as isize));
    }
    near("[data-lead]").map(|_| Nav::Lead(Some(lane)))
}

/// Lane `lane`'s events of the step: the selected one's kernel function and kind, what
/// lockstep could not match, the filter by kind, and the window of the list.
fn lane_events(o: &mut String, p: &Props, lane: usize) {
    let s = &p.session;
    let (t, events) = (&s.traces[lane], s.events(lane, p.pos));
    if events.is_empty() {
        return;
    }
    let (leads, at, two) = (lane == p.lead, p.lanes.at[lane], s.traces.len() > 1);
    let variant = esc(&t.variant);
    let _ = write!(
        o,
        r#"<section class="lane{}" data-lane="{lane}"><h3>What the kernel did ({variant})"#,
        if leads && two { " leads" } else { "" }
    );
    match (two, leads) {
        (true, true) => o.push_str(r#" <span class="tag">↑↓ step this lane</span>"#),
        (true, false) => {
            o.push_str(r#" <button class="small" data-lead="">Step this lane (L)</button>"#)
        }
        _ => {}
    }
    o.push_str("</h3>");
    let selected = at.and_then(|k| Some((k, events.get(k.checked_sub(1)?)?)));
    if let Some((k, e)) = selected {
        if let Some(f) = t.kernel_fn(e) {
            let _ = write!(
                o,
                r#"<p class="kfn"{}>In the kernel: <a href="{}" target="_blank" rel="noopener"><code>{}</code></a> in {} ({})</p>"#,
                if leads {
                    r#" data-testid="kernel-fn""#
                } else {
                    ""
                },
                f.url(),
                f.name,
                f.file,
                f.tag
            );
        }
        let kind = e.kind();
        let count = |evs: &[TraceEvent]| evs.iter().filter(|x| x.kind() == kind).count();
        let _ = write!(
            o,
            r#"<p class="kind"><button class="small" data-kind="-1" aria-label="Previous {kind}">◀</button> {kind} {} of {} <button class="small" data-kind="1" aria-label="Next {kind}">▶</button></p>"#,
            count(&events[..k]),
            count(events)
        );
    }
    if let (true, false, true, Some(k)) = (two, leads, p.lanes.lockstep, p.lanes.at[p.lead]) {
        if let Err((kind, nth, have)) = s.counterpart(p.lead, lane, p.pos, k) {
            let shown = at.map_or("the whole step".into(), |k| format!("event {k}"));
            let _ = write!(
                o,
                r#"<p class="note miss" data-testid="no-counterpart">This kernel has {} {kind} in this step; it shows {shown}.</p>"#,
                match have {
                    0 => "no".to_string(),
                    n => format!("only {n} (the other lane is at no. {nth})"),
                }
            );
        }
    }
    let filter = p.lanes.filter[lane];
    filter_select(o, lane, events, filter);
    let shown: Vec<usize> = (0..events.len())
        .filter(|&i| filter.is_none_or(|f| events[i].kind() == f))
        .collect();
    let here = at.and_then(|k| shown.iter().position(|&i| i + 1 == k));
    let start = here.unwrap_or(0) / WINDOW * WINDOW;
    let end = (start + WINDOW).min(shown.len());
    let _ = write!(o, r#"<ol class="events" data-variant="{variant}">"#);
    if start > 0 {
        let k = shown[start - 1] + 1;
        let _ = write!(
            o,
            r#"<li class="more" data-k="{k}">▲ {start} earlier events, up to event {k}</li>"#
        );
    }
    let held = leads && p.lanes.end;
    for &i in &shown[start..end] {
        let k = i + 1;
        let mark = match (at == Some(k), held) {
            (true, false) => r#" class="sel" aria-current="step""#,
            (true, true) => r#" class="sel""#,
            _ => "",
        };
        let _ = write!(
            o,
            r#"<li value="{k}" data-k="{k}"{mark}>{}</li>"#,
            esc(&events[i].to_string())
        );
    }
    if end < shown.len() {
        let k = shown[end] + 1;
        let _ = write!(
            o,
            r#"<li class="more" data-testid="more-events" data-k="{k}">▼ {} later events, from event {k}</li>"#,
            shown.len() - end
        );
    } else {
        end_marker(o, p, held);
    }
    o.push_str("</ol></section>");
}

/// The end of the step's list; where the leading lane rests at it, what the next ↓ does.
fn end_marker(o: &mut String, p: &Props, held: bool) {
    let pos = p.pos;
    let next = match (held, pos < p.session.len()) {
        (false, _) => String::new(),
        (true, true) => format!(": ↓ goes on to step {}", pos + 1),
        (true, false) => ", the last".into(),
    };
    let mark = if held {
        r#" sel" aria-current="step" data-testid="step-end"#
    } else {
        ""
    };
    let _ = write!(
        o,
        r#"<li class="more end{mark}">End of step {pos}{next}</li>"#
    );
}

/// The list's filter by kind, for a long step with more than one kind (or while one is
/// chosen): each kind with its number of events, in the order they first occur.
fn filter_select(o: &mut String, lane: usize, events: &[TraceEvent], filter: Option<&'static str>) {
    let mut kinds: Vec<(&str, usize)> = filter.map(|f| (f, 0)).into_iter().collect();
    for e in events {
        match kinds.iter_mut().find(|(k, _)| *k == e.kind()) {
            Some((_, n)) => *n += 1,
            None => kinds.push((e.kind(), 1)),
        }
    }
    if filter.is_none() && (events.len() < LONG || kinds.len() < 2) {
        return;
    }
    let _ = write!(
        o,
        r#"<label class="filter">List <select data-filter="{lane}"><option value="">every kind ({})</option>"#,
        events.len()
    );
    for (k, n) in kinds {
        let sel = if filter == Some(k) { " selected" } else { "" };
        let _ = write!(o, r#"<option value="{k}"{sel}>{k} ({n})</option>"#);
    }
    o.push_str("</select></label>");
}

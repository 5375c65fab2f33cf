//! The narration beside the diagram: the walkthrough's text for the position and, lane by
//! lane, the events of the step in the kernel's words. Either lane can be stepped: the one
//! that leads moves with the keys, a click on an event leads from it, and in lockstep the
//! other lane stands at the same point of the input (the core's `input`), and says when it
//! makes nothing like the leading lane's event there.
//!
//! Each list is a window of at most 100 of the step's events around the one selected, an item
//! per event keyed by its number, so a step rewrites the items' texts in place and moving
//! from one event to the next changes only the two items whose mark moved (as one block of
//! markup, the whole list was parsed, styled and laid out again at every move); one click and
//! one change listener act for all of them.
//!
//! Of the window, only the items down to the pane's view (and a margin) and past the selected
//! one are written; one empty item of about their height stands for the rest, and the app
//! writes more as the pane scrolls ([`reach`]). A step of the 500-skb bench lists 52 events,
//! of which about 15 are in view: writing and laying out all of them was a third of a step.

use super::pure::{pure, View};
use super::{emit_some, Shared};
use crate::diagram::esc;
use crate::navigation::{Crossed, Lanes, Nav};
use crate::session::LANES;
use skblab_core::call_path::{CallPath, FRAME_SEP};
use skblab_core::capture::{Partner, Stack};
use skblab_core::events::Event as TraceEvent;
use skblab_core::input::Counterpart;
use std::fmt::Write;
use wasm_bindgen::JsCast;
use web_sys::{Element, HtmlSelectElement};
use yew::prelude::*;
use yew::virtual_dom::VList;

/// A list holds at most this many events, the window with the selected one; the events
/// before and after it are one click away.
const WINDOW: usize = 100;
/// From this many events on, a lane offers to list one kind only.
const LONG: usize = 20;
/// An item's estimated height: a line of 11-px monospace (line-height 1.45) per this many
/// characters of its text: about what a line of the 320-px pane holds (fewer in a narrower
/// pane, whose items are then written further down than the view needs, never short of it).
const LINE_PX: u32 = 16;
const LINE_CHARS: u32 = 40;

/// How far down the lists to write items, for a pane whose content is in view down to
/// `seen` pixels: rounded up to a band of 200, so that a small scroll writes nothing new.
/// (The lists start below the pane's top, under their headings: that, and the band, is the
/// margin for an estimate that runs long.) At least what a pane on a laptop's screen shows:
/// before the pane is drawn, it measures nothing.
pub fn reach(seen: f64) -> u32 {
    const BAND: u32 = 200;
    (seen.max(600.0) as u32 / BAND + 1) * BAND
}

#[derive(Properties, PartialEq)]
pub struct Props {
    pub session: Shared,
    pub pos: usize,
    pub lanes: Lanes,
    /// The lane the keys step.
    pub lead: usize,
    pub on_nav: Callback<Nav>,
    /// How far down (pixels from the pane's top) a list's items are written ([`reach`]).
    pub reach: u32,
}

pub fn narration(p: &Props) -> Html {
    let text = Text {
        session: p.session.clone(),
        pos: p.pos,
    };
    html! {
        // Focusable: a keyboard can scroll it when it overflows (axe: scrollable-region-focusable).
        // The id lets a selector start from it rather than walk the whole page.
        <aside class="narration" id="narration" tabindex="0">
            { pure(text) }
            { events(p) }
        </aside>
    }
}

/// The walkthrough's text at the position; it stays at the pane's top while the events under
/// it scroll (style.css; focusable, as it scrolls itself when long).
#[derive(PartialEq)]
struct Text {
    session: Shared,
    pos: usize,
}

impl View for Text {
    fn view(&self) -> Html {
        let s = &self.session;
        let mut o = format!(
            r#"<div class="said" tabindex="0" aria-live="polite"><h2 data-testid="title">{}</h2>"#,
            esc(&s.title)
        );
        // Before the first step, what the running kernel judged of the lesson (the core's line).
        let kernel = s.walk.as_ref().and_then(|w| w.kernel.as_deref());
        if let (0, Some(k)) = (self.pos, kernel) {
            o.push_str(r#"<p class="kernel" data-testid="kernel-judged">"#);
            o.push_str(&esc(k));
            o.push_str("</p>");
        }
        if self.pos == 0 {
            cite(&mut o, s);
        }
        if let Some((main, outro)) = s.narration(self.pos) {
            o.push_str(r#"<div data-testid="narration">"#);
            paragraphs(&mut o, main);
            o.push_str("</div>");
            if let Some(outro) = outro {
                o.push_str(r#"<div class="outro">"#);
                paragraphs(&mut o, outro);
                o.push_str("</div>");
            }
        }
        o.push_str("</div>");
        Html::from_html_unchecked(o.into())
    }
}

/// What the session cites, one linked line each (the core's citations).
pub(super) fn cite(out: &mut String, s: &Shared) {
    let cited = s.citations();
    if cited.is_empty() {
        return;
    }
    out.push_str(r#"<ul class="cite" data-testid="cite" aria-label="Sources">"#);
    for (text, url) in cited {
        let _ = write!(
            out,
            r#"<li><a href="{}">{}</a></li>"#,
            esc(&url),
            esc(&text)
        );
    }
    out.push_str("</ul>");
}

/// `text` as HTML paragraphs, a blank line starting each, as the terminal prints them.
pub(super) fn paragraphs(out: &mut String, text: &str) {
    for p in skblab_core::walkthrough::paragraphs(text) {
        let _ = write!(out, "<p>{}</p>", esc(p));
    }
}

/// The events of step `pos`, lane by lane (side by side, the variants differ most in what
/// the kernel did), with the lockstep toggle when there are two.
fn events(p: &Props) -> Html {
    let (s, pos) = (&p.session, p.pos);
    let lanes = match pos {
        0 => 0,
        _ => s.traces.len().min(LANES),
    };
    let mut o = String::new();
    if lanes > 1 {
        let on = if p.lanes.apart { "" } else { " checked" };
        let beside = match s.capture {
            Some(_) => "event of the same skb (paired by its bytes' place in the stream)",
            None => "input (the same frame in, bytes copied or read)",
        };
        let _ = write!(
            o,
            r#"<label class="lockstep"><input type="checkbox" data-lockstep=""{on}> Lockstep: the other lane stands at the same {beside}</label>"#
        );
    }
    moments(&mut o, p);
    let lists = (0..lanes).map(|lane| pure(Lane::of(p, lane)));
    let onclick = emit_some(&p.on_nav, clicked);
    // A kind is chosen by one of its events (the first), which the app reads it from.
    let onchange = emit_some(&p.on_nav, |e: Event| {
        let el: HtmlSelectElement = e.target()?.unchecked_into();
        let lane = el.get_attribute("data-filter")?.parse().ok()?;
        Some(Nav::Filter(lane, el.value().parse().ok()))
    });
    html! {
        <div class="lanes" {onclick} {onchange}>
            { Html::from_html_unchecked(o.into()) }
            { for lists }
        </div>
    }
}

/// The walkthrough's key moments (its patch's own events, its lesson's `[[moment]]`s): how
/// many, and the buttons that go to the previous or next one in both lanes at once.
fn moments(o: &mut String, p: &Props) {
    let s = &p.session;
    let all = s.moments();
    let n: usize = all.iter().map(Vec::len).sum();
    if n == 0 {
        return;
    }
    let here = (p.pos, p.lanes.at);
    let off = |d| match s.moment(&all, p.lead, here, d) {
        Some(_) => "",
        None => " disabled",
    };
    let (back, on) = (off(-1), off(1));
    let _ = write!(
        o,
        r#"<div class="moments" role="group" aria-label="Key moments" data-testid="moments">Key moments ({n}): <button class="small" data-moment="-1"{back}>◂ previous</button> <button class="small" data-moment="1"{on}>next ▸</button></div>"#
    );
}

/// Markup as an item of a keyed list.
fn item(key: String, markup: String) -> Html {
    let raw = Html::from_html_unchecked(markup.into());
    VList::with_children(vec![raw], Some(key.into())).into()
}

/// What a click in the lists asks for: lockstep, or in a lane an event or the lane to lead.
fn clicked(e: MouseEvent) -> Option<Nav> {
    let el: Element = e.target()?.dyn_into().ok()?;
    let hit = el
        .closest("[data-lockstep],[data-k],[data-kind],[data-lead],[data-moment]")
        .ok()??;
    let num = |el: &Element, attr: &str| el.get_attribute(attr)?.parse().ok();
    let lane = el
        .closest("[data-lane]")
        .ok()?
        .and_then(|l| num(&l, "data-lane"));
    Some(match (num(&hit, "data-k"), lane) {
        _ if hit.has_attribute("data-lockstep") => Nav::Lockstep,
        _ if hit.has_attribute("data-moment") => {
            Nav::Moment(hit.get_attribute("data-moment")?.parse().ok()?)
        }
        (Some(k), Some(lane)) => Nav::At { lane, k },
        (_, lane) => Nav::Lead(lane?),
    })
}

/// What lane `lane`'s list reads of the position: a move that leaves them alone (an event
/// of the other lane, with lockstep off) leaves the lane alone.
#[derive(PartialEq)]
struct Lane {
    session: Shared,
    pos: usize,
    lane: usize,
    /// The lane the keys step.
    lead: usize,
    at: Option<usize>,
    filter: Option<&'static str>,
    /// Lockstep has this lane follow the leading lane's event `k`.
    follows: Option<usize>,
    /// The leading lane rests past its step's last event.
    held: bool,
    /// The leading lane's last move left its step for want of an event of the filter's kind.
    crossed: Option<Crossed>,
    /// Lockstep is off, and where both lanes stand (whether they are compared).
    apart: bool,
    both: [Option<usize>; LANES],
    reach: u32,
}

impl Lane {
    fn of(p: &Props, lane: usize) -> Lane {
        let (leads, l) = (lane == p.lead, &p.lanes);
        let two = p.session.traces.len() > 1;
        Lane {
            session: p.session.clone(),
            pos: p.pos,
            lane,
            lead: p.lead,
            at: l.at[lane],
            filter: l.filter[lane],
            follows: l.at[p.lead].filter(|_| two && !leads && !l.apart),
            held: leads && l.end,
            crossed: l.crossed.filter(|_| leads),
            apart: two && !leads && l.apart,
            both: l.at,
            reach: p.reach,
        }
    }
}

impl View for Lane {
    fn view(&self) -> Html {
        lane_events(self).unwrap_or_default()
    }
}

/// The kernel's path to the selected event's function, told as a captured stack is
/// (innermost first, the core's separator): each frame linked at its line, an inlined one
/// marked (a live stack shows its caller instead), a rename noted.
fn call_path(o: &mut String, p: &CallPath, leads: bool) {
    let id = if leads {
        r#" data-testid="call-path""#
    } else {
        ""
    };
    let _ = write!(o, r#"<p class="kpath"{id}>Path from {}: "#, p.entry.label());
    for (k, f) in p.frames.iter().enumerate().rev() {
        let url = p.url(k);
        let _ = write!(
            o,
            r#"<a href="{url}" target="_blank" rel="noopener"><code>{}</code></a>"#,
            f.name
        );
        if f.inlined {
            o.push_str(r#" <span class="inl">(inlined)</span>"#);
        }
        if let Some(r) = f.renamed {
            let _ = write!(o, r#" <span class="note">({r})</span>"#);
        }
        if k > 0 {
            o.push_str(FRAME_SEP);
        }
    }
    o.push_str("</p>");
}

/// The kernel stack a captured event was seen at, drawn as a model event's path is: the
/// core's words for where and on which CPU, then each frame linked to its function at the
/// running kernel's release, innermost first, an offset kept as text.
fn captured_stack(o: &mut String, st: &Stack) {
    let _ = write!(
        o,
        r#"<p class="kpath" data-testid="captured-stack">{}: "#,
        esc(&st.head())
    );
    for k in 0..st.frames.len() {
        let (name, offset) = st.frame(k);
        let _ = match st.url(k) {
            Some(url) => write!(
                o,
                r#"<a href="{}" target="_blank" rel="noopener"><code>{}</code></a>{}"#,
                esc(&url),
                esc(name),
                esc(offset)
            ),
            None => write!(o, "<code>{}</code>{}", esc(name), esc(offset)),
        };
        if k + 1 < st.frames.len() {
            o.push_str(FRAME_SEP);
        }
    }
    o.push_str("</p>");
}

/// Lane `lane`'s events of the step: the selected one's kernel function, what lockstep could
/// not match, the filter by kind (↑/↓ then move to the previous or next event of that kind),
/// and the window of the list.
fn lane_events(p: &Lane) -> Option<Html> {
    let (s, lane) = (&p.session, p.lane);
    let (t, events) = (&s.traces[lane], s.events(lane, p.pos));
    if events.is_empty() {
        return None;
    }
    let (leads, at, two) = (lane == p.lead, p.at, s.traces.len() > 1);
    let variant = esc(&t.variant);
    let o = &mut String::new();
    let _ = write!(o, r#"<h3>What the kernel did ({variant})"#);
    // (The leading lane's heading says so through style.css.)
    if two && !leads {
        o.push_str(r#" <button class="small" data-lead="">Step this lane</button>"#);
    }
    o.push_str("</h3>");
    let heading = Html::from_html_unchecked(std::mem::take(o).into());
    if let Some(e) = at.and_then(|k| events.get(k.checked_sub(1)?)) {
        // The lane names its kernel once (the figure's caption); a function linked at
        // another release says why, in the core's words, never a bare second version.
        if let Some(f) = t.kernel_fn(e) {
            let _ = write!(
                o,
                r#"<p class="kfn"{}>In the kernel: <a href="{}" target="_blank" rel="noopener"><code>{}</code></a> in {}"#,
                if leads {
                    r#" data-testid="kernel-fn""#
                } else {
                    ""
                },
                f.url(),
                f.name,
                f.file,
            );
            if let Some(why) = f.why {
                o.push_str("; ");
                o.push_str(why);
            }
            o.push_str("</p>");
        }
        if let Some(path) = t.call_path(p.pos.saturating_sub(1), e) {
            call_path(o, &path, leads);
        }
        if let Some(stack) = s.capture.as_ref().and_then(|c| c.capture.stack(e)) {
            captured_stack(o, &stack);
        }
    }
    if let Some(k) = p.follows {
        miss(o, p, k);
    }
    if p.apart && !s.same_input(p.pos, p.both) {
        o.push_str(r#"<p class="miss" data-testid="not-compared">Lockstep off: the lanes stand at different points of the input, so what differs is not outlined.</p>"#);
    }
    if let (Some(c), Some(kind)) = (p.crossed, p.filter) {
        let _ = write!(
            o,
            r#"<p class="miss" role="status" data-testid="crossed">{}</p>"#,
            esc(&c.say(kind))
        );
    }
    // Apart from the heading and the filter, which an event leaves alone: re-creating a
    // `<select>` costs more than the rest of an event's markup.
    let moment = std::mem::take(o);
    let filter = p.filter;
    filter_select(o, lane, events, filter);
    // The events listed (those of the filter's kind, numbered as in the step), a window of
    // them: the one with the selected event.
    let listed = |e: &TraceEvent| filter.is_none_or(|f| e.kind().name() == f);
    let here = at.filter(|&k| k > 0 && listed(&events[k - 1]));
    let here = here.map_or(0, |k| events[..k - 1].iter().filter(|e| listed(e)).count());
    let start = here / WINDOW * WINDOW;
    let (held, mut n, mut items) = (p.held, 0, Vec::new());
    let (mut before, mut after) = (None, None);
    // The items written so far: their estimated height, and the items not written.
    let (mut drawn, mut rest) = (0, 0);
    for (i, _) in events.iter().enumerate().filter(|(_, e)| listed(e)) {
        let k = i + 1;
        match n {
            n if n + 1 == start => before = Some(k),
            n if n == start + WINDOW => after = Some(k),
            n if n >= start
                && n < start + WINDOW
                && drawn >= p.reach
                && at.is_none_or(|a| k > a + 1) =>
            {
                rest += 1
            }
            n if n >= start && n < start + WINDOW => {
                let text = s.event_text(lane, p.pos, i);
                drawn += LINE_PX * (text.len() as u32).div_ceil(LINE_CHARS).max(1);
                let sel = at == Some(k);
                let (class, current) = (sel.then_some("sel"), (sel && !held).then_some("step"));
                let k = AttrValue::from(k.to_string());
                let (value, key) = (k.clone(), k.to_string());
                items.push(html! {
                    <li {key} {value} data-k={k} {class} aria-current={current}>{ text }</li>
                });
            }
            _ => {}
        }
        n += 1;
    }
    if let Some(k) = before {
        let li = format!(r#"<li class="more" data-k="{k}">▲ {start} earlier events</li>"#);
        items.insert(0, item("before".into(), li));
    }
    if rest > 0 {
        // As tall as the items not written would be, at the written ones' average.
        let h = drawn / (n.min(start + WINDOW) - start - rest).max(1) as u32 * rest as u32;
        let li = format!(
            r#"<li class="more rest" aria-hidden="true" data-rest="{rest}" style="height:{h}px"></li>"#
        );
        items.push(item("rest".into(), li));
    }
    items.push(match after {
        Some(k) => {
            let more = n - start - WINDOW;
            let li = format!(
                r#"<li class="more" data-testid="more-events" data-k="{k}">▼ {more} later events</li>"#
            );
            item("after".into(), li)
        }
        None => end_marker(p, held),
    });
    let class = classes!("lane", (leads && two).then_some("leads"));
    Some(html! {
        <section {class} data-lane={lane.to_string()}>
            { heading }
            { Html::from_html_unchecked(moment.into()) }
            { Html::from_html_unchecked(std::mem::take(o).into()) }
            <ol class="events" data-variant={t.variant.clone()}>{ for items }</ol>
        </section>
    })
}

/// Where lane `p`, in lockstep, makes no event beside the leading lane's event `k`: says so
/// on the lane, and where it is shown instead (issue 36).
fn miss(o: &mut String, p: &Lane, k: usize) {
    let s = &p.session;
    if let Some(partner) = s.partner(p.lead, p.lane, p.pos, k) {
        return unpaired(o, partner);
    }
    let Some(e) = s.events(p.lead, p.pos).get(k.wrapping_sub(1)) else {
        return;
    };
    let _ = match s.counterpart(p.lead, p.lane, p.pos, k) {
        Some(Counterpart::Nearest {
            input, exact: true, ..
        }) => write!(
            o,
            r#"<p class="miss" data-testid="no-counterpart">This kernel does no {} here ({input}): shown at the same point of the input.</p>"#,
            e.kind().name()
        ),
        Some(Counterpart::Nearest { input, .. }) => write!(
            o,
            r#"<p class="miss" data-testid="no-counterpart">This kernel takes the input in other pieces and never stands at the other lane's point: shown at its last point before it ({input}).</p>"#
        ),
        _ => Ok(()),
    };
}

/// Beside a capture, where lane `p` has no event of the leading event's skb: why it stays
/// (the core's words).
fn unpaired(o: &mut String, partner: Partner) {
    if let Partner::None(why) = partner {
        let _ = write!(
            o,
            r#"<p class="miss" data-testid="no-partner">{}</p>"#,
            esc(&why)
        );
    }
}

/// The end of the step's list; where the leading lane rests at it, what the next ↓ does.
/// A node of its own rather than markup: its text changes at every step.
fn end_marker(p: &Lane, held: bool) -> Html {
    let pos = p.pos;
    let next = match (held, pos < p.session.len()) {
        (false, _) => String::new(),
        (true, true) => format!(": ↓ goes on to step {}", pos + 1),
        (true, false) => ", the last".into(),
    };
    let class = classes!("more", "end", held.then_some("sel"));
    html! {
        <li key="after" {class} aria-current={held.then_some("step")} data-testid={held.then_some("step-end")}>
            { format!("End of step {pos}{next}") }</li>
    }
}

/// The list's filter by kind, for a long step with more than one kind (or while one is
/// chosen): each kind with its number of events, in the order they first occur.
fn filter_select(o: &mut String, lane: usize, events: &[TraceEvent], filter: Option<&'static str>) {
    // Each kind with its first event and its number of events.
    let mut kinds: Vec<(&str, usize, usize)> = Vec::new();
    for (i, e) in events.iter().enumerate() {
        match kinds.iter_mut().find(|(k, ..)| *k == e.kind().name()) {
            Some((.., n)) => *n += 1,
            None => kinds.push((e.kind().name(), i + 1, 1)),
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
    for (k, first, n) in kinds {
        let sel = if filter == Some(k) { " selected" } else { "" };
        let _ = write!(o, r#"<option value="{first}"{sel}>{k} ({n})</option>"#);
    }
    o.push_str("</select></label>");
}

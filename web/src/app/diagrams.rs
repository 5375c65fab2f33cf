//! The diagram pane: one figure per trace with the state at the position drawn as SVG, the
//! marks of what the step changed (and, side by side, what differs from the other variant),
//! the downloads, the zoom and the legend. It keeps the scenes for the position (what each lane
//! shows, replayed to its event), the zoom (kept for the tab's session) and, per figure, the
//! band of the drawing the page holds as the learner scrolls ([`diagram::window`]): only that
//! band is drawn, again when a scroll moves it.
//!
//! At 100 % a drawing unit is a pixel, so every text is at least 11 px; the drawings are
//! sized so that a narrow window stacks the panes (style.css) rather than shrinking them.

mod shown;

use super::export;
use super::scene::{scenes, Look, Scene};
use super::Shared;
use crate::diagram::{self, Shapes, ALL};
use crate::dom;
use crate::session::{Moment, LANES};
use gloo_events::EventListener;
use shown::{canvas_heights, Shown};
use skblab_core::scenario::about_variant;
use skblab_core::Trace;
use wasm_bindgen::JsCast;
use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub session: Shared,
    pub pos: usize,
    /// Stepping by event: lane L is drawn after event `events[L]` (1-based) of step `pos`.
    pub events: [Option<usize>; LANES],
    /// Beside a capture: asks for the model's prediction as a second lane.
    #[prop_or_default]
    pub on_beside: Option<Callback<()>>,
}

#[derive(Clone)]
pub enum Msg {
    /// Diagram `i` was scrolled or laid out: the band of it to keep in the page, and the
    /// drawing units at the top and bottom of its view.
    Scroll(usize, (u32, u32), (u32, u32)),
    /// The frame after a render that held pieces back ([`Shown::new`]) was painted: draw them.
    Settle,
    /// The page is idle: draw a move ahead ([`Ahead`]).
    Ahead,
    ExportJson(usize),
    /// Lane `Some(i)`, or every lane in one figure (`None`), as SVG, or (`true`) as PNG.
    Figure(Option<usize>, bool),
    /// Every step and key moment as 16:9 slides ([`export::deck`]).
    Deck,
    Zoom(Zoom),
}

/// A zoom move, by button or key (+ in, - out, 0 fit, 1 back to 100 %).
#[derive(Clone, Copy)]
pub enum Zoom {
    In,
    Out,
    Fit,
    Actual,
}

/// The zoom steps, in percent; fit is `None`.
const ZOOMS: [u32; 9] = [50, 67, 80, 90, 100, 110, 125, 150, 200];
const ZOOM_KEY: &str = "skblab.zoom";

pub struct Diagrams {
    /// What each trace shows at the position, and its drawing near the view.
    scenes: Vec<Scene>,
    drawn: Vec<Shown>,
    /// Per lane, the skbs' shapes of its last drawing ([`Shapes`]).
    shapes: Vec<Shapes>,
    /// Per trace, the height of its tallest drawing (computed when the session opens).
    canvas: Vec<u32>,
    /// Per diagram, the band of it in the page.
    windows: Vec<(u32, u32)>,
    /// Per diagram, its scroll area and the drawing units at the top and bottom of its view
    /// (what lies below is cut off, and a cue says how much).
    wraps: Vec<NodeRef>,
    views: Vec<(u32, u32)>,
    /// Whether the frame after was asked for, to draw the pieces held back, and whether an
    /// idle moment was, to draw a move ahead.
    asked: (bool, bool),
    /// The moves ahead drawn so far (at most one each way).
    ahead: Vec<Ahead>,
    /// What every mark the session's drawings use means: the entries of index.html's
    /// `<template id="legend">` ([`super::handout::legend`]), written once the session is
    /// drawn (as Yew nodes or a string it cost the bundle a kilobyte).
    legend: NodeRef,
    /// The legend has been written for this session.
    legend_written: bool,
    /// Percent, or `None`: fit the pane's width.
    zoom: Option<u32>,
    /// Presentation mode (`?present`, toggled by index.html, which reloads the page): larger
    /// text (style.css; the drawings' too, drawn narrower and fitted to their lanes), and the
    /// queues that stay empty through the whole trace left out.
    present: bool,
    /// The handout (`?handout`): every step at once ([`super::handout`]).
    handout: bool,
    /// The drawings fit their lanes whatever the zoom: in presentation mode and in the embed
    /// view (`?embed`, an iframe of any width).
    fit: bool,
    /// Presentation mode's focus on the pages (`?present&pages`): every queue left out, so
    /// that both lanes' pages fit a 720p projector at 150 % (853×480 px).
    pages: bool,
    /// Per trace, the queues left out: its idle queues ([`Trace::idle_queues`], replayed once
    /// per session when presentation mode asks), or every queue when it shows only pages.
    idle: Option<Vec<Vec<String>>>,
    _keys: EventListener,
    _settle: [EventListener; 2],
}

/// What a capture's lane says under its caption: where its facts come from (docs/trace.md).
const CAPTURE_ABOUT: &str = "A step per syscall of the program on a traced socket; its events \
are the facts that came before it, each marked seen (at its tracepoint) or inferred (from \
what). Layouts were read at the device, a page's count then.";

/// The band a diagram keeps before its first scroll: more than any screen's scroll area shows.
const FIRST_WINDOW: (u32, u32) = (0, 3000);

impl Component for Diagrams {
    type Message = Msg;
    type Properties = Props;

    fn create(ctx: &Context<Self>) -> Self {
        let zoom = match dom::load(dom::Kept::Tab, ZOOM_KEY).as_deref() {
            Some("fit") => None,
            Some(z) => z.parse().ok().filter(|z| ZOOMS.contains(z)).or(Some(100)),
            None => Some(100),
        };
        let present = dom::mode("present");
        let mut d = Diagrams {
            scenes: Vec::new(),
            drawn: Vec::new(),
            shapes: Vec::new(),
            canvas: canvas_heights(&ctx.props().session, present),
            windows: Vec::new(),
            wraps: Vec::new(),
            views: Vec::new(),
            asked: (false, false),
            ahead: Vec::new(),
            legend: NodeRef::default(),
            legend_written: false,
            zoom,
            present,
            handout: dom::mode("handout"),
            fit: present || dom::mode("embed"),
            pages: present && dom::mode("pages"),
            idle: None,
            _keys: zoom_keys(ctx),
            _settle: [(dom::SETTLE, Msg::Settle), (dom::IDLE, Msg::Ahead)].map(|(name, m)| {
                let link = ctx.link().clone();
                EventListener::new(&dom::document(), name, move |_| {
                    link.send_message(m.clone())
                })
            }),
        };
        d.redraw(ctx.props());
        d
    }

    fn changed(&mut self, ctx: &Context<Self>, old: &Props) -> bool {
        let p = ctx.props();
        if p.session != old.session {
            self.canvas = canvas_heights(&p.session, self.present);
            (self.idle, self.ahead, self.legend_written) = (None, Vec::new(), false);
        }
        self.redraw(p);
        true
    }

    fn update(&mut self, ctx: &Context<Self>, msg: Msg) -> bool {
        let p = ctx.props();
        match msg {
            Msg::Scroll(i, band, view) => {
                if self.windows.len() <= i {
                    self.windows.resize(i + 1, FIRST_WINDOW);
                    self.views.resize(i + 1, ALL);
                }
                let cut = |d: &Self, v: (u32, u32)| d.drawn.get(i).map(|s| s.drawing.below(v.1));
                let recount = cut(self, self.views[i]) != cut(self, view);
                // The moves ahead were drawn for the view and band before.
                if std::mem::replace(&mut self.views[i], view) != view {
                    self.ahead.clear();
                }
                let moved = std::mem::replace(&mut self.windows[i], band) != band;
                if moved {
                    self.draw_lane(p, i);
                }
                return moved || recount;
            }
            Msg::Settle => {
                self.asked.0 = false;
                let held = self.drawn.iter().any(Shown::holds);
                self.drawn.iter_mut().for_each(Shown::settle);
                return held;
            }
            Msg::Ahead => {
                // (With pieces held, the render that draws them asks again.)
                self.asked.1 = false;
                // The moves ahead first (the next key wants them), then the legend.
                if !self.drawn.iter().any(Shown::holds) {
                    match self.unready(p) {
                        Some(_) => self.prepare(p),
                        None if !self.legend_written => self.write_legend(p),
                        None => {}
                    }
                }
            }
            Msg::ExportJson(i) => {
                if let Some(t) = p.session.traces.get(i) {
                    // Through a Value: the trace's types then have one serializer in the wasm,
                    // the one an event's Display uses already, not a second one for text (8 KiB).
                    let json = serde_json::to_value(t)
                        .and_then(|v| serde_json::to_string_pretty(&v))
                        .expect("traces serialize");
                    let name = format!("skblab-{}-{}.json", t.mechanism, t.variant);
                    dom::download(&name, "application/json", &json);
                }
            }
            Msg::Figure(lane, png) => self.export(p, lane, png),
            Msg::Deck => self.deck(&p.session),
            Msg::Zoom(z) => {
                let old = self.zoom;
                self.zoom = match z {
                    Zoom::Fit => None,
                    Zoom::Actual => Some(100),
                    Zoom::In => ZOOMS.iter().copied().find(|&s| s > old.unwrap_or(100)),
                    Zoom::Out => ZOOMS
                        .iter()
                        .copied()
                        .rev()
                        .find(|&s| s < old.unwrap_or(100)),
                }
                .or(old.filter(|_| matches!(z, Zoom::In | Zoom::Out)));
                let text = self.zoom.map_or("fit".into(), |z| z.to_string());
                dom::store(dom::Kept::Tab, ZOOM_KEY, &text);
                // Zoomed out, the view shows more of the drawing than the band kept: grow it
                // until the next scroll chooses again.
                let (from, to) = (old.unwrap_or(100), self.zoom.unwrap_or(100));
                for (top, bottom) in self.windows.iter_mut().filter(|_| to < from) {
                    *bottom = *top + (*bottom - *top) * from / to;
                }
                if to < from {
                    (0..self.scenes.len()).for_each(|i| self.draw_lane(p, i));
                }
                return self.zoom != old;
            }
        }
        false
    }

    /// After any render, a view whose height or drawing changed has its cue recounted, and
    /// pieces held back are drawn once this frame is painted; a session's legend, once the
    /// page is idle.
    fn rendered(&mut self, ctx: &Context<Self>, _first: bool) {
        for (i, (wrap, shown)) in self.wraps.iter().zip(&self.drawn).enumerate() {
            let Some(el) = wrap.cast::<web_sys::Element>() else {
                continue;
            };
            let (band, view) = measure(&el, shown.drawing.width, self.shown_zoom());
            if self.views.get(i) != Some(&view) {
                ctx.link().send_message(Msg::Scroll(i, band, view));
            }
        }
        if self.drawn.iter().any(Shown::holds) {
            self.ask(false);
        } else if !self.legend_written || self.unready(ctx.props()).is_some() {
            self.ask(true);
        }
    }

    fn view(&self, ctx: &Context<Self>) -> Html {
        let s = &ctx.props().session;
        if self.handout {
            return super::handout::handout(s, self.look(), &dom::inner_html("legend"));
        }
        // Two model lanes side by side; a kernel lane spans the row under them (or under the
        // one lane, which keeps the whole width it was drawn for).
        let split = s.traces.len() > 1;
        let link = ctx.link();
        let zoom = self.shown_zoom();
        let button = |m: Msg, label: AttrValue, text: &'static str| {
            html! { <button class="small" aria-label={label.clone()} title={label} onclick={link.callback(move |_| m.clone())}>{ text }</button> }
        };
        html! {
            <section class={classes!("diagrams", split.then_some("split"))} aria-label="Diagram">
                <div class="zoom" role="group" aria-label="Zoom">
                    { button(Msg::Zoom(Zoom::Out), "Zoom out".into(), "−") }
                    <output data-testid="zoom">{ zoom.map_or("fit".into(), |z| format!("{z} %")) }</output>
                    { button(Msg::Zoom(Zoom::In), "Zoom in".into(), "+") }
                    { button(Msg::Zoom(Zoom::Actual), "Zoom 100 %".into(), "100 %") }
                    { button(Msg::Zoom(Zoom::Fit), "Fit the width".into(), "fit") }
                    <span class="both">
                        <label title="Figures downloaded as 16:9 slides, the figure in the middle"><input type="checkbox" id="slide" data-testid="slide" />{ " 16:9" }</label>
                        if s.traces.len() > 1 {
                            { " · Both lanes in one figure:" }
                            { button(Msg::Figure(None, false), "Download both lanes as one SVG".into(), "SVG") }
                            { button(Msg::Figure(None, true), "Download both lanes as one PNG".into(), "PNG") }
                        }
                        { button(Msg::Deck, "Download every step and key moment as 16:9 slides (one HTML page)".into(), "slides") }
                    </span>
                </div>
                { for s.traces.iter().zip(&self.drawn).enumerate().map(|(i, (t, shown))| html! {
                    <figure data-variant={t.variant.clone()}>
                        <figcaption>
                            if let Some(c) = s.capture.as_ref().filter(|_| i == 0) {
                                <strong>{ "Linux " }{ &c.capture.kernel }</strong>{ " · its own skbs, traced by " }<code>{ "skblab trace" }</code>
                            } else {
                                <strong>{ &t.variant }</strong>{ " · kernel " }{ t.era.name() }
                            }
                            { button(Msg::Figure(Some(i), false), format!("Download the {} diagram as SVG", t.variant).into(), "SVG") }
                            { button(Msg::Figure(Some(i), true), format!("Download the {} diagram as PNG", t.variant).into(), "PNG") }
                            { button(Msg::ExportJson(i), format!("Download the {} trace as JSON", t.variant).into(), "JSON") }
                            if s.capture.is_some() && i == 0 {
                                <div class="about" data-testid="capture-about">{ CAPTURE_ABOUT }</div>
                                if let Some(on) = ctx.props().on_beside.as_ref().filter(|_| s.traces.len() == 1) {
                                    <button class="small" data-testid="beside" onclick={on.reform(|_| ())}>{ "Beside it: the model's prediction" }</button>
                                }
                            } else if let Some(b) = s.capture.as_ref().and_then(|c| c.beside.as_deref()) {
                                <div class="about" data-testid="beside-about">{ super::beside_lane::about(b) }</div>
                            } else if let Some(about) = about_variant(&t.mechanism, &t.variant) {
                                <div class="about" data-testid="about-variant">{ about }</div>
                            }
                            { freed(t, ctx.props().pos, ctx.props().events.get(i).copied().flatten()) }
                        </figcaption>
                        <div class="svgwrap" ref={self.wraps.get(i).cloned().unwrap_or_default()} onscroll={on_scroll(ctx, i, shown.drawing.width, zoom)}>
                            { shown.view(zoom) }
                        </div>
                        { more(shown.drawing.below(self.views.get(i).map_or(u32::MAX, |v| v.1))) }
                    </figure>
                }) }
                if let Some(r) = &s.kernel { { super::kernel_lane::lane(r) } }
                if let Some(b) = s.capture.as_ref().and_then(|c| c.beside.as_deref()) { { super::beside_lane::lane(b) } }
                <ul class="legend" data-testid="legend" aria-label="Legend: the marks these drawings use" ref={self.legend.clone()}></ul>
            </section>
        }
    }
}

impl Diagrams {
    /// The zoom the drawings are shown at: presentation mode and the embed view fit them to
    /// their lanes.
    fn shown_zoom(&self) -> Option<u32> {
        self.zoom.filter(|_| !self.fit)
    }

    /// Downloads lane `Some(i)` (or every lane, `None`) as a figure of its own
    /// ([`export::figure`]), as SVG or as PNG.
    fn export(&self, p: &Props, lane: Option<usize>, png: bool) {
        let s = &p.session;
        let idle: Vec<Vec<String>> = (s.traces.iter()).map(|t| left_out(t, self.pages)).collect();
        let look = Look {
            leave: Some(&idle),
            ..self.look()
        };
        export::figure(s, &self.scenes, look, (p.pos, p.events), lane, png);
    }

    /// Downloads every step, and every key moment, as 16:9 slides in one page
    /// ([`export::deck`]).
    fn deck(&self, s: &Shared) {
        let idle: Vec<Vec<String>> = (s.traces.iter()).map(|t| left_out(t, self.pages)).collect();
        let look = Look {
            leave: Some(&idle),
            ..self.look()
        };
        export::deck(s, look);
    }

    fn redraw(&mut self, p: &Props) {
        let t0 = dom::now();
        if self.present && self.idle.is_none() {
            let pages = self.pages;
            let idle = |t: &Trace| left_out(t, pages);
            self.idle = Some(p.session.traces.iter().map(idle).collect());
        }
        let here = (p.pos, p.events);
        let ahead =
            (self.ahead.iter().position(|a| a.at == here)).map(|i| self.ahead.swap_remove(i));
        self.ahead.clear();
        // (For the tests and the bench: whether this move was drawn ahead.)
        let was = f64::from(u8::from(ahead.is_some()));
        (self.scenes, self.drawn) = match ahead {
            Some(a) => a.drawn,
            None => self.draw_at(&p.session, here),
        };
        self.wraps.resize_with(self.drawn.len(), NodeRef::default);
        dom::publish("drawMs", dom::now() - t0);
        dom::publish("drawnAhead", was);
    }

    /// How the pane draws its lanes: in presentation mode narrower, its idle queues (or
    /// every queue, pages only) left out.
    fn look(&self) -> Look<'_> {
        Look {
            present: self.present,
            leave: self.idle.as_deref().filter(|_| self.present),
        }
    }

    /// Draws lane `i`'s scene for the band of it the page keeps, after a scroll or zoom moved
    /// it (the drawings ahead were for the bands before).
    fn draw_lane(&mut self, p: &Props, i: usize) {
        self.ahead.clear();
        let Some(scene) = self.scenes.get(i) else {
            return;
        };
        self.shapes.resize_with(self.scenes.len(), Shapes::default);
        let mut shapes = std::mem::take(&mut self.shapes[i]);
        let shown = self.show(&p.session, i, scene, &mut shapes);
        self.shapes[i] = shapes;
        match self.drawn.get_mut(i) {
            Some(d) => *d = shown,
            None => self.drawn.push(shown),
        }
    }

    /// Lane `i`'s `scene` drawn for the band of it the page keeps, beside the lane's drawing
    /// in the page (whose unchanged pieces it keeps); `shapes`: the lane's.
    fn show(&self, s: &Shared, i: usize, scene: &Scene, shapes: &mut Shapes) -> Shown {
        let band = self.windows.get(i).copied().unwrap_or(FIRST_WINDOW);
        let drawing = scene.draw(s, self.look(), band, shapes);
        let canvas = self.canvas.get(i).copied().unwrap_or(0);
        let view = self.views.get(i).copied().unwrap_or(ALL);
        Shown::new(drawing, canvas, self.drawn.get(i), view)
    }

    /// A move ahead of `p`'s, forward first ([`Session::ahead`]), not drawn yet (the handout
    /// draws every step at once, and none ahead).
    ///
    /// [`Session::ahead`]: crate::session::Session::ahead
    fn unready(&self, p: &Props) -> Option<Moment> {
        let ready = |at: &Moment| self.ahead.iter().any(|a| a.at == *at);
        let moves = [1, -1].into_iter().filter(|_| !self.handout);
        (moves.filter_map(|d| p.session.ahead((p.pos, p.events), d))).find(|at| !ready(at))
    }

    /// Writes the session's legend: the entries for the marks its drawings use (drawing
    /// every step takes a while, so the page waits for an idle moment after the moves
    /// ahead).
    fn write_legend(&mut self, p: &Props) {
        if let Some(ul) = self.legend.cast::<web_sys::Element>() {
            let legend = dom::inner_html("legend");
            ul.set_inner_html(&super::handout::legend(&p.session, self.look(), &legend));
        }
        self.legend_written = true;
    }

    /// Draws a move ahead not drawn yet, and asks for the next idle moment if another is left
    /// (or the legend is to write): one at a time, so a key pressed meanwhile waits for one
    /// drawing at most.
    fn prepare(&mut self, p: &Props) {
        let Some(at) = self.unready(p) else {
            return;
        };
        let drawn = self.draw_at(&p.session, at);
        self.ahead.push(Ahead { at, drawn });
        if self.unready(p).is_some() || !self.legend_written {
            self.ask(true);
        }
    }

    /// Asks for [`Msg::Settle`] in the frame after, or (`idle`) for [`Msg::Ahead`] once the
    /// page is idle: a key pressed meanwhile goes first.
    fn ask(&mut self, idle: bool) {
        let (asked, name) = match idle {
            true => (&mut self.asked.1, dom::IDLE),
            false => (&mut self.asked.0, dom::SETTLE),
        };
        if !std::mem::replace(asked, true) {
            dom::after_paint(name, idle);
        }
    }

    /// The scenes at `at`, each drawn as [`Diagrams::show`] draws it.
    fn draw_at(&mut self, s: &Shared, at: Moment) -> (Vec<Scene>, Vec<Shown>) {
        let scenes = scenes(s, at.0, at.1);
        self.shapes.resize_with(scenes.len(), Shapes::default);
        let mut shapes = std::mem::take(&mut self.shapes);
        let drawn = (scenes.iter().zip(&mut shapes).enumerate())
            .map(|(i, (scene, shapes))| self.show(s, i, scene, shapes))
            .collect();
        self.shapes = shapes;
        (scenes, drawn)
    }
}

/// The drawings of a move the learner most often makes next ([`Session::ahead`]: a step or
/// an event on or back), made in idle moments after the last move, while the learner reads,
/// for the view and bands the page keeps, their new pieces parsed: that move shows them
/// instead of drawing. Another move, or a scroll or zoom since (which drops them), draws as
/// before.
///
/// [`Session::ahead`]: crate::session::Session::ahead
struct Ahead {
    at: Moment,
    drawn: (Vec<Scene>, Vec<Shown>),
}

/// What trace `t` freed in step `pos` (1-based), up to event `event` when stepping by event:
/// the drawn state holds only what is live, so this says which CPU freed what, and by which
/// kernel function (the core's `Trace::freed`).
fn freed(t: &Trace, pos: usize, event: Option<usize>) -> Html {
    let Some(step) = pos.checked_sub(1) else {
        return Html::default();
    };
    let freed = t.freed(step, event.unwrap_or(usize::MAX));
    if freed.is_empty() {
        return Html::default();
    }
    html! {
        <ul class="freed" data-testid="freed">
            { for freed.iter().map(|f| html! { <li>{ f.to_string() }</li> }) }
        </ul>
    }
}

/// The cue under a view that cuts off part of its drawing: how many skbs, pages and dfrags lie
/// below, and a button that scrolls down to them. It stands under the view, never over a
/// mark, on a line kept whether or not there is a cue (so a step never moves the figure).
fn more((skbs, pages, dfrags): (usize, usize, usize)) -> Html {
    let counts = [(skbs, "skb"), (pages, "page"), (dfrags, "dfrag")];
    let mut parts = (counts.iter().filter(|c| c.0 > 0))
        .enumerate()
        .map(|(i, &(n, what))| {
            let more = if i == 0 { " more" } else { "" };
            format!("{n}{more} {what}{}", if n == 1 { "" } else { "s" })
        });
    let Some(first) = parts.next() else {
        return html! { <p class="cue"></p> };
    };
    let text = parts.fold(first, |t, p| t + " and " + &p) + " below ↓";
    let down = Callback::from(|e: MouseEvent| {
        let cue = e
            .target_unchecked_into::<web_sys::Element>()
            .parent_element();
        if let Some(w) = cue.and_then(|c| c.previous_element_sibling()) {
            w.set_scroll_top(w.scroll_top() + w.client_height() * 4 / 5);
        }
    });
    html! { <p class="cue"><button class="more" onclick={down}>{ text }</button></p> }
}

/// The band of a diagram `width` units wide, shown at `zoom` in scroll area `el`, to keep in
/// the page, and the drawing units at the top and bottom of its view.
fn measure(el: &web_sys::Element, width: u32, zoom: Option<u32>) -> ((u32, u32), (u32, u32)) {
    let shown = zoom.map_or(el.client_width(), |z| (width * z / 100) as i32);
    let (top, h) = (el.scroll_top(), el.client_height());
    let band = diagram::window(top, h, shown, width);
    let unit = |px: i32| (f64::from(px) * f64::from(width) / f64::from(shown.max(1))) as u32;
    (band, (unit(top), unit(top + h)))
}

/// The queues presentation mode leaves out of trace `t`'s drawings: those empty all along, or
/// (`pages`: the pages only) every one.
fn left_out(t: &Trace, pages: bool) -> Vec<String> {
    let names = match (pages, t.steps.first()) {
        (true, Some(first)) => first.state.queues.iter().map(|q| q.name.as_str()).collect(),
        _ => t.idle_queues(),
    };
    names.into_iter().map(String::from).collect()
}

/// Tells the pane which band of diagram `i` (`width` units wide, shown at `zoom`) to keep as
/// it scrolls.
fn on_scroll(ctx: &Context<Diagrams>, i: usize, width: u32, zoom: Option<u32>) -> Callback<Event> {
    ctx.link().callback(move |e: Event| {
        let (band, bottom) = measure(&e.target_unchecked_into(), width, zoom);
        Msg::Scroll(i, band, bottom)
    })
}

/// The zoom keys, outside text fields: + (or =) in, - out, 0 fit, 1 back to 100 %.
fn zoom_keys(ctx: &Context<Diagrams>) -> EventListener {
    let link = ctx.link().clone();
    EventListener::new(&dom::document(), "keydown", move |e| {
        let Some(e) = e.dyn_ref::<web_sys::KeyboardEvent>() else {
            return;
        };
        let z = match e.key().as_str() {
            "+" | "=" => Zoom::In,
            "-" => Zoom::Out,
            "0" => Zoom::Fit,
            "1" => Zoom::Actual,
            _ => return,
        };
        if super::stepping::shortcut_target(e).is_some() {
            link.send_message(Msg::Zoom(z));
        }
    })
}

//! The Yew app: picker, step controls, narration, diagrams, counters, chart, editor, export.
//! It holds a [`Session`] and a position; every fact it shows comes from the session's traces.

use crate::diagram::{self, Drawing, Marks};
use crate::diff::{self, Changed};
use crate::form::{self, Knob};
use crate::session::{self, Link, Position, Session};
use crate::{chart, dom};
use gloo_events::{EventListener, EventListenerOptions};
use gloo_timers::callback::{Interval, Timeout};
use serde_json::Value;
use skblab_core::trace::{Event as TraceEvent, State};
use skblab_core::walkthrough::{self, Walkthrough};
use wasm_bindgen::JsCast;
use web_sys::{HtmlInputElement, HtmlSelectElement, HtmlTextAreaElement, KeyboardEvent};
use yew::prelude::*;
use yew::virtual_dom::Key;

pub enum Msg {
    Pick(usize),
    Go(usize),
    Step(isize),
    Last,
    TogglePlay,
    Tick,
    Speed(u32),
    Edit(String),
    Knob(String, Value),
    RunEditor,
    Compare(String),
    Chart(String),
    ExportJson(usize),
    ExportSvg(usize),
    HashChanged,
    /// Diagram `i` was scrolled: the band of it to keep in the page.
    Scroll(usize, (u32, u32)),
}

/// The editor's verdict on its text.
enum Checked {
    Ok {
        ops: usize,
        knobs: Vec<Knob>,
        variants: Vec<&'static str>,
        variant: String,
    },
    Err(String),
}

pub struct App {
    walks: Vec<Walkthrough>,
    session: Option<Session>,
    pos: usize,
    /// The drawings for `pos`, one per trace (rebuilt when `pos` or the session changes).
    drawn: Vec<Shown>,
    /// Per trace, the height of its tallest drawing (computed when the session opens).
    canvas: Vec<u32>,
    /// Per diagram, the band of it in the page ([`diagram::window`]).
    windows: Vec<(u32, u32)>,
    play: Option<Interval>,
    speed: u32,
    notice: Option<String>,
    text: String,
    checked: Checked,
    compare: String,
    chart: Option<String>,
    fragment: String,
    /// Writes `fragment` into the URL once stepping pauses: `replaceState` costs milliseconds,
    /// too much to pay on every step while playing or holding an arrow key.
    pending_link: Option<Timeout>,
    started: Option<f64>,
    _listeners: [EventListener; 2],
}

const SPEEDS: [u32; 4] = [1, 2, 4, 8];
/// A step lists at most this many events: one op with a `count` or a burst of frames can make
/// thousands, and each list item costs the page style and layout on every step.
const EVENTS_LISTED: usize = 200;
/// The band a diagram keeps before its first scroll: more than any screen's scroll area shows.
const FIRST_WINDOW: (u32, u32) = (0, 3000);
/// How long the position must rest before the URL follows it.
const LINK_DELAY_MS: u32 = 300;

/// A drawing and its pieces as shared strings (cheap to hand to the virtual DOM each render).
struct Shown {
    drawing: Drawing,
    pieces: Vec<(Key, AttrValue)>,
    /// The SVG's height for every step of the trace (see [`canvas_height`]).
    canvas: u32,
}

impl Shown {
    fn new(drawing: Drawing, canvas: u32) -> Shown {
        let canvas = canvas.max(drawing.height);
        let pieces = (drawing.pieces.iter())
            .map(|p| (Key::from(p.key.as_str()), AttrValue::from(p.body.clone())))
            .collect();
        Shown {
            drawing,
            pieces,
            canvas,
        }
    }

    /// The markup of [`Drawing::to_svg`] near the view (the pieces meeting `window`), each
    /// piece keyed so unchanged pieces stay. The SVG keeps the trace's canvas size at every
    /// step (resizing an SVG lays out every node in it again); the box around it shows only
    /// this step's drawing.
    fn view(&self, (top, bottom): (u32, u32)) -> Html {
        let d = &self.drawing;
        let near = (d.pieces.iter().zip(&self.pieces)).filter(|(p, _)| p.meets(top, bottom));
        html! {
            <div class="canvas" style={format!("aspect-ratio:{}/{}", d.width, d.height)}>
                <svg xmlns="http://www.w3.org/2000/svg" viewBox={format!("0 0 {} {}", d.width, self.canvas)}
                    width={d.width.to_string()} height={self.canvas.to_string()} role="img" aria-label={d.label.clone()}>
                    // Keyed too: `for` is flattened into the <svg>'s children, and Yew diffs them
                    // by key only when every child has one (else a new skb shifts every later piece).
                    <style key="style">{ Drawing::STYLE }</style>
                    { for near.map(|(_, (k, body))| html! {
                        <g key={k.clone()}>{ Html::from_html_unchecked(body.clone()) }</g>
                    }) }
                </svg>
            </div>
        }
    }
}

/// The tallest drawing of trace `t` `width` units wide, over all its steps.
fn canvas_height(t: &skblab_core::Trace, width: u32) -> u32 {
    let max_frags = t.consts.max_skb_frags;
    (t.steps.iter())
        .map(|st| diagram::height(&st.state, max_frags, width))
        .max()
        .unwrap_or(0)
}

/// Side by side, each drawing wraps narrower so it stays legible.
fn drawing_width(traces: usize) -> u32 {
    if traces == 2 {
        620
    } else {
        1000
    }
}

impl Component for App {
    type Message = Msg;
    type Properties = ();

    fn create(ctx: &Context<Self>) -> Self {
        let (walks, notice) = match walkthrough::all() {
            Ok(w) => (w, None),
            Err(e) => (
                Vec::new(),
                Some(format!("The walkthroughs failed to load: {e}")),
            ),
        };
        let mut app = App {
            walks,
            session: None,
            pos: 0,
            drawn: Vec::new(),
            canvas: Vec::new(),
            windows: Vec::new(),
            play: None,
            speed: 2,
            notice,
            text: String::new(),
            checked: Checked::Err("empty".into()),
            compare: String::new(),
            chart: None,
            fragment: String::new(),
            pending_link: None,
            started: None,
            _listeners: listeners(ctx),
        };
        app.open_fragment();
        app
    }

    fn update(&mut self, ctx: &Context<Self>, msg: Msg) -> bool {
        if let Msg::Scroll(i, band) = msg {
            if self.windows.len() <= i {
                self.windows.resize(i + 1, FIRST_WINDOW);
            }
            return std::mem::replace(&mut self.windows[i], band) != band;
        }
        self.started.get_or_insert_with(dom::now);
        let len = self.len();
        match msg {
            Msg::Pick(i) => {
                self.stop();
                self.notice = None;
                let _ = self.open_walk(i, Position::default());
            }
            Msg::Go(p) => self.go(p.min(len)),
            Msg::Step(d) => self.go(self.pos.saturating_add_signed(d).min(len)),
            Msg::Last => self.go(len),
            Msg::TogglePlay => {
                if self.play.is_some() {
                    self.stop();
                } else {
                    if self.pos >= len {
                        self.go(0);
                    }
                    self.start(ctx);
                }
            }
            Msg::Tick => {
                if self.pos < len {
                    self.go(self.pos + 1);
                }
                if self.pos >= len {
                    self.stop();
                }
            }
            Msg::Speed(s) => {
                self.speed = s;
                if self.play.is_some() {
                    self.start(ctx);
                }
            }
            Msg::Edit(text) => self.set_text(text),
            Msg::Knob(path, value) => match form::set(&self.text, &path, value) {
                Ok(t) => self.set_text(t),
                Err(e) => self.checked = Checked::Err(e),
            },
            Msg::RunEditor => {
                self.stop();
                let cmp = (!self.compare.is_empty()).then_some(self.compare.as_str());
                match session::load_custom(&self.text, cmp) {
                    Ok(s) => {
                        self.notice = None;
                        self.show(s, Position::default());
                    }
                    Err(e) => self.checked = Checked::Err(e),
                }
            }
            Msg::Compare(v) => self.compare = v,
            Msg::Chart(c) => self.chart = Some(c),
            Msg::ExportJson(i) => {
                if let Some(t) = self.session.as_ref().and_then(|s| s.traces.get(i)) {
                    let json = serde_json::to_string_pretty(t).expect("traces serialize");
                    dom::download(
                        &format!("skblab-{}-{}.json", t.mechanism, t.variant),
                        "application/json",
                        &json,
                    );
                }
                return false;
            }
            Msg::ExportSvg(i) => {
                if let (Some(s), Some(shown)) = (&self.session, self.drawn.get(i)) {
                    let t = &s.traces[i];
                    dom::download(
                        &format!("skblab-{}-{}-step{}.svg", t.mechanism, t.variant, self.pos),
                        "image/svg+xml",
                        &shown.drawing.to_svg(),
                    );
                }
                return false;
            }
            Msg::Scroll(..) => {} // handled above
            Msg::HashChanged => {
                if dom::fragment().trim_start_matches('#') != self.fragment {
                    self.stop();
                    self.notice = None;
                    self.open_fragment();
                }
            }
        }
        true
    }

    fn rendered(&mut self, _ctx: &Context<Self>, first: bool) {
        let now = dom::now();
        if first {
            dom::publish("firstRenderMs", now);
        }
        if let Some(t) = self.started.take() {
            dom::publish("renderMs", now - t);
        }
        if let Some(s) = &self.session {
            let f = s.link(Position::step(self.pos)).encode();
            if f != self.fragment {
                self.fragment = f.clone();
                let write = move || dom::set_fragment(&f);
                // Replacing the timer cancels the write it had pending.
                self.pending_link = if first {
                    write();
                    None
                } else {
                    Some(Timeout::new(LINK_DELAY_MS, write))
                };
            }
        }
    }

    fn view(&self, ctx: &Context<Self>) -> Html {
        html! {
            <>
                { self.view_header(ctx) }
                if let Some(n) = &self.notice {
                    <div class="notice" role="alert" data-testid="notice">{ n }</div>
                }
                if let Some(s) = &self.session {
                    { self.view_controls(ctx, s) }
                    <main class="stage">
                        { self.view_narration(s) }
                        { self.view_diagrams(ctx, s) }
                    </main>
                    <section class="panels">
                        { self.view_counters(s) }
                        { self.view_chart(ctx, s) }
                    </section>
                }
                { self.view_editor(ctx) }
            </>
        }
    }
}

/// Tells the app which band of diagram `i` (`width` units wide) to keep as it scrolls.
fn on_scroll(ctx: &Context<App>, i: usize, width: u32) -> Callback<Event> {
    ctx.link().callback(move |e: Event| {
        let el = e.target_unchecked_into::<web_sys::Element>();
        let band = diagram::window(
            el.scroll_top(),
            el.client_height(),
            el.client_width(),
            width,
        );
        Msg::Scroll(i, band)
    })
}

/// Keyboard shortcuts (outside text fields) and `hashchange` (a pasted permalink).
fn listeners(ctx: &Context<App>) -> [EventListener; 2] {
    let doc = document();
    let link = ctx.link().clone();
    let keys = EventListener::new_with_options(
        &doc,
        "keydown",
        EventListenerOptions::enable_prevent_default(),
        move |e| {
            let Some(e) = e.dyn_ref::<KeyboardEvent>() else {
                return;
            };
            if let Some(msg) = key_msg(e) {
                e.prevent_default();
                link.send_message(msg);
            }
        },
    );
    let link = ctx.link().clone();
    let window = web_sys::window().expect("a window");
    let hash = EventListener::new(&window, "hashchange", move |_| {
        link.send_message(Msg::HashChanged)
    });
    [keys, hash]
}

fn document() -> web_sys::Document {
    web_sys::window()
        .and_then(|w| w.document())
        .expect("a document")
}

/// ←/→ step, Home/End jump, space plays; ignored while typing or with a modifier held.
fn key_msg(e: &KeyboardEvent) -> Option<Msg> {
    if e.ctrl_key() || e.alt_key() || e.meta_key() {
        return None;
    }
    let tag = e
        .target()
        .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
        .map(|el| el.tag_name().to_ascii_lowercase())
        .unwrap_or_default();
    if matches!(tag.as_str(), "input" | "textarea" | "select") {
        return None;
    }
    match e.key().as_str() {
        "ArrowRight" => Some(Msg::Step(1)),
        "ArrowLeft" => Some(Msg::Step(-1)),
        "Home" => Some(Msg::Go(0)),
        "End" => Some(Msg::Last),
        // A focused button already answers space with a click.
        " " if tag != "button" => Some(Msg::TogglePlay),
        _ => None,
    }
}

impl App {
    fn len(&self) -> usize {
        self.session.as_ref().map_or(0, Session::len)
    }

    fn stop(&mut self) {
        self.play = None;
    }

    fn start(&mut self, ctx: &Context<Self>) {
        let link = ctx.link().clone();
        self.play = Some(Interval::new(1000 / self.speed, move || {
            link.send_message(Msg::Tick)
        }));
    }

    fn go(&mut self, pos: usize) {
        self.pos = pos;
        self.redraw();
    }

    /// Opens what the URL fragment names, or the default walkthrough with a message saying
    /// why the link could not be used.
    fn open_fragment(&mut self) {
        let link = Link::decode(&dom::fragment());
        // A broken scenario link still hands its text to the editor, to be fixed there.
        let keep = match &link {
            Ok(Some(Link::Custom { text, .. })) => Some(text.clone()),
            _ => None,
        };
        let opened = match link {
            Ok(None) => Ok(false),
            Ok(Some(Link::Walk { name, at })) => {
                match self.walks.iter().position(|w| w.name == name) {
                    Some(i) => self.open_walk(i, at).map(|_| true),
                    None => Err(format!("there is no walkthrough named `{name}`")),
                }
            }
            Ok(Some(Link::Custom { text, compare, at })) => {
                self.set_text(text.clone());
                self.compare = compare.clone().unwrap_or_default();
                session::load_custom(&text, compare.as_deref()).map(|s| {
                    self.show(s, at);
                    true
                })
            }
            Err(e) => Err(e),
        };
        match opened {
            Ok(true) => {}
            Ok(false) => {
                let _ = self.open_walk(0, Position::default());
            }
            Err(e) => {
                self.notice = Some(format!(
                    "This link could not be opened ({e}); showing the default walkthrough."
                ));
                let _ = self.open_walk(0, Position::default());
                if let Some(text) = keep {
                    self.set_text(text);
                }
            }
        }
    }

    fn open_walk(&mut self, i: usize, at: Position) -> Result<(), String> {
        let Some(w) = self.walks.get(i) else {
            return Err("no walkthroughs are built in".into());
        };
        match session::load_walkthrough(w) {
            Ok(s) => {
                self.set_text(s.text.clone());
                self.compare = s
                    .traces
                    .get(1)
                    .map(|t| t.variant.clone())
                    .unwrap_or_default();
                self.show(s, at);
                Ok(())
            }
            Err(e) => {
                self.notice = Some(format!("Walkthrough `{}` failed to run: {e}", w.name));
                Err(e)
            }
        }
    }

    fn show(&mut self, s: Session, at: Position) {
        let pos = at.clamp(&s.traces[0]).step;
        if pos != at.step {
            self.notice = Some(format!(
                "The link's step {} is past the last step ({pos}); showing the last.",
                at.step
            ));
        }
        let names: Vec<String> = s.traces[0].counters.names().map(String::from).collect();
        if !self.chart.as_ref().is_some_and(|c| names.contains(c)) {
            self.chart = names.first().cloned();
        }
        let width = drawing_width(s.traces.len());
        self.canvas = s.traces.iter().map(|t| canvas_height(t, width)).collect();
        self.session = Some(s);
        self.go(pos);
    }

    fn set_text(&mut self, text: String) {
        self.checked = match session::check(&text) {
            Ok(s) => Checked::Ok {
                ops: s.op_count(),
                knobs: form::knobs(&s),
                variants: s.variants().to_vec(),
                variant: serde_json::from_str::<Value>(&s.to_json())
                    .ok()
                    .and_then(|v| v["variant"].as_str().map(String::from))
                    .unwrap_or_else(|| s.variants()[0].to_string()),
            },
            Err(e) => Checked::Err(e),
        };
        self.text = text;
    }

    /// The state after `pos` in trace `i` (empty before the first operation).
    fn state(&self, i: usize, pos: usize) -> Option<&State> {
        let s = self.session.as_ref()?;
        pos.checked_sub(1)
            .and_then(|p| s.traces.get(i)?.steps.get(p))
            .map(|st| &st.state)
    }

    fn redraw(&mut self) {
        let t0 = dom::now();
        self.draw_all();
        dom::publish("drawMs", dom::now() - t0);
    }

    fn draw_all(&mut self) {
        let Some(s) = &self.session else {
            self.drawn.clear();
            return;
        };
        let empty = State::default();
        let n = s.traces.len();
        self.drawn = (0..n)
            .map(|i| {
                let cur = self.state(i, self.pos).unwrap_or(&empty);
                // Step 1 is measured against the empty start; position 0 marks nothing.
                let prev = match self.pos {
                    0 => None,
                    1 => Some(&empty),
                    p => self.state(i, p - 1),
                };
                let changed = Changed::between(prev, cur);
                let differs = match n {
                    2 => Changed::between(Some(self.state(1 - i, self.pos).unwrap_or(&empty)), cur),
                    _ => Changed::default(),
                };
                let t = &s.traces[i];
                let label = format!("{} ({}), step {}", t.mechanism, t.variant, self.pos);
                let marks = Marks {
                    changed: &changed,
                    differs: &differs,
                };
                let width = drawing_width(n);
                let drawing = diagram::draw(cur, &marks, t.consts.max_skb_frags, width, &label);
                Shown::new(drawing, self.canvas.get(i).copied().unwrap_or(0))
            })
            .collect();
    }

    fn view_header(&self, ctx: &Context<Self>) -> Html {
        let current = self
            .session
            .as_ref()
            .and_then(|s| s.walk.as_ref())
            .map(|w| w.name.clone());
        let onchange = ctx.link().batch_callback(|e: Event| {
            let v = e.target_unchecked_into::<HtmlSelectElement>().value();
            v.parse().ok().map(Msg::Pick)
        });
        html! {
            <header>
                <h1>{ "skblab" }<span>{ " · how Linux builds and recycles sk_buffs" }</span></h1>
                <label class="picker">{ "Walkthrough " }
                    <select id="walkthrough" data-testid="walkthrough" {onchange}>
                        if current.is_none() {
                            <option selected=true value="">{ "— your scenario —" }</option>
                        }
                        { for self.walks.iter().enumerate().map(|(i, w)| html! {
                            <option value={i.to_string()} selected={current.as_deref() == Some(w.name.as_str())}>
                                { &w.title }
                            </option>
                        }) }
                    </select>
                </label>
            </header>
        }
    }

    fn view_controls(&self, ctx: &Context<Self>, s: &Session) -> Html {
        let link = ctx.link();
        let len = s.len();
        let playing = self.play.is_some();
        let op = self
            .pos
            .checked_sub(1)
            .map(|p| s.traces[0].steps[p].op.clone())
            .unwrap_or_else(|| "before the first operation".into());
        html! {
            <section class="controls" aria-label="Step controls">
                <button data-action="first" aria-label="First step" title="First (Home)" onclick={link.callback(|_| Msg::Go(0))}>{ "⇤ first" }</button>
                <button data-action="prev" aria-label="Previous step" title="Previous (←)" onclick={link.callback(|_| Msg::Step(-1))}>{ "◀ prev" }</button>
                <button data-action="play" aria-label={if playing { "Pause" } else { "Play" }} aria-pressed={playing.to_string()} title="Play/pause (space)" onclick={link.callback(|_| Msg::TogglePlay)}>{ if playing { "❚❚ pause" } else { "▶ play" } }</button>
                <button data-action="next" aria-label="Next step" title="Next (→)" onclick={link.callback(|_| Msg::Step(1))}>{ "next ▶" }</button>
                <button data-action="last" aria-label="Last step" title="Last (End)" onclick={link.callback(|_| Msg::Last)}>{ "last ⇥" }</button>
                <label>{ "Speed " }
                    <select aria-label="Play speed" onchange={link.batch_callback(|e: Event| e.target_unchecked_into::<HtmlSelectElement>().value().parse().ok().map(Msg::Speed))}>
                        { for SPEEDS.iter().map(|sp| html! { <option value={sp.to_string()} selected={*sp == self.speed}>{ format!("{sp} step/s") }</option> }) }
                    </select>
                </label>
                <input type="range" class="scrubber" aria-label="Step" min="0" max={len.to_string()} value={self.pos.to_string()}
                    oninput={link.batch_callback(|e: InputEvent| e.target_unchecked_into::<HtmlInputElement>().value().parse().ok().map(Msg::Go))} />
                <output data-testid="step" data-step={self.pos.to_string()}>{ format!("step {} / {len}", self.pos) }</output>
                <span class="op" data-testid="op">{ op }</span>
            </section>
        }
    }

    fn view_narration(&self, s: &Session) -> Html {
        let events = self
            .pos
            .checked_sub(1)
            .map(|p| s.traces[0].steps[p].events.as_slice())
            .unwrap_or(&[]);
        html! {
            <aside class="narration" aria-live="polite">
                <h2 data-testid="title">{ &s.title }</h2>
                if let Some((main, outro)) = s.narration(self.pos) {
                    <p data-testid="narration">{ main }</p>
                    if let Some(o) = outro { <p class="outro">{ o }</p> }
                }
                if !events.is_empty() {
                    <h3>{ format!("What the kernel did ({})", s.traces[0].variant) }</h3>
                    <ol class="events">
                        { for events.iter().take(EVENTS_LISTED).map(|e| html! { <li>{ event_text(e) }</li> }) }
                        if events.len() > EVENTS_LISTED {
                            <li class="more" data-testid="more-events">
                                { format!("… and {} more (the trace JSON has every one)", events.len() - EVENTS_LISTED) }
                            </li>
                        }
                    </ol>
                }
            </aside>
        }
    }

    fn view_diagrams(&self, ctx: &Context<Self>, s: &Session) -> Html {
        let split = s.traces.len() > 1;
        html! {
            <section class={classes!("diagrams", split.then_some("split"))} aria-label="Diagram">
                { for s.traces.iter().zip(&self.drawn).enumerate().map(|(i, (t, shown))| html! {
                    <figure data-variant={t.variant.clone()}>
                        <figcaption>
                            <strong>{ &t.variant }</strong>{ format!(" · kernel {}", era_name(t)) }
                            <button class="small" aria-label={format!("Download the {} diagram as SVG", t.variant)} onclick={ctx.link().callback(move |_| Msg::ExportSvg(i))}>{ "SVG" }</button>
                            <button class="small" aria-label={format!("Download the {} trace as JSON", t.variant)} onclick={ctx.link().callback(move |_| Msg::ExportJson(i))}>{ "trace JSON" }</button>
                        </figcaption>
                        <div class="svgwrap" onscroll={on_scroll(ctx, i, shown.drawing.width)}>
                            { shown.view(self.windows.get(i).copied().unwrap_or(FIRST_WINDOW)) }
                        </div>
                    </figure>
                }) }
                <p class="legend">
                    <span class="k hr"></span>{ "headroom " }<span class="k ln"></span>{ "linear data " }
                    <span class="k tr"></span>{ "tailroom " }<span class="k fr"></span>{ "frag " }
                    <span class="k fill"></span>{ "page used " }<span class="k chg"></span>{ "changed by this step " }
                    if split { <span class="k dif"></span>{ "differs from the other variant" } }
                </p>
            </section>
        }
    }

    fn view_counters(&self, s: &Session) -> Html {
        let names: Vec<&str> = s.traces[0].counters.names().collect();
        let at = |i: usize, p: usize| {
            p.checked_sub(1)
                .and_then(|p| s.traces[i].steps.get(p))
                .map(|st| &st.counters)
        };
        html! {
            <div class="counters">
                <h2>{ "Counters" }</h2>
                <table>
                    <thead><tr><th scope="col">{ "counter" }</th>
                        { for s.traces.iter().map(|t| html! { <th scope="col">{ &t.variant }</th> }) }
                    </tr></thead>
                    <tbody>
                    { for names.iter().map(|name| {
                        let vals: Vec<Option<u64>> = (0..s.traces.len()).map(|i| at(i, self.pos).and_then(|c| c.get(name))).collect();
                        let differs = vals.windows(2).any(|w| w[0] != w[1]);
                        html! {
                            <tr class={classes!(differs.then_some("dif"))}>
                                <th scope="row">{ *name }</th>
                                { for s.traces.iter().enumerate().map(|(i, t)| {
                                    let cur = at(i, self.pos);
                                    let d = cur.map(|c| diff::delta(at(i, self.pos - self.pos.min(1)).filter(|_| self.pos > 1), c, name));
                                    html! {
                                        <td data-variant={t.variant.clone()}>
                                            <span data-counter={name.to_string()}>{ vals[i].map(|v| v.to_string()).unwrap_or_else(|| "–".into()) }</span>
                                            { match d { Some(d) if d != 0 => html! { <span class={classes!("delta", (d > 0).then_some("up"))}>{ format!(" {d:+}") }</span> }, _ => html! {} } }
                                        </td>
                                    }
                                }) }
                            </tr>
                        }
                    }) }
                    </tbody>
                </table>
            </div>
        }
    }

    fn view_chart(&self, ctx: &Context<Self>, s: &Session) -> Html {
        let Some(name) = &self.chart else {
            return html! {};
        };
        let series: Vec<(&str, Vec<u64>)> = s
            .traces
            .iter()
            .map(|t| {
                let vals = t
                    .steps
                    .iter()
                    .map(|st| st.counters.get(name).unwrap_or(0))
                    .collect();
                (t.variant.as_str(), vals)
            })
            .collect();
        let svg = chart::svg(name, &series, self.pos);
        html! {
            <div class="chart">
                <h2>{ "Over the steps" }</h2>
                <label>{ "Counter " }
                    <select aria-label="Counter to chart" onchange={ctx.link().callback(|e: Event| Msg::Chart(e.target_unchecked_into::<HtmlSelectElement>().value()))}>
                        { for s.traces[0].counters.names().map(|n| html! { <option value={n.to_string()} selected={n == name}>{ n }</option> }) }
                    </select>
                </label>
                { Html::from_html_unchecked(AttrValue::from(svg)) }
            </div>
        }
    }

    fn view_editor(&self, ctx: &Context<Self>) -> Html {
        let link = ctx.link();
        let (status, ok) = match &self.checked {
            Checked::Ok { ops, .. } => (format!("✓ valid: {ops} operation(s)"), true),
            Checked::Err(e) => (e.clone(), false),
        };
        html! {
            <section class="editor" aria-label="Scenario editor">
                <h2>{ "Scenario editor" }</h2>
                if let Checked::Ok { knobs, variants, variant, .. } = &self.checked {
                    <div class="knobs">
                        <label>{ "variant" }
                            <select aria-label="variant" onchange={link.callback(|e: Event| Msg::Knob("variant".into(), Value::String(e.target_unchecked_into::<HtmlSelectElement>().value())))}>
                                { for variants.iter().map(|v| html! { <option value={*v} selected={v == variant}>{ *v }</option> }) }
                            </select>
                        </label>
                        <label>{ "compare with" }
                            <select aria-label="compare with" onchange={link.callback(|e: Event| Msg::Compare(e.target_unchecked_into::<HtmlSelectElement>().value()))}>
                                <option value="" selected={self.compare.is_empty()}>{ "— none —" }</option>
                                { for variants.iter().map(|v| html! { <option value={*v} selected={*v == self.compare}>{ *v }</option> }) }
                            </select>
                        </label>
                        { for knobs.iter().map(|k| knob_input(ctx, k)) }
                    </div>
                }
                <label for="scenario">{ "Scenario text (TOML or JSON)" }</label>
                <textarea id="scenario" data-testid="scenario" spellcheck="false" rows="14"
                    aria-invalid={(!ok).to_string()} aria-describedby="scenario-status"
                    value={self.text.clone()}
                    oninput={link.callback(|e: InputEvent| Msg::Edit(e.target_unchecked_into::<HtmlTextAreaElement>().value()))} />
                <p id="scenario-status" data-testid="editor-status" class={if ok { "ok" } else { "error" }} role="status">{ status }</p>
                <button data-action="run" disabled={!ok} onclick={link.callback(|_| Msg::RunEditor)}>{ "Run this scenario" }</button>
            </section>
        }
    }
}

fn knob_input(ctx: &Context<App>, k: &Knob) -> Html {
    let path = k.path.clone();
    match &k.value {
        Value::Bool(b) => html! {
            <label class="check"><input type="checkbox" checked={*b}
                onchange={ctx.link().callback(move |e: Event| Msg::Knob(path.clone(), Value::Bool(e.target_unchecked_into::<HtmlInputElement>().checked())))} />{ &k.path }</label>
        },
        Value::Number(n) => html! {
            <label>{ &k.path }<input type="number" min="0" value={n.to_string()}
                onchange={ctx.link().batch_callback(move |e: Event| e.target_unchecked_into::<HtmlInputElement>().value().parse::<u64>().ok().map(|v| Msg::Knob(path.clone(), Value::from(v))))} /></label>
        },
        v => {
            let text = v.as_str().unwrap_or_default().to_string();
            html! {
                <label>{ &k.path }<input type="text" value={text}
                    onchange={ctx.link().callback(move |e: Event| Msg::Knob(path.clone(), Value::String(e.target_unchecked_into::<HtmlInputElement>().value())))} /></label>
            }
        }
    }
}

/// `alloc_page page=3 order=0 cpu=0`: an event in the kernel's words, for any mechanism.
fn event_text(e: &TraceEvent) -> String {
    let Ok(Value::Object(o)) = serde_json::to_value(e) else {
        return format!("{e:?}");
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

/// The era as the trace spells it (`v6.12`).
fn era_name(t: &skblab_core::Trace) -> String {
    serde_json::to_value(t.era)
        .ok()
        .and_then(|v| v.as_str().map(String::from))
        .unwrap_or_default()
}

//! The Yew app: it holds the walkthroughs, the [`Session`] shown and where the learner stands
//! in it (a [`Navigation`], plain Rust, which makes every move), and lays out the components
//! that present them. Every fact they show comes from the session's traces.
//!
//! - [`picker`]: the header and the walkthrough picker.
//! - [`controls`]: the stepper; the keyboard asks for the same [`Nav`] moves.
//! - [`narration`]: the walkthrough's text and the step's events.
//! - [`diagrams`]: one SVG figure per trace, with its marks, downloads and legend; [`scene`]:
//!   what each figure shows at the position.
//! - [`panels`]: the counters and the chart.
//! - [`editor`]: the scenario text and its form; running it hands the app a new session.
//! - [`quiz`]: predict mode's question card, and the challenges.
//! - [`kernel_lane`]: a `skblab kernel` report's skbs, the third lane; [`beside_lane`]: a
//!   capture's skbs against the model's prediction, drawn the same way.
//!
//! The app's own work is split the same way: [`stepping`] wires the moves (the keys, the
//! play timer, predict mode's gate), [`opening`] puts a walkthrough, link, challenge or report on the stage,
//! [`predicting`] asks a step's questions before it shows and checks a challenge's goal.
//!
//! The diagram pane and the editor hold state of their own, so they are Yew components. The
//! picker, the panels, the narration's text and each lane's events are [`pure`] pieces, drawn
//! again only when their props change (one component serves them all: a Yew component costs
//! the bundle about 0.6 KiB gzip, one with hooks about 2 KiB); the rest are view functions.

mod beside_lane;
mod controls;
mod diagrams;
mod editor;
mod export;
mod handout;
mod kernel_lane;
mod narration;
mod opening;
mod panels;
mod picker;
mod predicting;
mod pure;
mod quiz;
mod scene;
mod stepping;

use crate::dom;
use crate::navigation::{Nav, Navigation};
use crate::predict::{self, Phase, Quiz, Record, Source};
use crate::session::{Position, Session};
use diagrams::Diagrams;
use editor::Editor;
use gloo_events::{EventListener, EventListenerOptions};
use gloo_timers::callback::{Interval, Timeout};
use predicting::save;
use pure::pure;
use skblab_core::challenge::{self, Challenge};
use skblab_core::question::Kind;
use skblab_core::walkthrough::{self, Walkthrough};
use std::ops::Deref;
use std::rc::Rc;
use stepping::key_nav;
use wasm_bindgen::JsCast;
use web_sys::{EventTarget, KeyboardEvent};
use yew::prelude::*;

/// A loaded session, shared with the components. A session never changes once loaded, so
/// props compare it by identity (comparing traces of hundreds of skbs would cost a frame).
#[derive(Clone)]
pub struct Shared(Rc<Session>);

impl PartialEq for Shared {
    fn eq(&self, other: &Shared) -> bool {
        Rc::ptr_eq(&self.0, &other.0)
    }
}

impl Deref for Shared {
    type Target = Session;
    fn deref(&self) -> &Session {
        &self.0
    }
}

pub enum Msg {
    /// The walkthrough files arrived (fetched beside the page, not compiled in).
    Loaded(Result<Vec<Walkthrough>, String>),
    /// The challenge files arrived, likewise.
    Challenges(Result<Vec<Challenge>, String>),
    Pick(usize),
    Nav(Nav),
    Tick,
    /// The editor ran the learner's scenario.
    Ran(Box<Session>),
    Chart(AttrValue),
    HashChanged,
    /// The learner chose a file: a lesson, a `skblab kernel --out` report or a capture.
    File(web_sys::File),
    /// Its text was read (or failed to be).
    Report(Result<String, String>),
    /// Beside the capture shown: the model's prediction for its writes.
    Beside,
    Predict,
    Ask(quiz::Ask),
    ResetScores,
    OpenChallenge(usize),
    /// Check the open challenge's goal on the editor's text.
    Check(String),
    /// The link timer fired: write the URL if stepping has rested long enough.
    Link,
    /// The page or a pane scrolled: how far down the event lists are in view.
    Scrolled,
    /// The frame after a render was painted: the panels below the window follow the position.
    Settled,
}

/// What the editor starts from: a walkthrough's or a permalink's text. A new seed gets a new
/// key, so the editor starts over from it.
struct Seed {
    key: u32,
    text: AttrValue,
    compare: AttrValue,
}

pub struct App {
    walks: Vec<Walkthrough>,
    /// The walkthroughs have arrived (or failed to): links can be opened.
    loaded: bool,
    titles: Vec<AttrValue>,
    /// The walkthroughs by the patch they teach ([`picker::Props::groups`]).
    groups: Vec<(AttrValue, Vec<usize>)>,
    session: Option<Shared>,
    /// Where the learner stands in the session (the panels below the window follow a frame
    /// later: [`dom::after_paint`]).
    nav: Navigation,
    /// How far down the event lists write their items ([`narration::reach`]).
    reach: u32,
    play: Option<Interval>,
    notice: Option<String>,
    /// The counter the learner charts.
    chart: Option<AttrValue>,
    seed: Seed,
    /// The fragment last written into the URL.
    fragment: String,
    /// The session and position the URL is to follow, once stepping rests for
    /// [`LINK_DELAY_MS`]: `replaceState` (and encoding the link) costs milliseconds, too much
    /// to pay on every step while playing or holding an arrow key.
    linked: Option<(Shared, Position)>,
    /// When the URL may follow (`dom::now`), and the one timer that waits for it: a step
    /// only pushes the time back, it sets no timer of its own.
    link_due: f64,
    link_timer: Option<Timeout>,
    started: Option<f64>,
    /// Predict mode is on; `quiz` holds the walkthrough's questions and what is being asked.
    predict: bool,
    quiz: Quiz,
    /// Move the keyboard focus into the question card once it is drawn.
    focus_card: bool,
    /// Scores and solved challenges, as kept in localStorage.
    record: Record,
    /// The built-in challenges, then those of the lesson files opened.
    challenges: Vec<(Challenge, Source)>,
    challenge: Option<quiz::Open>,
    /// The components' callbacks, made once so their props stay equal between renders.
    on_nav: Callback<Nav>,
    on_pick: Callback<usize>,
    on_run: Callback<Box<Session>>,
    on_chart: Callback<AttrValue>,
    on_reset: Callback<()>,
    on_file: Callback<web_sys::File>,
    on_beside: Callback<()>,
    on_ask: Callback<quiz::Ask>,
    on_open: Callback<usize>,
    on_check: Callback<String>,
    _listeners: [EventListener; 4],
}

/// What the editor says while a capture is shown.
const CAPTURE_ASIDE: &str = "The stage shows a capture, which has no scenario: the text here is \
yours, kept as it was, and Run shows it in place of the capture.";

/// How long the position must rest before the URL follows it.
const LINK_DELAY_MS: u32 = 300;

impl Component for App {
    type Message = Msg;
    type Properties = ();

    fn create(ctx: &Context<Self>) -> Self {
        let link = ctx.link();
        link.send_future(async {
            Msg::Loaded(fetch_files("walkthroughs", walkthrough::NAMES, walkthrough::parse).await)
        });
        link.send_future(async {
            Msg::Challenges(fetch_files("challenges", challenge::NAMES, challenge::parse).await)
        });
        App {
            titles: Vec::new(),
            groups: Vec::new(),
            walks: Vec::new(),
            loaded: false,
            session: None,
            nav: Navigation::default(),
            reach: narration::reach(0.0),
            play: None,
            notice: None,
            chart: None,
            seed: Seed {
                key: 0,
                text: AttrValue::default(),
                compare: AttrValue::default(),
            },
            fragment: String::new(),
            linked: None,
            link_due: 0.0,
            link_timer: None,
            started: None,
            predict: dom::mode("predict"),
            quiz: Quiz::default(),
            focus_card: false,
            record: Record::parse(
                dom::load(dom::Kept::Site, predict::SCORES).as_deref(),
                dom::load(dom::Kept::Site, predict::SOLVED).as_deref(),
            ),
            challenges: Vec::new(),
            challenge: None,
            on_nav: link.callback(Msg::Nav),
            on_pick: link.callback(Msg::Pick),
            on_run: link.callback(Msg::Ran),
            on_chart: link.callback(Msg::Chart),
            on_reset: link.callback(|_| Msg::ResetScores),
            on_file: link.callback(Msg::File),
            on_beside: link.callback(|_| Msg::Beside),
            on_ask: link.callback(Msg::Ask),
            on_open: link.callback(Msg::OpenChallenge),
            on_check: link.callback(Msg::Check),
            _listeners: listeners(ctx),
        }
    }

    fn update(&mut self, ctx: &Context<Self>, msg: Msg) -> bool {
        // The render a message asks for is timed from it (a message that renders nothing
        // starts no timing).
        let t0 = dom::now();
        let render = self.handle(ctx, msg);
        if render {
            self.started.get_or_insert(t0);
            // A resize moves the lists' view too, and sends no scroll.
            self.reach = narration::reach(dom::seen("#narration"));
            // Out of view, the panels wait for the frame after (a fifth of a step's work).
            if self.nav.panels_at != self.nav.pos {
                if dom::seen(".panels") > 0.0 {
                    self.nav.settle();
                } else {
                    dom::after_paint(dom::SETTLE, false);
                }
            }
        }
        render
    }

    fn rendered(&mut self, ctx: &Context<Self>, first: bool) {
        let now = dom::now();
        if first {
            dom::publish("firstRenderMs", now);
        }
        if let Some(t) = self.started.take() {
            dom::publish("renderMs", now - t);
        }
        if std::mem::take(&mut self.focus_card) {
            dom::focus(".quiz [data-focus], .quiz button");
        }
        if std::mem::take(&mut self.nav.reveal) {
            dom::reveal("#narration", "[data-lane] [aria-current]");
        }
        if let Some(s) = &self.session {
            let at = Some((s.clone(), self.nav.position(s)));
            if at != self.linked {
                // Only stepping waits: what was just opened (a link, a walkthrough, a run)
                // is written at once, so the URL never changes under a learner who has not
                // moved.
                let stepping = matches!(&self.linked, Some((was, _)) if was == s);
                self.linked = at;
                self.link_due = if first || !stepping {
                    0.0
                } else {
                    now + f64::from(LINK_DELAY_MS)
                };
                if self.link_timer.is_none() || !stepping {
                    self.follow_link(ctx);
                }
            }
        }
    }

    fn view(&self, ctx: &Context<Self>) -> Html {
        let picking = self
            .quiz
            .current()
            .is_some_and(|i| i.q.kind() == Kind::Pick);
        // A lesson file's walkthrough is not the built-in one of its name: its own title.
        let current = (self.session.as_ref())
            .filter(|s| s.lesson.is_none())
            .and_then(|s| s.walk.as_ref())
            .and_then(|w| self.walks.iter().position(|x| x.name == w.name));
        let shown = self
            .session
            .as_ref()
            .map_or("".into(), |s| s.title.clone().into());
        let scores = self
            .walks
            .iter()
            .map(|w| self.record.score(&w.name))
            .collect();
        let link = ctx.link();
        html! {
            <>
                { pure(picker::Props { titles: self.titles.clone(), groups: self.groups.clone(), current, shown, on_pick: self.on_pick.clone(),
                    scores, on_reset: self.on_reset.clone(), on_file: self.on_file.clone() }) }
                if let Some(n) = &self.notice {
                    <div class="notice" role="alert" data-testid="notice">{ n }</div>
                }
                if let Some(s) = &self.session {
                    { controls::controls(&controls::Props { pos: self.nav.pos, len: s.len(), playing: self.play.is_some(),
                        speed: self.nav.speed, op: self.op(s), on: self.on_nav.clone(),
                        event: self.nav.event(s), predict: self.predict,
                        on_predict: link.callback(|_| Msg::Predict) }) }
                    { quiz::card(&self.quiz, self.shown_state(s), &s.traces, &self.on_ask, &self.on_nav) }
                    <main class={classes!("stage", picking.then_some("picking"))} onclick={picking.then(|| self.on_pick_click())}>
                        { narration::narration(&narration::Props { session: s.clone(), pos: self.nav.pos, lanes: self.nav.lanes,
                            lead: self.nav.lead(s), on_nav: self.on_nav.clone(), reach: self.reach }) }
                        <Diagrams session={s.clone()} pos={self.nav.pos} events={self.nav.lanes.at} on_beside={self.on_beside.clone()} />
                    </main>
                    <div aria-busy={(self.nav.panels_at != self.nav.pos).then_some("true")}>{ pure(panels::Props { session: s.clone(), pos: self.nav.panels_at, chart: self.chart.clone(),
                        on_chart: self.on_chart.clone(), predict: self.predict }) }</div>
                }
                <Editor key={self.seed.key} text={self.seed.text.clone()} compare={self.seed.compare.clone()}
                    on_run={self.on_run.clone()} on_check={self.challenge.as_ref().map(|_| self.on_check.clone())}
                    aside={self.session.as_ref().filter(|s| s.capture.as_ref().is_some_and(|c| c.beside.is_none())).map(|_| AttrValue::from(CAPTURE_ASIDE))}
                    offered={self.offered()} />
                { quiz::challenges(&self.challenges, &self.record, self.challenge.as_ref(), &self.on_open) }
            </>
        }
    }
}

/// Fetches the TOML files `names` served beside the page in `dir/` and reads each with
/// `parse`.
async fn fetch_files<T>(
    dir: &str,
    names: &[&str],
    parse: fn(&str) -> Result<T, skblab_core::Error>,
) -> Result<Vec<T>, String> {
    let texts = dom::fetch_texts(dir, names).await?;
    (texts.iter())
        .map(|text| parse(text).map_err(|e| e.to_string()))
        .collect()
}

/// A callback that emits on `to` what `f` makes of an event, when it makes something (a
/// select or input whose value parses).
fn emit_some<E: 'static, T: 'static>(
    to: &Callback<T>,
    f: impl Fn(E) -> Option<T> + 'static,
) -> Callback<E> {
    let to = to.clone();
    Callback::from(move |e| {
        if let Some(v) = f(e) {
            to.emit(v)
        }
    })
}

/// Keyboard shortcuts (outside text fields), `hashchange` (a pasted permalink), any scroll
/// (of the page or a pane: scroll events reach the window only as it captures them) and the
/// frame after a render ([`dom::SETTLE`]).
fn listeners(ctx: &Context<App>) -> [EventListener; 4] {
    let doc = dom::document();
    let link = ctx.link().clone();
    let keys = EventListener::new_with_options(
        &doc,
        "keydown",
        EventListenerOptions::enable_prevent_default(),
        move |e| {
            let Some(e) = e.dyn_ref::<KeyboardEvent>() else {
                return;
            };
            // Esc skips the question asked, from anywhere (the answer field too).
            if e.key() == "Escape" {
                link.send_message(Msg::Ask(quiz::Ask::Skip));
            } else if let Some(nav) = key_nav(e) {
                e.prevent_default();
                link.send_message(Msg::Nav(nav));
            }
        },
    );
    // Each of the others sends the app one message.
    let send = |target: &EventTarget, name, options, msg: fn() -> Msg| {
        let link = ctx.link().clone();
        EventListener::new_with_options(target, name, options, move |_| link.send_message(msg()))
    };
    let window = web_sys::window().expect("a window");
    let plain = EventListenerOptions::default();
    [
        keys,
        send(&window, "hashchange", plain, || Msg::HashChanged),
        send(
            &window,
            "scroll",
            EventListenerOptions::run_in_capture_phase(),
            || Msg::Scrolled,
        ),
        send(&doc, dom::SETTLE, plain, || Msg::Settled),
    ]
}

impl App {
    /// What message `msg` changes; whether the app renders again.
    fn handle(&mut self, ctx: &Context<Self>, msg: Msg) -> bool {
        match msg {
            Msg::Loaded(walks) => {
                match walks {
                    Ok(w) => self.walks = w,
                    Err(e) => self.notice = Some(format!("The walkthroughs failed to load: {e}")),
                }
                self.titles = self.walks.iter().map(|w| w.title.clone().into()).collect();
                self.groups = picker::groups(&self.walks);
                self.loaded = true;
                // The link may name a walkthrough: open it now that they are here.
                self.open_fragment();
            }
            Msg::Challenges(Ok(c)) => {
                self.challenges = c.into_iter().map(|c| (c, Source::BuiltIn)).collect();
                // A challenge's link waited for them.
                if self.loaded && self.session.is_none() {
                    self.open_fragment();
                }
            }
            Msg::Challenges(Err(e)) => {
                self.notice = Some(format!("The challenges failed to load: {e}"));
            }
            Msg::Pick(i) => {
                self.stop();
                self.notice = None;
                self.challenge = None;
                let _ = self.open_walk(i, 0);
            }
            Msg::Nav(nav) => self.nav(ctx, nav),
            Msg::Tick => self.tick(),
            Msg::Ran(s) => {
                self.stop();
                self.notice = None;
                // An open challenge stays open, and its link with it, carrying what ran.
                let lesson = (self.challenge.as_ref().and(self.session.as_ref()))
                    .and_then(|shown| shown.lesson.clone())
                    .map(|l| l.with_work(&s.text));
                if let Some(open) = &mut self.challenge {
                    open.work = None;
                }
                self.show(Session { lesson, ..*s }, 0);
            }
            Msg::Chart(c) => self.chart = Some(c),
            Msg::File(f) => ctx
                .link()
                .send_future(async move { Msg::Report(dom::read_text(&f).await) }),
            Msg::Report(text) => self.open_report(text),
            Msg::Beside => self.open_beside(),
            Msg::HashChanged => {
                if self.loaded && dom::fragment().trim_start_matches('#') != self.fragment {
                    self.stop();
                    self.notice = None;
                    self.open_fragment();
                }
            }
            Msg::Predict => {
                self.predict = !self.predict;
                self.quiz.phase = Phase::Idle;
            }
            Msg::Ask(a) => self.ask(a),
            Msg::ResetScores => {
                self.record.reset_scores();
                save(&self.record);
            }
            Msg::OpenChallenge(i) => {
                self.open_challenge(i, None, None, Position::default());
            }
            Msg::Check(text) => self.check(&text),
            Msg::Link => {
                self.link_timer = None;
                self.follow_link(ctx);
                return false;
            }
            Msg::Settled => return self.nav.settle(),
            Msg::Scrolled => {
                let reach = narration::reach(dom::seen("#narration"));
                return std::mem::replace(&mut self.reach, reach) != reach;
            }
        }
        true
    }

    /// Writes the link into the URL if stepping has rested since `link_due`, else waits for
    /// that time.
    fn follow_link(&mut self, ctx: &Context<Self>) {
        let wait = self.link_due - dom::now();
        if wait > 0.0 {
            let link = ctx.link().clone();
            let fire = move || link.send_message(Msg::Link);
            self.link_timer = Some(Timeout::new(wait.ceil() as u32, fire));
        } else if let Some((s, at)) = &self.linked {
            let work = self.challenge.as_ref().and_then(|o| o.work.as_deref());
            // A session no link can name (a capture) leaves none: a reload shows the default
            // walkthrough rather than what was open before it.
            let link = s.link(*at).map(|l| match work {
                Some(w) => l.with_work(w),
                None => l,
            });
            let f = link.map_or(String::new(), |l| l.encode());
            if f != self.fragment {
                dom::set_fragment(&f);
                self.fragment = f;
            }
        }
    }
}

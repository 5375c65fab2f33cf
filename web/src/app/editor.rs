//! The scenario editor: the text, the variant and the one to compare with, the inline verdict
//! of the core, the run button and, with a challenge open, the check of its goal. Choosing a
//! variant or the one to compare with runs the text at once (the text itself runs with the
//! button), and the two are never the same variant. It owns what the learner types; each keystroke is parsed and its caps checked at once, and the
//! traced run (up to half a second for the largest scenarios the trace cap admits) waits
//! until typing pauses, so typing never stalls. The app seeds it (a walkthrough or a
//! permalink opened) by giving it a new key, and gets the loaded [`Session`] back when the
//! learner runs the text.

use crate::form;
use crate::session::{self, Session};
use gloo_timers::callback::Timeout;
use serde_json::Value;
use skblab_core::scenario::Scenario;
use web_sys::{HtmlSelectElement, HtmlTextAreaElement};
use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct Props {
    /// The text to start from.
    pub text: AttrValue,
    /// The variant to start comparing with (empty: none).
    pub compare: AttrValue,
    /// Called with the session the learner's text loaded.
    pub on_run: Callback<Box<Session>>,
    /// With a challenge open: called with the text when the learner checks its goal.
    #[prop_or_default]
    pub on_check: Option<Callback<String>>,
    /// What the editor says of the stage when it shows no scenario of the editor's (a
    /// capture has none): the text stays as the learner left it.
    #[prop_or_default]
    pub aside: Option<AttrValue>,
    /// A scenario the stage derived (the model's prediction beside a capture): shown in
    /// place of the learner's text, which is kept to go back to.
    #[prop_or_default]
    pub offered: Option<AttrValue>,
}

pub enum Msg {
    Edit(String),
    Knob(String, Value),
    Compare(String),
    /// Typing paused: run the text.
    Paused,
    Run,
    /// Back to the learner's text, from the scenario offered.
    Back,
}

/// What the editor says while it shows an offered scenario.
const OFFERED: &str = "The text here is the model's prediction's scenario, derived from the \
capture: change it and Run it. Your own text is kept. ";

/// How long typing must pause before the text is run.
const PAUSE_MS: u32 = 300;

/// The editor's verdict on its text.
enum Checked {
    Ok {
        ops: usize,
        variants: Vec<&'static str>,
        variant: String,
        /// Whether it was run too (else only parsed, the run waiting for a pause).
        ran: bool,
    },
    Err(String),
}

pub struct Editor {
    text: String,
    checked: Checked,
    compare: String,
    /// The run waiting for typing to pause (dropping it cancels it).
    pause: Option<Timeout>,
    /// The learner's text, kept while an offered scenario is shown.
    kept: Option<String>,
}

impl Component for Editor {
    type Message = Msg;
    type Properties = Props;

    fn create(ctx: &Context<Self>) -> Self {
        let p = ctx.props();
        Editor {
            checked: check(&p.text),
            text: p.text.to_string(),
            compare: p.compare.to_string(),
            pause: None,
            kept: None,
        }
    }

    fn changed(&mut self, ctx: &Context<Self>, old: &Props) -> bool {
        if let Some(t) = ctx
            .props()
            .offered
            .as_ref()
            .filter(|&t| old.offered.as_ref() != Some(t))
        {
            let mine = std::mem::take(&mut self.text);
            self.kept.get_or_insert(mine);
            self.set_text(t.to_string());
        }
        true
    }

    fn update(&mut self, ctx: &Context<Self>, msg: Msg) -> bool {
        match msg {
            Msg::Edit(text) => {
                self.checked = parsed(&text);
                self.text = text;
                let link = ctx.link().clone();
                self.pause = matches!(self.checked, Checked::Ok { .. })
                    .then(|| Timeout::new(PAUSE_MS, move || link.send_message(Msg::Paused)));
            }
            Msg::Paused => self.checked = check(&self.text),
            Msg::Knob(path, value) => {
                let was = match &self.checked {
                    Checked::Ok { variant, .. } => variant.clone(),
                    Checked::Err(_) => String::new(),
                };
                match form::set(&self.text, &path, value) {
                    Ok(t) => {
                        self.set_text(t);
                        // The variant compared with becomes the one shown: they swap.
                        if matches!(&self.checked, Checked::Ok { variant, .. } if *variant == self.compare)
                        {
                            self.compare = was;
                        }
                        self.run(ctx);
                    }
                    Err(e) => self.checked = Checked::Err(e),
                }
            }
            Msg::Compare(v) => {
                self.compare = v;
                self.run(ctx);
            }
            Msg::Run => self.run(ctx),
            Msg::Back => {
                if let Some(t) = self.kept.take() {
                    self.set_text(t);
                }
            }
        }
        true
    }

    fn view(&self, ctx: &Context<Self>) -> Html {
        let link = ctx.link();
        let (status, ok) = match &self.checked {
            Checked::Ok { ops, ran: true, .. } => (format!("✓ valid: {ops} operation(s)"), true),
            Checked::Ok { ops, .. } => (format!("✓ parsed: {ops} operation(s); running it…"), true),
            Checked::Err(e) => (e.clone(), false),
        };
        // A combined variant (`modern+dumazet-2019`) is offered as it was named.
        let variants = match &self.checked {
            Checked::Ok {
                variants, variant, ..
            } => offered(variants, [variant, &self.compare]),
            Checked::Err(_) => Vec::new(),
        };
        html! {
            <section class="editor" aria-label="Scenario editor">
                <h2>{ "Scenario editor" }</h2>
                if let Some(aside) = &ctx.props().aside {
                    <p class="note" data-testid="editor-aside">{ aside }</p>
                }
                if self.kept.is_some() {
                    <p class="note" data-testid="editor-offered">{ OFFERED }
                        <button class="small" data-action="back" onclick={link.callback(|_| Msg::Back)}>{ "Back to your text" }</button></p>
                }
                if let Checked::Ok { variant, .. } = &self.checked {
                    <div class="knobs">
                        <label>{ "variant" }
                            <select aria-label="variant" onchange={link.callback(|e: Event| Msg::Knob("variant".into(), Value::String(e.target_unchecked_into::<HtmlSelectElement>().value())))}>
                                { for variants.iter().map(|v| html! { <option value={v.to_string()} selected={v == variant}>{ *v }</option> }) }
                            </select>
                        </label>
                        <label>{ "compare with" }
                            <select aria-label="compare with" onchange={link.callback(|e: Event| Msg::Compare(e.target_unchecked_into::<HtmlSelectElement>().value()))}>
                                <option value="" selected={self.compare.is_empty()}>{ "— none —" }</option>
                                { for variants.iter().filter(|v| *v != variant).map(|v| html! { <option value={v.to_string()} selected={*v == self.compare}>{ *v }</option> }) }
                            </select>
                        </label>
                    </div>
                }
                <label for="scenario">{ "Scenario text (TOML or JSON)" }</label>
                <textarea id="scenario" data-testid="scenario" spellcheck="false" rows="14"
                    aria-invalid={(!ok).to_string()} aria-describedby="scenario-status"
                    value={self.text.clone()}
                    oninput={link.callback(|e: InputEvent| Msg::Edit(e.target_unchecked_into::<HtmlTextAreaElement>().value()))} />
                <p id="scenario-status" data-testid="editor-status" class={if ok { "ok" } else { "error" }} role="status">{ status }</p>
                <button data-action="run" disabled={!ok} onclick={link.callback(|_| Msg::Run)}>{ "Run this scenario" }</button>
                if let Some(on) = &ctx.props().on_check {
                    <button data-action="check" onclick={on.reform({ let t = self.text.clone(); move |_| t.clone() })}>{ "Check the challenge's goal" }</button>
                }
            </section>
        }
    }
}

impl Editor {
    /// Runs the text, beside the variant compared with, and hands the session to the app.
    fn run(&mut self, ctx: &Context<Self>) {
        self.pause = None;
        let cmp = (!self.compare.is_empty()).then_some(self.compare.as_str());
        match session::load_custom(&self.text, cmp) {
            Ok(s) => ctx.props().on_run.emit(Box::new(s)),
            Err(e) => self.checked = Checked::Err(e),
        }
    }

    fn set_text(&mut self, text: String) {
        self.checked = check(&text);
        self.text = text;
        self.pause = None;
    }
}

/// The core's verdict on `text` after its traced run, with the form's knobs when it is valid.
fn check(text: &str) -> Checked {
    verdict(session::check(text), true)
}

/// The core's verdict on `text` parsed, its run still to come.
fn parsed(text: &str) -> Checked {
    verdict(session::parse(text), false)
}

fn verdict(result: Result<Scenario, String>, ran: bool) -> Checked {
    match result {
        Ok(s) => Checked::Ok {
            ops: s.op_count(),
            variants: s.variants().to_vec(),
            variant: s.variant().to_string(),
            ran,
        },
        Err(e) => Checked::Err(e),
    }
}

/// The mechanism's variant names, then any of `named` (non-empty) that the list lacks.
fn offered<'a>(variants: &[&'a str], named: [&'a str; 2]) -> Vec<&'a str> {
    let mut out = variants.to_vec();
    for n in named {
        if !n.is_empty() && !out.contains(&n) {
            out.push(n);
        }
    }
    out
}

//! The page header: the walkthrough picker, with predict mode's score beside each walkthrough
//! and the button that resets them, and the file opener: a lesson (walkthrough or challenge
//! file) or a kernel report, which the app tells apart.

use super::emit_some;
use super::pure::View;
use web_sys::{HtmlInputElement, HtmlSelectElement};
use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct Props {
    /// The built-in walkthroughs' titles, in order.
    pub titles: Vec<AttrValue>,
    /// The walkthrough shown, or `None` for the learner's own scenario or a lesson file.
    pub current: Option<usize>,
    /// The title of what is shown, named in the picker when it is no built-in walkthrough.
    pub shown: AttrValue,
    pub on_pick: Callback<usize>,
    /// A `skblab kernel --out` report chosen.
    pub on_file: Callback<web_sys::File>,
    /// Per walkthrough, its questions answered right and answered (predict mode's score).
    pub scores: Vec<Option<(usize, usize)>>,
    pub on_reset: Callback<()>,
}

/// Steps and events leave the picker alone.
impl View for Props {
    fn view(&self) -> Html {
        picker(self)
    }
}

fn picker(p: &Props) -> Html {
    let onchange = emit_some(&p.on_pick, |e: Event| {
        e.target_unchecked_into::<HtmlSelectElement>()
            .value()
            .parse()
            .ok()
    });
    let on_file = emit_some(&p.on_file, |e: Event| {
        e.target_unchecked_into::<HtmlInputElement>()
            .files()?
            .get(0)
    });
    html! {
        <header>
            <h1>{ "skblab" }<span>{ " · how Linux builds and recycles sk_buffs" }</span></h1>
            <label class="picker">{ "Walkthrough " }
                <select id="walkthrough" data-testid="walkthrough" {onchange}>
                    if p.current.is_none() {
                        <option selected=true value="">{ format!("— {} —", p.shown) }</option>
                    }
                    { for p.titles.iter().enumerate().map(|(i, t)| html! {
                        <option value={i.to_string()} selected={p.current == Some(i)}>{ t.clone() }
                            if let Some(Some((right, asked))) = p.scores.get(i) { { format!(" · {right}/{asked} right") } }
                        </option>
                    }) }
                </select>
            </label>
            <label class="report" title="A walkthrough or challenge file (TOML, as in core/walkthroughs/ and core/challenges/: the link then carries it), or the JSON that `skblab kernel FILE --out REPORT` writes">
                { "Open a lesson or a kernel report " }
                <input type="file" accept=".toml,.json,application/json" data-testid="kernel-report" onchange={on_file} />
            </label>
            <button class="small" data-action="reset-scores" onclick={p.on_reset.reform(|_| ())}>{ "Reset quiz scores" }</button>
        </header>
    }
}

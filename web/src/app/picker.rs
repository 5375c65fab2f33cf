//! The page header: the walkthrough picker, with predict mode's score beside each walkthrough
//! and the button that resets them, and the file opener: a lesson (walkthrough or challenge
//! file), a kernel report or a trace capture, which the app tells apart.

use super::emit_some;
use super::pure::View;
use skblab_core::walkthrough::Walkthrough;
use web_sys::{HtmlInputElement, HtmlSelectElement};
use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct Props {
    /// The built-in walkthroughs' titles, in order.
    pub titles: Vec<AttrValue>,
    /// The walkthroughs grouped by the patch they teach: each group's heading and its
    /// walkthroughs' indices.
    pub groups: Vec<(AttrValue, Vec<usize>)>,
    /// The walkthrough shown, or `None` for the learner's own scenario or a lesson file.
    pub current: Option<usize>,
    /// The title of what is shown, named in the picker when it is no built-in walkthrough.
    pub shown: AttrValue,
    pub on_pick: Callback<usize>,
    /// A file chosen: a lesson, a `skblab kernel --out` report or a `skblab trace --out`
    /// capture.
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
                    { for p.groups.iter().map(|(heading, walks)| html! {
                        <optgroup label={heading.clone()}>
                            { for walks.iter().filter_map(|&i| Some((i, p.titles.get(i)?))).map(|(i, t)| html! {
                                <option value={i.to_string()} selected={p.current == Some(i)}>{ t.clone() }
                                    if let Some(Some((right, asked))) = p.scores.get(i) { { format!(" · {right}/{asked} right") } }
                                </option>
                            }) }
                        </optgroup>
                    }) }
                </select>
            </label>
            <label class="report" title="A walkthrough or challenge file (TOML, as in core/walkthroughs/ and core/challenges/: the link then carries it), or the JSON that `skblab kernel FILE --out REPORT` or `skblab trace --out CAPTURE -- COMMAND` writes">
                { "Open a lesson, a kernel report or a capture " }
                <input type="file" accept=".toml,.json,application/json" data-testid="kernel-report" onchange={on_file} />
            </label>
            <button class="small" data-action="reset-scores" onclick={p.on_reset.reform(|_| ())}>{ "Reset quiz scores" }</button>
        </header>
    }
}

/// The walkthroughs grouped by the seed (patch) each teaches, in seed order, each group under
/// its patch's heading (the core's), its walkthroughs in their own order.
pub fn groups(walks: &[Walkthrough]) -> Vec<(AttrValue, Vec<usize>)> {
    let mut out: Vec<(String, AttrValue, Vec<usize>)> = Vec::new();
    for (i, w) in walks.iter().enumerate() {
        let seed = w.seed();
        match out.iter_mut().find(|g| g.0 == seed) {
            Some(g) => g.2.push(i),
            None => {
                let heading = w
                    .patches()
                    .first()
                    .map_or(format!("seed {seed}"), |p| p.heading());
                out.push((seed, heading.into(), vec![i]));
            }
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out.into_iter().map(|(_, h, w)| (h, w)).collect()
}

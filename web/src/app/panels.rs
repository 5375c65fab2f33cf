//! The panels under the diagram: the counters of every trace at the position, with the step's
//! change, and one counter charted over the steps.

use super::pure::{pure, View};
use super::Shared;
use crate::{chart, diff};
use web_sys::HtmlSelectElement;
use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub session: Shared,
    pub pos: usize,
    /// The counter charted (the first when the session has no counter of that name).
    pub chart: Option<AttrValue>,
    pub on_chart: Callback<AttrValue>,
    /// In predict mode the chart stops at the position: later steps would give answers away.
    pub predict: bool,
}

/// An event leaves the panels alone: they show steps.
impl View for Props {
    fn view(&self) -> Html {
        html! {
            <section class="panels" aria-label="Counters and chart">
                { counters(self) }
                { chart(self) }
            </section>
        }
    }
}

/// Every counter of every trace after step `pos`; a row whose traces disagree is marked.
/// A row per counter, keyed by its name, so a step changes only the cells whose values
/// changed (a step of the 500-skb bench changes 5 rows of 23; as one block of markup the
/// whole table was parsed, styled and laid out again at every step).
fn counters(p: &Props) -> Html {
    let (s, pos) = (&p.session, p.pos);
    // A trace that counts nothing (a capture's: the kernel keeps no such counters) has no table.
    if s.traces[0].counters.names().next().is_none() {
        return html! {};
    }
    let at = |i: usize, p: usize| {
        p.checked_sub(1)
            .and_then(|p| s.traces[i].steps.get(p))
            .map(|st| &st.counters)
    };
    let row = |name: &str| {
        let vals: Vec<Option<u64>> = (0..s.traces.len())
            .map(|i| at(i, pos).and_then(|c| c.get(name)))
            .collect();
        let differs = vals.windows(2).any(|w| w[0] != w[1]);
        let cells = s.traces.iter().enumerate().map(|(i, t)| {
            let v = vals[i].map_or("–".into(), |v| v.to_string());
            let prev = at(i, pos - pos.min(1)).filter(|_| pos > 1);
            let d = at(i, pos).map_or(0, |c| diff::delta(prev, c, name));
            html! {
                <td data-variant={t.variant.clone()}>
                    <span data-counter={name.to_string()}>{ v }</span>
                    if d != 0 {
                        <span class={classes!("delta", (d > 0).then_some("up"))}>{ format!(" {d:+}") }</span>
                    }
                </td>
            }
        });
        html! {
            <tr key={name} class={differs.then_some("dif")}><th scope="row">{ name }</th>{ for cells }</tr>
        }
    };
    html! {
        <div class="counters">
            <h2>{ "Counters" }</h2>
            <table>
                <thead><tr><th scope="col">{ "counter" }</th>
                    { for s.traces.iter().map(|t| html! { <th scope="col">{ &t.variant }</th> }) }
                </tr></thead>
                <tbody>{ for s.traces[0].counters.names().map(row) }</tbody>
            </table>
        </div>
    }
}

/// One counter over the steps, every trace a line; the learner picks the counter. The pick
/// is kept across sessions while the new session has that counter.
fn chart(p: &Props) -> Html {
    let s = &p.session;
    let names = || s.traces[0].counters.names();
    let Some(name) = (p.chart.as_deref())
        .filter(|c| names().any(|n| n == *c))
        .or_else(|| names().next())
        .map(String::from)
    else {
        return html! {};
    };
    // In predict mode the plot stops at the position, so it changes with it; else it stays.
    let shown = p.predict.then_some(p.pos);
    let plot = Plot {
        session: s.clone(),
        name: name.clone().into(),
        shown,
    };
    let marker = chart::marker(&plot.series(), p.pos);
    let (w, h) = chart::SIZE;
    let onchange = (p.on_chart).reform(|e: Event| {
        e.target_unchecked_into::<HtmlSelectElement>()
            .value()
            .into()
    });
    html! {
        <div class="chart">
            <h2>{ "Over the steps" }</h2>
            <label>{ "Counter " }
                <select aria-label="Counter to chart" {onchange}>
                    { for names().map(|n| html! { <option value={n.to_string()} selected={n == name}>{ n }</option> }) }
                </select>
            </label>
            <svg xmlns="http://www.w3.org/2000/svg" viewBox={format!("0 0 {w} {h}")} width={w.to_string()} height={h.to_string()}
                role="img" aria-label={format!("{name} over the steps")}>
                { pure(plot) }
                <path d={marker} stroke="#c2412d" stroke-dasharray="3 2" />
            </svg>
        </div>
    }
}

/// The chart's plot of counter `name`, over the steps up to `shown` (all without it).
#[derive(PartialEq)]
struct Plot {
    session: Shared,
    name: AttrValue,
    shown: Option<usize>,
}

impl Plot {
    /// Each trace's variant and values of the counter, step by step.
    fn series(&self) -> Vec<(&str, Vec<u64>)> {
        (self.session.traces.iter())
            .map(|t| {
                let shown = self.shown.map_or(t.steps.len(), |p| p.min(t.steps.len()));
                let vals = t.steps[..shown].iter();
                let vals = vals.map(|st| st.counters.get(&self.name).unwrap_or(0));
                (t.variant.as_str(), vals.collect())
            })
            .collect()
    }
}

impl View for Plot {
    fn view(&self) -> Html {
        Html::from_html_unchecked(chart::plot(&self.series()).into())
    }
}

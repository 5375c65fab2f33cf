//! The panels under the diagram: the counters of every trace at the position, with the step's
//! change, and one counter charted over the steps.

use super::Shared;
use crate::diagram::esc;
use crate::{chart, diff};
use std::fmt::Write;
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

pub fn panels(p: &Props) -> Html {
    html! {
        <section class="panels" aria-label="Counters and chart">
            { counters(p) }
            { chart(p) }
        </section>
    }
}

/// Every counter of every trace after step `pos`; a row whose traces disagree is marked.
/// Drawn as markup (as Yew nodes the table cost the bundle most of a kilobyte).
fn counters(p: &Props) -> Html {
    let (s, pos) = (&p.session, p.pos);
    let at = |i: usize, p: usize| {
        p.checked_sub(1)
            .and_then(|p| s.traces[i].steps.get(p))
            .map(|st| &st.counters)
    };
    let mut o = String::from(r#"<h2>Counters</h2><table><thead><tr><th scope="col">counter</th>"#);
    for t in &s.traces {
        let _ = write!(o, r#"<th scope="col">{}</th>"#, esc(&t.variant));
    }
    o.push_str("</tr></thead><tbody>");
    for name in s.traces[0].counters.names() {
        let vals: Vec<Option<u64>> = (0..s.traces.len())
            .map(|i| at(i, pos).and_then(|c| c.get(name)))
            .collect();
        let differs = vals.windows(2).any(|w| w[0] != w[1]);
        let _ = write!(
            o,
            r#"<tr{}><th scope="row">{name}</th>"#,
            if differs { r#" class="dif""# } else { "" }
        );
        for (i, t) in s.traces.iter().enumerate() {
            let v = vals[i].map_or("–".into(), |v| v.to_string());
            let _ = write!(
                o,
                r#"<td data-variant="{}"><span data-counter="{name}">{v}</span>"#,
                esc(&t.variant)
            );
            let prev = at(i, pos - pos.min(1)).filter(|_| pos > 1);
            match at(i, pos).map(|c| diff::delta(prev, c, name)) {
                Some(d) if d != 0 => {
                    let up = if d > 0 { " up" } else { "" };
                    let _ = write!(o, r#"<span class="delta{up}"> {d:+}</span>"#);
                }
                _ => {}
            }
            o.push_str("</td>");
        }
        o.push_str("</tr>");
    }
    o.push_str("</tbody></table>");
    html! { <div class="counters">{ Html::from_html_unchecked(o.into()) }</div> }
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
    let series: Vec<(&str, Vec<u64>)> = (s.traces.iter())
        .map(|t| {
            let shown = if p.predict {
                p.pos.min(t.steps.len())
            } else {
                t.steps.len()
            };
            let vals = (t.steps[..shown].iter()).map(|st| st.counters.get(&name).unwrap_or(0));
            (t.variant.as_str(), vals.collect())
        })
        .collect();
    let svg = chart::svg(&name, &series, p.pos);
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
            { Html::from_html_unchecked(AttrValue::from(svg)) }
        </div>
    }
}

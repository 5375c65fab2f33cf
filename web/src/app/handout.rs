//! The handout (`?handout`, and what the page prints): the walkthrough's title and sources,
//! the legend of the marks it uses, then every step one after another, each with its
//! narration and its drawings (marks as the stepper shows them) under captions naming each
//! lane, and the drawing after each of the step's key moments; then the counters at the end,
//! lane beside lane, and the questions as a worksheet. At most [`MAX_STEPS`] steps, then a
//! note of how many it leaves out.

use super::scene::{scenes, Look};
use super::Shared;
use crate::diagram::{self, esc, Shapes, ALL};
use crate::session::LANES;
use skblab_core::Trace;
use std::fmt::Write;
use yew::prelude::*;

/// At most this many steps in a handout: a printed handout of more is not read, and a
/// 10,000-step one took 11 s and a million nodes to draw (issue 38).
pub const MAX_STEPS: usize = 100;

/// At most this many key moments drawn per step and lane: a step of a thousand frames
/// reuses pages hundreds of times, and the first few show what each one does.
const MAX_MOMENTS: usize = 4;

/// The handout as markup; `legend`: the page's legend markup.
pub fn handout(s: &Shared, look: Look, legend: &str) -> Html {
    let mut out = format!(r#"<h2 data-testid="handout-title">{}</h2>"#, esc(&s.title));
    super::narration::cite(&mut out, s);
    let _ = write!(
        out,
        r#"<h3>Legend</h3><ul class="legend" data-testid="handout-legend">{}</ul>"#,
        self::legend(s, look, legend)
    );
    let mut shapes: [Shapes; LANES] = Default::default();
    let shown = (s.len() + 1).min(MAX_STEPS);
    for pos in 0..shown {
        step(&mut out, s, look, pos, &mut shapes);
    }
    if shown <= s.len() {
        let _ = write!(
            out,
            r#"<p class="note" data-testid="handout-left-out">Steps {shown} to {} are left out: a handout draws at most {MAX_STEPS} steps. Step through the rest on the stage.</p>"#,
            s.len()
        );
    }
    counters(&mut out, s);
    worksheet(&mut out, s);
    html! {
        <section class="hsteps" aria-label="Handout: every step" data-testid="handout">
            { Html::from_html_unchecked(out.into()) }
        </section>
    }
}

/// Step `pos`: its operation, narration, each lane's drawing under its caption, then its key
/// moments.
fn step(out: &mut String, s: &Shared, look: Look, pos: usize, shapes: &mut [Shapes; LANES]) {
    let op = pos
        .checked_sub(1)
        .map_or("before the first operation", |p| &s.traces[0].steps[p].op);
    let _ = write!(
        out,
        r#"<section class="hstep" data-step="{pos}"><h3>Step {pos}: {}</h3>"#,
        esc(op)
    );
    if let Some((main, outro)) = s.narration(pos) {
        for text in std::iter::once(main).chain(outro) {
            super::narration::paragraphs(out, text);
        }
    }
    out.push_str(r#"<div class="hlanes">"#);
    for (i, svg) in drawings(s, look, pos, shapes).iter().enumerate() {
        let _ = write!(
            out,
            r#"<figure><figcaption class="hcap">{}</figcaption>{svg}</figure>"#,
            esc(&lane_caption(s, i))
        );
    }
    out.push_str("</div>");
    moments(out, s, look, pos);
    out.push_str("</section>");
}

/// Lane `i`'s caption: before or after the patch (side by side), its variant and kernel.
fn lane_caption(s: &Shared, i: usize) -> String {
    let side = match (s.traces.len(), i == s.patched_lane()) {
        (1, _) => "",
        (_, true) => "after: ",
        (_, false) => "before: ",
    };
    [side, &s.lane_name(i)].concat()
}

/// Step `pos`'s key moments (the walkthrough's [`key_kinds`]), lane by lane: the drawing
/// right after each such event, under a caption naming the lane and the event; at most
/// [`MAX_MOMENTS`] a lane.
///
/// [`key_kinds`]: skblab_core::walkthrough::Walkthrough::key_kinds
fn moments(out: &mut String, s: &Shared, look: Look, pos: usize) {
    for i in 0..s.traces.len().min(LANES) {
        for k in key_events(s, pos, i) {
            let e = &s.events(i, pos)[k - 1];
            let mut at = [None; LANES];
            at[i] = Some(k);
            let scene = &scenes(s, pos, at)[i];
            let svg = scene.draw(s, look, ALL, &mut Shapes::default()).to_svg();
            let _ = write!(
                out,
                r#"<figure class="moment" data-testid="moment" data-kind="{kind}"><figcaption class="hcap">Key moment, step {pos}, {}: event {k}, {}</figcaption>{svg}</figure>"#,
                esc(&lane_caption(s, i)),
                esc(&e.to_string()),
                kind = e.kind(),
            );
        }
    }
}

/// The numbers (1-based) of step `pos`'s key events in lane `lane`: events of a kind the
/// walkthrough's patch makes its own ([`Patch::moments`]), at most [`MAX_MOMENTS`].
///
/// [`Patch::moments`]: skblab_core::patches::Patch::moments
pub(super) fn key_events(s: &Shared, pos: usize, lane: usize) -> impl Iterator<Item = usize> + '_ {
    let patches = (s.walk.as_ref()).map_or(Vec::new(), |w| w.patches());
    (s.events(lane, pos).iter().enumerate())
        .filter(move |(_, e)| (patches.iter()).any(|p| p.moments.contains(&e.kind().name())))
        .map(|(k, _)| k + 1)
        .take(MAX_MOMENTS)
}

/// Every counter at the end of the last step drawn, lane beside lane, a row whose lanes
/// differ marked.
fn counters(out: &mut String, s: &Shared) {
    let at = s.len().min(MAX_STEPS - 1).saturating_sub(1);
    fn step_of(t: &Trace, at: usize) -> Option<&skblab_core::trace::Step> {
        t.steps.get(at)
    }
    let last = |t| step_of(t, at);
    // (A trace that counts nothing, a capture's, has no table.)
    let Some(first) = last(&s.traces[0]).filter(|st| st.counters.names().next().is_some()) else {
        return;
    };
    out.push_str(r#"<section class="hcounters counters"><h3>Counters after the last step</h3><table data-testid="handout-counters"><thead><tr><th scope="col">counter</th>"#);
    for i in 0..s.traces.len() {
        let _ = write!(out, r#"<th scope="col">{}</th>"#, esc(&lane_caption(s, i)));
    }
    out.push_str("</tr></thead><tbody>");
    for name in first.counters.names() {
        let vals: Vec<Option<u64>> = (s.traces.iter())
            .map(|t| last(t).and_then(|st| st.counters.get(name)))
            .collect();
        let differs = vals.windows(2).any(|w| w[0] != w[1]);
        let class = if differs { r#" class="dif""# } else { "" };
        let _ = write!(out, r#"<tr{class}><th scope="row">{}</th>"#, esc(name));
        for v in vals {
            match v {
                Some(v) => {
                    let _ = write!(out, "<td>{v}</td>");
                }
                None => out.push_str("<td>–</td>"),
            }
        }
        out.push_str("</tr>");
    }
    out.push_str("</tbody></table></section>");
}

/// The walkthrough's questions as a worksheet: each with the step it comes before, the lane
/// it asks about, its choices, and room to answer.
fn worksheet(out: &mut String, s: &Shared) {
    let Some(qs) = s.walk.as_ref().and_then(|w| w.questions().ok()) else {
        return;
    };
    if qs.is_empty() {
        return;
    }
    out.push_str(r#"<section class="worksheet" data-testid="worksheet"><h3>Worksheet: predict, then step to check</h3><ol>"#);
    for q in &qs {
        let _ = write!(
            out,
            r#"<li><p>Before step {} ({}): {}</p>"#,
            q.step,
            esc(&q.variant),
            esc(&q.ask)
        );
        if !q.choices.is_empty() {
            out.push_str(r#"<ul class="choices">"#);
            for c in &q.choices {
                let _ = write!(out, "<li>☐ {}</li>", esc(&c.label));
            }
            out.push_str("</ul>");
        }
        out.push_str(r#"<div class="answer" aria-label="Room for the answer"></div></li>"#);
    }
    out.push_str("</ol></section>");
}

/// Each lane's whole drawing at step `pos`, as SVG markup; `shapes`: the lanes' from the step
/// drawn before.
fn drawings(s: &Shared, look: Look, pos: usize, shapes: &mut [Shapes; LANES]) -> Vec<String> {
    (scenes(s, pos, [None; LANES]).iter().zip(shapes))
        .map(|(scene, shapes)| scene.draw(s, look, ALL, shapes).to_svg())
        .collect()
}

/// The legend of the session as list items: the entries of `legend` (the page's legend
/// markup) whose marks its drawings use at any step (the first [`MAX_STEPS`]), so that a
/// walkthrough's legend lists the marks it shows and no other. A freed skb or page fades out
/// only while stepping by event: its entry is there whenever anything is drawn.
pub fn legend(s: &Shared, look: Look, legend: &str) -> String {
    let mut shapes: [Shapes; LANES] = Default::default();
    let gone = diagram::marks_used(GONE, legend);
    let mut used = vec![false; gone.len()];
    for pos in 0..(s.len() + 1).min(MAX_STEPS) {
        for svg in drawings(s, look, pos, &mut shapes) {
            let any = svg.contains("data-skb=") || svg.contains("data-page=");
            let here = diagram::marks_used(&svg, legend);
            for ((u, here), g) in used.iter_mut().zip(here).zip(&gone) {
                *u |= here || (any && *g);
            }
        }
    }
    diagram::legend_items(legend, &used)
}

/// The mark of a freed skb or page, fading out ([`legend`]).
const GONE: &str = r#"<g class="gone">"#;

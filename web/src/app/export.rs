//! Figures to take away: a lane, or both side by side, as SVG or PNG (on request a 16:9
//! slide), and the deck: every step and every key moment as 16:9 slides in one page, to show
//! or print to PDF. Each carries its captions, the legend of its marks and the sources.

use super::handout::{key_events, MAX_STEPS};
use super::scene::{scenes, Look, Scene};
use super::Shared;
use crate::diagram::{self, esc, Shapes, ALL};
use crate::dom;
use crate::session::{Moment, LANES};
use std::fmt::Write;

/// Downloads lane `Some(i)` (or every lane, `None`) of `scenes` (at `at`) as a figure of its
/// own ([`diagram::figure`]), as SVG or as PNG, named for the moment each lane shows; a 16:9
/// slide when the page's "16:9" box is ticked.
pub(super) fn figure(
    s: &Shared,
    scenes: &[Scene],
    look: Look,
    (pos, events): Moment,
    lane: Option<usize>,
    png: bool,
) {
    let lanes: Vec<usize> = lane.map_or((0..scenes.len()).collect(), |i| vec![i]);
    if lanes.is_empty() || lanes.iter().any(|&i| i >= scenes.len()) {
        return;
    }
    let event = |i: usize| events.get(i).copied().flatten();
    let at = |i: usize| event(i).map_or(String::new(), |k| format!("-event{k}"));
    let mech = &s.traces[lanes[0]].mechanism;
    let name = match lane {
        Some(i) => format!("skblab-{mech}-{}-step{pos}{}", s.traces[i].variant, at(i)),
        None => {
            let each = lanes
                .iter()
                .map(|&i| format!("-{}{}", s.traces[i].variant, at(i)));
            format!("skblab-{mech}-step{pos}{}-both", each.collect::<String>())
        }
    };
    let whole: Vec<_> = (lanes.iter())
        .map(|&i| scenes[i].draw(s, look, ALL, &mut Shapes::default()))
        .collect();
    let figs: Vec<_> = (lanes.iter().zip(&whole))
        .map(|(&i, d)| (d, caption(s, i, pos, event(i))))
        .collect();
    let legend = dom::inner_html("legend");
    let svg = diagram::figure(&figs, &legend, &sources(s), dom::checked("slide"));
    let name = plain(&name);
    if png {
        dom::png(&svg, &format!("{name}.png"));
    } else {
        dom::download(&format!("{name}.svg"), "image/svg+xml", &svg);
    }
}

/// Downloads the deck: every step (the first [`MAX_STEPS`]) with every lane, then after each
/// step its key moments lane by lane, each a 16:9 slide, in one HTML page.
pub(super) fn deck(s: &Shared, look: Look) {
    let legend = dom::inner_html("legend");
    let sources = sources(s);
    let mut out = format!(
        r#"<!doctype html><html lang="en"><meta charset="utf-8"><title>{}: every step</title><style>{DECK_STYLE}</style><body>"#,
        esc(&s.title)
    );
    let mut shapes: [Shapes; LANES] = Default::default();
    for pos in 0..(s.len() + 1).min(MAX_STEPS) {
        let at = scenes(s, pos, [None; LANES]);
        let whole: Vec<_> = (at.iter().zip(&mut shapes))
            .map(|(scene, shapes)| scene.draw(s, look, ALL, shapes))
            .collect();
        let figs: Vec<_> = (whole.iter().enumerate())
            .map(|(i, d)| (d, caption(s, i, pos, None)))
            .collect();
        slide(&mut out, &diagram::figure(&figs, &legend, &sources, true));
        for (i, k) in (0..s.traces.len()).flat_map(|i| key_events(s, pos, i).map(move |k| (i, k))) {
            let mut events = [None; LANES];
            events[i] = Some(k);
            let d = scenes(s, pos, events)[i].draw(s, look, ALL, &mut Shapes::default());
            let fig = [(&d, caption(s, i, pos, Some(k)))];
            slide(&mut out, &diagram::figure(&fig, &legend, &sources, true));
        }
    }
    out.push_str("</body></html>");
    let name = s.walk.as_ref().map_or(&s.traces[0].mechanism, |w| &w.name);
    dom::download(
        &plain(&format!("skblab-{name}-deck.html")),
        "text/html",
        &out,
    );
}

/// Each slide a page of its own, printed or shown; the figure as large as the page allows.
const DECK_STYLE: &str = "@page{size:16in 9in;margin:0}body{margin:0;background:#555}\
section{width:100vw;aspect-ratio:16/9;max-height:100vh;margin:0 auto 8px;background:#fff;break-after:page}\
section svg{display:block;width:100%;height:100%}";

fn slide(out: &mut String, svg: &str) {
    let _ = write!(out, r#"<section class="slide">{svg}</section>"#);
}

/// A file name without `+` (as in `duyck-2012+none`, the rx variant's two axes): it stands
/// for a space in a URL and trips some slide tools, so it becomes `-`.
fn plain(name: &str) -> String {
    name.replace('+', "-")
}

/// What a figure cites, one line each (the session's citations, without their addresses).
fn sources(s: &Shared) -> Vec<String> {
    s.citations().into_iter().map(|(text, _)| text).collect()
}

/// An exported figure's caption: the walkthrough, lane `i` (the variant and its kernel, or
/// a capture's kernel: [`Session::lane_name`]), the step and its operation, and the event
/// shown.
///
/// [`Session::lane_name`]: crate::session::Session::lane_name
fn caption(s: &Shared, i: usize, pos: usize, event: Option<usize>) -> String {
    let step = pos.checked_sub(1).and_then(|p| s.traces[i].steps.get(p));
    let op = step.map_or("before the first operation", |st| st.op.as_str());
    let mut out = format!(
        "{} · {} · step {pos}/{}: {op}",
        s.title,
        s.lane_name(i),
        s.len()
    );
    if let Some(e) = event.and_then(|k| Some((k, step?.events.get(k.checked_sub(1)?)?))) {
        let _ = write!(out, " · event {}: {}", e.0, e.1);
    } else if event == Some(0) {
        // A lane in lockstep where the other's input starts.
        out += " · before its first event";
    }
    out
}

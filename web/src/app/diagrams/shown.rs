//! The drawings in the page: each piece parsed once and kept while it stays, and the canvas
//! that keeps one size over a trace's steps.

use crate::app::scene::drawing_width;
use crate::app::Shared;
use crate::diagram::{self, Drawing, Piece, Shapes};
use crate::dom;
use skblab_core::Trace;
use web_sys::Node;
use yew::prelude::*;
use yew::virtual_dom::{Key, VList};

/// A drawing near the view, each piece with its element, parsed once: an unchanged piece
/// keeps the element it had, and the move ahead's new pieces are parsed before the move.
pub(super) struct Shown {
    /// Its size, label and what it cuts off (its pieces moved into `pieces`).
    pub(super) drawing: Drawing,
    /// Each piece's key, markup and element (`None`: held back until the frame after, and
    /// not parsed yet).
    pieces: Vec<(Key, String, Option<Node>)>,
    /// The SVG's height for every step of the trace (see [`canvas_height`]).
    canvas: u32,
}

/// How many new pieces out of view a render writes at once. Past that (a step that adds a
/// few dozen skbs below the view of a long queue), those pieces wait for the frame after the
/// step's own, so the step shows within a frame; they are the band kept for scrolling, not
/// what the learner sees.
const HOLD_PAST: usize = 6;

impl Shown {
    /// `before`: the drawing in the page; `view`: the units of the drawing in view.
    pub(super) fn new(
        mut drawing: Drawing,
        canvas: u32,
        before: Option<&Shown>,
        view: (u32, u32),
    ) -> Shown {
        let canvas = canvas.max(drawing.height);
        let written = before.map_or(&[][..], |b| &b.pieces[..]);
        // The element in the page of a piece with the same key and markup.
        let kept = |p: &Piece| {
            let same = |(k, body, _): &&(Key, String, _)| **k == *p.key && *body == p.body;
            written.iter().find(same).and_then(|w| w.2.clone())
        };
        let off_view = |p: &Piece| !p.meets(view.0, view.1);
        let new_off_view = drawing
            .pieces
            .iter()
            .filter(|p| off_view(p) && kept(p).is_none());
        let hold = new_off_view.count() > HOLD_PAST;
        let pieces = (std::mem::take(&mut drawing.pieces).into_iter())
            .map(|p| {
                let node = match kept(&p) {
                    None if hold && off_view(&p) => None,
                    None => Some(dom::svg_piece(&p.body)),
                    node => node,
                };
                (Key::from(p.key), p.body, node)
            })
            .collect();
        Shown {
            drawing,
            pieces,
            canvas,
        }
    }

    /// Whether pieces are held back.
    pub(super) fn holds(&self) -> bool {
        self.pieces.iter().any(|p| p.2.is_none())
    }

    /// Lets the held pieces be written.
    pub(super) fn settle(&mut self) {
        for (_, body, node) in self.pieces.iter_mut().filter(|p| p.2.is_none()) {
            *node = Some(dom::svg_piece(body));
        }
    }

    /// The markup of [`Drawing::to_svg`] near the view, each piece keyed so unchanged pieces
    /// stay. The SVG keeps the trace's canvas size at every step (resizing an SVG lays out
    /// every node in it again); the box around it shows only this step's drawing.
    pub(super) fn view(&self, zoom: Option<u32>) -> Html {
        let d = &self.drawing;
        let width = zoom.map_or(String::new(), |z| format!("width:{}px;", d.width * z / 100));
        html! {
            <div class="canvas" style={format!("{width}aspect-ratio:{}/{}", d.width, d.height)}>
                <svg xmlns="http://www.w3.org/2000/svg" viewBox={format!("0 0 {} {}", d.width, self.canvas)}
                    width={d.width.to_string()} height={self.canvas.to_string()} role="img" aria-label={d.label.clone()}
                    aria-busy={self.holds().then_some("true")}>
                    // Keyed too: `for` is flattened into the <svg>'s children, and Yew diffs them
                    // by key only when every child has one (else a new skb shifts every later piece).
                    <style key="style">{ Drawing::STYLE }</style>
                    { for self.pieces.iter().filter_map(|(k, _, node)| {
                        let node = Html::VRef(node.clone()?);
                        Some(Html::from(VList::with_children(vec![node], Some(k.clone()))))
                    }) }
                </svg>
            </div>
        }
    }
}

/// Per trace, its tallest drawing over all its steps.
pub(super) fn canvas_heights(s: &Shared, present: bool) -> Vec<u32> {
    let width = drawing_width(s.traces.len(), present);
    s.traces.iter().map(|t| canvas_height(t, width)).collect()
}

/// The tallest drawing of trace `t` `width` units wide, over all its steps.
fn canvas_height(t: &Trace, width: u32) -> u32 {
    let (max_frags, shapes) = (t.consts.max_skb_frags, &mut Shapes::default());
    (t.steps.iter())
        .map(|st| diagram::height(&st.state, max_frags, width, shapes))
        .max()
        .unwrap_or(0)
}

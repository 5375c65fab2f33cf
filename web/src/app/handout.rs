//! The handout (`?handout`, and what the page prints): every step of the session one after
//! another, each with its narration and its drawings, marks as the stepper shows them; at most
//! [`MAX_STEPS`] of them, then a note of how many it leaves out.

use super::scene::scenes;
use super::Shared;
use crate::diagram::esc;
use crate::diagram::{Shapes, ALL};
use crate::session::LANES;
use std::fmt::Write;
use yew::prelude::*;

/// At most this many steps in a handout: a printed handout of more is not read, and a
/// 10,000-step one took 11 s and a million nodes to draw (issue 38).
pub const MAX_STEPS: usize = 100;

/// Every step, 0 (before the first operation) to the last, as markup; the first
/// [`MAX_STEPS`] when there are more.
pub fn handout(s: &Shared, idle: Option<&[Vec<String>]>) -> Html {
    let mut out = String::new();
    let mut shapes: [Shapes; LANES] = Default::default();
    let shown = (s.len() + 1).min(MAX_STEPS);
    for pos in 0..shown {
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
                super::narration::paragraphs(&mut out, text);
            }
        }
        for (scene, shapes) in scenes(s, pos, [None; LANES]).iter().zip(&mut shapes) {
            out.push_str(&scene.draw(s, idle, ALL, shapes).to_svg());
        }
        out.push_str("</section>");
    }
    if shown <= s.len() {
        let _ = write!(
            out,
            r#"<p class="note" data-testid="handout-left-out">Steps {shown} to {} are left out: a handout draws at most {MAX_STEPS} steps. Step through the rest on the stage.</p>"#,
            s.len()
        );
    }
    html! {
        <section class="hsteps" aria-label="Handout: every step" data-testid="handout">
            { Html::from_html_unchecked(out.into()) }
        </section>
    }
}

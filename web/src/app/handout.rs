//! The handout (`?handout`, and what the page prints): every step of the session one after
//! another, each with its narration and its drawings, marks as the stepper shows them.

use super::scene::scenes;
use super::Shared;
use crate::diagram::esc;
use crate::diagram::{Shapes, ALL};
use crate::session::LANES;
use std::fmt::Write;
use yew::prelude::*;

/// Every step, 0 (before the first operation) to the last, as markup.
pub fn handout(s: &Shared, idle: Option<&[Vec<String>]>) -> Html {
    let mut out = String::new();
    let mut shapes: [Shapes; LANES] = Default::default();
    for pos in 0..=s.len() {
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
    html! {
        <section class="hsteps" aria-label="Handout: every step" data-testid="handout">
            { Html::from_html_unchecked(out.into()) }
        </section>
    }
}

//! Under a capture and the model's prediction beside it: each write's skbs, the kernel's
//! values with the model's under each and the verdict (the core's `Prediction::compare`),
//! drawn as the kernel lane draws a `skblab kernel` report ([`super::kernel_lane`]).

use super::kernel_lane::{figure, table, totals};
use crate::beside::Beside;
use skblab_core::kernel_report::Cell;
use std::fmt::Write;
use yew::Html;

/// The model lane's note: what the scenario was derived from, and that the editor holds it.
pub fn about(b: &Beside) -> String {
    let facts: Vec<String> = (b.facts.iter())
        .map(|f| format!("{} {} ({})", f.field, f.value, f.source.mark()))
        .collect();
    format!(
        "The model's prediction for tcp socket {}'s writes, in a scenario derived from the \
         capture: {}; what the capture cannot tell (cwnd, the peer's window, when the kernel \
         pushed, its acks) is assumed, as the scenario in the editor says.",
        b.socket,
        facts.join(", ")
    )
}

pub fn lane(b: &Beside) -> Html {
    let c = &b.compared;
    let mut o = String::new();
    let _ = write!(
        o,
        r#"<figcaption><strong>The kernel beside the model's prediction</strong> · each write's skbs, the capture's values with the model's under them · verdict <span class="verdict {v}" data-testid="beside-verdict">{v}</span></figcaption>"#,
        v = c.verdict,
    );
    let rows: Vec<Vec<Cell>> = (c.writes.iter())
        .flat_map(|w| &w.skbs)
        .map(|s| s.cells.clone())
        .collect();
    let mut columns: Vec<&str> = Vec::new();
    for cell in rows.iter().flatten() {
        if !columns.contains(&cell.field.as_str()) {
            columns.push(&cell.field);
        }
    }
    table(
        &mut o,
        ("skb", "the capture holds them all"),
        &columns,
        &rows,
    );
    totals(&mut o, &c.totals);
    figure(o, "beside")
}

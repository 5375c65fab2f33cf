//! The third lane: a `skblab kernel` report's skbs (or, for seed 001, its frag cache's
//! pages), the running kernel's own, each field with the model's value under it (from the
//! model's lane of the report's variant, named in the caption; the lane spans the row under
//! both) and its verdict. Drawn as markup (a table), not Yew nodes: it never changes once
//! opened.

use crate::diagram::esc;
use skblab_core::kernel_report::{Cell, KernelReport, Verdict};
use std::fmt::Write;
use yew::prelude::*;

/// The most skbs or pages drawn: a report may hold 32,000 (`MAX_REPORT_SKBS`), whose
/// table took the page ~10 s to lay out; the rest are counted in a last row.
pub const MAX_DRAWN: usize = 200;

pub fn lane(r: &KernelReport) -> Html {
    let mut o = String::new();
    let _ = write!(
        o,
        r#"<figcaption><strong>Linux {}</strong> · its own {}, traced by <code>skblab kernel</code> · verdict <span class="verdict {v}" data-testid="kernel-verdict">{v}</span><div class="about">the model's values from its <code>{}</code> lane, after step {} (the ops the kernel ran){}</div></figcaption>"#,
        esc(&r.kernel),
        if r.pages.is_empty() {
            "skbs"
        } else {
            "frag cache's pages"
        },
        esc(&r.variant),
        r.driven,
        not_driven(r),
        v = r.verdict,
    );
    table(&mut o, ("skb", PRINTS), &r.columns(), &r.skbs);
    let pages = skblab_core::kernel_report::PAGE_FIELDS.map(|(f, _)| f);
    table(&mut o, ("page", PRINTS), &pages, &r.pages);
    // The judged totals (the size goal(s) the kernel's tcp_sendmsg_locked used, or the frag
    // cache's), under the table.
    totals(&mut o, &r.totals);
    figure(o, "kernel")
}

/// The judged totals, a line each.
pub(super) fn totals(o: &mut String, totals: &[Cell]) {
    for total in totals {
        let _ = write!(o, r#"<p class="goal">{} <span "#, esc(&total.field));
        cell_body(o, total, "span");
        o.push_str("</p>");
    }
}

/// A lane of markup `o`, as `what` (`data-variant`, and the test id `{what}-lane`).
pub(super) fn figure(o: String, what: &'static str) -> Html {
    html! {
        <figure class="kernel" data-variant={what} data-testid={format!("{what}-lane")}>
            { Html::from_html_unchecked(AttrValue::from(o)) }
        </figure>
    }
}

/// Where the rows not drawn are all shown.
const PRINTS: &str = "<code>skblab kernel</code> prints them all";

/// The skbs or pages (`what`) as a table, the first [`MAX_DRAWN`] drawn and the rest
/// counted, saying where they are all shown (`whole`, markup); nothing when there are none.
pub(super) fn table(
    o: &mut String,
    (what, whole): (&str, &str),
    columns: &[&str],
    items: &[Vec<Cell>],
) {
    if items.is_empty() {
        return;
    }
    let _ = write!(
        o,
        r#"<table class="lane" data-testid="kernel-{what}s"><thead><tr><th scope="col">{what}</th>"#
    );
    for c in columns {
        let _ = write!(o, r#"<th scope="col">{}</th>"#, esc(c));
    }
    o.push_str("</tr></thead><tbody>");
    for (i, cells) in items.iter().take(MAX_DRAWN).enumerate() {
        row(o, i, columns, cells);
    }
    let rest = &items[items.len().min(MAX_DRAWN)..];
    if !rest.is_empty() {
        let differ = (rest.iter())
            .filter(|cells| cells.iter().any(|c| c.verdict == Some(Verdict::Differ)))
            .count();
        let _ = write!(
            o,
            r#"<tr class="more"><td colspan="{}">{} more {what}s, not drawn ({differ} of them differ; {whole})</td></tr>"#,
            columns.len() + 1,
            rest.len(),
        );
    }
    o.push_str("</tbody></table>");
}

/// One skb or page as a table row.
fn row(o: &mut String, i: usize, columns: &[&str], cells: &[Cell]) {
    let _ = write!(o, r#"<tr><th scope="row">{i}</th>"#);
    for c in columns {
        match cells.iter().find(|x| x.field == *c) {
            Some(x) => {
                o.push_str("<td ");
                cell_body(o, x, "td");
            }
            None => o.push_str("<td></td>"),
        }
    }
    o.push_str("</tr>");
}

/// A cell's attributes and content: the kernel's value, the model's under it, the verdict as
/// its class and in words in its title.
fn cell_body(o: &mut String, c: &Cell, tag: &str) {
    let show = |v: Option<u64>| v.map_or("–".into(), |v| v.to_string());
    let (class, word) = match c.verdict {
        Some(v) => (v.as_str(), v.as_str()),
        None => ("shown", "shown, not judged"),
    };
    let _ = write!(
        o,
        r#"class="{class}" data-field="{f}" title="{f}: kernel {k}, model {m}: {word}">{k}<small>model {m}</small></{tag}>"#,
        f = esc(&c.field),
        k = show(c.kernel),
        m = show(c.model),
    );
}

fn not_driven(r: &KernelReport) -> String {
    match r.not_driven.as_slice() {
        [] => String::new(),
        ops => format!("; not run on the kernel: {}", esc(&ops.join(", "))),
    }
}

//! The third lane: a `skblab kernel` report's skbs, the running kernel's own, each field with
//! the model's value under it (from the model's lane of the report's variant, named in the
//! caption; the lane spans the row under both) and the runner's verdict. Drawn as markup (a table), not Yew
//! nodes: it never changes once opened.

use crate::diagram::esc;
use skblab_core::kernel_report::{Cell, KernelReport};
use std::fmt::Write;
use yew::prelude::*;

pub fn lane(r: &KernelReport) -> Html {
    let mut o = String::new();
    let _ = write!(
        o,
        r#"<figcaption><strong>Linux {}</strong> · its own skbs, traced by <code>skblab kernel</code> · verdict <span class="verdict {v}" data-testid="kernel-verdict">{v}</span><div class="about">the model's values from its <code>{}</code> lane, after step {} (the ops the kernel ran){}</div></figcaption>"#,
        esc(&r.kernel),
        esc(&r.variant),
        r.driven,
        not_driven(r),
        v = esc(&r.verdict),
    );
    o.push_str(r#"<table class="lane"><thead><tr><th scope="col">skb</th>"#);
    let columns = r.columns();
    for c in &columns {
        let _ = write!(o, r#"<th scope="col">{}</th>"#, esc(c));
    }
    o.push_str("</tr></thead><tbody>");
    for (i, cells) in r.skbs.iter().enumerate() {
        row(&mut o, i, &columns, cells);
    }
    o.push_str("</tbody></table>");
    // The size goal(s) the kernel's tcp_sendmsg_locked used, under the table.
    for goal in &r.size_goals {
        o.push_str(r#"<p class="goal">size_goal <span "#);
        cell_body(&mut o, goal, "span");
        o.push_str("</p>");
    }
    html! {
        <figure class="kernel" data-variant="kernel" data-testid="kernel-lane">
            { Html::from_html_unchecked(AttrValue::from(o)) }
        </figure>
    }
}

/// One skb as a table row.
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
    let (class, word) = match c.agree {
        Some(true) => ("agree", "agree"),
        Some(false) => ("differ", "differ"),
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

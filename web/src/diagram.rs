//! The SVG drawing of a [`State`], for every mechanism: each queue's skbs (head split into
//! headroom, linear data and tailroom; frag slots), the live pages (how full, refcount), arrows
//! from frags to their pages, and the page-frag cursors.
//!
//! The drawing is a self-contained SVG string (its own `<style>`), so the page shows and the
//! export button saves exactly the same picture, and a large state costs one string build and
//! one parse instead of thousands of virtual-DOM nodes.
//!
//! A mechanism that needs more than this generic form adds a hook here, keyed by
//! `Trace::mechanism`; none does today (MPTCP mappings ride on the skb and are drawn with it).

use crate::diff::Changed;
use skblab_core::page::{Page, PageId};
use skblab_core::skb::Skb;
use skblab_core::trace::State;
use std::collections::BTreeMap;
use std::fmt::Write;

const PAD: u32 = 10;
const HEAD_W: u32 = 150;
const FRAG_W: u32 = 34;
const SKB_H: u32 = 80;
const PAGE_W: u32 = 124;
const PAGE_H: u32 = 62;
const GAP: u32 = 10;

const STYLE: &str = "text{font:11px system-ui,sans-serif;fill:#1d2430}.s{font-size:9px;fill:#4a5568}\
.q{font-weight:600;font-size:12px}.box{fill:#fff;stroke:#8a94a6}.sent{fill:#f2f4f7}\
.hr{fill:#d5d9e0}.ln{fill:#4c7bd9}.tr{fill:#eef2fb;stroke:#c3cbe0}.fr{fill:#5bb37f}\
.free{fill:none;stroke:#b8c0cc;stroke-dasharray:3 2}.pg{fill:#fff;stroke:#8a94a6}\
.fill{fill:#f0b35a}.bar{fill:#f5efe4;stroke:#d4c7ad}.arrow{stroke:#5bb37f;fill:none;opacity:.55}\
.harrow{stroke:#4c7bd9;fill:none;stroke-dasharray:4 3;opacity:.6}.cur{fill:#c2412d}\
.psh{fill:#7a3db8}.chg{stroke:#e8590c;stroke-width:3}.dif{stroke:#7a3db8;stroke-width:2.5;\
stroke-dasharray:6 3}.chg.dif{stroke:#e8590c;stroke-dasharray:6 3}";

/// How to mark items: `changed` by the current step, `differs` from the other variant.
pub struct Marks<'a> {
    pub changed: &'a Changed,
    pub differs: &'a Changed,
}

/// Draws `state` `width` units wide (skbs and pages wrap); `max_frags` is the era's
/// MAX_SKB_FRAGS (the empty slots are summarised in one cell).
pub fn svg(state: &State, marks: &Marks, max_frags: u32, width: u32, label: &str) -> String {
    let mut out = String::with_capacity(1024 + 700 * state.pages.len() + 900 * skb_count(state));
    let mut body = String::new();
    let mut y = PAD;
    let mut frag_ends = Vec::new(); // (x, y, page, head?) where an arrow starts
    for q in &state.queues {
        y += 14;
        let _ = write!(
            body,
            r#"<text class="q" x="{PAD}" y="{y}">{} ({} skb{})</text>"#,
            esc(&q.name),
            q.skbs.len(),
            if q.skbs.len() == 1 { "" } else { "s" }
        );
        y += 8;
        let mut x = PAD;
        for skb in &q.skbs {
            let w = skb_width(skb, max_frags);
            if x + w > width - PAD && x > PAD {
                x = PAD;
                y += SKB_H + GAP;
            }
            draw_skb(&mut body, skb, x, y, max_frags, marks, &mut frag_ends);
            x += w + GAP;
        }
        if q.skbs.is_empty() {
            let _ = write!(body, r#"<text class="s" x="{PAD}" y="{}">empty</text>"#, y + 14);
            y += 20;
        } else {
            y += SKB_H + GAP;
        }
    }
    y += 16;
    let _ = write!(
        body,
        r#"<text class="q" x="{PAD}" y="{y}">pages ({} live)</text>"#,
        state.pages.len()
    );
    y += 8;
    let mut page_pos = BTreeMap::new();
    let per_row = (width - PAD) / (PAGE_W + GAP);
    for (i, p) in state.pages.iter().enumerate() {
        let (col, row) = (i as u32 % per_row, i as u32 / per_row);
        let (px, py) = (PAD + col * (PAGE_W + GAP), y + row * (PAGE_H + GAP));
        page_pos.insert(p.id, (px, py));
        draw_page(&mut body, p, px, py, state, marks);
    }
    let rows = (state.pages.len() as u32).div_ceil(per_row);
    y += rows * (PAGE_H + GAP);
    for c in state.cursors.iter().filter(|c| c.page.is_none()) {
        y += 14;
        let _ = write!(
            body,
            r#"<text class="s" x="{PAD}" y="{y}">{}: no page</text>"#,
            esc(&c.name)
        );
    }
    for (fx, fy, page, head) in frag_ends {
        if let Some(&(px, py)) = page_pos.get(&page) {
            let (tx, ty) = (px + PAGE_W / 2, py);
            let mid = (fy + ty) / 2;
            let _ = write!(
                body,
                r#"<path class="{}" d="M{fx} {fy}C{fx} {mid} {tx} {mid} {tx} {ty}"/>"#,
                if head { "harrow" } else { "arrow" }
            );
        }
    }
    let height = y + PAD + 6;
    let _ = write!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="{width}" height="{height}" role="img" aria-label="{}"><style>{STYLE}</style>{body}</svg>"#,
        esc(label)
    );
    out
}

fn skb_count(state: &State) -> usize {
    state.queues.iter().map(|q| q.skbs.len()).sum()
}

/// Frag cells shown: the used ones plus one summarising the free slots.
fn cells(skb: &Skb, max_frags: u32) -> u32 {
    skb.frags.len() as u32 + u32::from((skb.frags.len() as u32) < max_frags)
}

fn skb_width(skb: &Skb, max_frags: u32) -> u32 {
    (HEAD_W + 12).max(cells(skb, max_frags) * (FRAG_W + 3) + 9)
}

fn mark_class(id: bool, dif: bool) -> &'static str {
    match (id, dif) {
        (true, true) => " chg dif",
        (true, false) => " chg",
        (false, true) => " dif",
        (false, false) => "",
    }
}

fn draw_skb(
    out: &mut String,
    skb: &Skb,
    x: u32,
    y: u32,
    max_frags: u32,
    marks: &Marks,
    frag_ends: &mut Vec<(u32, u32, PageId, bool)>,
) {
    let w = skb_width(skb, max_frags);
    let mark = mark_class(
        marks.changed.skbs.contains(&skb.id),
        marks.differs.skbs.contains(&skb.id),
    );
    let h = &skb.head;
    let _ = write!(
        out,
        r#"<g data-skb="{id}"><title>skb {id}: seq {seq}..{end}, len {len} = linear {lin} + data_len {dl} in {nf} frag(s); headroom {hr}, tailroom {tr}, head {hb} bytes, truesize {ts}{psh}{sent}</title><rect class="box{sentc}{mark}" x="{x}" y="{y}" width="{w}" height="{SKB_H}" rx="4"/><text x="{tx}" y="{ty}">skb {id} · len {len}</text>"#,
        id = skb.id,
        seq = skb.seq,
        end = skb.end_seq,
        len = skb.len,
        lin = skb.linear_len,
        dl = skb.data_len,
        nf = skb.frags.len(),
        hr = h.headroom,
        tr = h.tailroom,
        hb = h.head_bytes,
        ts = h.truesize,
        psh = if skb.psh { ", PSH" } else { "" },
        sent = if skb.sent { ", sent" } else { "" },
        sentc = if skb.sent { " sent" } else { "" },
        tx = x + 6,
        ty = y + 14,
    );
    if skb.psh {
        let _ = write!(
            out,
            r#"<rect class="psh" x="{}" y="{}" width="26" height="12" rx="2"/><text x="{}" y="{}" style="fill:#fff;font-size:8px">PSH</text>"#,
            x + w - 32,
            y + 4,
            x + w - 29,
            y + 13
        );
    }
    // The head: headroom | linear data | tailroom, to scale within HEAD_W.
    let total = (h.headroom + skb.linear_len + h.tailroom).max(1);
    let scale = |n: u32| if n == 0 { 0 } else { (n * HEAD_W / total).max(2) };
    let (hx, hy) = (x + 6, y + 20);
    let parts = [
        ("hr", scale(h.headroom)),
        ("ln", scale(skb.linear_len)),
        ("tr", scale(h.tailroom)),
    ];
    let mut px = hx;
    for (class, pw) in parts {
        if pw > 0 {
            let _ = write!(
                out,
                r#"<rect class="{class}" x="{px}" y="{hy}" width="{pw}" height="14"/>"#
            );
            px += pw;
        }
    }
    if let Some(f) = &skb.head_frag {
        frag_ends.push((hx + HEAD_W / 2, hy + 14, f.page, true));
    }
    let _ = write!(
        out,
        r#"<text class="s" x="{hx}" y="{}">head {} · linear {} · tail {}{}</text>"#,
        hy + 26,
        h.headroom,
        skb.linear_len,
        h.tailroom,
        skb.mapping
            .map(|m| format!(" · map {}+{}", m.data_seq, m.data_len))
            .unwrap_or_default()
    );
    let fy = y + 56;
    for (i, f) in skb.frags.iter().enumerate() {
        let fx = x + 6 + i as u32 * (FRAG_W + 3);
        let _ = write!(
            out,
            r#"<rect class="fr" x="{fx}" y="{fy}" width="{FRAG_W}" height="16" rx="2"><title>frag {i}: page {}, offset {}, size {}</title></rect><text x="{}" y="{}" style="fill:#fff;font-size:9px">{}</text>"#,
            f.page,
            f.offset,
            f.size,
            fx + 3,
            fy + 12,
            f.size
        );
        frag_ends.push((fx + FRAG_W / 2, fy + 16, f.page, false));
    }
    let used = skb.frags.len() as u32;
    if used < max_frags {
        let fx = x + 6 + used * (FRAG_W + 3);
        let _ = write!(
            out,
            r#"<rect class="free" x="{fx}" y="{fy}" width="{FRAG_W}" height="16" rx="2"><title>{n} free frag slots of MAX_SKB_FRAGS {max_frags}</title></rect><text class="s" x="{}" y="{}">+{n}</text>"#,
            fx + 4,
            fy + 12,
            n = max_frags - used
        );
    }
    out.push_str("</g>");
}

fn draw_page(out: &mut String, p: &Page, x: u32, y: u32, state: &State, marks: &Marks) {
    let mark = mark_class(
        marks.changed.pages.contains(&p.id),
        marks.differs.pages.contains(&p.id),
    );
    let bar_w = PAGE_W - 12;
    let fill = (u64::from(p.used.min(p.size)) * u64::from(bar_w) / u64::from(p.size.max(1))) as u32;
    let _ = write!(
        out,
        r#"<g data-page="{id}"><title>page {id}: order {o} ({size} bytes), {used} bytes handed out, refcount {c}, allocated on CPU {cpu}</title><rect class="pg{mark}" x="{x}" y="{y}" width="{PAGE_W}" height="{PAGE_H}" rx="4"/><text x="{tx}" y="{ty}">page {id}{order}</text><text x="{tx}" y="{ry}" class="s">ref {c} · {used}/{size}</text><rect class="bar" x="{tx}" y="{by}" width="{bar_w}" height="10"/><rect class="fill" x="{tx}" y="{by}" width="{fill}" height="10"/>"#,
        id = p.id,
        o = p.order,
        size = p.size,
        used = p.used,
        c = p.count,
        cpu = p.cpu,
        order = if p.order > 0 {
            format!(" · order {}", p.order)
        } else {
            String::new()
        },
        tx = x + 6,
        ty = y + 14,
        ry = y + 27,
        by = y + 33,
    );
    for c in state.cursors.iter().filter(|c| c.page == Some(p.id)) {
        let cx = x + 6 + (u64::from(c.offset.min(p.size)) * u64::from(bar_w) / u64::from(p.size.max(1))) as u32;
        let cy = y + 44;
        let cmark = if marks.changed.cursors.contains(&c.name) {
            " chg"
        } else {
            ""
        };
        let bias = c.bias.map(|b| format!(", pagecnt_bias {b}")).unwrap_or_default();
        let _ = write!(
            out,
            r#"<path class="cur{cmark}" d="M{cx} {cy}l-4 7h8z"><title>{name}: offset {off} of {size}{bias}</title></path><text class="s" x="{tx}" y="{ly}">{name} @{off}</text>"#,
            name = esc(&c.name),
            off = c.offset,
            size = c.size,
            tx = x + 6,
            ly = y + 59,
        );
    }
    out.push_str("</g>");
}

/// Escapes text for SVG/XML.
pub fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;
    use skblab_core::skb::{Frag, SkbHead};
    use skblab_core::trace::{Cursor, Queue};

    fn sample() -> State {
        let mut skb = Skb::new(
            7,
            0,
            SkbHead {
                headroom: 320,
                tailroom: 0,
                head_bytes: 512,
                truesize: 1280,
            },
            1000,
        );
        skb.add_frag(Frag {
            page: 2,
            offset: 0,
            size: 1448,
        });
        State {
            queues: vec![Queue {
                name: "sk_write_queue <&>".into(),
                skbs: vec![skb],
            }],
            pages: vec![Page {
                id: 2,
                order: 0,
                size: 4096,
                count: 2,
                cpu: 0,
                used: 1448,
            }],
            cursors: vec![Cursor {
                name: "sk_page_frag".into(),
                page: Some(2),
                offset: 1448,
                size: 4096,
                bias: None,
            }],
        }
    }

    #[test]
    fn draws_skbs_frags_pages_arrows_cursors() {
        let s = sample();
        let changed = Changed {
            skbs: [7].into(),
            ..Default::default()
        };
        let svg = svg(
            &s,
            &Marks {
                changed: &changed,
                differs: &Changed::default(),
            },
            17,
            1000,
            "modern",
        );
        for want in [
            r#"data-skb="7""#,
            "skb 7 · len 1448",
            r#"class="box chg""#,
            "frag 0: page 2, offset 0, size 1448",
            "+16",
            r#"data-page="2""#,
            "ref 2 · 1448/4096",
            "sk_page_frag @1448",
            r#"class="arrow""#,
            "sk_write_queue &lt;&amp;&gt; (1 skb)",
        ] {
            assert!(svg.contains(want), "missing {want} in {svg}");
        }
        assert_eq!(svg.matches("<g ").count(), svg.matches("</g>").count());
    }
}

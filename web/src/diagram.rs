//! The SVG drawing of a [`State`], for every mechanism: each queue's skbs (head split into
//! headroom, linear data and tailroom; frag slots), the live pages (how full, refcount), arrows
//! from frags to their pages, and the page-frag cursors.
//!
//! The drawing is SVG markup in keyed pieces with its own `<style>`, so the page shows and the
//! export button saves exactly the same picture, and a step re-parses only the pieces it
//! changed instead of diffing thousands of virtual-DOM nodes. Each piece knows the band of y
//! it covers, so the page holds only those near the view ([`window`]); the layout is apart
//! from the markup, so [`height`] sizes a canvas for a whole trace cheaply.
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

const STYLE: &str =
    "text{font:11px system-ui,sans-serif;fill:#1d2430}.s{font-size:9px;fill:#4a5568}\
.q{font-weight:600;font-size:12px}.box{fill:#fff;stroke:#8a94a6}.sent{fill:#f2f4f7}\
.hr{fill:#d5d9e0}.ln{fill:#4c7bd9}.tr{fill:#eef2fb;stroke:#c3cbe0}.fr{fill:#5bb37f}\
.free{fill:none;stroke:#b8c0cc;stroke-dasharray:3 2}.pg{fill:#fff;stroke:#8a94a6}\
.fill{fill:#f0b35a}.bar{fill:#f5efe4;stroke:#d4c7ad}.arrow{stroke:#3f9a66;stroke-width:1.5;fill:none;opacity:.7}\
.harrow{stroke:#4c7bd9;fill:none;stroke-dasharray:4 3;opacity:.6}.cur{fill:#c2412d}\
.psh{fill:#7a3db8}.mk{fill:none;pointer-events:none}.chg{stroke:#e8590c;stroke-width:3}.dif{stroke:#7a3db8;stroke-width:2.5;\
stroke-dasharray:6 3}.chg.dif{stroke:#e8590c;stroke-dasharray:6 3}";

/// How to mark items: `changed` by the current step, `differs` from the other variant.
pub struct Marks<'a> {
    pub changed: &'a Changed,
    pub differs: &'a Changed,
}

/// A drawing: an SVG cut into keyed pieces (one per skb, page, arrow bundle, label). The
/// page keeps unchanged pieces in place between steps, so a step that touches one skb of 500
/// costs one piece; [`Drawing::to_svg`] joins them into the file the export saves.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Drawing {
    pub width: u32,
    pub height: u32,
    pub label: String,
    /// In painting order.
    pub pieces: Vec<Piece>,
}

/// A keyed part of a drawing: SVG markup drawn inside a `<g>`, and the band of y it covers
/// (so the page can leave out what is far from view).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Piece {
    pub key: String,
    pub top: u32,
    pub bottom: u32,
    pub body: String,
}

impl Piece {
    /// Whether any of it lies in the band `top..=bottom`.
    pub fn meets(&self, top: u32, bottom: u32) -> bool {
        self.top <= bottom && top <= self.bottom
    }
}

impl Drawing {
    /// The stylesheet every drawing carries, so an exported file looks as it does on the page.
    pub const STYLE: &'static str = STYLE;

    /// The whole drawing as one standalone SVG document.
    pub fn to_svg(&self) -> String {
        let mut out = format!(
            r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {w} {h}" width="{w}" height="{h}" role="img" aria-label="{l}"><style>{STYLE}</style>"#,
            w = self.width,
            h = self.height,
            l = esc(&self.label)
        );
        for p in &self.pieces {
            let _ = write!(out, "<g>{}</g>", p.body);
        }
        out.push_str("</svg>");
        out
    }
}

/// The band of drawing units the page keeps of a drawing `width` units wide, shown scaled
/// into a scroll area `view_w` by `view_h` pixels scrolled down `scroll_top`: what is in view
/// and one view's height above and below, rounded out to whole bands of 1000 units so that
/// scrolling a little changes nothing. A 500-skb queue is 11000 units tall; a step then
/// touches only the few dozen skbs near the view.
pub fn window(scroll_top: i32, view_h: i32, view_w: i32, width: u32) -> (u32, u32) {
    const BAND: f64 = 1000.0;
    let per_px = f64::from(width) / f64::from(view_w.max(1));
    let top = f64::from(scroll_top.max(0)) * per_px;
    let h = f64::from(view_h.max(0)) * per_px;
    let lo = ((top - h) / BAND).floor().max(0.0) * BAND;
    let hi = ((top + 2.0 * h) / BAND).ceil() * BAND;
    (lo as u32, hi as u32)
}

/// Where everything goes, apart from how it looks: [`draw`] paints it, and [`height`] sizes
/// a canvas for a whole trace without building any markup.
struct Layout {
    /// Per queue: its label's baseline and each skb's top-left corner.
    queues: Vec<(u32, Vec<(u32, u32)>)>,
    /// The dfrags' label baseline and each dfrag's corner.
    dfrags: (u32, Vec<(u32, u32)>),
    /// The page column's left edge and its label's baseline; each page's corner.
    px0: u32,
    pages_label: u32,
    pages: Vec<(u32, u32)>,
    /// Where the cursors that hold no page are listed, one line each.
    idle_cursors: u32,
    height: u32,
}

const DFRAG_W: u32 = 150;
const DFRAG_H: u32 = 40;

/// Places boxes of the given widths left to right from `*y`, wrapping before `right`, and
/// leaves `*y` below the last row.
fn flow(y: &mut u32, right: u32, h: u32, widths: impl Iterator<Item = u32>) -> Vec<(u32, u32)> {
    let mut x = PAD;
    let mut spots = Vec::new();
    for w in widths {
        if x + w > right && x > PAD {
            x = PAD;
            *y += h + GAP;
        }
        spots.push((x, *y));
        x += w + GAP;
    }
    if !spots.is_empty() {
        *y += h + GAP;
    }
    spots
}

fn layout(state: &State, max_frags: u32, width: u32) -> Layout {
    // Pages stand in a column on the right, so a new skb never moves a page (nor a new page an
    // skb): a step then changes only the pieces it touched.
    let page_cols = if width >= 900 { 2 } else { 1 };
    let px0 = width - PAD - page_cols * (PAGE_W + GAP) + GAP;
    let right = px0 - 2 * GAP;
    let mut y = PAD;
    // A label's baseline, and room below it.
    let labelled = |y: &mut u32| {
        *y += 22;
        *y - 8
    };
    let queues = (state.queues.iter())
        .map(|q| {
            let label = labelled(&mut y);
            let widths = q.skbs.iter().map(|s| skb_width(s, max_frags));
            let spots = flow(&mut y, right, SKB_H, widths);
            if spots.is_empty() {
                y += 20; // "empty"
            }
            (label, spots)
        })
        .collect();
    let dfrags = if state.dfrags.is_empty() {
        (y, Vec::new())
    } else {
        let label = labelled(&mut y);
        let widths = state.dfrags.iter().map(|_| DFRAG_W);
        (label, flow(&mut y, right, DFRAG_H, widths))
    };
    let rows = (state.pages.len() as u32).div_ceil(page_cols);
    let pages = (0..state.pages.len() as u32)
        .map(|i| {
            let (col, row) = (i % page_cols, i / page_cols);
            (px0 + col * (PAGE_W + GAP), PAD + 22 + row * (PAGE_H + GAP))
        })
        .collect();
    let idle_cursors = PAD + 22 + rows * (PAGE_H + GAP);
    let idle = state.cursors.iter().filter(|c| c.page.is_none()).count() as u32;
    Layout {
        queues,
        dfrags,
        px0,
        pages_label: PAD + 14,
        pages,
        idle_cursors,
        height: y.max(idle_cursors + 14 * idle) + PAD + 6,
    }
}

/// The height [`draw`] gives `state`: the app sizes one canvas for every step of a trace, so
/// stepping never resizes the SVG (which would lay out all of it again).
pub fn height(state: &State, max_frags: u32, width: u32) -> u32 {
    layout(state, max_frags, width).height
}

/// Draws `state` `width` units wide (skbs and pages wrap); `max_frags` is the era's
/// MAX_SKB_FRAGS (the empty slots are summarised in one cell).
pub fn draw(state: &State, marks: &Marks, max_frags: u32, width: u32, label: &str) -> Drawing {
    let at = layout(state, max_frags, width);
    let mut pieces = Vec::with_capacity(2 * skb_count(state) + state.pages.len() + 8);
    let mut piece = |key: String, (top, bottom): (u32, u32), body: String| {
        pieces.push(Piece {
            key,
            top,
            bottom,
            body,
        })
    };
    // The band a line of text at baseline `y` covers.
    let line = |y: u32| (y - 12, y + 4);
    // The marks: outlines over the boxes, each a piece of its own (painted after every box),
    // so a step that only unmarks what the step before changed leaves the boxes alone.
    let mut outlines = Vec::new();
    let mut outline = |key: &str, (x, y, w, h): (u32, u32, u32, u32), mark: &str| {
        if !mark.is_empty() {
            outlines.push(Piece {
                key: format!("m{key}"),
                top: y,
                bottom: y + h,
                body: format!(
                    r#"<rect class="mk{mark}" x="{x}" y="{y}" width="{w}" height="{h}" rx="4"/>"#
                ),
            });
        }
    };
    // Where arrows start: (owner, x, y, page, head?), in drawing order.
    let mut frag_ends: Vec<(String, u32, u32, PageId, bool)> = Vec::new();
    for (qi, (q, (ly, spots))) in state.queues.iter().zip(&at.queues).enumerate() {
        piece(
            format!("q{qi}"),
            line(*ly),
            format!(
                r#"<text class="q" x="{PAD}" y="{ly}">{} ({} skb{})</text>"#,
                esc(&q.name),
                q.skbs.len(),
                if q.skbs.len() == 1 { "" } else { "s" }
            ),
        );
        for (skb, &(x, y)) in q.skbs.iter().zip(spots) {
            let mut body = String::with_capacity(1200);
            let mut ends = Vec::new();
            draw_skb(&mut body, skb, x, y, max_frags, &mut ends);
            let key = format!("s{qi}-{}", skb.id);
            let (c, d) = (&marks.changed.skbs, &marks.differs.skbs);
            let mark = mark_class(c.contains(&skb.id), d.contains(&skb.id));
            outline(&key, (x, y, skb_width(skb, max_frags), SKB_H), mark);
            frag_ends.extend(
                ends.into_iter()
                    .map(|(fx, fy, pg, h)| (key.clone(), fx, fy, pg, h)),
            );
            piece(key, (y, y + SKB_H), body);
        }
        if q.skbs.is_empty() {
            piece(
                format!("q{qi}e"),
                line(ly + 22),
                format!(r#"<text class="s" x="{PAD}" y="{}">empty</text>"#, ly + 22),
            );
        }
    }
    if !state.dfrags.is_empty() {
        let mut body = String::new();
        let mut ends = Vec::new();
        draw_dfrags(&mut body, state, &at.dfrags, &mut ends);
        frag_ends.extend(
            ends.into_iter()
                .map(|(fx, fy, pg, h)| ("d".to_string(), fx, fy, pg, h)),
        );
        let (label, spots) = &at.dfrags;
        let bottom = spots.last().map_or(*label, |s| s.1 + DFRAG_H);
        piece("d".into(), (label - 12, bottom), body);
    }
    let px0 = at.px0;
    piece(
        "pl".into(),
        line(at.pages_label),
        format!(
            r#"<text class="q" x="{px0}" y="{}">pages ({} live)</text>"#,
            at.pages_label,
            state.pages.len()
        ),
    );
    let mut page_pos = BTreeMap::new();
    for (p, &(x, y)) in state.pages.iter().zip(&at.pages) {
        page_pos.insert(p.id, (x, y));
        let mut body = String::with_capacity(700);
        draw_page(&mut body, p, x, y, state, marks);
        let key = format!("p{}", p.id);
        let (c, d) = (&marks.changed.pages, &marks.differs.pages);
        let mark = mark_class(c.contains(&p.id), d.contains(&p.id));
        outline(&key, (x, y, PAGE_W, PAGE_H), mark);
        piece(key, (y, y + PAGE_H), body);
    }
    let mut py = at.idle_cursors;
    for c in state.cursors.iter().filter(|c| c.page.is_none()) {
        py += 14;
        piece(
            format!("c{}", c.name),
            line(py),
            format!(
                r#"<text class="s" x="{px0}" y="{py}">{}: no page</text>"#,
                esc(&c.name)
            ),
        );
    }
    for m in outlines {
        piece(m.key, (m.top, m.bottom), m.body);
    }
    // One arrow bundle per owner (an skb, or the dfrags), drawn over the boxes.
    let mut bundle: Option<(String, (u32, u32), String)> = None;
    for (owner, fx, fy, page, head) in frag_ends {
        let Some(&(px, py)) = page_pos.get(&page) else {
            continue;
        };
        if bundle.as_ref().is_some_and(|(o, ..)| *o != owner) {
            let (o, band, b) = bundle.take().expect("checked");
            piece(format!("a{o}"), band, b);
        }
        let (_, band, body) = bundle.get_or_insert_with(|| (owner, (fy, fy), String::new()));
        // Down out of the frag, then across into the page's left edge.
        let (tx, ty) = (px, py + PAGE_H / 2);
        let (c1, c2) = (fy + 24, tx.saturating_sub(40));
        *band = (band.0.min(ty), band.1.max(c1).max(ty));
        let _ = write!(
            body,
            r#"<path class="{}" d="M{fx} {fy}C{fx} {c1} {c2} {ty} {tx} {ty}"/>"#,
            if head { "harrow" } else { "arrow" }
        );
    }
    if let Some((o, band, b)) = bundle {
        piece(format!("a{o}"), band, b);
    }
    Drawing {
        width,
        height: at.height,
        label: label.to_string(),
        pieces,
    }
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
    frag_ends: &mut Vec<(u32, u32, PageId, bool)>,
) {
    let w = skb_width(skb, max_frags);
    let h = &skb.head;
    let _ = write!(
        out,
        r#"<g data-skb="{id}"><title>skb {id}: seq {seq}..{end}, len {len} = linear {lin} + data_len {dl} in {nf} frag(s); headroom {hr}, tailroom {tr}, head {hb} bytes, truesize {ts}{psh}{sent}</title><rect class="box{sentc}" x="{x}" y="{y}" width="{w}" height="{SKB_H}" rx="4"/><text x="{tx}" y="{ty}">skb {id} · len {len}</text>"#,
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
    if !skb.frag_list.is_empty() {
        // Chained skbs (GRO's frag_list): counted in the head line, their frags' pages
        // reached by arrows from the bottom of this box.
        let bytes: u32 = skb.frag_list.iter().map(|c| c.len).sum();
        let _ = write!(
            out,
            r#"<text class="s" x="{}" y="{}">frag_list: {} skb(s), {bytes} B</text>"#,
            x + 6,
            y + SKB_H - 4,
            skb.frag_list.len()
        );
        for c in &skb.frag_list {
            for f in &c.frags {
                frag_ends.push((x + w / 2, y + SKB_H, f.page, true));
            }
        }
    }
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
    let scale = |n: u32| {
        if n == 0 {
            0
        } else {
            (n * HEAD_W / total).max(2)
        }
    };
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

/// MPTCP's data frags (`mptcp_data_frag`) at `at` (label baseline, corners): bytes pushed to
/// subflows out of each, and the page each lives in.
fn draw_dfrags(
    out: &mut String,
    state: &State,
    (label, spots): &(u32, Vec<(u32, u32)>),
    frag_ends: &mut Vec<(u32, u32, PageId, bool)>,
) {
    const W: u32 = DFRAG_W;
    const H: u32 = DFRAG_H;
    let _ = write!(
        out,
        r#"<text class="q" x="{PAD}" y="{label}">MPTCP data frags ({})</text>"#,
        state.dfrags.len()
    );
    for (d, &(x, y)) in state.dfrags.iter().zip(spots) {
        let sent = (u64::from(d.already_sent.min(d.data_len)) * u64::from(W - 12)
            / u64::from(d.data_len.max(1))) as u32;
        let _ = write!(
            out,
            r#"<g data-dfrag="{ds}"><title>dfrag: data_seq {ds}, {len} bytes at offset {off} in page {pg}, already_sent {as_}</title><rect class="box" x="{x}" y="{y}" width="{W}" height="{H}" rx="4"/><text x="{tx}" y="{ty}">dseq {ds} · {len} B</text><rect class="bar" x="{tx}" y="{by}" width="{bw}" height="8"/><rect class="fr" x="{tx}" y="{by}" width="{sent}" height="8"/><text class="s" x="{tx}" y="{ly}">sent {as_}</text></g>"#,
            ds = d.data_seq,
            len = d.data_len,
            off = d.offset,
            pg = d.page,
            as_ = d.already_sent,
            tx = x + 6,
            ty = y + 13,
            by = y + 18,
            bw = W - 12,
            ly = y + 36,
        );
        frag_ends.push((x + W / 2, y + H, d.page, true));
    }
}

fn draw_page(out: &mut String, p: &Page, x: u32, y: u32, state: &State, marks: &Marks) {
    let bar_w = PAGE_W - 12;
    let fill = (u64::from(p.used.min(p.size)) * u64::from(bar_w) / u64::from(p.size.max(1))) as u32;
    let _ = write!(
        out,
        r#"<g data-page="{id}"><title>page {id}: order {o} ({size} bytes), {used} bytes handed out, refcount {c}, allocated on CPU {cpu}</title><rect class="pg" x="{x}" y="{y}" width="{PAGE_W}" height="{PAGE_H}" rx="4"/><text x="{tx}" y="{ty}">page {id}{order}</text><text x="{tx}" y="{ry}" class="s">ref {c} · {used}/{size}</text><rect class="bar" x="{tx}" y="{by}" width="{bar_w}" height="10"/><rect class="fill" x="{tx}" y="{by}" width="{fill}" height="10"/>"#,
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
        let cx = x
            + 6
            + (u64::from(c.offset.min(p.size)) * u64::from(bar_w) / u64::from(p.size.max(1)))
                as u32;
        let cy = y + 44;
        let cmark = if marks.changed.cursors.contains(&c.name) {
            " chg"
        } else {
            ""
        };
        let bias = c
            .bias
            .map(|b| format!(", pagecnt_bias {b}"))
            .unwrap_or_default();
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
            ..Default::default()
        }
    }

    #[test]
    fn window_keeps_a_view_above_and_below_in_whole_bands() {
        // (scroll_top, view_h, view_w, width) -> band, in drawing units.
        for (args, want) in [
            ((0, 600, 1000, 1000), (0, 2000)),
            ((2500, 600, 1000, 1000), (1000, 4000)),
            ((2500, 600, 500, 1000), (3000, 8000)),
            ((0, 0, 0, 1000), (0, 0)),
        ] {
            assert_eq!(window(args.0, args.1, args.2, args.3), want, "{args:?}");
        }
        let p = Piece {
            key: "s".into(),
            top: 900,
            bottom: 1100,
            body: String::new(),
        };
        assert!(p.meets(1000, 2000) && p.meets(0, 900) && !p.meets(1101, 3000));
    }

    #[test]
    fn draws_skbs_frags_pages_arrows_cursors() {
        let s = sample();
        let changed = Changed {
            skbs: [7].into(),
            ..Default::default()
        };
        let drawing = draw(
            &s,
            &Marks {
                changed: &changed,
                differs: &Changed::default(),
            },
            17,
            1000,
            "modern",
        );
        let keys: Vec<(&str, u32, u32)> = (drawing.pieces.iter())
            .map(|p| (p.key.as_str(), p.top, p.bottom))
            .collect();
        // The arrow's band: from the page's middle (y 63) to its bend below the frag (y 128).
        assert_eq!(
            keys,
            [
                ("q0", 12, 28),
                ("s0-7", 32, 112),
                ("pl", 12, 28),
                ("p2", 32, 94),
                ("ms0-7", 32, 112),
                ("as0-7", 63, 128)
            ]
        );
        let svg = drawing.to_svg();
        for want in [
            r#"data-skb="7""#,
            "skb 7 · len 1448",
            r#"<rect class="mk chg" x="10" y="32" width="162" height="80" rx="4"/>"#,
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
        let opened = svg.matches("<g ").count() + svg.matches("<g>").count();
        assert_eq!(opened, svg.matches("</g>").count());
    }
}

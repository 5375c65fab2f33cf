//! The SVG drawing of a [`State`], for every mechanism: each queue's skbs drawn as the
//! kernel's documentation draws them (the buffer from `head` to `end`, `data` and `tail`
//! marked on it, `skb_shared_info` after `end` with its frag array), the live pages (how
//! full, refcount), arrows from frag slots to their pages, and the page-frag cursors.
//! Every text is at least 11 px at 100 % zoom.
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
use skblab_core::skb::{Frag, Skb};
use skblab_core::trace::{Linearized, State};
use std::collections::BTreeMap;
use std::fmt::Write;

const PAD: u32 = 10;
/// The buffer from `head` to `end`, to scale.
const HEAD_W: u32 = 150;
/// The `skb_shared_info` box after `end`.
const SHINFO_W: u32 = 46;
/// Wide enough for "32768" at 11 px.
const FRAG_W: u32 = 40;
const SKB_H: u32 = 96;
/// Wide enough for the longest cursor label, `napi_alloc_cache.page cpu0 @23168`, at 11 px.
const PAGE_W: u32 = 236;
const PAGE_H: u32 = 70;
const GAP: u32 = 10;

const STYLE: &str =
    "text{font:11px system-ui,sans-serif;fill:#1d2430}.s{fill:#4a5568}.w{fill:#fff}\
.q{font-weight:600;font-size:12px}.tick{stroke:#1d2430}.brk{stroke:#8a94a6;fill:none}.shi{fill:#fbf7ee;stroke:#8a94a6}\
.gone{opacity:.35;animation:fade 1.5s forwards}@keyframes fade{to{opacity:0}}.box{fill:#fff;stroke:#8a94a6}.sent{fill:#f2f4f7}\
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
    /// The widest an skb may be: its frag cells narrow to fit.
    room: u32,
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
const DFRAG_H: u32 = 42;

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

/// Where an arrow starts (a frag slot, a head in a page fragment, a dfrag) and the bytes of
/// the page it ends at.
struct FragEnd {
    x: u32,
    y: u32,
    page: PageId,
    offset: u32,
    size: u32,
    /// Dashed: a head (or a chained skb, or a dfrag) rather than a frag slot.
    head: bool,
}

impl FragEnd {
    fn new(x: u32, y: u32, f: &Frag, head: bool) -> FragEnd {
        FragEnd {
            x,
            y,
            page: f.page,
            offset: f.offset,
            size: f.size,
            head,
        }
    }
}

fn layout(state: &State, max_frags: u32, width: u32) -> Layout {
    // Pages stand in a column on the right, so a new skb never moves a page (nor a new page an
    // skb): a step then changes only the pieces it touched.
    let page_cols = if width >= 900 { 2 } else { 1 };
    let px0 = width - PAD - page_cols * (PAGE_W + GAP) + GAP;
    let right = px0 - 2 * GAP;
    let room = right - PAD;
    let mut y = PAD;
    // A label's baseline, and room below it.
    let labelled = |y: &mut u32| {
        *y += 22;
        *y - 8
    };
    let queues = (state.queues.iter())
        .map(|q| {
            let label = labelled(&mut y);
            let widths = (q.skbs.iter()).map(|s| skb_width(s, &state.linearized, max_frags, room));
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
        room,
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
    // Where arrows start, by owner, in drawing order.
    let mut frag_ends: Vec<(String, FragEnd)> = Vec::new();
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
            let w = skb_width(skb, &state.linearized, max_frags, at.room);
            let facts = facts(skb, &state.linearized);
            draw_skb(&mut body, skb, (x, y, w), (max_frags, &facts), &mut ends);
            let key = format!("s{qi}-{}", skb.id);
            let (c, d) = (&marks.changed.skbs, &marks.differs.skbs);
            let mark = mark_class(c.contains(&skb.id), d.contains(&skb.id));
            outline(&key, (x, y, w, SKB_H), mark);
            for &(_, i) in (marks.changed.frags.iter())
                .filter(|&&(s, i)| s == skb.id && (i as usize) < skb.frags.len())
            {
                let (fx, fw) = frag_cell(skb, (x, w), max_frags, i);
                outline(&format!("{key}f{i}"), (fx, y + FRAG_Y, fw, 16), " chg");
            }
            frag_ends.extend(ends.into_iter().map(|e| (key.clone(), e)));
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
        frag_ends.extend(ends.into_iter().map(|e| ("d".to_string(), e)));
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
            state.pages.len() - marks.changed.gone.len()
        ),
    );
    // The bytes of each page that frags (and heads, dfrags) hold, drawn where they sit.
    let mut held: BTreeMap<PageId, Vec<(u32, u32)>> = BTreeMap::new();
    for (_, e) in &frag_ends {
        held.entry(e.page).or_default().push((e.offset, e.size));
    }
    let mut page_pos = BTreeMap::new();
    for (p, &(x, y)) in state.pages.iter().zip(&at.pages) {
        page_pos.insert(p.id, (x, y, p.size));
        let mut body = String::with_capacity(700);
        let held = held.get(&p.id).map_or(&[][..], Vec::as_slice);
        draw_page(&mut body, p, (x, y), held, state, marks);
        let key = format!("p{}", p.id);
        if marks.changed.gone.contains(&p.id) {
            piece(key, (y, y + PAGE_H), body);
            continue;
        }
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
    for (owner, e) in frag_ends {
        let Some(&(px, py, size)) = page_pos.get(&e.page) else {
            continue;
        };
        let (fx, fy) = (e.x, e.y);
        if bundle.as_ref().is_some_and(|(o, ..)| *o != owner) {
            let (o, band, b) = bundle.take().expect("checked");
            piece(format!("a{o}"), band, b);
        }
        let (_, band, body) = bundle.get_or_insert_with(|| (owner, (fy, fy), String::new()));
        // Down out of the frag, then down onto the bytes it holds in the page's bar.
        let tx = px + 6 + scale_to(e.offset + e.size / 2, size, PAGE_W - 12);
        let ty = py + BAR_Y;
        let (c1, c2) = (fy + 24, ty.saturating_sub(30));
        *band = (band.0.min(c2), band.1.max(c1).max(ty));
        let _ = write!(
            body,
            r#"<path class="{}" d="M{fx} {fy}C{fx} {c1} {tx} {c2} {tx} {ty}"/>"#,
            if e.head { "harrow" } else { "arrow" }
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

/// An skb's width: its buffer and shared info, its frag cells or its texts, whichever is
/// widest, at most `room` (the frag cells narrow to fit).
fn skb_width(skb: &Skb, copies: &[Linearized], max_frags: u32, room: u32) -> u32 {
    let title = text_w(&title(skb)) + if skb.psh { 44 } else { 12 };
    (HEAD_W + SHINFO_W + 12)
        .max(cells(skb, max_frags) * (FRAG_W + 3) + 9)
        .max(text_w(&facts(skb, copies)) + 12)
        .max(title)
        .min(room)
}

/// A generous width of `s` at 11 px (DejaVu Sans, the widest of the usual fallbacks, gives a
/// digit or most lower-case letters 7 px).
fn text_w(s: &str) -> u32 {
    s.chars()
        .map(|c| match c {
            ' ' | '·' | '.' | ',' | ':' | 'i' | 'l' | 'j' | 't' | 'f' | 'r' | '(' | ')' => 4,
            'A'..='Z' => 8,
            'm' | 'w' | '=' | '+' | '@' => 10,
            _ => 7,
        })
        .sum()
}

/// `n` of `total` as a share of `len` units.
fn scale_to(n: u32, total: u32, len: u32) -> u32 {
    (u64::from(n.min(total)) * u64::from(len) / u64::from(total.max(1))) as u32
}

fn mark_class(id: bool, dif: bool) -> &'static str {
    match (id, dif) {
        (true, true) => " chg dif",
        (true, false) => " chg",
        (false, true) => " dif",
        (false, false) => "",
    }
}

/// The top of an skb's frag array, below its buffer and pointer names.
const FRAG_Y: u32 = 58;

/// Frag slot `i`'s left edge and width in an skb at `x`, `w` wide.
fn frag_cell(skb: &Skb, (x, w): (u32, u32), max_frags: u32, i: u32) -> (u32, u32) {
    let pitch = ((w - 9) / cells(skb, max_frags)).min(FRAG_W + 3);
    (x + 6 + i * pitch, pitch - 3)
}

fn title(skb: &Skb) -> String {
    format!("skb {} · len {}", skb.id, skb.len)
}

/// The facts the terminal prints beside an skb, for its bottom line, with the linear copy a
/// device without scatter-gather is being given of it (`copies`: the state's).
fn facts(skb: &Skb, copies: &[Linearized]) -> String {
    let mut facts = vec![format!("cpu {}", skb.cpu)];
    facts.extend(skb.sent.then(|| "sent".to_string()));
    facts.extend(skb.eor.then(|| "EOR".to_string()));
    if !skb.frag_list.is_empty() {
        let bytes: u32 = skb.frag_list.iter().map(|c| c.len).sum();
        facts.push(format!(
            "frag_list: {} skb(s), {bytes} B",
            skb.frag_list.len()
        ));
    }
    facts.extend(
        skb.mapping
            .map(|m| format!("map {}+{}", m.data_seq, m.data_len)),
    );
    let copy = copies.iter().find(|c| c.skb == skb.id);
    facts.extend(copy.map(|c| format!("linearized clone: head {} B", c.head_bytes)));
    facts.join(" · ")
}

fn draw_skb(
    out: &mut String,
    skb: &Skb,
    (x, y, w): (u32, u32, u32),
    (max_frags, facts): (u32, &str),
    frag_ends: &mut Vec<FragEnd>,
) {
    let h = &skb.head;
    let _ = write!(
        out,
        r#"<g data-skb="{id}"><title>skb {id}: seq {seq}..{end}, len {len} = linear {lin} + data_len {dl} in {nf} frag(s); headroom {hr}, tailroom {tr}, head {hb} bytes, truesize {ts}, allocated on CPU {cpu}{psh}{eor}{sent}</title><rect class="box{sentc}" x="{x}" y="{y}" width="{w}" height="{SKB_H}" rx="4"/><text x="{tx}" y="{ty}">{title}</text>"#,
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
        cpu = skb.cpu,
        psh = if skb.psh { ", PSH" } else { "" },
        eor = if skb.eor { ", EOR" } else { "" },
        sent = if skb.sent { ", sent" } else { "" },
        sentc = if skb.sent { " sent" } else { "" },
        tx = x + 6,
        ty = y + 15,
        title = title(skb),
    );
    if !skb.frag_list.is_empty() {
        // Chained skbs (GRO's frag_list): their frags' pages are reached by arrows from the
        // bottom of this box.
        for f in skb.frag_list.iter().flat_map(|c| &c.frags) {
            frag_ends.push(FragEnd::new(x + w / 2, y + SKB_H, f, true));
        }
    }
    let _ = write!(
        out,
        r#"<text class="s" x="{}" y="{}">{}</text>"#,
        x + 6,
        y + SKB_H - 6,
        facts
    );
    if skb.psh {
        let _ = write!(
            out,
            r#"<rect class="psh" x="{}" y="{}" width="32" height="14" rx="2"/><text class="w" x="{}" y="{}">PSH</text>"#,
            x + w - 38,
            y + 4,
            x + w - 35,
            y + 15
        );
    }
    let (hx, hy) = (x + 6, y + 21);
    draw_buffer(out, skb, (hx, hy));
    if let Some(f) = &skb.head_frag {
        frag_ends.push(FragEnd::new(hx + HEAD_W / 2, hy + 14, f, true));
    }
    // skb_shared_info sits right after `end`; a bracket from it leads to its frag array.
    let (sx, fy) = (hx + HEAD_W, y + FRAG_Y);
    let _ = write!(
        out,
        r#"<rect class="shi" x="{sx}" y="{hy}" width="{SHINFO_W}" height="14"><title>skb_shared_info, right after end: nr_frags {nf} of MAX_SKB_FRAGS {max_frags}, frag_list {fl}</title></rect><path class="brk" d="M{bx} {by}V{ly}H{hx}V{fy}"/>"#,
        nf = skb.frags.len(),
        fl = skb.frag_list.len(),
        bx = sx + SHINFO_W,
        by = hy + 14,
        ly = fy - 3,
    );
    let _ = write!(
        out,
        r#"<text class="s" x="{}" y="{}">shinfo</text>"#,
        sx + 5,
        hy + 11
    );
    for (i, f) in skb.frags.iter().enumerate() {
        let (fx, fw) = frag_cell(skb, (x, w), max_frags, i as u32);
        let _ = write!(
            out,
            r#"<rect class="fr" data-frag="{i}" x="{fx}" y="{fy}" width="{fw}" height="16" rx="2"><title>frags[{i}]: page {}, offset {}, size {}</title></rect>"#,
            f.page, f.offset, f.size,
        );
        // The size, where the cell has room for it (else its title says it).
        let size = f.size.to_string();
        if text_w(&size) + 3 <= fw {
            let _ = write!(
                out,
                r#"<text class="w" x="{}" y="{}">{size}</text>"#,
                fx + 2,
                fy + 12,
            );
        }
        frag_ends.push(FragEnd::new(fx + fw / 2, fy + 16, f, false));
    }
    let used = skb.frags.len() as u32;
    if used < max_frags {
        let (fx, fw) = frag_cell(skb, (x, w), max_frags, used);
        let _ = write!(
            out,
            r#"<rect class="free" x="{fx}" y="{fy}" width="{fw}" height="16" rx="2"><title>{n} free frag slots of MAX_SKB_FRAGS {max_frags}</title></rect><text class="s" x="{}" y="{}">+{n}</text>"#,
            fx + 3,
            fy + 12,
            n = max_frags - used
        );
    }
    out.push_str("</g>");
}

/// The head buffer at (`hx`, `hy`) as kernel documentation draws it: headroom, linear data
/// and tailroom to scale, with `head`, `data`, `tail` and `end` marked under it (names of
/// pointers that coincide are joined: `data=tail`).
fn draw_buffer(out: &mut String, skb: &Skb, (hx, hy): (u32, u32)) {
    let h = &skb.head;
    let total = (h.headroom + skb.linear_len + h.tailroom).max(1);
    let scale = |n: u32| {
        if n == 0 {
            0
        } else {
            (n * HEAD_W / total).max(2)
        }
    };
    let parts = [
        ("hr", scale(h.headroom)),
        ("ln", scale(skb.linear_len)),
        ("tr", scale(h.tailroom)),
    ];
    let _ = write!(
        out,
        r#"<g><title>head; data = head + {} (headroom); tail = data + {} (linear); end = tail + {} (tailroom); then skb_shared_info</title>"#,
        h.headroom, skb.linear_len, h.tailroom
    );
    let mut ticks = vec![(hx, "head".to_string())];
    let mut px = hx;
    for ((class, pw), name) in parts.into_iter().zip(["data", "tail", "end"]) {
        if pw > 0 {
            let _ = write!(
                out,
                r#"<rect class="{class}" x="{px}" y="{hy}" width="{pw}" height="14"/>"#
            );
            px += pw;
        }
        match ticks.last_mut() {
            Some((at, names)) if *at == px => *names = format!("{names}={name}"),
            _ => ticks.push((px, name.to_string())),
        }
    }
    out.push_str("</g>");
    // Each name centred under its pointer where it fits, nudged right of the one before
    // and left of the shared info's bracket.
    let limit = hx + HEAD_W + SHINFO_W - 4;
    let mut next = hx;
    let mut spots: Vec<u32> = (ticks.iter())
        .map(|(at, name)| {
            let spot = at.saturating_sub(text_w(name) / 2).max(next);
            next = spot + text_w(name) + 4;
            spot
        })
        .collect();
    let mut right = limit;
    for (spot, (_, name)) in spots.iter_mut().zip(&ticks).rev() {
        *spot = (*spot).min(right.saturating_sub(text_w(name)));
        right = spot.saturating_sub(4);
    }
    for ((at, name), spot) in ticks.iter().zip(spots) {
        let _ = write!(
            out,
            r#"<path class="tick" d="M{at} {}v5"/><text class="s" x="{spot}" y="{}">{name}</text>"#,
            hy + 14,
            hy + 29,
        );
    }
}

/// MPTCP's data frags (`mptcp_data_frag`) at `at` (label baseline, corners): bytes pushed to
/// subflows out of each, and the page each lives in.
fn draw_dfrags(
    out: &mut String,
    state: &State,
    (label, spots): &(u32, Vec<(u32, u32)>),
    frag_ends: &mut Vec<FragEnd>,
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
            ly = y + 37,
        );
        frag_ends.push(FragEnd {
            x: x + W / 2,
            y: y + H,
            page: d.page,
            offset: d.offset,
            size: d.data_len,
            head: true,
        });
    }
}

/// The top of a page's bar (its bytes, left to right), relative to the page's corner.
const BAR_Y: u32 = 35;

/// A page: its id, order, refcount and bytes handed out; a bar of its bytes with the `held`
/// extents (offset, size) drawn where they sit, so an allocator counting down fills it from
/// the right; and the page-frag cursors on it.
fn draw_page(
    out: &mut String,
    p: &Page,
    (x, y): (u32, u32),
    held: &[(u32, u32)],
    state: &State,
    marks: &Marks,
) {
    let bar_w = PAGE_W - 12;
    let (tx, by) = (x + 6, y + BAR_Y);
    let _ = write!(
        out,
        r#"<g {tag}="{id}"><title>page {id}: order {o} ({size} bytes), {used} bytes handed out, refcount {c}, allocated on CPU {cpu}</title><rect class="pg" x="{x}" y="{y}" width="{PAGE_W}" height="{PAGE_H}" rx="4"/><text x="{tx}" y="{ty}">page {id}{order}</text><text x="{tx}" y="{ry}" class="s">refcount {c} · used {used}/{size}</text><rect class="bar" x="{tx}" y="{by}" width="{bar_w}" height="10"/>"#,
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
        ty = y + 14,
        ry = y + 29,
        // Freed by the event shown: drawn once more, fading out, under another name (the
        // page no longer exists, so it is no `data-page`).
        tag = if marks.changed.gone.contains(&p.id) {
            r#"class="gone" data-gone"#
        } else {
            "data-page"
        },
    );
    for &(off, len) in held {
        let fx = tx + scale_to(off, p.size, bar_w);
        let fw = scale_to(off.saturating_add(len), p.size, bar_w) + tx - fx;
        let _ = write!(
            out,
            r#"<rect class="fill" x="{fx}" y="{by}" width="{}" height="10"/>"#,
            fw.max(1)
        );
    }
    for c in state.cursors.iter().filter(|c| c.page == Some(p.id)) {
        let cx = tx + scale_to(c.offset, p.size, bar_w);
        let cy = by + 11;
        let cmark = if marks.changed.cursors.contains(&c.name) {
            " chg"
        } else {
            ""
        };
        let bias = c
            .bias
            .map(|b| format!(", pagecnt_bias {b}"))
            .unwrap_or_default();
        // The triangle points up at the offset; the label sits below it.
        let _ = write!(
            out,
            r#"<path class="cur{cmark}" d="M{cx} {cy}l-4 7h8z"><title>{name}: offset {off} of {size}{bias}</title></path><text class="s" x="{tx}" y="{ly}">{name} @{off}</text>"#,
            name = esc(&c.name),
            off = c.offset,
            size = c.size,
            ly = cy + 18,
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

    /// `s` drawn 1000 wide with nothing marked, as one SVG document.
    fn unmarked(s: &State) -> String {
        let none = Changed::default();
        let marks = Marks {
            changed: &none,
            differs: &none,
        };
        draw(s, &marks, 17, 1000, "test").to_svg()
    }

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
        // The arrow's band: from its bend above the page's bar (y 67 - 30) to its bend below
        // the frag (y 106 + 24).
        assert_eq!(
            keys,
            [
                ("q0", 12, 28),
                ("s0-7", 32, 128),
                ("pl", 12, 28),
                ("p2", 32, 102),
                ("ms0-7", 32, 128),
                ("as0-7", 37, 130)
            ]
        );
        let svg = drawing.to_svg();
        for want in [
            r#"data-skb="7""#,
            "skb 7 · len 1448",
            // The buffer and its shared info: 6 + 150 + 46 + 6 wide.
            r#"<rect class="mk chg" x="10" y="32" width="208" height="96" rx="4"/>"#,
            "frags[0]: page 2, offset 0, size 1448",
            "+16",
            r#"data-page="2""#,
            "refcount 2 · used 1448/4096",
            "sk_page_frag @1448",
            "cpu 0</text>",
            // Pages stand at x 1000 - 10 - 2 * (236 + 10) + 10 = 508, their bar 6 in, 224
            // wide: the frag's 1448 bytes at offset 0 fill 1448 * 224 / 4096 = 79 of it.
            r#"<rect class="fill" x="514" y="67" width="79" height="10"/>"#,
            // From the frag cell's middle (16 + 40 / 2, below the cell at 106) to the middle
            // of its bytes in the bar (514 + 724 * 224 / 4096 = 553, the bar's top at 67).
            r#"<path class="arrow" d="M36 106C36 130 553 37 553 67"/>"#,
            "sk_write_queue &lt;&amp;&gt; (1 skb)",
        ] {
            assert!(svg.contains(want), "missing {want} in {svg}");
        }
        let opened = svg.matches("<g ").count() + svg.matches("<g>").count();
        assert_eq!(opened, svg.matches("</g>").count());
    }

    #[test]
    fn a_frag_is_drawn_where_it_sits_in_its_page() {
        // netdev_alloc_frag counting down (duyck-2012): the first 640-byte frag sits at the
        // page's end, 3456..4096, so the bar fills from the right and the cursor is left of it.
        let mut s = sample();
        s.queues[0].skbs[0].frags[0] = Frag {
            page: 2,
            offset: 3456,
            size: 640,
        };
        s.cursors[0].offset = 3456;
        let svg = unmarked(&s);
        // 514 + 3456 * 224 / 4096 = 703; to 514 + 224 = 738: 35 wide. The cursor's triangle
        // points up at 703 under the bar (67 + 11), its label below it.
        for want in [
            r#"<rect class="fill" x="703" y="67" width="35" height="10"/>"#,
            r#"d="M703 78l-4 7h8z""#,
            r#"<text class="s" x="514" y="96">sk_page_frag @3456</text>"#,
        ] {
            assert!(svg.contains(want), "missing {want} in {svg}");
        }
    }

    #[test]
    fn an_skb_marks_head_data_tail_end_and_its_shared_info() {
        // headroom 64 | linear 128 | tailroom 64 on a 150-wide buffer at x 16: data at
        // 16 + 64 * 150 / 256 = 53, tail at 53 + 75 = 128, end at 128 + 37 = 165.
        let mut s = sample();
        let skb = &mut s.queues[0].skbs[0];
        (skb.head.headroom, skb.head.tailroom) = (64, 64);
        skb.linear_len = 128;
        let svg = unmarked(&s);
        for want in [
            r#"<path class="tick" d="M16 67v5"/><text class="s" x="16" y="82">head</text>"#,
            // Each name centred under its tick (by text_w: "data" 25, "tail" 19, "end" 21),
            // unless that runs into the name before: "data" would start at 53 - 12 = 41, but
            // "head" ends at 16 + 28 (+ 4 apart); all kept left of the bracket at 208.
            r#"<path class="tick" d="M53 67v5"/><text class="s" x="48" y="82">data</text>"#,
            r#"<path class="tick" d="M128 67v5"/><text class="s" x="119" y="82">tail</text>"#,
            r#"<path class="tick" d="M165 67v5"/><text class="s" x="155" y="82">end</text>"#,
            // skb_shared_info right after end, its bracket down to the frag array.
            r#"<rect class="shi" x="166" y="53" width="46" height="14">"#,
            r#"<path class="brk" d="M212 67V87H16V90"/>"#,
        ] {
            assert!(svg.contains(want), "missing {want} in {svg}");
        }
        // With no linear data and no tailroom, data, tail and end are one point: one name.
        let svg = unmarked(&sample());
        assert!(svg.contains(">data=tail=end</text>"), "{svg}");
    }

    #[test]
    fn an_event_outlines_its_frag_slot_and_fades_the_page_it_freed() {
        // Page 5, freed by the event (which touched it), is still in the state drawn.
        let mut s = sample();
        let freed = Page {
            id: 5,
            count: 0,
            ..s.pages[0].clone()
        };
        s.pages.push(freed);
        let touched = Changed {
            frags: vec![(7, 0)],
            pages: [5].into(),
            gone: [5].into(),
            ..Default::default()
        };
        let marks = Marks {
            changed: &touched,
            differs: &Changed::default(),
        };
        let d = draw(&s, &marks, 17, 1000, "modern");
        let slot = d
            .pieces
            .iter()
            .find(|p| p.key == "ms0-7f0")
            .expect("a slot outline");
        // frags[0]'s cell: x 16, y 32 + 58, 40 wide.
        assert_eq!(
            slot.body,
            r#"<rect class="mk chg" x="16" y="90" width="40" height="16" rx="4"/>"#
        );
        let svg = d.to_svg();
        // The freed page is drawn once more, fading, and not counted nor named a live page.
        assert!(svg.contains(r#"<g class="gone" data-gone="5">"#), "{svg}");
        assert!(svg.contains("pages (1 live)"), "{svg}");
        assert_eq!(svg.matches("data-page=").count(), 1);
        assert!(
            !d.pieces.iter().any(|p| p.key == "mp5"),
            "a gone page is not outlined"
        );
    }

    #[test]
    fn a_linearized_copy_shows_on_its_skb() {
        let mut s = sample();
        s.linearized.push(Linearized {
            skb: 7,
            head_bytes: 2416,
            copied: 1448,
        });
        let svg = unmarked(&s);
        let want = r#"<text class="s" x="16" y="122">cpu 0 · linearized clone: head 2416 B</text>"#;
        assert!(svg.contains(want), "{svg}");
    }
}

//! The SVG drawing of a [`State`], for every mechanism: each queue's skbs drawn as the
//! kernel's documentation draws them (the buffer from `head` to `end`, `data` and `tail`
//! marked on it, `skb_shared_info` after `end` with its frag array), the live pages (how
//! full, count), arrows from frag slots to their pages, and the page-frag cursors.
//! Every text is at least 11 px at 100 % zoom, and no line crosses one.
//!
//! The drawing is SVG markup in keyed pieces with its own `<style>`, so the page shows and the
//! export button saves exactly the same picture, and a step re-parses only the pieces it
//! changed instead of diffing thousands of virtual-DOM nodes. Each piece knows the band of y
//! it covers, so the page holds only those near the view ([`window`]); the layout
//! (`layout.rs`) is apart from the markup (`skb.rs`, `page.rs`, `svg.rs`), so [`height`] sizes
//! a canvas for a whole trace cheaply.
//!
//! A mechanism that needs more than this generic form adds a hook here, keyed by
//! `Trace::mechanism`; none does today (MPTCP mappings ride on the skb and are drawn with it).

mod figure;
mod layout;
mod page;
mod skb;
mod svg;

use crate::diff::Changed;
pub use figure::{figure, legend_items, marks_used};
pub use layout::Shapes;
use layout::{route, scale_to, Layout, BAR_Y, DFRAG_H, PAD, PAGE_W};
use skblab_core::page::PageId;
use skblab_core::skb::{Frag, SkbId};
use skblab_core::trace::State;
use std::fmt::Write;
pub use svg::{esc, Drawing, Kind, Piece, ALL};

/// How to mark items: `changed` by the current step, `differs` from the other variant.
pub struct Marks<'a> {
    pub changed: &'a Changed,
    pub differs: &'a Changed,
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

/// Where an arrow starts (the bottom of a frag cell, or of a box whose head, chained skbs or
/// dfrag hold page bytes), the gap it runs along, and the bytes of the page it ends at.
pub struct FragEnd {
    at: (u32, u32),
    /// For a frag cell above its skb's last row: the gap between cells it goes down through.
    between: Option<u32>,
    /// The middle of the gap under the row of boxes it leaves (set by the caller).
    gap: u32,
    page: PageId,
    offset: u32,
    size: u32,
    /// Dashed: a head (or a chained skb, or a dfrag) rather than a frag slot.
    head: bool,
}

impl FragEnd {
    fn new(at: (u32, u32), between: Option<u32>, f: &Frag, head: bool) -> FragEnd {
        FragEnd {
            at,
            between,
            gap: 0,
            page: f.page,
            offset: f.offset,
            size: f.size,
            head,
        }
    }

    fn below(self, gap: u32) -> FragEnd {
        FragEnd { gap, ..self }
    }
}

/// The height [`draw`] gives `state`: the app sizes one canvas for every step of a trace, so
/// stepping never resizes the SVG (which would lay out all of it again).
/// `shapes`: those of the layout before (a trace's steps share most of their skbs).
pub fn height(state: &State, max_frags: u32, width: u32, shapes: &mut Shapes) -> u32 {
    Layout::new(state, max_frags, width, shapes).height
}

/// Draws `state` `width` units wide (skbs and pages wrap); `max_frags` is the era's
/// MAX_SKB_FRAGS (the empty slots are summarised in one cell). Only the pieces that meet
/// `band` (top and bottom y) are written: a step of a 500-skb queue writes the few dozen near
/// the view, and the page draws again as it scrolls ([`window`]); [`ALL`] writes them all.
/// `shapes`: the skbs' shapes of the drawing before, reused where its skbs are unchanged.
pub fn draw(
    state: &State,
    marks: &Marks,
    (max_frags, width): (u32, u32),
    label: &str,
    band: (u32, u32),
    shapes: &mut Shapes,
) -> Drawing {
    let at = Layout::new(state, max_frags, width, shapes);
    let mut p = Painter {
        state,
        marks,
        max_frags,
        at: &at,
        band,
        boxes: Vec::new(),
        outlines: None,
        ends: Vec::new(),
        bottoms: Vec::with_capacity(skb_count(state) + state.pages.len() + state.dfrags.len()),
    };
    p.queues();
    p.dfrags();
    p.pages();
    let arrows = p.arrows();
    let mut pieces = p.boxes;
    pieces.extend(p.outlines);
    pieces.extend(arrows);
    // Each piece one element: the page replaces a changed piece as one node.
    for piece in &mut pieces {
        piece.body = format!("<g>{}</g>", piece.body);
    }
    Drawing {
        width,
        height: at.height,
        label: label.to_string(),
        pieces,
        bottoms: p.bottoms,
    }
}

/// What an arrow bundle leaves from: an skb (by queue and id) or a dfrag (by data_seq).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Owner {
    Skb(usize, SkbId),
    Dfrag(u64),
}

impl Owner {
    fn key(self) -> String {
        match self {
            Owner::Skb(q, id) => format!("s{q}-{id}"),
            Owner::Dfrag(seq) => format!("d{seq}"),
        }
    }
}

/// The band a line of text at baseline `y` covers.
fn line(y: u32) -> (u32, u32) {
    (y - 12, y + 4)
}

/// One drawing under way: what it draws, the pieces written so far (boxes, and the marks'
/// outlines painted over them), where arrows start and how low each item reaches.
struct Painter<'a> {
    state: &'a State,
    marks: &'a Marks<'a>,
    max_frags: u32,
    at: &'a Layout,
    band: (u32, u32),
    boxes: Vec<Piece>,
    /// Every mark's outline, in one piece.
    outlines: Option<Piece>,
    /// Where arrows start, by owner, in drawing order.
    ends: Vec<(Owner, FragEnd)>,
    bottoms: Vec<(Kind, u32)>,
}

impl Painter<'_> {
    fn meets(&self, (top, bottom): (u32, u32)) -> bool {
        top <= self.band.1 && self.band.0 <= bottom
    }

    /// Writes the piece `key` that covers `span` with `body`, if it meets the band.
    fn add(
        &mut self,
        key: impl FnOnce() -> String,
        span: (u32, u32),
        body: impl FnOnce(&mut String),
    ) {
        if self.meets(span) {
            let mut b = String::new();
            body(&mut b);
            let (top, bottom) = span;
            self.boxes.push(Piece {
                key: key(),
                top,
                bottom,
                body: b,
            });
        }
    }

    /// Outlines the box at (`x`, `y`), `w` by `h`, with `mark`, if any, in the one piece
    /// of marks (painted after every box): a step that only unmarks what the step before
    /// changed leaves the boxes alone, and the page parses one piece, not one per mark.
    fn outline(&mut self, (x, y, w, h): (u32, u32, u32, u32), mark: &str) {
        if mark.is_empty() || !self.meets((y, y + h)) {
            return;
        }
        let m = self.outlines.get_or_insert_with(|| Piece {
            key: "m".into(),
            top: y,
            bottom: y + h,
            body: String::new(),
        });
        (m.top, m.bottom) = (m.top.min(y), m.bottom.max(y + h));
        let _ = write!(
            m.body,
            r#"<rect class="mk{mark}" x="{x}" y="{y}" width="{w}" height="{h}" rx="4"/>"#
        );
    }

    /// Each queue: its label and its skbs, or "empty".
    fn queues(&mut self) {
        let (state, marks, max_frags) = (self.state, self.marks, self.max_frags);
        let mut starts = Vec::new();
        let gone_skbs = &marks.changed.gone_skbs;
        for (qi, (q, (ly, placed))) in state.queues.iter().zip(&self.at.queues).enumerate() {
            let ly = *ly;
            // A skb the event freed is drawn once more, fading, but no longer counted.
            let n = (q.skbs.iter())
                .filter(|s| Changed::freed_on(gone_skbs, s.id).is_none())
                .count();
            self.add(
                || format!("q{qi}"),
                line(ly),
                |b| {
                    let s = if n == 1 { "" } else { "s" };
                    let _ = write!(
                        b,
                        r#"<text class="q" x="{PAD}" y="{ly}">{} ({n} skb{s})</text>"#,
                        esc(&q.name)
                    );
                },
            );
            for (skb, (spot, shape)) in q.skbs.iter().zip(placed) {
                let (x, y) = (spot.x, spot.y);
                let owner = Owner::Skb(qi, skb.id);
                let gone = Changed::freed_on(gone_skbs, skb.id);
                if gone.is_none() {
                    self.bottoms.push((Kind::Skb, y + shape.h));
                }
                self.add(
                    || owner.key(),
                    (y, y + shape.h),
                    |b| {
                        let draw = |b: &mut String| {
                            skb::draw_skb(b, skb, (x, y), (shape, max_frags, gone))
                        };
                        shape.markup(b, ((x, y), gone), draw)
                    },
                );
                if gone.is_some() {
                    continue;
                }
                skb::frag_ends(skb, (x, y), (shape, max_frags), &mut starts);
                (self.ends).extend(starts.drain(..).map(|e| (owner, e.below(spot.gap))));
                let (c, d) = (&marks.changed.skbs, &marks.differs.skbs);
                let mark = mark_class(c.contains(&skb.id), d.contains(&skb.id));
                self.outline((x, y, shape.w, shape.h), mark);
                for &(_, i) in (marks.changed.frags.iter())
                    .filter(|&&(s, i)| s == skb.id && (i as usize) < skb.frags.len())
                {
                    let (fx, fy) = shape.cell((x, y), i);
                    self.outline((fx, fy, layout::FRAG_W, 16), " chg");
                }
            }
            if q.skbs.is_empty() {
                self.add(
                    || format!("q{qi}e"),
                    line(ly + 22),
                    |b| {
                        let _ = write!(
                            b,
                            r#"<text class="s" x="{PAD}" y="{}">empty</text>"#,
                            ly + 22
                        );
                    },
                );
            }
        }
    }

    /// MPTCP's data frags, under a label of their own.
    fn dfrags(&mut self) {
        let state = self.state;
        if state.dfrags.is_empty() {
            return;
        }
        let (label, spots) = &self.at.dfrags;
        let label = *label;
        self.add(
            || "dl".into(),
            line(label),
            |b| {
                let n = state.dfrags.len();
                let _ = write!(
                    b,
                    r#"<text class="q" x="{PAD}" y="{label}">MPTCP data frags ({n})</text>"#
                );
            },
        );
        for (d, s) in state.dfrags.iter().zip(spots) {
            let owner = Owner::Dfrag(d.data_seq);
            self.ends.push((owner, page::dfrag_end(d, s)));
            self.bottoms.push((Kind::Dfrag, s.y + DFRAG_H));
            self.add(
                || owner.key(),
                (s.y, s.y + DFRAG_H),
                |b| b.push_str(&page::draw_dfrag(d, (s.x, s.y))),
            );
        }
    }

    /// The page column: its label, each page with the bytes that frags (and heads, dfrags)
    /// hold drawn where they sit, and the cursors that hold no page.
    fn pages(&mut self) {
        let (state, marks, at) = (self.state, self.marks, self.at);
        let (px0, page_h) = (at.px0, at.page_h);
        self.add(
            || "pl".into(),
            line(at.pages_label),
            |b| {
                let live = state.pages.len() - marks.changed.gone.len();
                let y = at.pages_label;
                let _ = write!(
                    b,
                    r#"<text class="q" x="{px0}" y="{y}">pages ({live} live)</text>"#
                );
            },
        );
        // What each page's frags hold, by the page's place (pages are in id order).
        let mut held = vec![Vec::new(); state.pages.len()];
        for (_, e) in &self.ends {
            if let Ok(i) = state.page_slot(e.page) {
                held[i].push((e.offset, e.size));
            }
        }
        for ((p, &(x, y)), held) in state.pages.iter().zip(&at.pages).zip(&held) {
            let gone = Changed::freed_on(&marks.changed.gone, p.id).is_some();
            if !gone {
                self.bottoms.push((Kind::Page, y + page_h));
            }
            self.add(
                || format!("p{}", p.id),
                (y, y + page_h),
                |b| page::draw_page(b, p, (x, y, page_h), held, state, marks),
            );
            if !gone {
                let (c, d) = (&marks.changed.pages, &marks.differs.pages);
                let mark = mark_class(c.contains(&p.id), d.contains(&p.id));
                self.outline((x, y, PAGE_W, page_h), mark);
            }
        }
        let mut py = at.idle_cursors;
        for c in state.cursors.iter().filter(|c| c.page.is_none()) {
            py += 14;
            self.add(
                || format!("c{}", c.name),
                line(py),
                |b| {
                    let _ = write!(
                        b,
                        r#"<text class="s" x="{px0}" y="{py}">{}: no page</text>"#,
                        esc(&c.name)
                    );
                },
            );
        }
    }

    /// One arrow bundle per owner (an skb, or a dfrag), drawn over the boxes: its band runs
    /// from the gap above its highest page to the lowest of its gap and its pages' bars.
    fn arrows(&self) -> Vec<Piece> {
        let state = self.state;
        let spot = |page: PageId| {
            let i = state.page_slot(page).ok()?;
            let (x, y) = self.at.pages[i];
            Some((x, y, state.pages[i].size))
        };
        let gutter = self.at.gutter;
        let mut out = Vec::new();
        for run in self.ends.chunk_by(|a, b| a.0 == b.0) {
            let ends: Vec<_> = (run.iter())
                .filter_map(|(_, e)| Some((e, spot(e.page)?)))
                .collect();
            let Some(&(first, _)) = ends.first() else {
                continue;
            };
            let band = ends.iter().fold(
                (first.at.1, first.at.1),
                |(top, bottom), (e, (_, py, _))| {
                    (
                        top.min(py - layout::GAP / 2),
                        bottom.max(e.gap).max(py + BAR_Y),
                    )
                },
            );
            if !self.meets(band) {
                continue;
            }
            let mut body = String::new();
            for (e, (px, py, size)) in ends {
                let tx = px + 6 + scale_to(e.offset + e.size / 2, size, PAGE_W - 12);
                let _ = write!(
                    body,
                    r#"<path class="{}" d="{}"/>"#,
                    if e.head { "harrow" } else { "arrow" },
                    route(e.at, e.between, e.gap, gutter, (tx, py)),
                );
            }
            let (top, bottom) = band;
            out.push(Piece {
                key: format!("a{}", run[0].0.key()),
                top,
                bottom,
                body,
            });
        }
        out
    }
}

fn skb_count(state: &State) -> usize {
    state.queues.iter().map(|q| q.skbs.len()).sum()
}

fn mark_class(id: bool, dif: bool) -> &'static str {
    match (id, dif) {
        (true, true) => " chg dif",
        (true, false) => " chg",
        (false, true) => " dif",
        (false, false) => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use skblab_core::page::Page;
    use skblab_core::skb::{Frag, Skb, SkbHead};
    use skblab_core::trace::Linearized;
    use skblab_core::trace::{Cursor, Queue};
    use std::rc::Rc;

    static NONE: std::sync::LazyLock<Changed> = std::sync::LazyLock::new(Changed::default);

    fn marks_none() -> Marks<'static> {
        marking(&NONE)
    }

    /// Marks of what `changed` holds, and of no other lane.
    fn marking(changed: &Changed) -> Marks<'_> {
        Marks {
            changed,
            differs: &NONE,
        }
    }

    /// `s` drawn 1000 wide with nothing marked, as one SVG document.
    fn unmarked(s: &State) -> String {
        draw(
            s,
            &marks_none(),
            (17, 1000),
            "test",
            ALL,
            &mut Shapes::default(),
        )
        .to_svg()
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
                skbs: [skb].into(),
            }],
            pages: [Page {
                id: 2,
                order: 0,
                size: 4096,
                count: 2,
                cpu: 0,
                cpu_unread: false,
                used: 1448,
            }]
            .into(),
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

    /// The sample with its skb copied `n` times, ids 0 to `n` - 1.
    /// A capture's skb first seen on a CPU says so; its page, whose allocating CPU is not
    /// read, shows none (the core's `cpu_fact`).
    #[test]
    fn a_captured_cpu_is_drawn_as_read() {
        let mut s = sample();
        s.queues[0].skbs[0].cpu_seen = true;
        s.pages[0].cpu_unread = true;
        let svg = unmarked(&s);
        assert!(
            svg.contains("head 512 B · first seen on cpu 0</text>"),
            "{svg}"
        );
        assert!(
            svg.contains(">page 2</text>") && !svg.contains("alloc cpu"),
            "{svg}"
        );
    }

    fn sample_of(n: u32) -> State {
        let mut s = sample();
        let first = s.queues[0].skbs[0].clone();
        s.queues[0].skbs = (0..n)
            .map(|id| Skb {
                id,
                ..first.clone()
            })
            .collect();
        s
    }

    #[test]
    fn a_layout_reshapes_only_the_skbs_that_changed() {
        let mut s = sample_of(3);
        let skb = s.queues[0].skbs[0].clone();
        let shapes = &mut Shapes::default();
        let shape = |l: &Layout, i: usize| l.queues[0].1[i].1.clone();
        let before = Layout::new(&s, 17, 1000, shapes);
        // Skb 1 gains a fact (its mapping), skb 3 is new; 0 and 2 are as they were.
        s.queues[0].skbs[1].mapping = Some(skblab_core::skb::Mapping {
            data_seq: 1,
            subflow_seq: 1,
            data_len: 1000,
            frozen: false,
        });
        s.queues[0].skbs.push_back(Skb { id: 3, ..skb });
        let after = Layout::new(&s, 17, 1000, shapes);
        assert!(Rc::ptr_eq(&shape(&before, 0), &shape(&after, 0)));
        assert!(Rc::ptr_eq(&shape(&before, 2), &shape(&after, 2)));
        assert!(!Rc::ptr_eq(&shape(&before, 1), &shape(&after, 1)));
        // What it reuses is what a layout from nothing makes.
        let fresh = Layout::new(&s, 17, 1000, &mut Shapes::default());
        for i in 0..4 {
            assert_eq!(shape(&after, i).lines, shape(&fresh, i).lines, "skb {i}");
            assert_eq!(
                (shape(&after, i).w, shape(&after, i).h),
                (shape(&fresh, i).w, shape(&fresh, i).h)
            );
        }
        assert!(shape(&after, 1)
            .lines
            .iter()
            .any(|l| l.contains("data_seq 1")));
        // Another room (a narrower drawing) shapes them all anew.
        let narrow = Layout::new(&s, 17, 500, shapes);
        assert!(!Rc::ptr_eq(&shape(&after, 0), &shape(&narrow, 0)));
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
    fn a_band_writes_only_the_pieces_near_it_and_still_counts_what_lies_below() {
        // 40 skbs, one frag each on page 2: two skbs a row, 106 units a row, so 20 rows.
        let s = sample_of(40);
        let whole = draw(
            &s,
            &marks_none(),
            (17, 1000),
            "band",
            ALL,
            &mut Shapes::default(),
        );
        let near = draw(
            &s,
            &marks_none(),
            (17, 1000),
            "band",
            (0, 300),
            &mut Shapes::default(),
        );
        let keys = |d: &Drawing| d.pieces.iter().map(|p| p.key.clone()).collect::<Vec<_>>();
        // Rows at 32, 138, 244 and 350 (past the band): six skbs; every arrow runs up to the
        // page at the top, through the band. The queue's label, the pages' and the page.
        let count = |d: &Drawing, c: char| d.pieces.iter().filter(|p| p.key.starts_with(c)).count();
        assert_eq!((count(&near, 's'), count(&near, 'a')), (6, 40));
        assert_eq!(keys(&whole).len(), 40 * 2 + 3, "{:?}", keys(&whole));
        assert!(near.pieces.iter().all(|p| p.meets(0, 300)));
        assert!(whole.pieces.iter().any(|p| !p.meets(0, 300)));
        // What is written is written as in the whole drawing, and the cue counts every skb.
        for p in &near.pieces {
            assert!(whole.pieces.contains(p), "{}", p.key);
        }
        assert_eq!(near.below(300), whole.below(300));
        // Only the first two rows end above 300.
        assert_eq!(near.below(300).0, 40 - 4);
    }

    /// An skb's markup is kept from the drawing before only where that skb stands as it
    /// stood: a drawing with kept shapes is the drawing made from nothing, move after move.
    #[test]
    fn a_drawing_writes_again_only_the_skbs_that_changed_or_moved() {
        let mut s = sample_of(6);
        let freed = Changed {
            gone_skbs: vec![(2, 1)],
            ..Default::default()
        };
        let gone = marking(&freed);
        let shapes = &mut Shapes::default();
        let mut drawn = |s: &State, m: &Marks| {
            let kept = draw(s, m, (17, 1000), "k", ALL, shapes);
            let fresh = draw(s, m, (17, 1000), "k", ALL, &mut Shapes::default());
            assert!(kept.pieces == fresh.pieces, "{}", kept.to_svg());
            kept
        };
        let before = drawn(&s, &marks_none());
        // The same again; then skb 2 freed (fading where it stood), gone (the rest move up
        // a place), and skb 5 grown a fact.
        assert!(drawn(&s, &marks_none()).pieces == before.pieces);
        drawn(&s, &gone);
        s.queues[0].skbs.remove(2);
        s.queues[0].skbs[3].psh = true;
        let after = drawn(&s, &marks_none());
        assert!(after.to_svg().contains(r#"data-skb="3""#));
        assert!(!after.to_svg().contains(r#"data-skb="2""#));
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
            &marking(&changed),
            (17, 1000),
            "modern",
            ALL,
            &mut Shapes::default(),
        );
        let keys: Vec<(&str, u32, u32)> = (drawing.pieces.iter())
            .map(|p| (p.key.as_str(), p.top, p.bottom))
            .collect();
        // The arrow's band: from the gap above the page (32 - 5) to the gap below the skb's
        // row (32 + 96 + 5).
        assert_eq!(
            keys,
            [
                ("q0", 12, 28),
                ("s0-7", 32, 128),
                ("pl", 9, 25),
                ("p2", 32, 102),
                ("m", 32, 128),
                ("as0-7", 27, 133)
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
            "page 2 · alloc cpu 0</text>",
            // The figure under the bar is what the bar draws: the 1448 bytes the frag holds.
            "count 2 · held 1448/4096",
            "sk_page_frag @1448",
            // The head's size and the allocating CPU under the title.
            r#"<text class="s" x="16" y="62">head 512 B · alloc cpu 0</text>"#,
            "frags[0]: page 2, offset 0, size 1448</title></rect><text class=\"w\" x=\"18\" y=\"116\">1448</text>",
            // Pages stand at x 1000 - 10 - 2 * (236 + 10) + 10 = 508, their bar at the top, 6
            // in and 224 wide: the frag's 1448 bytes at offset 0 fill 1448 * 224 / 4096 = 79.
            r#"<rect class="fill" x="514" y="38" width="79" height="10"/>"#,
            // From the frag cell's middle (16 + 40 / 2, below the cell at 104 + 16) down to the
            // gap under the skb's row (133), along it to the gutter left of the pages (498), up
            // it to the gap above the page (27), along that to the middle of the frag's bytes
            // (514 + 724 * 224 / 4096 = 553) and down onto the bar (38).
            r#"<path class="arrow" d="M36 120V133H498V27H553V38"/>"#,
            "sk_write_queue &lt;&amp;&gt; (1 skb)",
        ] {
            assert!(svg.contains(want), "missing {want} in {svg}");
        }
        let opened = svg.matches("<g ").count() + svg.matches("<g>").count();
        assert_eq!(opened, svg.matches("</g>").count());
    }

    #[test]
    fn a_drawing_too_narrow_for_a_page_column_has_the_pages_below_the_skbs() {
        // 330 wide (presentation mode's lanes): the skb's row ends at 32 + 96 + 10 = 138, its
        // gap at 133; the pages' label 22 below that, the page at 160, at the left margin.
        let d = draw(
            &sample(),
            &marks_none(),
            (17, 330),
            "narrow",
            ALL,
            &mut Shapes::default(),
        );
        let svg = d.to_svg();
        // The arrow: down to the row's gap, left to the gutter at 5 (left of every label),
        // down it to the gap above the page (155), along to the frag's bytes (10 + 6 + 39)
        // and onto the bar (166).
        for want in [
            r#"<text class="q" x="10" y="149">pages (1 live)</text>"#,
            r#"<rect class="pg" x="10" y="160" width="236" height="70" rx="4"/>"#,
            r#"<path class="arrow" d="M36 120V133H5V155H55V166"/>"#,
        ] {
            assert!(svg.contains(want), "missing {want} in {svg}");
        }
        assert_eq!(d.height, 160 + 70 + 10 + 16);
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
        // points up at 703 under the bar (38 + 11), its label the page's last line.
        for want in [
            r#"<rect class="fill" x="703" y="38" width="35" height="10"/>"#,
            r#"d="M703 49l-4 7h8z""#,
            r#"<text class="s" x="514" y="97">sk_page_frag @3456</text>"#,
        ] {
            assert!(svg.contains(want), "missing {want} in {svg}");
        }
    }

    #[test]
    fn an_skb_marks_head_data_tail_end_and_its_shared_info() {
        // headroom 64 | linear 128 | tailroom 64 on a 150-wide buffer at x 16, y 67 (under the
        // title and a line of facts): data at 16 + 64 * 150 / 256 = 53, tail at 53 + 75 = 128,
        // end at 128 + 37 = 165.
        let mut s = sample();
        let skb = &mut s.queues[0].skbs[0];
        (skb.head.headroom, skb.head.tailroom) = (64, 64);
        skb.linear_len = 128;
        let svg = unmarked(&s);
        for want in [
            r#"<path class="tick" d="M16 81v4"/><text class="s" x="16" y="97">head</text>"#,
            // Each name centred under its tick (by text_w: "data" 25, "tail" 19, "end" 21),
            // unless that runs into the name before: "data" would start at 53 - 12 = 41, but
            // "head" ends at 16 + 28 (+ 4 apart); all kept left of the bracket at 208.
            r#"<path class="tick" d="M53 81v4"/><text class="s" x="48" y="97">data</text>"#,
            r#"<path class="tick" d="M128 81v4"/><text class="s" x="119" y="97">tail</text>"#,
            r#"<path class="tick" d="M165 81v4"/><text class="s" x="155" y="97">end</text>"#,
            // skb_shared_info right after end, its bracket down to the frag array.
            r#"<rect class="shi" x="166" y="67" width="46" height="14">"#,
            r#"<path class="brk" d="M212 81V101H16V104"/>"#,
        ] {
            assert!(svg.contains(want), "missing {want} in {svg}");
        }
        // With no linear data and no tailroom, data, tail and end are one point: one name.
        let svg = unmarked(&sample());
        assert!(svg.contains(">data=tail=end</text>"), "{svg}");
    }

    #[test]
    fn text_is_escaped_for_svg_and_plain_text_lent_back() {
        assert_eq!(esc(r#"a<b & "c">"#), "a&lt;b &amp; &quot;c&quot;&gt;");
        assert!(matches!(
            esc("skb 2 · len 1448"),
            std::borrow::Cow::Borrowed(_)
        ));
    }

    /// How many elements stand at the top level of `markup` (tags only; no comments).
    fn top_level_elements(markup: &str) -> usize {
        let (mut depth, mut top) = (0usize, 0);
        for tag in markup.split('<').skip(1) {
            let tag = &tag[..tag.find('>').expect("a closed tag")];
            if tag.starts_with('/') {
                depth -= 1;
            } else {
                top += usize::from(depth == 0);
                depth += usize::from(!tag.ends_with('/'));
            }
        }
        top
    }

    /// The sample with page 5, freed by an event, drawn once more; and what the event
    /// touched (frag 0 of skb 7, page 5).
    fn freed_by_an_event() -> (State, Changed) {
        let mut s = sample();
        let freed = Page {
            id: 5,
            count: 0,
            ..s.pages[0].clone()
        };
        s.pages.push_back(freed);
        let touched = Changed {
            frags: vec![(7, 0)],
            pages: [5].into(),
            gone: vec![(5, 1)],
            ..Default::default()
        };
        (s, touched)
    }

    /// `s` drawn 1000 wide with what `changed` names marked.
    fn marked(s: &State, changed: &Changed) -> Drawing {
        let marks = Marks {
            changed,
            differs: &Changed::default(),
        };
        draw(s, &marks, (17, 1000), "modern", ALL, &mut Shapes::default())
    }

    #[test]
    fn every_piece_is_one_element_so_a_change_replaces_one_node() {
        // Boxes, a page's fading copy, arrows and marks: one <g> each.
        let (s, touched) = freed_by_an_event();
        let d = marked(&s, &touched);
        for kind in ["s", "p", "a", "m"] {
            assert!(
                d.pieces.iter().any(|p| p.key.starts_with(kind)),
                "no {kind} piece"
            );
        }
        for p in &d.pieces {
            assert!(p.body.starts_with("<g"), "{}: {}", p.key, p.body);
            assert_eq!(top_level_elements(&p.body), 1, "{}: {}", p.key, p.body);
        }
    }

    #[test]
    fn an_event_outlines_its_frag_slot_and_fades_the_page_it_freed() {
        // Page 5, freed by the event (which touched it), is still in the state drawn.
        let (s, touched) = freed_by_an_event();
        let d = marked(&s, &touched);
        let marks = (d.pieces.iter()).find(|p| p.key == "m").expect("the marks");
        // frags[0]'s cell: x 16, y 104 (under the buffer), 40 wide; the only mark.
        assert_eq!(
            marks.body,
            r#"<g><rect class="mk chg" x="16" y="104" width="40" height="16" rx="4"/></g>"#
        );
        let svg = d.to_svg();
        // The freed page is drawn once more, fading, and not counted nor named a live page.
        assert!(svg.contains(r#"<g class="gone" data-gone="5">"#), "{svg}");
        assert!(
            // Freed, it holds nothing: its bar is empty, and so is the figure under it.
            svg.contains(">freed on cpu1 · held 0/4096</text>"),
            "{svg}"
        );
        assert!(svg.contains("pages (1 live)"), "{svg}");
        assert_eq!(svg.matches("data-page=").count(), 1);
        assert_eq!(
            svg.matches("class=\"mk").count(),
            1,
            "a gone page is not outlined"
        );
    }

    #[test]
    fn an_skb_the_event_freed_fades_named_by_the_cpu_that_freed_it() {
        let s = sample();
        let freed = Changed {
            gone_skbs: vec![(7, 1)],
            ..Default::default()
        };
        let marks = marking(&freed);
        let d = draw(&s, &marks, (17, 1000), "freed", ALL, &mut Shapes::default());
        let svg = d.to_svg();
        assert!(
            svg.contains(r#"<g class="gone" data-gone-skb="7">"#),
            "{svg}"
        );
        assert!(svg.contains(">skb 7 · freed on cpu1</text>"), "{svg}");
        // No longer counted, outlined, pickable or pointing at its page.
        assert!(
            svg.contains("sk_write_queue &lt;&amp;&gt; (0 skbs)"),
            "{svg}"
        );
        assert!(!svg.contains("data-skb=") && !svg.contains(r#"class="arrow""#));
        assert!(!d.pieces.iter().any(|p| p.key == "m"));
    }

    #[test]
    fn a_send_skb_shows_how_far_it_is_to_its_size_goal() {
        let mut s = sample();
        s.queues[0].skbs[0].size_goal = Some(2896);
        let svg = unmarked(&s);
        // 1448 of 2896 bytes: half the bar along the box's bottom (208 wide, less 6 each
        // side: 196), the goal marked at its end, under the frag cells; the numbers in its
        // title (a wider line of facts would widen every send skb's box).
        for want in [
            "<title>len 1448 of size_goal 2896</title>",
            r#"<rect class="gtrack" x="16" y="122" width="196" height="3"/>"#,
            r#"<rect class="gfill" x="16" y="122" width="98" height="3"/>"#,
            r#"<path class="goal" d="M212 120v7"/>"#,
        ] {
            assert!(svg.contains(want), "missing {want} in {svg}");
        }
        assert!(
            !unmarked(&sample()).contains("goalbar"),
            "an rx skb has none"
        );
    }

    #[test]
    fn many_frags_wrap_into_rows_each_with_its_size_and_arrows_go_between_the_cells() {
        // 20 frags and the free-slot cell on a 440-wide skb (room 478 - the 9 of margins
        // fits 10 cells of 43): three rows, each 19 lower; the box grows by two rows.
        let mut s = sample();
        let skb = &mut s.queues[0].skbs[0];
        for i in 1..20 {
            skb.add_frag(Frag {
                page: 2,
                offset: 100 * i,
                size: 100 + i,
            });
        }
        let d = draw(
            &s,
            &marks_none(),
            (21, 1000),
            "many",
            ALL,
            &mut Shapes::default(),
        );
        let svg = d.to_svg();
        // frags[19]: row 1, column 9 (x 16 + 9 * 43 = 403, y 104 + 19 = 123), its size shown.
        let want = r#"<rect class="fr" data-frag="19" x="403" y="123" width="40" height="16" rx="2"><title>frags[19]: page 2, offset 1900, size 119</title></rect><text class="w" x="405" y="135">119</text>"#;
        assert!(svg.contains(want), "{svg}");
        // The skb is 96 + 2 * 19 high; its row's gap is 5 below it.
        assert!(svg.contains(r#"height="134" rx="4"/>"#), "{svg}");
        // frags[0], above the last row, goes down 1 into the gap between rows and along it to
        // the gap left of its cell (x 14), then down that to the row's gap (32 + 134 + 5).
        assert!(svg.contains(r#"d="M36 120v1H14V171H498V27H"#), "{svg}");
        // The free-slot cell is the 21st: row 2, column 0.
        assert!(
            svg.contains(r#"<rect class="free" x="16" y="142""#),
            "{svg}"
        );
    }

    #[test]
    fn a_biased_cache_shows_its_pagecnt_bias_and_the_frags_out() {
        // page_frag_cache on page 2: count 5, bias 3, so 2 references are held by frags out.
        let mut s = sample();
        s.pages[0].count = 5;
        s.cursors[0].bias = Some(3);
        let d = draw(
            &s,
            &marks_none(),
            (17, 1000),
            "bias",
            ALL,
            &mut Shapes::default(),
        );
        let svg = d.to_svg();
        for want in [
            r#"<text class="s" x="514" y="97">pagecnt_bias 3 · 2 frag(s) out</text>"#,
            r#"<text class="s" x="514" y="111">sk_page_frag @1448</text>"#,
        ] {
            assert!(svg.contains(want), "missing {want} in {svg}");
        }
        // Every page box grows a line for it.
        assert!(d
            .pieces
            .iter()
            .any(|p| p.key == "p2" && p.bottom == 32 + 84));
    }

    #[test]
    fn an_mptcp_skb_shows_its_mapping_and_a_view_counts_what_it_cuts_off() {
        let mut s = sample();
        s.queues[0].skbs[0].mapping = Some(skblab_core::skb::Mapping {
            data_seq: 7,
            subflow_seq: 1,
            data_len: 1448,
            frozen: false,
        });
        let d = draw(
            &s,
            &marks_none(),
            (17, 1000),
            "map",
            ALL,
            &mut Shapes::default(),
        );
        let svg = d.to_svg();
        let want =
            "head 512 B · alloc cpu 0 · map data_seq 7 · subflow_seq 1 · data_len 1448</text>";
        assert!(svg.contains(want), "{svg}");
        // A view ending at y 100 cuts off the skb (down to 128) and the page (to 102).
        assert_eq!(d.below(100), (1, 1, 0));
        assert_eq!(d.below(128), (0, 0, 0));
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
        let want = r#"<text class="s" x="16" y="62">head 512 B · alloc cpu 0 · linearized clone: head 2416 B</text>"#;
        assert!(svg.contains(want), "{svg}");
    }
}

//! Where everything goes, apart from how it looks: boxes, their rows, and the routes arrows
//! take. An skb's title and facts are here too: they size its box, and its markup writes
//! them. [`super::draw`] paints a [`Layout`]; [`super::height`] needs only its height.
//!
//! Arrows run only where no label is: down out of a frag cell (between the cells of the rows
//! below it), along the gap under its row of boxes, up or down the gutter left of the page
//! column (or of everything, when the pages are below the skbs), along the gap above its page,
//! and down onto the page's bar, which is the top of the page box. So no line crosses a text,
//! and the arrows bound for one page merge into a bundle.

use skblab_core::skb::Skb;
use skblab_core::trace::{Linearized, State};
use skblab_core::Cpu;
use std::cell::RefCell;
use std::rc::Rc;

pub const PAD: u32 = 10;
pub const GAP: u32 = 10;
/// The buffer from `head` to `end`, to scale.
pub const HEAD_W: u32 = 150;
/// The `skb_shared_info` box after `end`.
pub const SHINFO_W: u32 = 46;
/// Wide enough for "32768" at 11 px.
pub const FRAG_W: u32 = 40;
pub const FRAG_PITCH: u32 = FRAG_W + 3;
/// A row of frag cells: 16 high, 3 apart.
pub const FRAG_ROW: u32 = 19;
/// An skb with one line of facts and one row of frag cells.
pub const SKB_H: u32 = 96;
/// A line of text under an skb's title.
pub const LINE: u32 = 15;
/// Wide enough for the longest cursor label, `napi_alloc_cache.page cpu0 @23168`, at 11 px.
pub const PAGE_W: u32 = 236;
/// A page box with its name, count and one cursor's line; one more line for pagecnt_bias.
pub const PAGE_H: u32 = 70;
/// The top of a page's bar (its bytes, left to right), relative to the page's corner: the top
/// of the box, where arrows come down onto it from the gap above.
pub const BAR_Y: u32 = 6;
/// The narrowest drawing with the page column beside the skbs (which then have the room of
/// an skb with no frags to wrap, `HEAD_W + SHINFO_W + 12`).
pub const BESIDE: u32 = 484;
pub const DFRAG_W: u32 = 150;
pub const DFRAG_H: u32 = 42;

/// A box's top-left corner and the middle of the gap below its row, where its arrows run.
#[derive(Clone, Copy, Debug)]
pub struct Spot {
    pub x: u32,
    pub y: u32,
    pub gap: u32,
}

/// A queue's skbs: each one's spot and shape.
pub type Placed = Vec<(Spot, Rc<Shape>)>;

pub struct Layout {
    /// Per queue: its label's baseline, and each skb's spot and shape.
    pub queues: Vec<(u32, Placed)>,
    /// The dfrags' label baseline and each dfrag's spot.
    pub dfrags: (u32, Vec<Spot>),
    /// The page column's left edge and its label's baseline; each page's corner.
    pub px0: u32,
    /// Where arrows run up and down: left of the page column, or of everything.
    pub gutter: u32,
    pub pages_label: u32,
    pub page_h: u32,
    pub pages: Vec<(u32, u32)>,
    /// Where the cursors that hold no page are listed, one line each.
    pub idle_cursors: u32,
    pub height: u32,
}

/// A shape made, with the skb and the linearized copy's head it was made from.
type Made = (Skb, Option<u32>, Rc<Shape>);

/// The skbs' shapes of the layout made last, to make the next one with. A shape depends only
/// on its skb, the skb's linearized copy, MAX_SKB_FRAGS and the room, and making one writes
/// the skb's facts as text: a step that queues 25 skbs behind 475 reshapes 25, an event the
/// one or two it touched, a scroll none (the traces never change).
#[derive(Default)]
pub struct Shapes {
    /// The MAX_SKB_FRAGS and room they were made for.
    fit: (u32, u32),
    /// In the order of the state's queues: each skb as it was shaped, its copy's head.
    made: Vec<Made>,
}

impl Shapes {
    /// The shape of `skb` (whose linearized copy's head is `copy`), taken from `old` (the
    /// shapes made last) when it holds the same skb at or after `*from`, else made anew.
    /// Skbs keep their order from one state to the next, so the search starts after the
    /// last match.
    fn shape(
        &mut self,
        old: &mut [Option<Made>],
        from: &mut usize,
        skb: &Skb,
        copies: &[Linearized],
    ) -> Rc<Shape> {
        let copy = copies
            .iter()
            .find(|c| c.skb == skb.id)
            .map(|c| c.head_bytes);
        let hit = (old[*from..].iter())
            .position(|o| {
                o.as_ref()
                    .is_some_and(|(s, c, _)| s.id == skb.id && *c == copy && s == skb)
            })
            .map(|i| *from + i);
        let (max_frags, room) = self.fit;
        let made = match hit {
            Some(i) => {
                *from = i + 1;
                old[i].take().expect("a match")
            }
            None => (
                skb.clone(),
                copy,
                Rc::new(Shape::of(skb, copies, max_frags, room)),
            ),
        };
        let shape = made.2.clone();
        self.made.push(made);
        shape
    }
}

impl Layout {
    /// Lays out `state` `width` units wide, reusing what `shapes` kept of the layout before.
    pub fn new(state: &State, max_frags: u32, width: u32, shapes: &mut Shapes) -> Layout {
        // Pages stand in a column on the right, so a new skb never moves a page (nor a new page
        // an skb): a step then changes only the pieces it touched. A drawing too narrow for
        // that (presentation mode's lanes, drawn narrow to be shown large) has them below.
        let beside = width >= BESIDE;
        let page_cols = match (beside, width >= 900) {
            (true, wide) => 1 + u32::from(wide),
            (false, _) => ((width - PAD) / (PAGE_W + GAP)).max(1),
        };
        let px0 = match beside {
            true => width - PAD - page_cols * (PAGE_W + GAP) + GAP,
            false => PAD,
        };
        let right = if beside { px0 - 2 * GAP } else { width - PAD };
        let room = right - PAD;
        let mut old: Vec<_> = std::mem::take(&mut shapes.made)
            .into_iter()
            .map(Some)
            .collect();
        if shapes.fit != (max_frags, room) {
            (shapes.fit, old) = ((max_frags, room), Vec::new());
        }
        let mut from = 0;
        let mut y = PAD;
        // A label's baseline, and room below it.
        let labelled = |y: &mut u32| {
            *y += 22;
            *y - 8
        };
        let queues = (state.queues.iter())
            .map(|q| {
                let label = labelled(&mut y);
                let placed: Vec<Rc<Shape>> = (q.skbs.iter())
                    .map(|s| shapes.shape(&mut old, &mut from, s, &state.linearized))
                    .collect();
                let spots = flow(&mut y, right, placed.iter().map(|s| (s.w, s.h)));
                if spots.is_empty() {
                    y += 20; // "empty"
                }
                (label, spots.into_iter().zip(placed).collect())
            })
            .collect();
        let dfrags = if state.dfrags.is_empty() {
            (y, Vec::new())
        } else {
            let label = labelled(&mut y);
            let sizes = state.dfrags.iter().map(|_| (DFRAG_W, DFRAG_H));
            (label, flow(&mut y, right, sizes))
        };
        let page_h = PAGE_H + 14 * u32::from(state.cursors.iter().any(|c| c.bias.is_some()));
        let rows = (state.pages.len() as u32).div_ceil(page_cols);
        let pages_top = if beside { PAD } else { y } + 22;
        let pages = (0..state.pages.len() as u32)
            .map(|i| {
                let (col, row) = (i % page_cols, i / page_cols);
                (px0 + col * (PAGE_W + GAP), pages_top + row * (page_h + GAP))
            })
            .collect();
        let idle_cursors = pages_top + rows * (page_h + GAP);
        let idle = state.cursors.iter().filter(|c| c.page.is_none()).count() as u32;
        Layout {
            queues,
            dfrags,
            px0,
            // Left of everything when the pages are below: arrows run down it past the skbs.
            gutter: if beside { px0 - GAP } else { PAD / 2 },
            pages_label: pages_top - 11,
            page_h,
            pages,
            idle_cursors,
            height: y.max(idle_cursors + 14 * idle) + PAD + 6,
        }
    }
}

/// Places boxes of the given sizes left to right from `*y`, wrapping before `right`, and
/// leaves `*y` below the last row.
fn flow(y: &mut u32, right: u32, sizes: impl Iterator<Item = (u32, u32)>) -> Vec<Spot> {
    let mut x = PAD;
    let mut spots: Vec<Spot> = Vec::new();
    let (mut row, mut row_h) = (0, 0);
    let end_row = |spots: &mut Vec<Spot>, row: usize, y: &mut u32, h: u32| {
        for s in &mut spots[row..] {
            s.gap = *y + h + GAP / 2;
        }
        *y += h + GAP;
    };
    for (w, h) in sizes {
        if x + w > right && x > PAD {
            end_row(&mut spots, row, y, row_h);
            (x, row, row_h) = (PAD, spots.len(), 0);
        }
        spots.push(Spot { x, y: *y, gap: 0 });
        row_h = row_h.max(h);
        x += w + GAP;
    }
    if !spots.is_empty() {
        end_row(&mut spots, row, y, row_h);
    }
    spots
}

pub fn title(skb: &Skb) -> String {
    format!("skb {} · len {}", skb.id, skb.len)
}

/// The facts the terminal prints beside an skb, for the lines under its title: its head's
/// size, its CPU (in the core's words: a capture's may be where it was first seen), the
/// MPTCP mapping it carries, and the linear copy a device without scatter-gather is being
/// given of it (`copies`: the state's).
pub fn facts(skb: &Skb, copies: &[Linearized]) -> Vec<String> {
    let mut facts = vec![format!("head {} B", skb.head.head_bytes), skb.cpu_fact()];
    facts.extend(skb.sent.then(|| "sent".to_string()));
    facts.extend(skb.eor.then(|| "EOR".to_string()));
    if !skb.frag_list.is_empty() {
        facts.push(format!(
            "frag_list: {} skb(s), {} B",
            skb.frag_list.len(),
            skb.frag_list_len()
        ));
    }
    if let Some(m) = skb.mapping {
        facts.push(format!("map data_seq {}", m.data_seq));
        facts.push(format!("subflow_seq {}", m.subflow_seq));
        facts.push(format!("data_len {}", m.data_len));
    }
    let copy = copies.iter().find(|c| c.skb == skb.id);
    facts.extend(copy.map(|c| format!("linearized clone: head {} B", c.head_bytes)));
    facts
}

/// An skb's size and inner layout: its facts wrapped into lines under its title, and its frag
/// cells (the used ones, and one summarising the free slots) wrapped into rows.
pub struct Shape {
    pub w: u32,
    pub h: u32,
    pub lines: Vec<String>,
    /// Frag cells per row.
    pub per_row: u32,
    /// The skb's markup as last written, with its corner and whether it was freed: an skb
    /// that stays as it was and where it was is not formatted again (formatting the band's
    /// unchanged boxes was most of a drawing's time).
    written: RefCell<Option<Written>>,
}

type Written = ((u32, u32), Option<Cpu>, String);

impl Shape {
    pub fn of(skb: &Skb, copies: &[Linearized], max_frags: u32, room: u32) -> Shape {
        let facts = facts(skb, copies);
        let cells = cells(skb, max_frags);
        let title = text_w(&title(skb)) + if skb.psh { 44 } else { 12 };
        let one_line = facts.iter().map(|f| text_w(f)).sum::<u32>() + 12 * facts.len() as u32;
        let w = (HEAD_W + SHINFO_W + 12)
            .max(cells * FRAG_PITCH + 9)
            .max(one_line + 12)
            .max(title)
            .min(room);
        let lines = wrap(facts, w - 12);
        let per_row = ((w - 9) / FRAG_PITCH).max(1);
        let rows = cells.div_ceil(per_row).max(1);
        let h = SKB_H + LINE * (lines.len().max(1) as u32 - 1) + FRAG_ROW * (rows - 1);
        Shape {
            w,
            h,
            lines,
            per_row,
            written: RefCell::default(),
        }
    }

    /// Appends to `out` the skb's markup at corner `at` (`gone`: freed on that CPU): as
    /// last written when it stood there too, else as `write` makes it, kept for the next.
    pub fn markup(
        &self,
        out: &mut String,
        (at, gone): ((u32, u32), Option<Cpu>),
        write: impl FnOnce(&mut String),
    ) {
        let mut kept = self.written.borrow_mut();
        match &*kept {
            Some((a, g, m)) if (*a, *g) == (at, gone) => out.push_str(m),
            _ => {
                let from = out.len();
                write(out);
                *kept = Some((at, gone, out[from..].to_string()));
            }
        }
    }

    /// The top of the head buffer, below the title and the lines of facts.
    pub fn buffer_y(&self, y: u32) -> u32 {
        y + 20 + LINE * self.lines.len().max(1) as u32
    }

    /// The top of the first row of frag cells: below the buffer, its pointer names and the
    /// bracket from the shared info.
    pub fn frags_y(&self, y: u32) -> u32 {
        self.buffer_y(y) + 37
    }

    /// Frag slot `i`'s corner, in an skb at (`x`, `y`): cells wrap into rows of `per_row`.
    pub fn cell(&self, (x, y): (u32, u32), i: u32) -> (u32, u32) {
        let (row, col) = (i / self.per_row, i % self.per_row);
        (x + 6 + col * FRAG_PITCH, self.frags_y(y) + row * FRAG_ROW)
    }

    /// Whether frag slot `i` sits above the last row (its arrow then runs down between the
    /// cells below it).
    pub fn above_last_row(&self, i: u32, cells: u32) -> bool {
        i / self.per_row < (cells - 1) / self.per_row
    }
}

/// Frag cells shown: the used ones plus one summarising the free slots.
pub fn cells(skb: &Skb, max_frags: u32) -> u32 {
    skb.frags.len() as u32 + u32::from((skb.frags.len() as u32) < max_frags)
}

/// Joins `items` with " · " into lines at most `w` wide.
fn wrap(items: Vec<String>, w: u32) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for item in items {
        match lines.last_mut() {
            Some(line) if text_w(line) + 12 + text_w(&item) <= w => {
                line.push_str(" · ");
                line.push_str(&item);
            }
            _ => lines.push(item),
        }
    }
    lines
}

/// A generous width of `s` at 11 px (DejaVu Sans, the widest of the usual fallbacks, gives a
/// digit or most lower-case letters 7 px).
pub fn text_w(s: &str) -> u32 {
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
pub fn scale_to(n: u32, total: u32, len: u32) -> u32 {
    (u64::from(n.min(total)) * u64::from(len) / u64::from(total.max(1))) as u32
}

/// An arrow's path from (`x`, `y`), the bottom of what holds the bytes, to `tx` on the bar of
/// the page whose top is `py` (see the module's doc). `between`: the x of the gap between
/// frag cells to go down through first, for a cell above the last row.
pub fn route(
    (x, y): (u32, u32),
    between: Option<u32>,
    gap: u32,
    gutter: u32,
    (tx, py): (u32, u32),
) -> String {
    let down = match between {
        Some(bx) => format!("M{x} {y}v1H{bx}"),
        None => format!("M{x} {y}"),
    };
    format!("{down}V{gap}H{gutter}V{}H{tx}V{}", py - GAP / 2, py + BAR_Y)
}

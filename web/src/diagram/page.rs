//! The markup of a page and of an MPTCP data frag: a page box with its bar of bytes on top (arrows
//! come down onto it from the gap above), the bytes each frag holds drawn where they sit, the
//! page-frag cursors on it, and its name, count and CPU below.

use super::layout::{scale_to, Spot, DFRAG_H, DFRAG_W, PAGE_W};
use super::{esc, FragEnd, Marks};
use skblab_core::page::Page;
use skblab_core::skb::Frag;
use skblab_core::trace::{Dfrag, State};
use std::fmt::Write;

/// A page at (`x`, `y`), `h` high: its bar of bytes with the `held` extents (offset, size)
/// drawn where they sit, so an allocator counting down fills it from the right; the cursors on
/// it, each a triangle under the bar at its offset; its id, order, CPU, count and the bytes
/// the bar shows held (those handed out, freed or not, in its tooltip: the figure under the
/// bar says what the bar draws); and for a cache with a `pagecnt_bias`, the bias and the
/// fragments out.
pub fn draw_page(
    out: &mut String,
    p: &Page,
    (x, y, h): (u32, u32, u32),
    held: &[(u32, u32)],
    state: &State,
    marks: &Marks,
) {
    let bar_w = PAGE_W - 12;
    let gone = crate::diff::Changed::freed_on(&marks.changed.gone, p.id);
    // Freed by the event shown: the CPU that freed it instead of its count.
    let held_bytes = covered(held);
    let facts = match gone {
        Some(cpu) => format!("freed on cpu{cpu} · held {held_bytes}/{}", p.size),
        None => format!("count {} · held {held_bytes}/{}", p.count, p.size),
    };
    let (tx, by) = (x + 6, y + super::layout::BAR_Y);
    let _ = write!(
        out,
        r#"<g {tag}="{id}"><title>page {id}: order {o} ({size} bytes), {used} bytes handed out, count {c}</title><rect class="pg" x="{x}" y="{y}" width="{PAGE_W}" height="{h}" rx="4"/><rect class="bar" x="{tx}" y="{by}" width="{bar_w}" height="10"/><text x="{tx}" y="{ty}">page {id}{order}{cpu}</text><text x="{tx}" y="{ry}" class="s">{facts}</text>"#,
        id = p.id,
        o = p.order,
        size = p.size,
        used = p.used,
        c = p.count,
        cpu = p.cpu_fact().map_or(String::new(), |f| format!(" · {f}")),
        order = if p.order > 0 {
            format!(" · order {}", p.order)
        } else {
            String::new()
        },
        ty = y + 37,
        ry = y + 51,
        // Freed by the event shown: drawn once more, fading out, under another name (the
        // page no longer exists, so it is no `data-page`).
        tag = if gone.is_some() {
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
    let mut ly = y + 65;
    for c in state.cursors.iter().filter(|c| c.page == Some(p.id)) {
        let cx = tx + scale_to(c.offset, p.size, bar_w);
        let cy = by + 11;
        let cmark = if marks.changed.cursors.contains(&c.name) {
            " chg"
        } else {
            ""
        };
        if let (Some(bias), Some(out_)) = (c.bias, c.frags_out(p)) {
            let _ = write!(
                out,
                r#"<text class="s" x="{tx}" y="{ly}">pagecnt_bias {bias} · {out_} frag(s) out</text>"#
            );
            ly += 14;
        }
        // The triangle points up at the offset, under the bar; the label is the last line.
        let _ = write!(
            out,
            r#"<path class="cur{cmark}" d="M{cx} {cy}l-4 7h8z"><title>{name}: offset {off} of {size}</title></path><text class="s" x="{tx}" y="{ly}">{name} @{off}</text>"#,
            name = esc(&c.name),
            off = c.offset,
            size = c.size,
        );
        ly += 14;
    }
    out.push_str("</g>");
}

/// The bytes the `held` extents (offset, size) cover, each once: the clones of an skb share
/// their frags' bytes.
fn covered(held: &[(u32, u32)]) -> u32 {
    // In order of offset, each put in its place (a sort of its own would cost the bundle
    // kilobytes for the few extents of a page).
    let mut spans: Vec<(u32, u32)> = Vec::with_capacity(held.len());
    for &(off, len) in held {
        let span = (off, off.saturating_add(len));
        spans.insert(spans.partition_point(|s| *s < span), span);
    }
    let (mut total, mut reach) = (0, 0);
    for (from, to) in spans {
        let from = from.max(reach);
        if to > from {
            total += to - from;
            reach = to;
        }
    }
    total
}

/// One of MPTCP's data frags (`mptcp_data_frag`) at (`x`, `y`): the bytes pushed to subflows
/// out of it (its page is reached by an arrow, [`dfrag_end`]).
pub fn draw_dfrag(d: &Dfrag, (x, y): (u32, u32)) -> String {
    const W: u32 = DFRAG_W;
    let sent = scale_to(d.already_sent.min(d.data_len), d.data_len.max(1), W - 12);
    format!(
        r#"<g data-dfrag="{ds}"><title>dfrag: data_seq {ds}, {len} bytes at offset {off} in page {pg}, already_sent {as_}</title><rect class="box" x="{x}" y="{y}" width="{W}" height="{DFRAG_H}" rx="4"/><text x="{tx}" y="{ty}">dseq {ds} · {len} B</text><rect class="bar" x="{tx}" y="{by}" width="{bw}" height="8"/><rect class="fr" x="{tx}" y="{by}" width="{sent}" height="8"/><text class="s" x="{tx}" y="{ly}">sent {as_}</text></g>"#,
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
    )
}

/// Where the arrow from dfrag `d` at `spot` to its bytes starts: the middle of its bottom.
pub fn dfrag_end(d: &Dfrag, spot: &Spot) -> FragEnd {
    let f = Frag {
        page: d.page,
        offset: d.offset,
        size: d.data_len,
    };
    FragEnd::new((spot.x + DFRAG_W / 2, spot.y + DFRAG_H), None, &f, true).below(spot.gap)
}

#[cfg(test)]
mod tests {
    use super::covered;

    #[test]
    fn held_bytes_count_each_byte_once() {
        // A clone's frag shares its bytes with the original's; a gap counts nothing.
        assert_eq!(covered(&[(0, 1448), (0, 1448), (2048, 100)]), 1548);
        assert_eq!(covered(&[(100, 50), (0, 120)]), 150);
        assert_eq!(covered(&[]), 0);
    }
}

//! An skb's markup, as kernel documentation draws one: its title and facts, the buffer from
//! `head` to `end` with `data` and `tail` marked, `skb_shared_info` after `end` and a bracket
//! from it to the frag array, each frag's size in its cell.

use super::layout::{cells, text_w, title, Shape, FRAG_W, HEAD_W, SHINFO_W};
use super::FragEnd;
use skblab_core::skb::Skb;
use skblab_core::Cpu;
use std::fmt::Write;

/// Where the arrows of `skb` at (`x`, `y`) in its `shape` start: the bottom of its box for a
/// head in a page fragment and for chained skbs (GRO's frag_list), whose bytes are reached by
/// dashed arrows; the bottom of each frag cell. Apart from the markup: a page's bytes and an
/// arrow's band need every skb's, drawn or not.
pub fn frag_ends(
    skb: &Skb,
    (x, y): (u32, u32),
    (shape, max_frags): (&Shape, u32),
    out: &mut Vec<FragEnd>,
) {
    let bottom = (x + shape.w / 2, y + shape.h);
    for f in skb
        .head_frag
        .iter()
        .chain(skb.frag_list.iter().flat_map(|c| &c.frags))
    {
        out.push(FragEnd::new(bottom, None, f, true));
    }
    let n = cells(skb, max_frags);
    for (i, f) in skb.frags.iter().enumerate() {
        let (fx, fy) = shape.cell((x, y), i as u32);
        let between = shape.above_last_row(i as u32, n).then_some(fx - 2);
        out.push(FragEnd::new((fx + FRAG_W / 2, fy + 16), between, f, false));
    }
}

/// Draws `skb` at (`x`, `y`) in its `shape`; `gone`: the event shown freed it on that CPU,
/// so it is drawn once more, fading (its arrows are not collected: see `frag_ends`).
pub fn draw_skb(
    out: &mut String,
    skb: &Skb,
    (x, y): (u32, u32),
    (shape, max_frags, gone): (&Shape, u32, Option<Cpu>),
) {
    let h = &skb.head;
    let w = shape.w;
    let (tag, title) = match gone {
        Some(cpu) => (
            r#"class="gone" data-gone-skb"#,
            format!("skb {} · freed on cpu{cpu}", skb.id),
        ),
        None => ("data-skb", title(skb)),
    };
    let _ = write!(
        out,
        r#"<g {tag}="{id}"><title>skb {id}: seq {seq}..{end}, len {len} = linear {lin} + data_len {dl} in {nf} frag(s); headroom {hr}, tailroom {tr}, truesize {ts}</title><rect class="box{sentc}" x="{x}" y="{y}" width="{w}" height="{sh}" rx="4"/><text x="{tx}" y="{ty}">{title}</text>"#,
        id = skb.id,
        seq = skb.seq,
        end = skb.end_seq,
        len = skb.len,
        lin = skb.linear_len,
        dl = skb.data_len,
        nf = skb.frags.len(),
        hr = h.headroom,
        tr = h.tailroom,
        ts = h.truesize,
        sentc = if skb.sent { " sent" } else { "" },
        sh = shape.h,
        tx = x + 6,
        ty = y + 15,
    );
    for (i, line) in shape.lines.iter().enumerate() {
        let _ = write!(
            out,
            r#"<text class="s" x="{}" y="{}">{line}</text>"#,
            x + 6,
            y + 30 + 15 * i as u32,
        );
    }
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
    let (hx, hy) = (x + 6, shape.buffer_y(y));
    draw_buffer(out, skb, (hx, hy));
    if let Some(goal) = skb.size_goal {
        size_goal_bar(out, skb.len, goal, (x + 6, y + shape.h - 6, w - 12));
    }
    // skb_shared_info sits right after `end`; a bracket from it leads to its frag array.
    let (sx, fy) = (hx + HEAD_W, shape.frags_y(y));
    let _ = write!(
        out,
        r#"<rect class="shi" x="{sx}" y="{hy}" width="{SHINFO_W}" height="14"><title>skb_shared_info, right after end: nr_frags {nf} of MAX_SKB_FRAGS {max_frags}, frag_list {fl}</title></rect><text class="s" x="{}" y="{}">shinfo</text><path class="brk" d="M{bx} {by}V{ly}H{hx}V{fy}"/>"#,
        sx + 5,
        hy + 11,
        nf = skb.frags.len(),
        fl = skb.frag_list.len(),
        bx = sx + SHINFO_W,
        by = hy + 14,
        ly = fy - 3,
    );
    for (i, f) in skb.frags.iter().enumerate() {
        let (fx, fy) = shape.cell((x, y), i as u32);
        let _ = write!(
            out,
            r#"<rect class="fr" data-frag="{i}" x="{fx}" y="{fy}" width="{FRAG_W}" height="16" rx="2"><title>frags[{i}]: page {}, offset {}, size {}</title></rect><text class="w" x="{}" y="{}">{}</text>"#,
            f.page,
            f.offset,
            f.size,
            fx + 2,
            fy + 12,
            f.size,
        );
    }
    let used = skb.frags.len() as u32;
    if used < max_frags {
        let (fx, fy) = shape.cell((x, y), used);
        let _ = write!(
            out,
            r#"<rect class="free" x="{fx}" y="{fy}" width="{FRAG_W}" height="16" rx="2"><title>{n} free frag slots of MAX_SKB_FRAGS {max_frags}</title></rect><text class="s" x="{}" y="{}">+{n}</text>"#,
            fx + 3,
            fy + 12,
            n = max_frags - used
        );
    }
    out.push_str("</g>");
}

/// The skb's bytes against its size goal along the bottom of its box, at (`x`, `y`), `w`
/// wide: the bar's end is the goal, marked; the fill is the skb's length, so a full bar is an
/// skb that stopped growing because it reached its goal.
fn size_goal_bar(out: &mut String, len: u32, goal: u32, (x, y, w): (u32, u32, u32)) {
    let fill = super::layout::scale_to(len, goal, w);
    let _ = write!(
        out,
        r#"<g class="goalbar"><title>len {len} of size_goal {goal}</title><rect class="gtrack" x="{x}" y="{y}" width="{w}" height="3"/><rect class="gfill" x="{x}" y="{y}" width="{fill}" height="3"/><path class="goal" d="M{gx} {gy}v7"/></g>"#,
        gx = x + w,
        gy = y - 2,
    );
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
            r#"<path class="tick" d="M{at} {}v4"/><text class="s" x="{spot}" y="{}">{name}</text>"#,
            hy + 14,
            hy + 30,
        );
    }
}

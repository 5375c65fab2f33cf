//! A figure of its own, for a slide or a handout: one drawing, or two side by side, each under
//! its caption, on an opaque background (a dark slide hides the drawings' dark text
//! otherwise), with the legend of the marks they use.
//!
//! The legend's words are the page's own (index.html's `<template id="legend">`, passed in as
//! markup): an entry with a swatch (`<span class="k CLASSES">`) belongs in the figure when a
//! drawing has an element of those classes, one of words alone when a drawing's text has the
//! term before its colon (`count: …`).

use super::layout::{text_w, GAP, PAD};
use super::{esc, Drawing};
use std::fmt::Write;

/// A caption line's height, and a legend row's.
const LINE: u32 = 16;

/// The figure of `lanes` (each a drawing and its caption), side by side, the entries of
/// `legend` (the page's legend markup) that their marks need, and the `sources` it cites
/// under them, as one SVG document; as a `slide`, centred on a 16:9 page.
pub fn figure(
    lanes: &[(&Drawing, String)],
    legend: &str,
    sources: &[String],
    slide: bool,
) -> String {
    // As wide as the drawings, or as the legend's widest entry (beside a narrow drawing).
    let widest = entries(legend)
        .map(|(k, w)| width(k.is_some(), w) + PAD)
        .max()
        .unwrap_or(0);
    let width = (lanes.iter().map(|(d, _)| d.width + GAP).sum::<u32>() - GAP).max(widest);
    let captions: Vec<Vec<String>> = (lanes.iter())
        .map(|(d, c)| wrap(c, d.width - 2 * PAD))
        .collect();
    let top = LINE * captions.iter().map(Vec::len).max().unwrap_or(0) as u32 + GAP;
    let drawn = top + lanes.iter().map(|(d, _)| d.height).max().unwrap_or(0);
    let marks: String = lanes.iter().map(|(d, _)| d.to_svg()).collect();
    let (key, key_h) = key(&marks, legend, width);
    let cited: Vec<String> = (sources.iter())
        .flat_map(|c| wrap(c, width - 2 * PAD))
        .collect();
    let h = drawn + key_h + LINE * cited.len() as u32;
    // A slide: the smallest 16:9 page that holds the figure, the figure in its middle.
    let (pw, ph) = match slide {
        true => (width.max(h * 16 / 9), h.max(width * 9 / 16)),
        false => (width, h),
    };
    let mut out = format!(
        r##"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {pw} {ph}" width="{pw}" height="{ph}"><rect width="{pw}" height="{ph}" fill="#fff"/>"##
    );
    if slide {
        let (dx, dy) = ((pw - width) / 2, (ph - h) / 2);
        let _ = write!(out, r#"<g transform="translate({dx} {dy})">"#);
    }
    let mut x = 0;
    for ((d, _), lines) in lanes.iter().zip(&captions) {
        for (i, line) in lines.iter().enumerate() {
            let y = LINE * (i as u32 + 1);
            let _ = write!(
                out,
                r#"<text class="q cap" x="{}" y="{y}">{}</text>"#,
                x + PAD,
                esc(line)
            );
        }
        let _ = write!(
            out,
            r#"<g transform="translate({x} {top})">{}</g>"#,
            d.to_svg()
        );
        x += d.width + GAP;
    }
    let _ = write!(
        out,
        r#"<g class="legend" transform="translate(0 {drawn})">{key}</g>"#
    );
    for (i, line) in cited.iter().enumerate() {
        let y = drawn + key_h + LINE * i as u32 + LINE - 4;
        let _ = write!(
            out,
            r#"<text class="s src" x="{PAD}" y="{y}">{}</text>"#,
            esc(line)
        );
    }
    out + if slide { "</g></svg>" } else { "</svg>" }
}

/// `text`'s words in lines at most `w` wide (at the caption's 12 px, bold); a line that
/// breaks between parts (` · `) leaves out the dot.
fn wrap(text: &str, w: u32) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for part in text.split(" · ") {
        let mut sep = " · ";
        for word in part.split(' ') {
            match lines.last_mut() {
                Some(l) if (text_w(l) + text_w(sep) + text_w(word)) * 6 / 5 <= w => {
                    *l += sep;
                    *l += word;
                }
                _ => lines.push(word.to_string()),
            }
            sep = " ";
        }
    }
    lines
}

/// Per entry of `legend` (the page's legend markup), whether `drawn` (drawings' markup) uses
/// its mark: an element of all the entry's classes (a sent skb is `box sent`; an outline's
/// entry, of its outline classes alone: `chg dif` is neither `chg` nor `dif`), or, for an
/// entry of words alone, its term in a text the drawing shows (a tooltip's is not shown).
pub fn marks_used(drawn: &str, legend: &str) -> Vec<bool> {
    let classes: Vec<Vec<&str>> = (drawn.split("class=\"").skip(1))
        .map(|c| c[..c.find('"').unwrap_or(0)].split(' ').collect())
        .collect();
    let shown: String = (drawn.split("<title>"))
        .map(|part| part.split_once("</title>").map_or(part, |(_, after)| after))
        .collect();
    let outlines = |c: &[&str]| c.iter().filter(|m| ["chg", "dif"].contains(m)).count();
    (entries(legend))
        .map(|(swatch, words)| match &swatch {
            Some(k) => (classes.iter()).any(|c| {
                k.iter().all(|m| c.contains(m)) && [0, outlines(c)].contains(&outlines(k))
            }),
            None => shown.contains(term(words)),
        })
        .collect()
}

/// The entries of `legend` that `used` marks, as the items of a list for the page (each
/// entry's own markup: its swatch and words).
pub fn legend_items(legend: &str, used: &[bool]) -> String {
    (legend.split(r#"<span class="entry"#).skip(1).zip(used))
        .filter(|(_, u)| **u)
        .map(|(e, _)| {
            let body = &e[e.find('>').map_or(e.len(), |i| i + 1)..];
            let body = body.trim_end().strip_suffix("</span>").unwrap_or(body);
            format!("<li>{}</li>", body.trim_end())
        })
        .collect()
}

/// The legend entries whose marks `drawn` (the drawings' markup) uses, in rows at most
/// `width` wide, and the height they take.
fn key(drawn: &str, legend: &str, width: u32) -> (String, u32) {
    let (mut out, mut x, mut y) = (String::new(), PAD, LINE);
    for ((swatch, words), used) in entries(legend).zip(marks_used(drawn, legend)) {
        if !used {
            continue;
        }
        let w = self::width(swatch.is_some(), words);
        if x + w > width && x > PAD {
            (x, y) = (PAD, y + LINE);
        }
        let mark = swatch
            .as_ref()
            .map_or(term(words).to_string(), |k| k.join(" "));
        let _ = write!(out, r#"<g data-mark="{mark}">"#);
        if let Some(k) = &swatch {
            self::swatch(&mut out, (k, &mark), x, y);
        }
        let tx = x + if swatch.is_some() { 20 } else { 0 };
        let _ = write!(
            out,
            r#"<text class="s" x="{tx}" y="{y}">{words}</text></g>"#
        );
        x += w;
    }
    let h = if out.is_empty() { 0 } else { y + GAP };
    (out, h)
}

/// The width a legend entry takes: its swatch, its words and the space after them.
fn width(swatch: bool, words: &str) -> u32 {
    text_w(words) + if swatch { 34 } else { 14 }
}

/// The legend's entries as index.html writes them: `<span class="entry…">`, then a swatch
/// (`<span class="k CLASSES"></span>`, or the cursor's `<span class="cur">▲</span>`) or none,
/// then the words (markup as the page serialises it, so already escaped).
fn entries(legend: &str) -> impl Iterator<Item = (Option<Vec<&str>>, &str)> {
    legend.split(r#"<span class="entry"#).skip(1).map(|e| {
        let rest = &e[e.find('>').map_or(e.len(), |i| i + 1)..];
        let (swatch, words) = match rest.strip_prefix(r#"<span class=""#) {
            Some(s) => {
                let classes = &s[..s.find('"').unwrap_or(0)];
                let after = s.find("</span>").map_or("", |i| &s[i + 7..]);
                let k = classes.split(' ').filter(|c| *c != "k").collect();
                (Some(k), after)
            }
            None => (None, rest),
        };
        (
            swatch,
            &words[..words.find("</span>").unwrap_or(words.len())],
        )
    })
}

/// The term an entry of words alone explains: what comes before its colon, up to a comma
/// (`head, data, tail, end: …` is about `head`).
fn term(words: &str) -> &str {
    let t = words.split(':').next().unwrap_or(words);
    t.split(',').next().unwrap_or(t)
}

/// A legend swatch at (`x`, baseline `y`), of the marks `k` (`c` joined), drawn with the
/// drawings' own classes: a box, a line, or the cursor's triangle.
fn swatch(out: &mut String, (k, c): (&[&str], &str), x: u32, y: u32) {
    const BOX: &str = "h16v10h-16z";
    let (class, shape, more) = match k {
        ["arrow"] | ["harrow"] => (c.into(), "m0 6h16", ""),
        ["cur"] => (c.into(), "m8 0l-4 7h8z", ""),
        // The drawings' `.gone`: faded a quarter, dashed.
        ["gone"] => (
            "fill".into(),
            BOX,
            r##" stroke="#1d2430" stroke-dasharray="5 3" opacity=".75""##,
        ),
        _ if k.iter().all(|m| ["chg", "dif"].contains(m)) => (format!("mk {c}"), BOX, ""),
        _ => (c.into(), BOX, r##" stroke="#8a94a6""##),
    };
    let _ = write!(
        out,
        r#"<path class="{class}" d="M{x} {}{shape}"{more}/>"#,
        y - 10
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagram::Piece;

    /// Entries as index.html has them (a few), serialised as the page does.
    const LEGEND: &str = r#"
    <span class="entry"><span class="k hr"></span>headroom</span>
    <span class="entry"><span class="k fr"></span>frag, its size</span>
    <span class="entry"><span class="k arrow"></span>frag to its bytes</span>
    <span class="entry"><span class="cur">▲</span>a page-frag allocator's offset</span>
    <span class="entry">count: references held on a page</span>
    <span class="entry">head, data, tail, end: the skb's buffer pointers</span>
    <span class="entry"><span class="k chg"></span>changed by this step</span>
    <span class="entry split"><span class="k dif"></span>differs from the other variant</span>
    <span class="entry split"><span class="k chg dif"></span>changed by this step, and differs</span>
    "#;

    fn drawing(width: u32, body: &str) -> Drawing {
        Drawing {
            width,
            height: 100,
            label: "l".into(),
            pieces: vec![Piece {
                key: "p".into(),
                top: 0,
                bottom: 100,
                body: format!("<g>{body}</g>"),
            }],
            bottoms: Vec::new(),
        }
    }

    #[test]
    fn the_legend_has_an_entry_for_each_mark_drawn_and_no_other() {
        let d = drawing(
            960,
            r#"<rect class="hr"/><rect class="mk chg dif"/><path class="cur chg"/><text>count 2</text>"#,
        );
        let svg = figure(&[(&d, "a caption".into())], LEGEND, &[], false);
        let marks: Vec<&str> = (svg.split(r#"data-mark=""#).skip(1))
            .map(|m| &m[..m.find('"').unwrap()])
            .collect();
        // A changed cursor is a changed mark; "chg dif" is neither "chg" alone nor "dif".
        assert_eq!(marks, ["hr", "cur", "count", "chg", "chg dif"], "{svg}");
        // "headroom" takes 56 + 34 (its swatch and the space after it): the cursor's entry
        // starts at 10 + 90, its triangle 8 in from 10 above the baseline, its words 20 in.
        let want = r#"<path class="cur" d="M100 6m8 0l-4 7h8z"/><text class="s" x="120" y="16">a page-frag allocator's offset</text>"#;
        assert!(svg.contains(want), "{svg}");
    }

    #[test]
    fn a_figure_is_as_wide_as_its_legends_widest_entry() {
        // "head, data, tail, end: …" is 270 wide, 284 with the space after it (the widest of
        // LEGEND): a 100-wide drawing's figure is 294 wide, and the entry goes on a row of
        // its own.
        let d = drawing(100, r#"<path class="arrow"/><text>head 512 B</text>"#);
        let svg = figure(&[(&d, "x".into())], LEGEND, &[], false);
        let want = r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 294 168""#;
        assert!(svg.starts_with(want), "{svg}");
        let want = r#"<g data-mark="head"><text class="s" x="10" y="32">"#;
        assert!(svg.contains(want), "{svg}");
    }

    #[test]
    fn the_sources_stand_under_the_legend_one_line_each() {
        let d = drawing(500, r#"<path class="arrow"/>"#);
        let cited = ["seed 001, Alexander Duyck, 2012: the post".to_string()];
        let svg = figure(&[(&d, "x".into())], LEGEND, &cited, false);
        // Caption 16 + 10, drawing 100, legend one row 16 + 10, then the source's line.
        let want = r#"<text class="s src" x="10" y="164">seed 001, Alexander Duyck, 2012: the post</text></svg>"#;
        assert!(svg.ends_with(want), "{svg}");
        assert!(svg.contains(r#"viewBox="0 0 500 168""#), "{svg}");
    }

    #[test]
    fn a_slide_is_16_by_9_the_figure_in_its_middle() {
        // 500 x 168 (as above) on the smallest 16:9 page that holds it: 500 x 281, the
        // figure (281 - 168) / 2 = 56 down.
        let d = drawing(500, r#"<path class="arrow"/>"#);
        let cited = ["seed 001, Alexander Duyck, 2012: the post".to_string()];
        let svg = figure(&[(&d, "x".into())], LEGEND, &cited, true);
        let want = r##"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 500 281" width="500" height="281"><rect width="500" height="281" fill="#fff"/><g transform="translate(0 56)">"##;
        assert!(svg.starts_with(want), "{svg}");
        // A narrow one is widened instead: 100 x 126 (no legend) on a 224 x 126 page, the
        // figure (224 - 100) / 2 = 62 in.
        let d = drawing(100, "");
        let svg = figure(&[(&d, "x".into())], "", &[], true);
        let want = r##"viewBox="0 0 224 126" width="224" height="126"><rect width="224" height="126" fill="#fff"/><g transform="translate(62 0)">"##;
        assert!(svg.contains(want), "{svg}");
    }

    #[test]
    fn two_lanes_stand_side_by_side_each_under_its_caption_lines() {
        let (a, b) = (drawing(500, ""), drawing(500, r#"<path class="arrow"/>"#));
        let long = "Receive buffers: netdev_alloc_frag page reuse (Duyck, 2012) · duyck-2012 · kernel v3.5 · step 2/4: rx";
        let svg = figure(
            &[(&a, long.into()), (&b, "after".into())],
            LEGEND,
            &[],
            false,
        );
        // The long caption takes two lines; both drawings start under them, the second 10 to
        // the right of the first; the legend (one row) is under the drawings.
        for want in [
            r##"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 1010 168" width="1010" height="168"><rect width="1010" height="168" fill="#fff"/>"##,
            r#"<text class="q cap" x="10" y="32">duyck-2012 · kernel v3.5 · step 2/4: rx</text>"#,
            r#"<text class="q cap" x="520" y="16">after</text><g transform="translate(510 42)">"#,
            r#"<g class="legend" transform="translate(0 142)"><g data-mark="arrow"><path class="arrow" d="M10 6m0 6h16"/>"#,
        ] {
            assert!(svg.contains(want), "missing {want} in {svg}");
        }
    }
}

//! SVG writing: a [`Drawing`] in keyed [`Piece`]s, the stylesheet every drawing carries, and
//! the whole as one standalone file.

use std::borrow::Cow;

const STYLE: &str =
    "text{font:11px system-ui,sans-serif;fill:#1d2430}.s{fill:#4a5568}.w{fill:#fff}\
.q{font-weight:600;font-size:12px}.tick{stroke:#1d2430}.brk{stroke:#8a94a6;fill:none}.shi{fill:#fbf7ee;stroke:#8a94a6}\
.gone{opacity:.75;animation:fade 1s}@keyframes fade{from{opacity:1}}@media(prefers-reduced-motion:reduce){.gone{animation:none}}.gone .pg,.gone .box{stroke:#4a5568;stroke-dasharray:5 3}.box{fill:#fff;stroke:#8a94a6}.sent{fill:#f2f4f7}\
.hr{fill:#d5d9e0}.ln{fill:#4c7bd9}.tr{fill:#eef2fb;stroke:#c3cbe0}.fr{fill:#5bb37f}\
.free{fill:none;stroke:#b8c0cc;stroke-dasharray:3 2}.pg{fill:#fff;stroke:#8a94a6}\
.fill{fill:#f0b35a}.bar{fill:#f5efe4;stroke:#d4c7ad}.arrow{stroke:#3f9a66;stroke-width:1.5;fill:none;opacity:.7}\
.harrow{stroke:#4c7bd9;fill:none;stroke-dasharray:4 3;opacity:.6}.cur{fill:#c2412d}\
.psh{fill:#7a3db8}.gtrack{fill:#e2e8f0}.gfill{fill:#1f7a8c}.goal{stroke:#1d2430;stroke-width:2}.mk{fill:none;pointer-events:none}.chg{stroke:#e8590c;stroke-width:3}.dif{stroke:#7a3db8;stroke-width:2.5;\
stroke-dasharray:6 3}.chg.dif{stroke:#e8590c;stroke-dasharray:6 3}.mk.chg.dif{fill:#7a3db8;fill-opacity:.12}";

/// A drawing: an SVG cut into keyed pieces (one per skb, page, arrow bundle, label; one for
/// all the marks), those
/// that meet the band of y it was drawn for. The page keeps unchanged pieces in place between
/// steps, so a step that touches one skb of 500 costs one piece; [`Drawing::to_svg`] joins
/// them into the file the export saves (drawn for [`ALL`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Drawing {
    pub width: u32,
    pub height: u32,
    pub label: String,
    /// In painting order.
    pub pieces: Vec<Piece>,
    /// The bottom of every skb, page and dfrag (by kind: [`Kind`]), drawn or not.
    pub bottoms: Vec<(Kind, u32)>,
}

/// The band that holds every piece: for a whole drawing (the export, the handout).
pub const ALL: (u32, u32) = (0, u32::MAX);

/// What a view can cut off.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Skb,
    Page,
    Dfrag,
}

/// A keyed part of a drawing: SVG markup, one `<g>` element (the page replaces a changed
/// piece as one node, not node by node), and the band of y it covers (so the page can leave
/// out what is far from view).
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
            out.push_str(&p.body);
        }
        out.push_str("</svg>");
        out
    }

    /// The skbs, pages and dfrags that reach below `y`: what a view ending there cuts off.
    pub fn below(&self, y: u32) -> (usize, usize, usize) {
        let cut = |kind| {
            (self.bottoms.iter())
                .filter(|&&(k, bottom)| k == kind && bottom > y)
                .count()
        };
        (cut(Kind::Skb), cut(Kind::Page), cut(Kind::Dfrag))
    }
}

/// Escapes text for SVG/XML; most text has nothing to escape and is lent back as it is.
pub fn esc(s: &str) -> Cow<'_, str> {
    if !s.contains(['&', '<', '>', '"']) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 16);
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

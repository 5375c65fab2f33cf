//! A small line chart of one counter over the steps, one line per variant (named under it, in
//! its colour), with the current step marked. The values are the trace's own counters.
//!
//! The plot ([`plot`]) is markup that stays the same from step to step; the step's marker
//! ([`marker`]) is apart from it, so a step moves one line instead of parsing the plot anew.

use crate::diagram::esc;
use std::fmt::Write;

const W: u64 = 420;
const H: u64 = 120;
const L: u64 = 44;
const B: u64 = 18;
const COLORS: [&str; 2] = ["#4c7bd9", "#e8590c"];
/// The key under the plot: each line's variant, in the line's colour.
const KEY: u64 = 16;

/// The `<svg>`'s width and height.
pub const SIZE: (u64, u64) = (W, H + KEY);

/// The x of step `at` (0 = before step 1) in a chart of `steps` steps.
fn x(steps: u64, at: u64) -> u64 {
    L + at * (W - L - 8) / steps.max(1)
}

/// The plot inside the `<svg>`: `series` (variant, value after each step), its axes and its key.
pub fn plot(series: &[(&str, Vec<u64>)]) -> String {
    let steps = steps(series);
    let max = series
        .iter()
        .flat_map(|(_, v)| v.iter().copied())
        .max()
        .unwrap_or(0)
        .max(1);
    let y = |v: u64| 6 + (H - B - 6) - v.min(max) * (H - B - 6) / max;
    let mut out = format!(
        r##"<g style="font:10px system-ui,sans-serif;fill:#4a5568"><text x="2" y="12">{max}</text><text x="2" y="{yb}">0</text><text x="{L}" y="{ht}">step 0</text><text x="{xe}" y="{ht}" text-anchor="end">{steps}</text></g><path d="M{L} {y0}H{xr}" stroke="#c3cbe0"/>"##,
        yb = H - B,
        ht = H - 4,
        xe = W - 8,
        y0 = y(0),
        xr = W - 8,
    );
    for (i, ((name, _), color)) in series.iter().zip(COLORS).enumerate() {
        // The first at the left, the second at the right: no line runs there.
        let (x, anchor) = if i == 0 { (L, "start") } else { (W - 8, "end") };
        let _ = write!(
            out,
            r#"<text x="{x}" y="{}" text-anchor="{anchor}" fill="{color}" font-size="11">━ {}</text>"#,
            H + KEY - 4,
            esc(name)
        );
    }
    for ((name, vals), color) in series.iter().zip(COLORS) {
        let mut pts = String::new();
        for (i, v) in vals.iter().enumerate() {
            let _ = write!(pts, "{},{} ", x(steps, i as u64 + 1), y(*v));
        }
        let _ = write!(
            out,
            r#"<polyline points="{pts}" fill="none" stroke="{color}" stroke-width="2"><title>{}</title></polyline>"#,
            esc(name)
        );
    }
    out
}

/// The path (`d`) of the dashed line that marks step `at` on the plot of `series`.
pub fn marker(series: &[(&str, Vec<u64>)], at: usize) -> String {
    format!("M{} 4V{}", x(steps(series), at as u64), H - B)
}

fn steps(series: &[(&str, Vec<u64>)]) -> u64 {
    series.iter().map(|(_, v)| v.len()).max().unwrap_or(0) as u64
}

#[cfg(test)]
mod tests {
    #[test]
    fn one_line_per_variant_and_a_step_marker() {
        let series = [("a", vec![1, 2, 2]), ("b", vec![1, 1, 3])];
        let s = super::plot(&series);
        assert_eq!(s.matches("<polyline").count(), 2);
        assert!(s.contains(">3</text>"), "{s}");
        // Step 2 of 3: two thirds of the way from the left edge (44) to the right (412).
        assert_eq!(super::marker(&series, 2), "M289 4V102");
        // Each line's variant is named under the plot, in the line's colour.
        assert!(
            s.contains(r##"text-anchor="start" fill="#4c7bd9" font-size="11">━ a</text>"##),
            "{s}"
        );
        assert!(
            s.contains(r##"text-anchor="end" fill="#e8590c" font-size="11">━ b</text>"##),
            "{s}"
        );
    }
}

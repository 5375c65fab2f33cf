//! A report as the playground's kernel lane shows it: each field a cell with both sides'
//! values and its verdict, read from a report whose rows were checked against its sides.

use super::{Report, Side, Verdict, PAGE_FIELDS, SHOWN, SKB_FIELDS};
use crate::Error;

/// What the lane shows of a report ([`Report::parse`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelReport {
    /// The running kernel's release (`uname -r`).
    pub kernel: String,
    /// The scenario's mechanism (`sendmsg`, `rx`, `mptcp`, ...).
    pub mechanism: String,
    /// The model's variant set beside it (`modern`, `abeni-2020`).
    pub variant: String,
    /// The scenario as the runner was given it (TOML or JSON).
    pub scenario: String,
    pub verdict: Verdict,
    /// The judged totals: the size goals (the kernel's `tcp:tcp_sendmsg_locked` ones, each
    /// against the model's), or a frag cache's fragments, pages, reuses and frees.
    pub totals: Vec<Cell>,
    /// The kernel's skbs, oldest first; one the model has and the kernel lacks is here too,
    /// with no kernel values.
    pub skbs: Vec<Vec<Cell>>,
    /// The frag cache's pages in the order it took them ([`PAGE_FIELDS`] each), the same
    /// way.
    pub pages: Vec<Vec<Cell>>,
    /// Scenario ops the kernel run left out.
    pub not_driven: Vec<String>,
    /// The step the kernel's side stands beside: the scenario's first `driven` ops ran on
    /// the kernel.
    pub driven: usize,
}

/// One field of one skb or page on both sides.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cell {
    /// `len`, `linear`, `nr_frags`, `truesize`, `data_seq`, ... or `order`, `freed`, ...
    pub field: String,
    pub kernel: Option<u64>,
    pub model: Option<u64>,
    /// Whether the sides agree, or `None` for a field shown without judging (truesize:
    /// docs/kernel-oracle.md says why).
    pub verdict: Option<Verdict>,
}

impl KernelReport {
    /// Reads a report ([`Report::parse`], which refuses one whose rows or verdict its
    /// values deny) into the lane's cells.
    pub fn parse(text: &str) -> Result<KernelReport, Error> {
        Ok(KernelReport::new(Report::parse(text)?))
    }

    /// A report read ([`Report::parse`]) as the lane's cells.
    pub fn new(r: Report) -> KernelReport {
        let totals = (r.rows.iter())
            .filter(|row| !row.field.contains('[') && row.field != "skbs")
            .map(|row| cell(&row.field, row.kernel, row.model, Some(row.verdict)))
            .collect();
        KernelReport {
            totals,
            skbs: skbs(&r.model, &r.kernel_side),
            pages: pages(&r.model, &r.kernel_side),
            kernel: r.kernel,
            mechanism: r.mechanism,
            variant: r.variant,
            scenario: r.scenario,
            verdict: r.verdict,
            not_driven: r.not_driven,
            driven: r.driven,
        }
    }

    /// The lane's skb columns: every field some skb has, in the runner's order (one pass).
    pub fn columns(&self) -> Vec<&'static str> {
        let mut seen = [false; SKB_FIELDS.len()];
        for c in self.skbs.iter().flatten() {
            if let Some(i) = SKB_FIELDS.iter().position(|(f, _)| *f == c.field) {
                seen[i] = true;
            }
        }
        (SKB_FIELDS.into_iter().zip(seen))
            .filter_map(|((f, _), seen)| seen.then_some(f))
            .collect()
    }
}

/// Each skb's fields either side has, judged as [`super::compare`] judges them.
fn skbs(model: &Side, kernel: &Side) -> Vec<Vec<Cell>> {
    side_by_side(&model.skbs, &kernel.skbs, |m, k| {
        (SKB_FIELDS.iter())
            .filter_map(|&(field, get)| {
                let (kv, mv) = (k.and_then(get), m.and_then(get));
                let judged = (field != SHOWN).then_some(Verdict::from(kv == mv));
                (kv.is_some() || mv.is_some()).then(|| cell(field, kv, mv, judged))
            })
            .collect()
    })
}

/// Each page's fields on both sides.
fn pages(model: &Side, kernel: &Side) -> Vec<Vec<Cell>> {
    side_by_side(model.pages(), kernel.pages(), |m, k| {
        (PAGE_FIELDS.iter())
            .map(|&(field, get)| {
                let (kv, mv) = (k.map(get), m.map(get));
                cell(field, kv, mv, Some(Verdict::from(kv == mv)))
            })
            .collect()
    })
}

/// The `i`th of each side's items, as many as the longer side has, as `cells(model,
/// kernel)`.
fn side_by_side<T>(
    model: &[T],
    kernel: &[T],
    cells: impl Fn(Option<&T>, Option<&T>) -> Vec<Cell>,
) -> Vec<Vec<Cell>> {
    (0..kernel.len().max(model.len()))
        .map(|i| cells(model.get(i), kernel.get(i)))
        .collect()
}

pub(super) fn cell(
    field: &str,
    kernel: Option<u64>,
    model: Option<u64>,
    verdict: Option<Verdict>,
) -> Cell {
    Cell {
        field: field.to_string(),
        kernel,
        model,
        verdict,
    }
}

//! The `skblab kernel` report: the running kernel's own skbs beside the model's, field by
//! field, each with a verdict. [`Report`] is the format, written by the runner
//! (`native-runner/src/kernel/`, `--out` and `--json`) and read back here by the same types;
//! [`KernelReport`] is what the playground's lane shows of it. A report is a file a stranger
//! may hand over: reading it refuses, with the field named, anything the runner would not
//! write ([`Report::parse`]).

use crate::field_path::{self, Path};
use crate::limits::{check_range, MAX_REPORT_SKBS};
use crate::scenario::Scenario;
use crate::Error;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};
use std::fmt;

mod lane;
mod model;
mod pages;
pub use lane::{Cell, KernelReport};
pub use pages::{FragCache, PageView, PAGE_FIELDS};

/// At most this much report text: a report takes about 500 bytes an skb (both sides and its
/// rows, pretty-printed), so some 8,000 skbs; the kernel tests' largest run (three 1 MiB
/// writes) has about 50.
pub const MAX_REPORT_TEXT: usize = 4 << 20;

/// What one `skblab kernel` run found, and the scenario it ran.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// The scenario's mechanism (`sendmsg`, `rx`, `mptcp`).
    pub mechanism: String,
    /// The model's variant set beside the kernel (`modern`, `abeni-2020`).
    pub variant: String,
    /// The running kernel's release (uname -r).
    pub kernel: String,
    /// How the kernel's side was set up (mechanism-specific facts).
    pub setup: Map<String, Value>,
    pub model: Side,
    pub kernel_side: Side,
    /// The sides judged field by field ([`compare`]): a reader recomputes them.
    pub rows: Vec<Row>,
    /// Whether every row agrees ([`Verdict::of`]).
    pub verdict: Verdict,
    /// Scenario ops the kernel run left out.
    pub not_driven: Vec<String>,
    /// The scenario as given (TOML or JSON), so the report alone opens in the playground
    /// beside the model.
    pub scenario: String,
    /// The scenario's first `driven` ops ran on the kernel (the rest are `not_driven`): the
    /// skbs compared are the state after them.
    pub driven: usize,
    /// Numbers shown beside each other but not judged, each with the reason.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub shown: Map<String, Value>,
}

/// What one side built: its size goal(s) and its skbs, oldest first; or, in a report of a
/// frag cache (seed 001), the cache's pages and no skbs.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Side {
    /// Every size_goal the side used, in order of first use (the model has one).
    pub size_goals: Vec<u64>,
    pub skbs: Vec<SkbView>,
    /// The frag cache's pages: a side that has them is judged by its pages, then by the
    /// skbs it read (TCP through tun's NAPI frags path).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frag_cache: Option<FragCache>,
}

/// One skb as a side describes it; a field neither side has is not judged. `truesize` is
/// shown, never judged: the model's head is sized for a kernel config other than the
/// machine's (docs/kernel-oracle.md). A field is left out when the side has none, never
/// written as null, so a report read back shows no "–" beside a verdict.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SkbView {
    /// skb->len.
    pub len: u64,
    /// skb_headlen(skb) = len - data_len.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "some"
    )]
    pub linear: Option<u64>,
    /// skb_shinfo(skb)->nr_frags.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "some"
    )]
    pub nr_frags: Option<u64>,
    /// skb->truesize.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "some"
    )]
    pub truesize: Option<u64>,
    /// The MPTCP DSS mapping: data_seq and subflow_seq from the side's first mapping.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "some"
    )]
    pub data_seq: Option<u64>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "some"
    )]
    pub subflow_seq: Option<u64>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "some"
    )]
    pub data_len: Option<u64>,
    /// The CPU that allocated the skb (skb->alloc_cpu; the model's skb CPU).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "some"
    )]
    pub alloc_cpu: Option<u64>,
    /// The CPU that freed the consumed skb (or whose defer list holds it: see rx).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "some"
    )]
    pub free_cpu: Option<u64>,
    /// Which of the reader's copying `recvmsg` calls began the skb, from 0 (rx through tun's
    /// NAPI frags path).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "some"
    )]
    pub recvmsg: Option<u64>,
    /// skbs merged into it on the receive queue and freed at arrival (`tcp_try_coalesce`,
    /// then `kfree_skb_partial` in the softirq on the writer's CPU, 0).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "some"
    )]
    pub merged: Option<u64>,
}

/// A field that is there holds a number: null is how a field is not written.
fn some<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    u64::deserialize(d).map(Some)
}

/// Reads one field of an skb.
pub(crate) type Field = fn(&SkbView) -> Option<u64>;

/// Every field of an skb, in the order [`SkbView`] is written: the lane's columns.
pub(crate) const SKB_FIELDS: [(&str, Field); 11] = [
    ("len", |s| Some(s.len)),
    ("linear", |s| s.linear),
    ("nr_frags", |s| s.nr_frags),
    ("truesize", |s| s.truesize),
    ("data_seq", |s| s.data_seq),
    ("subflow_seq", |s| s.subflow_seq),
    ("data_len", |s| s.data_len),
    ("alloc_cpu", |s| s.alloc_cpu),
    ("free_cpu", |s| s.free_cpu),
    ("recvmsg", |s| s.recvmsg),
    ("merged", |s| s.merged),
];

/// The field shown beside the other side's but never judged (see [`SkbView`]).
pub(crate) const SHOWN: &str = "truesize";

/// The judged fields of an skb, in the order the table shows them.
pub fn judged() -> impl Iterator<Item = (&'static str, Field)> {
    SKB_FIELDS.into_iter().filter(|(name, _)| *name != SHOWN)
}

/// One judged field.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Row {
    /// `size_goal`, `skbs`, or `skb[i].len` / `.linear` / `.nr_frags` ...
    pub field: String,
    pub model: Option<u64>,
    pub kernel: Option<u64>,
    /// Written `"agree": true` or `false`, as reports always have been.
    #[serde(rename = "agree", with = "agree")]
    pub verdict: Verdict,
}

impl Row {
    pub(crate) fn new(field: String, model: Option<u64>, kernel: Option<u64>) -> Row {
        Row {
            field,
            verdict: Verdict::from(model == kernel),
            model,
            kernel,
        }
    }
}

/// A row's verdict as the report writes it: whether the row agrees.
mod agree {
    use super::Verdict;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &Verdict, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bool(*v == Verdict::Agree)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Verdict, D::Error> {
        bool::deserialize(d).map(Verdict::from)
    }
}

/// Sets the two sides beside each other. A report of a frag cache judges its pages
/// ([`page_rows`]), then its skbs if either side read any (TCP through tun's NAPI frags
/// path); any other, every size goal the kernel used against the model's, the number of
/// skbs, then each skb's judged fields (a missing skb is a disagreement in every field).
pub fn compare(model: &Side, kernel: &Side) -> Vec<Row> {
    let pages = model.frag_cache.is_some() || kernel.frag_cache.is_some();
    let mut rows = if pages {
        page_rows(model.frag_cache.as_ref(), kernel.frag_cache.as_ref())
    } else {
        goal_rows(model, kernel)
    };
    if pages && model.skbs.is_empty() && kernel.skbs.is_empty() {
        return rows;
    }
    rows.push(Row::new(
        "skbs".into(),
        Some(model.skbs.len() as u64),
        Some(kernel.skbs.len() as u64),
    ));
    for i in 0..model.skbs.len().max(kernel.skbs.len()) {
        let (m, k) = (model.skbs.get(i), kernel.skbs.get(i));
        for (name, get) in judged() {
            let (mv, kv) = (m.and_then(get), k.and_then(get));
            if mv.is_some() || kv.is_some() {
                rows.push(Row::new(format!("skb[{i}].{name}"), mv, kv));
            }
        }
    }
    rows
}

/// Every size goal the kernel used against the model's one (the model's alone when the
/// kernel has none).
fn goal_rows(model: &Side, kernel: &Side) -> Vec<Row> {
    let goal = model.size_goals.first().copied();
    if kernel.size_goals.is_empty() {
        return (goal
            .map(|g| Row::new("size_goal".into(), Some(g), None))
            .into_iter())
        .collect();
    }
    (kernel.size_goals.iter())
        .map(|&k| Row::new("size_goal".into(), goal, Some(k)))
        .collect()
}

/// Both sides' pages as judged rows: the totals, then each page's fields (a page one side
/// lacks differs in every field).
fn page_rows(model: Option<&FragCache>, kernel: Option<&FragCache>) -> Vec<Row> {
    let mut rows: Vec<Row> = (pages::TOTALS.iter())
        .map(|(name, get)| Row::new(name.to_string(), model.map(get), kernel.map(get)))
        .collect();
    let (model, kernel) = (pages::pages(model), pages::pages(kernel));
    for i in 0..model.len().max(kernel.len()) {
        let (m, k) = (model.get(i), kernel.get(i));
        for (name, get) in PAGE_FIELDS {
            rows.push(Row::new(
                format!("page[{i}].{name}"),
                m.map(get),
                k.map(get),
            ));
        }
    }
    rows
}

/// A report's verdict: the runner writes a report only of a trace it trusts (an untrusted
/// one is an error, "inconclusive", and no report).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// Every row agrees.
    Agree,
    /// Some row differs.
    Differ,
}

impl Verdict {
    /// Agree when every row agrees, else differ.
    pub fn of<'a>(rows: impl IntoIterator<Item = &'a Row>) -> Verdict {
        Verdict::from(rows.into_iter().all(|r| r.verdict == Verdict::Agree))
    }

    /// The word the report writes.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Agree => "agree",
            Verdict::Differ => "differ",
        }
    }
}

/// Agree when the two sides are equal (`true`).
impl From<bool> for Verdict {
    fn from(equal: bool) -> Verdict {
        if equal {
            Verdict::Agree
        } else {
            Verdict::Differ
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Report {
    /// Reads a report; an error names the field that is missing or malformed, or the claim
    /// that does not hold of the report's own scenario.
    pub fn parse(text: &str) -> Result<Report, Error> {
        if text.len() > MAX_REPORT_TEXT {
            return Err(Error::Range {
                field: "report".into(),
                value: format!("{} bytes", text.len()),
                allowed: format!("at most {MAX_REPORT_TEXT} bytes"),
            });
        }
        let v: Value = serde_json::from_str(text.trim_start_matches('\u{feff}'))
            .map_err(|e| Error::invalid("report", format!("not a skblab kernel report: {e}")))?;
        let r: Report = field_path::from_value(&v).map_err(|e| {
            let message = e.error.to_string();
            // A missing field: the error is about its table; name the field.
            let key = (message.strip_prefix("missing field `")).and_then(|m| m.split('`').next());
            let path = Path(&e.path).to_string();
            let field = (["report", &path, key.unwrap_or_default()].into_iter())
                .filter(|s| !s.is_empty())
                .collect::<Vec<_>>()
                .join(".");
            let unknown = (message.strip_prefix("unknown field `"))
                .and_then(|m| m.split_once("`, expected one of "));
            let message = match unknown {
                Some((_, known)) => format!(
                    "not a field the runner writes (it writes {})",
                    known.replace('`', "")
                ),
                None => format!("{message}: is this a `skblab kernel --out` report?"),
            };
            Error::invalid(field, message)
        })?;
        // The release is shown in the page's title and the terminal: plain text only.
        crate::limits::plain("report.kernel", &r.kernel, &[])?;
        for (name, side) in [("model", &r.model), ("kernel_side", &r.kernel_side)] {
            side.check(name)?;
        }
        check_scenario(&r.mechanism, &r.scenario, r.driven as u64)?;
        r.check_rows()?;
        Ok(r)
    }

    /// Every row is the one the sides give ([`compare`]: its field, both values, its
    /// verdict), and the report's verdict is the rows': a report cannot show a verdict its
    /// values deny.
    fn check_rows(&self) -> Result<(), Error> {
        let want = compare(&self.model, &self.kernel_side);
        for (i, (got, want)) in self.rows.iter().zip(&want).enumerate() {
            let field = |f: &str| format!("report.rows[{i}].{f}");
            if got.field != want.field {
                return Err(Error::invalid(
                    field("field"),
                    format!("`{}`, where the sides give `{}`", got.field, want.field),
                ));
            }
            let sides = [
                ("model", "model", got.model, want.model),
                ("kernel", "kernel_side", got.kernel, want.kernel),
            ];
            for (name, side, g, w) in sides {
                if g != w {
                    return Err(Error::invalid(
                        field(name),
                        format!(
                            "`{}` is {}, but `report.{side}` gives {}",
                            got.field,
                            shown(g),
                            shown(w)
                        ),
                    ));
                }
            }
            if got.verdict != want.verdict {
                return Err(Error::invalid(
                    field("agree"),
                    format!(
                        "`{}` says {}, but its values are model {} and kernel {}",
                        got.field,
                        got.verdict,
                        shown(want.model),
                        shown(want.kernel)
                    ),
                ));
            }
        }
        if self.rows.len() != want.len() {
            let first = want.get(self.rows.len()).or(self.rows.get(want.len()));
            return Err(Error::invalid(
                "report.rows",
                format!(
                    "{} rows, but the sides give {} (first apart: `{}`)",
                    self.rows.len(),
                    want.len(),
                    first.map_or("", |r| r.field.as_str())
                ),
            ));
        }
        let verdict = Verdict::of(&want);
        if self.verdict != verdict {
            let differ = want.iter().filter(|r| r.verdict == Verdict::Differ).count();
            return Err(Error::invalid(
                "report.verdict",
                format!(
                    "`{}`, but {differ} of its {} rows differ: `{verdict}`",
                    self.verdict,
                    want.len()
                ),
            ));
        }
        Ok(())
    }
}

/// A value as a row error shows it.
fn shown(v: Option<u64>) -> String {
    v.map_or("none".into(), |v| v.to_string())
}

impl Side {
    /// The frag cache's pages, or none.
    pub fn pages(&self) -> &[PageView] {
        pages::pages(self.frag_cache.as_ref())
    }

    /// A side the runner could have written: at most [`MAX_REPORT_SKBS`] skbs or pages, and
    /// a frag cache's side has no skbs or size goals (they would be shown, never judged).
    fn check(&self, name: &str) -> Result<(), Error> {
        for (what, n) in [
            ("skbs", self.skbs.len()),
            ("frag_cache.pages", self.pages().len()),
        ] {
            if n > MAX_REPORT_SKBS {
                return Err(Error::Range {
                    field: format!("report.{name}.{what}"),
                    value: format!("{n} {}", what.rsplit('.').next().unwrap_or(what)),
                    allowed: format!(
                        "at most {MAX_REPORT_SKBS} (the most a report the runner writes holds)"
                    ),
                });
            }
        }
        if self.frag_cache.is_some() && !self.size_goals.is_empty() {
            return Err(Error::invalid(
                format!("report.{name}.frag_cache"),
                "a side with a frag cache is judged by its pages and the skbs it read: its \
                 size_goals are empty",
            ));
        }
        Ok(())
    }
}

/// What the report claims against its own scenario: the scenario reads, its mechanism is
/// the report's, and the kernel ran no more of its ops than it has.
fn check_scenario(mechanism: &str, scenario: &str, driven: u64) -> Result<(), Error> {
    let s = Scenario::parse(scenario).map_err(|e| {
        Error::invalid(
            "report.scenario",
            format!("not a scenario skblab reads: {e}"),
        )
    })?;
    if s.mechanism() != mechanism {
        return Err(Error::invalid(
            "report.mechanism",
            format!(
                "`{mechanism}`, but the report's scenario is a `{}` scenario",
                s.mechanism()
            ),
        ));
    }
    check_range("report.driven", driven, 0, s.op_count() as u64)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::lane::cell;
    use super::*;
    use crate::Trace;

    const REPORT: &str = r#"{
      "mechanism": "sendmsg", "variant": "modern", "kernel": "6.18.44",
      "scenario": "mechanism = \"sendmsg\"\n[[ops]]\nop = \"sendmsg\"\nbytes = 76800\n[[ops]]\nop = \"transmit\"\n",
      "setup": {},
      "model": { "size_goals": [65160], "skbs": [
        { "len": 65160, "linear": 0, "nr_frags": 2, "truesize": 66056 },
        { "len": 11640, "linear": 0, "nr_frags": 2, "truesize": 12536 } ] },
      "kernel_side": { "size_goals": [65160], "skbs": [
        { "len": 65160, "linear": 0, "nr_frags": 2, "truesize": 65992 },
        { "len": 11640, "linear": 0, "nr_frags": 3, "truesize": 12472 } ] },
      "rows": [
        { "field": "size_goal", "model": 65160, "kernel": 65160, "agree": true },
        { "field": "skbs", "model": 2, "kernel": 2, "agree": true },
        { "field": "skb[0].len", "model": 65160, "kernel": 65160, "agree": true },
        { "field": "skb[0].linear", "model": 0, "kernel": 0, "agree": true },
        { "field": "skb[0].nr_frags", "model": 2, "kernel": 2, "agree": true },
        { "field": "skb[1].len", "model": 11640, "kernel": 11640, "agree": true },
        { "field": "skb[1].linear", "model": 0, "kernel": 0, "agree": true },
        { "field": "skb[1].nr_frags", "model": 2, "kernel": 3, "agree": false } ],
      "verdict": "differ", "not_driven": ["ops[1] (transmit)"], "driven": 1 }"#;

    /// Each field's cell carries both sides and the runner's row, where it judged one.
    #[test]
    fn a_report_reads_into_cells() {
        let r = KernelReport::parse(REPORT).unwrap();
        assert_eq!(
            (r.kernel.as_str(), r.variant.as_str()),
            ("6.18.44", "modern")
        );
        assert_eq!(r.verdict, Verdict::Differ);
        assert_eq!(
            (r.not_driven.as_slice(), r.driven),
            (&["ops[1] (transmit)".to_string()][..], 1)
        );
        assert_eq!(
            r.totals,
            [cell(
                "size_goal",
                Some(65160),
                Some(65160),
                Some(Verdict::Agree)
            )]
        );
        assert_eq!(r.skbs.len(), 2);
        assert_eq!(
            r.skbs[0][0],
            cell("len", Some(65160), Some(65160), Some(Verdict::Agree))
        );
        assert_eq!(
            r.skbs[0][3],
            cell("truesize", Some(65992), Some(66056), None)
        );
        assert_eq!(
            r.skbs[1][2],
            cell("nr_frags", Some(3), Some(2), Some(Verdict::Differ))
        );
        assert_eq!(r.columns(), ["len", "linear", "nr_frags", "truesize"]);
        let mptcp = REPORT.replace("\"truesize\": 12536", "\"data_seq\": 0");
        let r = KernelReport::parse(&judged_again(serde_json::from_str(&mptcp).unwrap())).unwrap();
        assert_eq!(
            r.columns(),
            ["len", "linear", "nr_frags", "truesize", "data_seq"]
        );
    }

    #[test]
    fn a_broken_report_names_the_field() {
        let cases = [
            ("{", "report"),
            ("[]", "report"),
            (&REPORT.replace("\"kernel_side\"", "\"kside\""), "report.kernel_side"),
            (&REPORT.replace("\"agree\": false", "\"agree\": 0"), "report.rows[7].agree"),
            (
                &REPORT.replace("[65160], \"skbs\": [\n        { \"len\": 65160, \"linear\": 0, \"nr_frags\": 2, \"truesize\": 65992", "[65160], \"skbz\": [\n        { \"len\": 65160, \"linear\": 0, \"nr_frags\": 2, \"truesize\": 65992"),
                "report.kernel_side.skbz",
            ),
            // A bidi override in the release would reorder the page's title.
            (&REPORT.replace("6.18.44", "6.18.44\\u202e"), "report.kernel"),
        ];
        for (text, field) in cases {
            let e = KernelReport::parse(text).unwrap_err().to_string();
            assert!(e.contains(&format!("`{field}`")), "{field}: {e}");
        }
        let big = " ".repeat(MAX_REPORT_TEXT + 1);
        let e = KernelReport::parse(&big).unwrap_err().to_string();
        assert!(e.contains("report") && e.contains("at most 4194304"), "{e}");
    }
    /// A field the runner never writes is refused by name and skb, so 1,000 skbs of a name
    /// each cannot make a table of every name by every skb.
    #[test]
    fn only_the_runners_fields_are_read() {
        let e = KernelReport::parse(&REPORT.replace("\"truesize\": 12472", "\"x\": 1"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("`report.kernel_side.skbs[1].x`"), "{e}");
        assert!(e.contains("len, linear, nr_frags"), "{e}");
        let r = KernelReport::parse(&hostile(1000, |i| format!("f{i}"))).unwrap_err();
        assert!(
            r.to_string().contains("`report.kernel_side.skbs[0].f0`"),
            "{r}"
        );
    }

    /// A report with the kernel's side at `n` skbs, the `i`th of one field named `name(i)`.
    fn hostile(n: usize, name: impl Fn(usize) -> String) -> String {
        let skbs: Vec<String> = (0..n)
            .map(|i| format!("{{\"{}\": 65160}}", name(i)))
            .collect();
        let mut v: Value = serde_json::from_str(REPORT).unwrap();
        v["kernel_side"]["skbs"] = serde_json::from_str(&format!("[{}]", skbs.join(","))).unwrap();
        match serde_json::from_value(v.clone()) {
            Ok(r) => judged_again(r),
            Err(_) => v.to_string(),
        }
    }

    /// A report's text with its rows and verdict made again from its sides.
    fn judged_again(mut r: Report) -> String {
        r.rows = compare(&r.model, &r.kernel_side);
        r.verdict = Verdict::of(&r.rows);
        serde_json::to_string(&r).unwrap()
    }

    /// More skbs than a runner's report holds are refused, naming the cap; a report the
    /// runner writes at its least text per skb (a one-field skb on one side and its `len`
    /// row) reaches the text cap before the skb cap.
    #[test]
    fn the_skbs_are_capped() {
        let e = KernelReport::parse(&hostile(MAX_REPORT_SKBS + 1, |_| "len".into()))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("`report.kernel_side.skbs`") && e.contains("at most 32000"),
            "{e}"
        );
        assert!(KernelReport::parse(&hostile(MAX_REPORT_SKBS, |_| "len".into())).is_ok());
        let least = |n: usize| {
            let skb = serde_json::json!({ "len": 0 });
            let row = serde_json::json!({ "field": "skb[0].len", "model": 0, "kernel": null, "agree": false });
            let v = serde_json::json!({ "model": { "skbs": vec![skb; n] }, "rows": vec![row; n] });
            serde_json::to_string_pretty(&v).unwrap().len()
        };
        let per_skb = least(2) - least(1);
        assert_eq!(per_skb, 137);
        assert!(
            MAX_REPORT_TEXT / per_skb <= MAX_REPORT_SKBS,
            "{per_skb} bytes an skb"
        );
    }

    /// A value the runner would write as an integer and this one is not is refused: it would
    /// show "–" under the runner's green verdict.
    #[test]
    fn values_are_non_negative_integers() {
        for bad in ["-1", "1.5", "null", "\"3\""] {
            let text = REPORT.replace("\"nr_frags\": 3", &format!("\"nr_frags\": {bad}"));
            let e = KernelReport::parse(&text).unwrap_err().to_string();
            assert!(
                e.contains("`report.kernel_side.skbs[1].nr_frags`"),
                "{bad}: {e}"
            );
        }
    }

    /// The report's claims are checked against its own scenario: its mechanism, and how
    /// many of the scenario's ops ran.
    #[test]
    fn the_report_agrees_with_its_scenario() {
        let rx = "mechanism = \\\"rx\\\"\\n[[ops]]\\nop = \\\"arrive\\\"\\nframes = 1\\n";
        let start = REPORT.find("\"scenario\": \"").unwrap() + 13;
        let end = start + REPORT[start..].find("\",\n").unwrap();
        let text = format!("{}{rx}{}", &REPORT[..start], &REPORT[end..]);
        let e = KernelReport::parse(&text).unwrap_err().to_string();
        assert!(
            e.contains("`report.mechanism`") && e.contains("`rx` scenario"),
            "{e}"
        );
        for (driven, ok) in [(2, true), (3, false), (999_999, false)] {
            let text = REPORT.replace("\"driven\": 1", &format!("\"driven\": {driven}"));
            let r = KernelReport::parse(&text);
            assert_eq!(r.is_ok(), ok, "driven = {driven}: {r:?}");
        }
        let e = KernelReport::parse(&REPORT.replace("\"driven\": 1", "\"driven\": 3"));
        assert!(e.unwrap_err().to_string().contains("`report.driven`"));
        let e = KernelReport::parse(&REPORT.replace("\"transmit\\\"", "\"teleport\\\""));
        assert!(e.unwrap_err().to_string().contains("`report.scenario`"));
    }

    fn skb(len: u64, nr_frags: u64) -> SkbView {
        SkbView {
            len,
            linear: Some(0),
            nr_frags: Some(nr_frags),
            truesize: Some(0),
            ..SkbView::default()
        }
    }

    fn side(goals: &[u64], skbs: &[SkbView]) -> Side {
        Side {
            size_goals: goals.to_vec(),
            skbs: skbs.to_vec(),
            frag_cache: None,
        }
    }

    /// A report written (as the runner writes it: pretty JSON) reads back as itself, every
    /// skb field in [`SKB_FIELDS`]' order; the runner's own writer is pinned against this
    /// reader in native-runner/src/kernel/mod.rs.
    #[test]
    fn a_written_report_reads_back_as_itself() {
        let all = SkbView {
            len: 1,
            linear: Some(2),
            nr_frags: Some(3),
            truesize: Some(4),
            data_seq: Some(5),
            subflow_seq: Some(6),
            data_len: Some(7),
            alloc_cpu: Some(8),
            free_cpu: Some(9),
            recvmsg: Some(10),
            merged: Some(11),
        };
        let keys: Vec<String> = match serde_json::to_value(all).unwrap() {
            Value::Object(m) => m.keys().cloned().collect(),
            v => panic!("{v}"),
        };
        assert_eq!(keys, SKB_FIELDS.map(|(f, _)| f));
        let (model, kernel_side) = (side(&[65160], &[all, skb(1, 1)]), side(&[], &[all]));
        let rows = compare(&model, &kernel_side);
        let mut r: Report = serde_json::from_str(REPORT).unwrap();
        (r.model, r.kernel_side, r.verdict) = (model, kernel_side, Verdict::of(&rows));
        r.rows = rows;
        r.shown.insert("model_pages".into(), Value::from(3));
        let text = serde_json::to_string_pretty(&r).unwrap();
        assert_eq!(Report::parse(&text).unwrap(), r);
        let lane = KernelReport::parse(&text).unwrap();
        assert_eq!(lane.skbs[0].len(), 11);
        assert_eq!(
            lane.skbs[1][1],
            cell("linear", None, Some(0), Some(Verdict::Differ))
        );
    }

    #[test]
    fn equal_sides_agree_and_truesize_is_not_judged() {
        let m = side(&[65160], &[skb(65160, 2), skb(100, 1)]);
        let mut k = m.clone();
        k.skbs[0].truesize = Some(12345);
        let rows = compare(&m, &k);
        // size_goal, skbs, then three fields for each of the two skbs.
        assert_eq!(rows.len(), 2 + 2 * 3);
        assert_eq!(Verdict::of(&rows), Verdict::Agree);
    }

    fn differing(rows: Vec<Row>) -> Vec<String> {
        rows.into_iter()
            .filter(|r| r.verdict == Verdict::Differ)
            .map(|r| r.field)
            .collect()
    }

    #[test]
    fn one_field_off_differs_and_names_the_field() {
        let m = side(&[65160], &[skb(65160, 2)]);
        let k = side(&[65160], &[skb(65160, 3)]);
        assert_eq!(Verdict::of(&compare(&m, &k)), Verdict::Differ);
        assert_eq!(differing(compare(&m, &k)), ["skb[0].nr_frags"]);
    }

    #[test]
    fn a_missing_skb_differs_in_count_and_every_field() {
        let m = side(&[65160], &[skb(1, 1)]);
        let k = side(&[65160], &[skb(1, 1), skb(1, 1)]);
        assert_eq!(
            differing(compare(&m, &k)),
            ["skbs", "skb[1].len", "skb[1].linear", "skb[1].nr_frags"]
        );
    }

    #[test]
    fn every_kernel_size_goal_is_judged() {
        let m = side(&[65160], &[]);
        let k = side(&[65160, 31856], &[]);
        let rows = compare(&m, &k);
        assert_eq!(rows.iter().filter(|r| r.field == "size_goal").count(), 2);
        assert_eq!(Verdict::of(&rows), Verdict::Differ);
        assert_eq!(Verdict::of(&compare(&m, &side(&[], &[]))), Verdict::Differ);
    }

    #[test]
    fn only_the_fields_a_side_has_are_judged() {
        let map = |seq: u64, len: u64| SkbView {
            len,
            data_seq: Some(seq),
            subflow_seq: Some(seq),
            data_len: Some(len),
            ..SkbView::default()
        };
        let m = side(&[], &[map(0, 65459), map(65459, 154)]);
        let rows = compare(&m, &m.clone());
        // No size goal on either side; skbs; four fields each.
        assert_eq!(rows.len(), 1 + 2 * 4);
        assert_eq!(Verdict::of(&rows), Verdict::Agree);
        let k = side(&[], &[map(0, 65459), map(65459, 155)]);
        assert_eq!(
            differing(compare(&m, &k)),
            ["skb[1].len", "skb[1].data_len"]
        );
    }

    /// Seed 001's report as the runner writes it: both sides a frag cache of one page.
    fn page_report() -> Report {
        let cache = FragCache {
            fragments: 100,
            reuses: 4,
            pages: vec![PageView {
                order: 3,
                cpu: 0,
                fragments: 100,
                freed: false,
            }],
        };
        let side = Side {
            frag_cache: Some(cache),
            ..Side::default()
        };
        let mut r: Report = serde_json::from_str(REPORT).unwrap();
        (r.mechanism, r.variant, r.driven) = ("rx".into(), "modern".into(), 2);
        r.scenario = include_str!("../../scenarios/rx-napi-frags-prompt.toml").into();
        (r.model, r.kernel_side) = (side.clone(), side);
        r
    }

    /// A page report judges its pages: four totals, then each page's four fields, and the
    /// lane draws them as pages.
    #[test]
    fn a_page_report_is_judged_by_its_pages() {
        let r = page_report();
        let rows = compare(&r.model, &r.kernel_side);
        let fields: Vec<&str> = rows.iter().map(|r| r.field.as_str()).collect();
        assert_eq!(
            fields,
            [
                "fragments",
                "frag_cache_pages",
                "page_reuses",
                "page_frees",
                "page[0].order",
                "page[0].cpu",
                "page[0].fragments",
                "page[0].freed"
            ]
        );
        let text = judged_again(r.clone());
        assert_eq!(Report::parse(&text).unwrap().verdict, Verdict::Agree);
        let lane = KernelReport::parse(&text).unwrap();
        assert_eq!((lane.skbs.len(), lane.pages.len()), (0, 1));
        assert_eq!(
            lane.pages[0][2],
            cell("fragments", Some(100), Some(100), Some(Verdict::Agree))
        );
        assert_eq!(lane.totals.len(), 4);
        // A page the kernel freed and the model did not differs in that field.
        let mut k = r;
        k.kernel_side.frag_cache.as_mut().unwrap().pages[0].freed = true;
        let lane = KernelReport::parse(&judged_again(k.clone())).unwrap();
        assert_eq!(
            (lane.verdict, lane.pages[0][3].verdict),
            (Verdict::Differ, Some(Verdict::Differ))
        );
        // The skbs read beside the pages (TCP through tun's NAPI frags path) are judged after
        // them: one the model did not read differs.
        k.kernel_side.skbs.push(SkbView::default());
        let rows = compare(&k.model, &k.kernel_side);
        let skbs = rows.iter().find(|r| r.field == "skbs").unwrap();
        assert_eq!(
            (skbs.model, skbs.kernel, skbs.verdict),
            (Some(0), Some(1), Verdict::Differ)
        );
        assert_eq!(rows.last().unwrap().field, "skb[0].len");
        // A page side has no size goal: it would be drawn and never judged.
        k.kernel_side.size_goals.push(1);
        let e = Report::parse(&judged_again(k)).unwrap_err().to_string();
        assert!(e.contains("`report.kernel_side.frag_cache`"), "{e}");
    }

    /// A forged report of each kind is refused, naming the row and the field: an overall
    /// verdict its rows deny, a row's verdict its values deny, a row's value its side denies,
    /// a row missing, a verdict that is not one, and page rows that differ under "agree".
    #[test]
    fn forged_reports_are_refused() {
        let refused = |text: &str, field: &str| {
            let e = Report::parse(text).unwrap_err().to_string();
            assert!(e.contains(&format!("`{field}`")), "{field}: {e}");
            e
        };
        let e = refused(
            &REPORT.replace("\"verdict\": \"differ\"", "\"verdict\": \"agree\""),
            "report.verdict",
        );
        assert!(e.contains("1 of its 8 rows differ"), "{e}");
        let e = refused(
            &REPORT.replace("\"agree\": false", "\"agree\": true"),
            "report.rows[7].agree",
        );
        assert!(
            e.contains("skb[1].nr_frags") && e.contains("kernel 3"),
            "{e}"
        );
        // The kernel's size goal 1 against the model's 65,160, drawn green before.
        let small = REPORT.replacen(
            "\"kernel_side\": { \"size_goals\": [65160]",
            "\"kernel_side\": { \"size_goals\": [1]",
            1,
        );
        refused(&small, "report.rows[0].kernel");
        let fewer = REPORT.replace(
            "{ \"field\": \"skb[0].linear\", \"model\": 0, \"kernel\": 0, \"agree\": true },",
            "",
        );
        refused(&fewer, "report.rows[3].field");
        for word in [
            "banana",
            "agree (verified by the kernel)",
            "Agree",
            "inconclusive",
        ] {
            let text = REPORT.replace("\"verdict\": \"differ\"", &format!("\"verdict\": {word:?}"));
            let e = refused(&text, "report.verdict");
            assert!(e.contains("`agree`") && e.contains("`differ`"), "{e}");
        }
        // Page rows that differ, under "agree".
        let mut r = page_report();
        r.kernel_side.frag_cache.as_mut().unwrap().pages[0].fragments = 99;
        r.rows = compare(&r.model, &r.kernel_side);
        r.verdict = Verdict::Agree;
        let e = refused(&serde_json::to_string(&r).unwrap(), "report.verdict");
        assert!(e.contains("1 of its 8 rows differ: `differ`"), "{e}");
        // ... or a page row that says agree.
        r.rows[6].verdict = Verdict::Agree;
        refused(&serde_json::to_string(&r).unwrap(), "report.rows[6].agree");
        // Page rows beside empty sides (as seed 001's reports were written before pages were
        // a side) are rows the sides do not give.
        let mut old = page_report();
        old.rows = compare(&old.model, &old.kernel_side);
        (old.model, old.kernel_side) = (Side::default(), Side::default());
        refused(
            &serde_json::to_string(&old).unwrap(),
            "report.rows[0].field",
        );
    }

    /// The model's traced run of a report's scenario in its variant.
    fn model_run(r: &Report) -> Trace {
        let opts = crate::RunOptions {
            variant: Some(r.variant.clone()),
            counters_only: false,
        };
        Scenario::parse(&r.scenario).unwrap().run(&opts).unwrap()
    }

    /// A report's model side is checked against the model: the runner's own report reads
    /// (skbs, and seed 001's pages), and one whose model side was changed, rows and verdict
    /// made to match, is refused naming the field; so is a run of another variant.
    #[test]
    fn the_model_side_is_the_models() {
        let fixture = include_str!("../../tests/fixtures/kernel-report.json");
        let mut r = Report::parse(fixture).unwrap();
        let t = model_run(&r);
        assert_eq!(r.check_model(&t), Ok(()));
        r.model.skbs[1].len += 1;
        let e = Report::parse(&judged_again(r.clone()))
            .unwrap()
            .check_model(&t);
        let e = e.unwrap_err().to_string();
        assert!(
            e.contains("`report.model`") && e.contains("`skb[1].len` is 11641"),
            "{e}"
        );
        r.model.skbs[1].len -= 1;
        r.model.skbs[1].truesize = Some(1);
        let e = r.check_model(&t).unwrap_err().to_string();
        assert!(e.contains("truesize"), "{e}");
        let mut other = t.clone();
        other.variant = "kumar-2010".into();
        assert!(r
            .check_model(&other)
            .unwrap_err()
            .to_string()
            .contains("`report.variant`"));
        let mut p = page_report();
        p.variant = "modern+defer-free".into();
        let t = model_run(&p);
        assert_eq!(p.check_model(&t), Ok(()));
        p.model.frag_cache.as_mut().unwrap().reuses = 0;
        let e = p.check_model(&t).unwrap_err().to_string();
        assert!(e.contains("`page_reuses` is 0"), "{e}");
    }
}

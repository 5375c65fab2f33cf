//! A `skblab kernel` report (its `--out` file) as the playground shows it: the running
//! kernel's own skbs beside the model's, field by field, each with the runner's verdict.
//!
//! The runner writes the report (`native-runner/src/kernel/`); this reads it back, by hand
//! from a `serde_json::Value` (a derived reader would cost the playground's bundle more than
//! the whole lane), and refuses anything else with the field named.

use crate::limits::{check_range, MAX_REPORT_SKBS};
use crate::scenario::Scenario;
use crate::Error;
use serde_json::Value;
use std::collections::BTreeMap;

/// At most this much report text: a report takes about 500 bytes an skb (both sides and its
/// rows, pretty-printed), so some 8,000 skbs; the kernel tests' largest run (three 1 MiB
/// writes) has about 50.
pub const MAX_REPORT_TEXT: usize = 4 << 20;

/// What the kernel run found, and the scenario it ran.
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
    /// `agree` or `differ`.
    pub verdict: String,
    /// The size goals (the kernel's `tcp:tcp_sendmsg_locked` ones), each against the model's.
    pub size_goals: Vec<Cell>,
    /// The kernel's skbs, oldest first; one the model has and the kernel lacks is here too,
    /// with no kernel values.
    pub skbs: Vec<Vec<Cell>>,
    /// Scenario ops the kernel run left out.
    pub not_driven: Vec<String>,
    /// The step the kernel's skbs stand beside: the scenario's first `driven` ops ran on the
    /// kernel.
    pub driven: usize,
}

/// One field of one skb on both sides.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cell {
    /// `len`, `linear`, `nr_frags`, `truesize`, `data_seq`, ...
    pub field: String,
    pub kernel: Option<u64>,
    pub model: Option<u64>,
    /// The runner's verdict: `Some(agree)`, or `None` for a field it shows without judging
    /// (truesize: docs/kernel-oracle.md says why).
    pub agree: Option<bool>,
}

impl KernelReport {
    /// Reads a report; an error names the field that is missing or malformed.
    pub fn parse(text: &str) -> Result<KernelReport, Error> {
        if text.len() > MAX_REPORT_TEXT {
            return Err(Error::Range {
                field: "report".into(),
                value: format!("{} bytes", text.len()),
                allowed: format!("at most {MAX_REPORT_TEXT} bytes"),
            });
        }
        let v: Value = serde_json::from_str(text.trim_start_matches('\u{feff}'))
            .map_err(|e| Error::invalid("report", format!("not a skblab kernel report: {e}")))?;
        let rows = verdicts(&v)?;
        let verdict = |field: &str| rows.get(field).copied();
        let (model, kernel) = (side(&v, "model")?, side(&v, "kernel_side")?);
        let goal = model.0.first().copied();
        let size_goals = (kernel.0.iter())
            .map(|&k| cell("size_goal", Some(k), goal, verdict("size_goal")))
            .collect();
        let mut skbs = Vec::new();
        for i in 0..kernel.1.len().max(model.1.len()) {
            let (k, m) = (kernel.1.get(i).copied(), model.1.get(i).copied());
            let mut cells = Vec::new();
            for field in fields(k, m) {
                let name = format!("skb[{i}].{field}");
                let (kv, mv) = (value(k, field), value(m, field));
                let agree = verdict(&name);
                if agree.is_some_and(|a| a != (kv == mv)) {
                    return Err(Error::invalid(
                        "report.rows",
                        format!(
                            "`{name}` is judged against its values (kernel {kv:?}, model {mv:?})"
                        ),
                    ));
                }
                cells.push(cell(field, kv, mv, agree));
            }
            skbs.push(cells);
        }
        let mechanism = text_at(&v, "mechanism", "")?;
        let scenario = text_at(&v, "scenario", "")?;
        let driven = (v.get("driven").and_then(Value::as_u64))
            .ok_or_else(|| missing("driven", "a number"))?;
        check_scenario(mechanism, scenario, driven)?;
        Ok(KernelReport {
            kernel: text_at(&v, "kernel", "")?.to_string(),
            variant: text_at(&v, "variant", "")?.to_string(),
            mechanism: mechanism.to_string(),
            scenario: scenario.to_string(),
            verdict: text_at(&v, "verdict", "")?.to_string(),
            size_goals,
            skbs,
            driven: driven as usize,
            not_driven: (list(&v, "not_driven")?.iter())
                .filter_map(|s| s.as_str().map(str::to_string))
                .collect(),
        })
    }

    /// The lane's columns: every field some skb has, in the runner's order (one pass).
    pub fn columns(&self) -> Vec<&'static str> {
        let mut seen = [false; SKB_FIELDS.len()];
        for c in self.skbs.iter().flatten() {
            if let Some(i) = SKB_FIELDS.iter().position(|f| *f == c.field) {
                seen[i] = true;
            }
        }
        (SKB_FIELDS.into_iter().zip(seen))
            .filter_map(|(f, seen)| seen.then_some(f))
            .collect()
    }
}

/// The runner's verdict on each field, read once (a report may hold thousands of rows);
/// a field judged more than once (one size goal per goal the kernel used) keeps its first.
fn verdicts(v: &Value) -> Result<BTreeMap<&str, bool>, Error> {
    let mut out = BTreeMap::new();
    for (i, r) in list(v, "rows")?.iter().enumerate() {
        let at = format!("rows[{i}]");
        let agree = bool_at(r, "agree", &at)?;
        out.entry(text_at(r, "field", &at)?).or_insert(agree);
    }
    Ok(out)
}

type Side<'a> = (Vec<u64>, Vec<&'a serde_json::Map<String, Value>>);

/// A side's size goals and skbs (`model` or `kernel_side`).
fn side<'a>(v: &'a Value, name: &str) -> Result<Side<'a>, Error> {
    let s = v.get(name).ok_or_else(|| missing(name, "an object"))?;
    let at = |key: &str, i: usize| format!("{name}.{key}[{i}]");
    let goals = (list_at(s, "size_goals", name)?.iter().enumerate())
        .map(|(i, g)| {
            g.as_u64()
                .ok_or_else(|| missing(&at("size_goals", i), "a number"))
        })
        .collect::<Result<_, _>>()?;
    let skbs = list_at(s, "skbs", name)?;
    if skbs.len() > MAX_REPORT_SKBS {
        return Err(Error::Range {
            field: format!("report.{name}.skbs"),
            value: format!("{} skbs", skbs.len()),
            allowed: format!(
                "at most {MAX_REPORT_SKBS} (the most a report the runner writes holds)"
            ),
        });
    }
    let skbs = (skbs.iter().enumerate())
        .map(|(i, b)| skb(b, &at("skbs", i)))
        .collect::<Result<_, _>>()?;
    Ok((goals, skbs))
}

/// The fields the runner writes of an skb (`SkbView` in native-runner/src/kernel/verdict.rs),
/// in its order: the lane's columns.
pub const SKB_FIELDS: [&str; 9] = [
    "len",
    "linear",
    "nr_frags",
    "truesize",
    "data_seq",
    "subflow_seq",
    "data_len",
    "alloc_cpu",
    "free_cpu",
];

/// One skb of a side, checked: every field one the runner writes, every value a
/// non-negative integer (the runner writes no other), so no cell shows "–" beside a verdict.
fn skb<'a>(b: &'a Value, at: &str) -> Result<&'a serde_json::Map<String, Value>, Error> {
    let b = b.as_object().ok_or_else(|| missing(at, "an object"))?;
    for (key, value) in b {
        if !SKB_FIELDS.contains(&key.as_str()) {
            return Err(Error::invalid(
                format!("report.{at}.{key}"),
                format!(
                    "not a field the runner writes (it writes {})",
                    SKB_FIELDS.join(", ")
                ),
            ));
        }
        if value.as_u64().is_none() {
            return Err(missing(&format!("{at}.{key}"), "a non-negative integer"));
        }
    }
    Ok(b)
}

type Skb<'a> = Option<&'a serde_json::Map<String, Value>>;

/// The fields either side has, in the order the runner writes them: one pass over the
/// (checked, so at most nine) fields of each.
fn fields(k: Skb, m: Skb) -> Vec<&'static str> {
    let has = |f: &str| [k, m].iter().flatten().any(|s| s.contains_key(f));
    SKB_FIELDS.into_iter().filter(|f| has(f)).collect()
}

fn value(s: Skb, field: &str) -> Option<u64> {
    s.and_then(|s| s.get(field)).and_then(Value::as_u64)
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

fn cell(field: &str, kernel: Option<u64>, model: Option<u64>, agree: Option<bool>) -> Cell {
    Cell {
        field: field.to_string(),
        kernel,
        model,
        agree,
    }
}

fn list<'a>(v: &'a Value, key: &str) -> Result<&'a Vec<Value>, Error> {
    list_at(v, key, "")
}

fn list_at<'a>(v: &'a Value, key: &str, at: &str) -> Result<&'a Vec<Value>, Error> {
    v.get(key)
        .and_then(Value::as_array)
        .ok_or_else(|| missing(&join(at, key), "a list"))
}

fn text_at<'a>(v: &'a Value, key: &str, at: &str) -> Result<&'a str, Error> {
    v.get(key)
        .and_then(Value::as_str)
        .ok_or_else(|| missing(&join(at, key), "a string"))
}

fn bool_at(v: &Value, key: &str, at: &str) -> Result<bool, Error> {
    v.get(key)
        .and_then(Value::as_bool)
        .ok_or_else(|| missing(&join(at, key), "true or false"))
}

fn join(at: &str, key: &str) -> String {
    if at.is_empty() {
        key.to_string()
    } else {
        format!("{at}.{key}")
    }
}

fn missing(field: &str, want: &str) -> Error {
    Error::invalid(
        format!("report.{field}"),
        format!("missing or not {want}: is this a `skblab kernel --out` report?"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(r.verdict, "differ");
        assert_eq!(
            (r.not_driven.as_slice(), r.driven),
            (&["ops[1] (transmit)".to_string()][..], 1)
        );
        assert_eq!(
            r.size_goals,
            [cell("size_goal", Some(65160), Some(65160), Some(true))]
        );
        assert_eq!(r.skbs.len(), 2);
        assert_eq!(
            r.skbs[0][0],
            cell("len", Some(65160), Some(65160), Some(true))
        );
        assert_eq!(
            r.skbs[0][3],
            cell("truesize", Some(65992), Some(66056), None)
        );
        assert_eq!(
            r.skbs[1][2],
            cell("nr_frags", Some(3), Some(2), Some(false))
        );
        assert_eq!(r.columns(), ["len", "linear", "nr_frags", "truesize"]);
        let mptcp = REPORT.replace("\"truesize\": 12536", "\"data_seq\": 0");
        let r = KernelReport::parse(&mptcp).unwrap();
        assert_eq!(
            r.columns(),
            ["len", "linear", "nr_frags", "truesize", "data_seq"]
        );
    }

    #[test]
    fn a_broken_report_names_the_field() {
        let cases = [
            ("{", "report"),
            ("[]", "report.rows"),
            (&REPORT.replace("\"kernel_side\"", "\"kside\""), "report.kernel_side"),
            (&REPORT.replace("\"agree\": false", "\"agree\": 0"), "report.rows[3].agree"),
            (
                &REPORT.replace("[65160], \"skbs\": [\n        { \"len\": 65160, \"linear\": 0, \"nr_frags\": 2, \"truesize\": 65992", "[65160], \"skbz\": [\n        { \"len\": 65160, \"linear\": 0, \"nr_frags\": 2, \"truesize\": 65992"),
                "report.kernel_side.skbs",
            ),
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
        v.to_string()
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
    /// show "–" under the runner's green verdict; so is a verdict its values contradict.
    #[test]
    fn values_are_non_negative_integers() {
        let lie = REPORT.replace("\"agree\": false", "\"agree\": true");
        let e = KernelReport::parse(&lie).unwrap_err().to_string();
        assert!(
            e.contains("`report.rows`") && e.contains("skb[1].nr_frags"),
            "{e}"
        );
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
}

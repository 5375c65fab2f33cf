//! `skblab kernel`: the model beside the running kernel. The scenario's operations run on
//! real kernel sockets inside a private network namespace, bpftrace reads the kernel's own
//! skbs at its tracepoints, and every judged field gets a verdict: agree or differ.
//!
//! **Call [`main`] first thing, before any thread starts**: like `tap`, it unshares the
//! network namespace (and a mount namespace for tracefs), which moves only the calling thread.
//!
//! One concern per module: [`run`] (the [`run::KernelRun`] trait each mechanism's run
//! implements: plan, probes, one run, the kernel's side; [`run::compare`] drives any of them
//! beside the model), [`probe`] (namespaces, tracefs, the bpftrace child), [`skipped`] (the
//! firings the kernel skipped, read from bpftrace's programs), [`peer`]
//! (the runner's TCP endpoint, `net::tcp`, as the peer on the TAP: its window closed for seed
//! 000, the model's skbs written for 001 and 002), [`send`] (seed 000: the writes, the
//! tracepoint lines, the model's queue), [`mptcp`] (seed 003: MPTCP over lo, the DSS
//! mappings), [`rx`] (seeds 002 and 001: skbs into a kernel socket on CPU 0, read on CPU 1,
//! where each is freed), [`napi_frags`] (seed 001 judged: UDP frames through a TAP's NAPI
//! frags path, the pages of CPU 0's frag cache; [`napi_probe`]: the page lines it reads),
//! [`pinned`] (threads pinned to a CPU, NET_RX raised there),
//! [`verdict`] (the comparison, testable without root).

mod mptcp;
mod napi_frags;
mod napi_probe;
mod napi_tcp;
mod napi_writer;
mod peer;
pub(crate) mod pinned;
pub(crate) mod probe;
pub(crate) mod run;
mod rx;
mod send;
pub(crate) mod skipped;
pub mod verdict;

use crate::cli::read_scenario;
use skblab_core::kernel_report::PAGE_FIELDS;
use skblab_core::{scenario, RunOptions, Scenario};
use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use verdict::{SkbView, Verdict};

#[derive(clap::Args, Debug)]
pub struct KernelArgs {
    /// A scenario (TOML or JSON) of any mechanism.
    pub scenario: PathBuf,
    #[arg(long, help = variant_help())]
    pub variant: Option<String>,
    /// Print the report as one JSON object.
    #[arg(long)]
    pub json: bool,
    /// Also write the report (JSON) to this new file (never through a symlink).
    #[arg(long, value_name = "REPORT")]
    pub out: Option<PathBuf>,
    /// Let --out replace an existing file (never a symlink).
    #[arg(long, requires = "out")]
    pub force: bool,
}

pub use skblab_core::kernel_report::Report;

/// `--variant`'s help: each mechanism's variant of today, from the core's table.
fn variant_help() -> String {
    let today: Vec<String> = (scenario::NAMES.iter())
        .map(|m| format!("`{}` for {}", m.today, m.name))
        .collect();
    format!(
        "The model's variant to set beside the kernel (default: the one that stands for a \
         kernel of today: {})",
        today.join(", ")
    )
}

/// `skblab kernel`: exit 0 when every field agrees, 1 when one differs, 2 on an error (or
/// a trace that could not be trusted: "inconclusive").
pub fn main(args: &KernelArgs) -> ExitCode {
    match run_and_emit(args) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            crate::output::error(&e);
            ExitCode::from(2)
        }
    }
}

/// Starts `--out` before anything runs (an existing file or a symlink is refused at once),
/// runs, writes and names `--out` (so a stdout that fails loses nothing; a run that fails or
/// is killed leaves no file), then prints the report. Returns whether every field agrees.
fn run_and_emit(args: &KernelArgs) -> Result<bool, String> {
    let out = match &args.out {
        Some(p) => Some((p, crate::output::Output::create(p, args.force, "--out")?)),
        None => None,
    };
    let r = run(args)?;
    let json = json(&r);
    if let Some((p, mut f)) = out {
        f.write_all(json.as_bytes())
            .map_err(|e| format!("--out {}: {e}", p.display()))?;
        f.commit()?;
    }
    crate::output::stdout(&if args.json { json } else { render(&r) })?;
    Ok(r.verdict == Verdict::Agree)
}

/// The report as `--out` and `--json` write it.
fn json(r: &Report) -> String {
    serde_json::to_string_pretty(r).expect("reports serialize") + "\n"
}

fn run(args: &KernelArgs) -> Result<Report, String> {
    let text = read_scenario(&args.scenario).map_err(|e| e.0)?;
    let sc = Scenario::parse(&text).map_err(|e| e.to_string())?;
    let ops = sc.op_count();
    let variant = variant(&sc, args.variant.as_deref())?;
    let flag = Some(variant.as_str());
    let report = match sc {
        Scenario::Sendmsg(sc) => run::compare::<send::Send>(run::ask(sc, flag)),
        Scenario::Mptcp(sc) => run::compare::<mptcp::Mptcp>(run::ask(sc, flag)),
        Scenario::Rx(sc) if napi_tcp::applies(&sc) => {
            run::compare::<napi_tcp::NapiTcp>(run::ask(sc, flag))
        }
        Scenario::Rx(sc) if napi_frags::applies(&sc) => {
            run::compare::<napi_frags::NapiFrags>(run::ask(sc, flag))
        }
        Scenario::Rx(sc) => run::compare::<rx::Rx>(run::ask(sc, flag)),
    }?;
    // A write after an op left out is refused, so the driven ops are a prefix.
    Ok(Report {
        scenario: text,
        driven: ops - report.not_driven.len(),
        ..report
    })
}

/// The variant the report names: the one `--variant` asks for (else today's), as the
/// model's run names it (rx's `pre-2012` runs `pre-2012+defer-free`), so a reader checks the
/// model's side against that lane.
fn variant(sc: &Scenario, flag: Option<&str>) -> Result<String, String> {
    let v = flag.unwrap_or(sc.today());
    let t = sc.run(&RunOptions::counters(Some(v)));
    Ok(t.map_err(|e| e.to_string())?.variant)
}

/// A verdict as the terminal's table marks it: a difference stands out.
fn mark(v: Verdict) -> &'static str {
    match v {
        Verdict::Agree => "agree",
        Verdict::Differ => "DIFFER",
    }
}

fn pair(m: Option<u64>, k: Option<u64>) -> String {
    let s = |v: Option<u64>| v.map_or("-".to_string(), |v| v.to_string());
    format!("{}/{}", s(m), s(k))
}

/// `n` skbs or pages (`what`) as lines of `columns`, each cell model/kernel
/// (`cell(i, column)`), each line marked by its rows' verdict; nothing when `n` is 0.
fn table(
    r: &Report,
    what: &str,
    columns: &[&str],
    n: usize,
    cell: impl Fn(usize, usize) -> (Option<u64>, Option<u64>),
) -> String {
    if n == 0 || columns.is_empty() {
        return String::new();
    }
    let mut o = format!("{what:<5}");
    for name in columns {
        o += &format!(" {name:<16}");
    }
    o += " verdict\n";
    for i in 0..n {
        o += &format!("{i:<5}");
        for c in 0..columns.len() {
            let (m, k) = cell(i, c);
            o += &format!(" {:<16}", pair(m, k));
        }
        let prefix = format!("{what}[{i}].");
        let rows = r.rows.iter().filter(|row| row.field.starts_with(&prefix));
        o += &format!(" {}\n", mark(Verdict::of(rows)));
    }
    o
}

/// The report as a table: the totals, then one line per skb or page, model/kernel in each
/// column.
pub fn render(r: &Report) -> String {
    let setup: Vec<String> = r
        .setup
        .iter()
        .map(|(k, v)| match v {
            serde_json::Value::String(s) => format!("{k} {s}"),
            v => format!("{k} {v}"),
        })
        .collect();
    let mut o = format!(
        "skblab kernel: {} on Linux {} beside the model's `{}`\nsetup: {}\n",
        r.mechanism,
        r.kernel,
        r.variant,
        setup.join(", ")
    );
    let rows = || r.rows.iter().filter(|row| !row.field.contains('['));
    let width = rows().map(|row| row.field.len()).max().unwrap_or(0).max(10);
    for row in rows() {
        o += &format!(
            "{:<width$} model/kernel {:<16} {}\n",
            row.field,
            pair(row.model, row.kernel),
            mark(row.verdict)
        );
    }
    // The columns either side has, judged first, then truesize (shown only).
    let shown: (&str, fn(&SkbView) -> Option<u64>) = ("truesize(shown)", |s| s.truesize);
    let (m, k) = (&r.model.skbs, &r.kernel_side.skbs);
    let cols: Vec<_> = verdict::judged()
        .chain([shown])
        .filter(|(_, get)| m.iter().chain(k).any(|s| get(s).is_some()))
        .collect();
    let names: Vec<&str> = cols.iter().map(|(name, _)| *name).collect();
    o += &table(r, "skb", &names, m.len().max(k.len()), |i, c| {
        let get = cols[c].1;
        (m.get(i).and_then(get), k.get(i).and_then(get))
    });
    let (m, k) = (r.model.pages(), r.kernel_side.pages());
    let names = PAGE_FIELDS.map(|(name, _)| name);
    o += &table(r, "page", &names, m.len().max(k.len()), |i, c| {
        let get = PAGE_FIELDS[c].1;
        (m.get(i).map(get), k.get(i).map(get))
    });
    if !r.not_driven.is_empty() {
        o += &format!("not driven: {}\n", r.not_driven.join(", "));
    }
    for (k, v) in &r.shown {
        o += &format!("shown, not judged: {k} {v}\n");
    }
    let judged = r.rows.len();
    let differ = (r.rows.iter())
        .filter(|row| row.verdict == Verdict::Differ)
        .count();
    o += &format!(
        "verdict: {} ({judged} fields, {differ} differ)\n",
        r.verdict
    );
    o
}

/// An rx scenario from its text, for the tests of the rx runs.
#[cfg(test)]
fn rx_scenario(text: &str) -> skblab_core::rx::RxScenario {
    match skblab_core::Scenario::parse(text).unwrap() {
        skblab_core::Scenario::Rx(s) => s,
        _ => panic!("not an rx scenario"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use verdict::Side;

    /// A report names its variant as the model's run does, so the core's reader finds the
    /// lane it was judged against.
    #[test]
    fn the_report_names_the_variant_in_full() {
        let text = include_str!("../../../scenarios/rx-napi-frags-lagging.toml");
        let sc = Scenario::parse(text).unwrap();
        assert_eq!(
            variant(&sc, Some("pre-2012")).unwrap(),
            "pre-2012+defer-free"
        );
        assert_eq!(variant(&sc, None).unwrap(), sc.today());
        assert!(variant(&sc, Some("bogus")).unwrap_err().contains("bogus"));
    }

    /// What `--out` writes, the playground reads back as the same report: one format, the
    /// core's, on both ends.
    #[test]
    fn a_written_report_reads_back_in_the_core() {
        let skb = SkbView {
            len: 100,
            alloc_cpu: Some(0),
            free_cpu: Some(1),
            ..SkbView::default()
        };
        let model = Side {
            skbs: vec![skb],
            ..Side::default()
        };
        let kernel_side = Side {
            skbs: vec![skb, skb],
            ..model.clone()
        };
        let setup = serde_json::json!({ "frames": 2, "mtu": 1500 });
        let mut r = run::report("rx", "modern+defer-free", setup, model, kernel_side, vec![]);
        r.scenario = "mechanism = \"rx\"\n[[ops]]\nop = \"arrive\"\nframes = 2\n".into();
        r.driven = 1;
        r.shown.insert("model_pages".into(), serde_json::json!(1));
        let text = json(&r);
        assert_eq!(skblab_core::kernel_report::Report::parse(&text), Ok(r));
        let lane = skblab_core::kernel_report::KernelReport::parse(&text).unwrap();
        assert_eq!(lane.verdict, Verdict::Differ);
        assert_eq!(lane.columns(), ["len", "alloc_cpu", "free_cpu"]);
        assert_eq!(lane.skbs[1][0].model, None);
    }

    #[test]
    fn the_table_marks_the_skb_that_differs_and_ends_with_the_verdict() {
        let skb = |len, nr_frags| SkbView {
            len,
            linear: Some(0),
            nr_frags: Some(nr_frags),
            truesize: Some(len + 896),
            ..SkbView::default()
        };
        let model = Side {
            size_goals: vec![65160],
            skbs: vec![skb(65160, 2), skb(100, 1)],
            frag_cache: None,
        };
        let mut kernel_side = model.clone();
        kernel_side.skbs[1].nr_frags = Some(2);
        let r = run::report(
            "sendmsg",
            "modern",
            serde_json::json!({ "mss": 1448 }),
            model,
            kernel_side,
            vec!["ops[1] (transmit)".into()],
        );
        let t = render(&r);
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines[1], "setup: mss 1448");
        assert!(
            lines[2].starts_with("size_goal") && lines[2].ends_with("agree"),
            "{t}"
        );
        assert!(
            lines[5].starts_with("0 ") && lines[5].ends_with("agree"),
            "{t}"
        );
        assert!(
            lines[6].starts_with("1 ") && lines[6].ends_with("DIFFER"),
            "{t}"
        );
        assert!(lines[6].contains("1/2"), "{t}");
        assert_eq!(lines[7], "not driven: ops[1] (transmit)");
        assert_eq!(lines[8], "verdict: differ (8 fields, 1 differ)");
    }
}

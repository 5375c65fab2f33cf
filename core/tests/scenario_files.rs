//! Every file under `scenarios/`, found by walking the directory (no list to keep): it runs
//! under every variant of its mechanism, deterministically, survives JSON and back, keeps its
//! mechanism's accounting, and gives the results its comments state. A TOML file states them
//! as `# expect: VARIANT COUNTER = N` lines (the counter's final value), at least one each.

mod common;

use skblab_core::{RunOptions, Scenario, Trace};
use std::path::PathBuf;

fn files() -> Vec<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scenarios");
    let mut out: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("scenarios/ is readable")
        .map(|e| e.expect("a readable entry").path())
        .filter(|p| {
            matches!(
                p.extension().and_then(|e| e.to_str()),
                Some("toml" | "json")
            )
        })
        .collect();
    out.sort();
    assert!(
        out.len() >= 10,
        "only {} files under {}",
        out.len(),
        dir.display()
    );
    out
}

fn run(s: &Scenario, variant: &str) -> Trace {
    s.run(&RunOptions::traced(Some(variant)))
        .unwrap_or_else(|e| panic!("{variant}: {e}"))
}

/// The `# expect: VARIANT COUNTER = N` lines of `text`.
fn expectations(text: &str) -> Vec<(String, String, u64)> {
    text.lines()
        .filter_map(|l| l.strip_prefix("# expect:"))
        .map(|l| {
            let (lhs, n) = l.split_once('=').unwrap_or_else(|| bad(l));
            let mut words = lhs.split_whitespace();
            let (Some(v), Some(c), None) = (words.next(), words.next(), words.next()) else {
                bad(l)
            };
            (
                v.into(),
                c.into(),
                n.trim().parse().unwrap_or_else(|_| bad(l)),
            )
        })
        .collect()
}

fn bad(line: &str) -> ! {
    panic!("malformed expectation `{line}`: want VARIANT COUNTER = N")
}

/// What every run of a mechanism keeps, whatever the file.
fn accounting(t: &Trace) {
    let c = |n: &str| {
        t.counters
            .get(n)
            .unwrap_or_else(|| panic!("no counter {n}"))
    };
    match t.mechanism.as_str() {
        "sendmsg" | "mptcp" if t.steps.last().is_some_and(|s| s.op == "close") => {
            let left = common::only_task_frag_left(&t.steps.last().unwrap().state);
            assert_eq!(c("pages_freed") + left, c("pages_allocated"), "pages");
        }
        "rx" => assert_eq!(c("page_allocs"), c("page_frees") + c("pages_live"), "pages"),
        _ => {}
    }
    if t.mechanism == "mptcp" {
        assert_eq!(c("bytes_mapped"), c("bytes_written"), "every byte mapped");
    }
}

#[test]
fn every_scenario_file_runs_and_gives_its_stated_results() {
    for path in files() {
        let name = path.display().to_string();
        let text = std::fs::read_to_string(&path).expect("UTF-8");
        let s = Scenario::parse(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
        let again = Scenario::parse(&s.to_json()).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(s, again, "{name}: JSON round trip");
        for v in s.variants() {
            let t = run(&s, v);
            assert_eq!(t.steps.len(), s.op_count(), "{name} {v}");
            assert!(run(&s, v) == t, "{name} {v}: two runs differ");
            accounting(&t);
        }
        let expect = expectations(&text);
        let toml = path.extension().is_some_and(|e| e == "toml");
        assert!(
            !toml || !expect.is_empty(),
            "{name} states no `# expect:` result"
        );
        for (v, counter, want) in expect {
            let got = run(&s, &v).counters.get(&counter);
            assert_eq!(got, Some(want), "{name}: {v} {counter}");
        }
    }
}

//! The core's layers, written once: [`LAYERS`] for the modules of `core/src`, [`INSIDE`] for
//! the files of each mechanism's directory, lowest layer first. A module uses only modules
//! of earlier rows (lower layers); the modules of one row are peers and use none of each
//! other. ARCHITECTURE.md (its code map) explains the rows and points here.
//!
//! The check reads every in-crate path of core/src/**/*.rs outside a `#[cfg(test)] mod`
//! (tests may use anything) with the import reader it shares with the runner's layer test
//! (tests/imports.rs: groups, `super::super::`, a `use` in a function), and names each
//! import that points up or sideways.

#[path = "../../tests/imports.rs"]
mod imports;

use std::path::Path;

/// The core's modules, lowest layer first. `lib` is the crate root's own items (`NR_CPUS`);
/// lib.rs itself only declares and re-exports, and its re-exports resolve to their homes.
const LAYERS: &[&[&str]] = &[
    &["lib", "error"],
    // Leaves: they know nothing of the model.
    &[
        "names",
        "limits",
        "counters",
        "field_path",
        "toml_value",
        "patches",
    ],
    &["consts"],
    // What the kernel did; no model type.
    &["events"],
    // Kernel objects as a trace shows them: they never read a trace.
    &["page", "skb", "size_goal"],
    &["page_frag"],
    &["trace"],
    // The one writer of a State: every change is an event it applies.
    &["replay"],
    // The page allocator and the task's page frag, written through the replay's `Log`.
    &["page_alloc"],
    &["task_frag"],
    &["mechanism"],
    // One seed each: none imports another.
    &["send", "rx", "mptcp"],
    // Names each event's kernel function per mechanism and era: reads the mechanisms' names.
    &["kernel_fn"],
    // How the kernel reaches each of those functions, per release.
    &["call_path"],
    &["scenario", "query", "permalink", "freed", "input"],
    // Trace's and State's methods that read the replay, the kernel functions and the queries.
    &["trace_read"],
    // A kernel report is checked against its own scenario.
    &["question", "kernel_report"],
    // A capture's prediction is judged in the kernel report's words.
    &["capture"],
    &["walkthrough"],
    // Goals to reach, and predict-then-see over a walkthrough's questions.
    &["challenge", "quiz"],
    // The checks every lesson file passes.
    &["lint"],
];

/// Inside each mechanism's directory, lowest first; `mod` (mod.rs) only assembles.
const INSIDE: &[(&str, &[&[&str]])] = &[
    (
        "rx",
        &[
            &["counters", "variant"],
            &["scenario"],
            &["kernel"],
            // The stages, in the order a frame meets them.
            &["frag_cache"],
            &["driver"],
            &["gro"],
            &["defer", "coalesce"],
            &["socket"],
            &["machine"],
            // What hosts read off a run, and the model fed with real packets.
            &["received"],
            &["mod"],
        ],
    ),
    (
        "send",
        &[
            &["counters", "variant"],
            &["params"],
            &["sock"],
            &["matrix", "xmit", "frag", "scenario"],
            &["machine"],
            &["mod"],
        ],
    ),
    (
        // kernel_report.rs holds the format; its lane and the model's side build on it.
        "kernel_report",
        &[&["pages"], &["mod"], &["lane", "model"]],
    ),
    (
        // mod.rs holds the format; the summary and the lane (the capture as a trace) read it;
        // the lane marks a fact's stack, which `stack` tells; `pair` pairs events of the
        // lanes `compare` judges.
        "capture",
        &[
            &["mod"],
            &["stack"],
            &["summary", "lane", "predict"],
            &["compare", "beside"],
            &["pair"],
        ],
    ),
    (
        "mptcp",
        &[
            &["counters", "variant", "tx"],
            &["dfrag", "subflow"],
            &["sendmsg_frag"],
            &["push"],
            &["scenario"],
            &["machine"],
            &["mod"],
        ],
    ),
    (
        // One file per event family, over the lookups they share.
        "replay",
        &[
            &["lookup"],
            &["page", "skb", "capture"],
            &["rx", "mptcp"],
            &["mod"],
        ],
    ),
];

/// The crate root's items that are not re-exports: where each one sits.
const ROOT_ITEMS: &[(&str, &str)] = &[("NR_CPUS", "lib"), ("run_text", "scenario")];

/// A module: `["trace"]`, `["rx"]` (rx/mod.rs) or `["rx", "driver"]`.
type Module = Vec<String>;

fn row(rows: &[&[&str]], name: &str) -> Option<usize> {
    rows.iter().position(|r| r.contains(&name))
}

fn inside(dir: &str) -> Option<&'static [&'static [&'static str]]> {
    INSIDE
        .iter()
        .find(|(d, _)| *d == dir)
        .map(|(_, rows)| *rows)
}

/// The module a path (the segments after `crate`) names; `Err` for a crate-root item no
/// table places.
fn target(segs: &[String], reexports: &[(String, String)]) -> Result<Module, String> {
    let first = segs.first().ok_or("a path names the crate itself")?;
    if row(LAYERS, first).is_some() {
        let file = segs
            .get(1)
            .filter(|f| inside(first).is_some_and(|rows| row(rows, f).is_some()));
        return Ok([Some(first.clone()), file.cloned()]
            .into_iter()
            .flatten()
            .collect());
    }
    let home = (reexports
        .iter()
        .find(|(item, _)| item == first)
        .map(|(_, m)| m.as_str()))
    .or_else(|| {
        ROOT_ITEMS
            .iter()
            .find(|(item, _)| item == first)
            .map(|(_, m)| *m)
    })
    .ok_or_else(|| format!("`crate::{first}` is in no layer (add it to LAYERS or ROOT_ITEMS)"))?;
    Ok(vec![home.to_string()])
}

/// Where `from` may not use `to`: "above" or "beside"; `None` when it may.
fn breach(from: &Module, to: &Module) -> Option<&'static str> {
    let (rows, a, b) = if from[0] == to[0] {
        let rows = inside(&from[0])?;
        let name = |m: &Module| m.get(1).cloned().unwrap_or_else(|| "mod".into());
        (rows, name(from), name(to))
    } else {
        (LAYERS, from[0].clone(), to[0].clone())
    };
    let (i, j) = (row(rows, &a)?, row(rows, &b)?);
    match (a == b, j.cmp(&i)) {
        (true, _) | (_, std::cmp::Ordering::Less) => None,
        (_, std::cmp::Ordering::Equal) => Some("beside"),
        (_, std::cmp::Ordering::Greater) => Some("above"),
    }
}

/// What is wrong with `file` (path under core/src) holding `text`.
fn check(file: &str, text: &str, reexports: &[(String, String)]) -> Vec<String> {
    let from = imports::module_of(file);
    let placed = match from.as_slice() {
        [m] => row(LAYERS, m).is_some(),
        [d, f] => inside(d).is_some_and(|rows| row(rows, f).is_some()),
        _ => false,
    };
    if !placed {
        return vec![format!(
            "core/src/{file} is in no layer: add it to LAYERS or INSIDE"
        )];
    }
    let mut wrong = vec![];
    for to in imports::imports(&imports::code(text), &from) {
        match to.and_then(|segs| target(&segs, reexports)) {
            Err(e) => wrong.push(format!("core/src/{file}: {e}")),
            Ok(to) => {
                if let Some(how) = breach(&from, &to) {
                    let peers = if how == "beside" {
                        " (peers use none of each other)"
                    } else {
                        ""
                    };
                    let to = to.join("::");
                    wrong.push(format!(
                        "core/src/{file} imports crate::{to}, which sits {how} it{peers}"
                    ));
                }
            }
        }
    }
    wrong.sort();
    wrong.dedup();
    wrong
}

/// lib.rs's `pub use module::Item;` lines, as (Item, module).
fn reexports(lib: &str) -> Vec<(String, String)> {
    let uses = lib
        .lines()
        .filter_map(|l| l.strip_prefix("pub use ")?.strip_suffix(';'));
    uses.filter_map(|u| {
        let (module, item) = u.split_once("::")?;
        Some((item.to_string(), module.to_string()))
    })
    .collect()
}

#[test]
fn every_import_points_down() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let files = imports::sources(&src);
    let lib = files
        .iter()
        .find(|(f, _)| f == "lib.rs")
        .expect("lib.rs")
        .1
        .clone();
    let reexports = reexports(&lib);
    assert!(
        reexports
            .iter()
            .any(|(item, m)| item == "Error" && m == "error"),
        "lib.rs re-exports read"
    );
    let checked = files.iter().filter(|(f, _)| f != "lib.rs");
    let wrong: Vec<String> = checked
        .flat_map(|(f, text)| check(f, text, &reexports))
        .collect();
    assert!(
        wrong.is_empty(),
        "layer rules broken:\n{}",
        wrong.join("\n")
    );
    assert!(files.len() > 40, "only {} files read", files.len());
}

/// The check finds each way of writing an import that points up or sideways.
#[test]
fn a_back_edge_is_caught_however_written() {
    let re = vec![
        ("Error".to_string(), "error".to_string()),
        ("Trace".into(), "trace".into()),
    ];
    let cases = [
        (
            "page_frag.rs",
            "use crate::trace::Cursor;",
            "crate::trace, which sits above it",
        ),
        (
            "skb.rs",
            "use crate::{consts::Era, page::{Page, PageId}};",
            "crate::page, which sits beside it",
        ),
        (
            "rx/driver.rs",
            "fn f() { crate::send::variant::skb_truesize(k, 0) }",
            "crate::send::variant, which sits beside",
        ),
        (
            "mptcp/subflow.rs",
            "use super::{SubflowParams, tx::Tx};",
            "crate::mptcp, which sits above it",
        ),
        (
            "rx/frag_cache.rs",
            "use super::gro as g;",
            "crate::rx::gro, which sits above it",
        ),
        (
            "events.rs",
            "pub fn f() -> crate::Trace {}",
            "crate::trace, which sits above it",
        ),
        (
            "permalink.rs",
            "use crate::walkthrough::all;",
            "crate::walkthrough, which sits above",
        ),
        (
            "rx/driver.rs",
            "use super::super::send::variant;",
            "crate::send::variant, which sits beside",
        ),
        (
            "skb.rs",
            "fn f() {\n    use crate::{page::Page};\n}",
            "crate::page, which sits beside it",
        ),
        (
            "page.rs",
            "#[cfg(test)]\nfn helper() {}\n\npub(crate) use crate::skb::Skb;",
            "crate::skb, which sits beside it",
        ),
        (
            "replay/page.rs",
            "use self::super::rx::gro_merge;",
            "crate::replay::rx, which sits above it",
        ),
    ];
    for (file, text, want) in cases {
        let got = check(file, text, &re);
        assert!(
            got.iter().any(|g| g.contains(want)),
            "{file}: `{text}` gave {got:?}"
        );
    }
    // Tests and comments may name anything; a new file must be placed.
    let test = "// crate::walkthrough\n#[cfg(test)]\nmod tests {\n    use crate::walkthrough;\n}\n";
    assert_eq!(check("page.rs", test, &re), Vec::<String>::new());
    assert_eq!(
        check("rx/new.rs", "", &re),
        ["core/src/rx/new.rs is in no layer: add it to LAYERS or INSIDE"]
    );
}

/// What the core must not reach for (sans-IO, deterministic): files, sockets, the
/// environment, processes, threads, the clock, the terminal, randomness, and hash-ordered
/// collections (their iteration order changes from run to run and between builds).
const OUTSIDE: &[&str] = &[
    "std::fs",
    "std::net",
    "std::env",
    "std::process",
    "std::thread",
    "std::io",
    "std::time",
    "Instant",
    "SystemTime",
    "print!",
    "println!",
    "eprint",
    "dbg!",
    "rand::",
    "getrandom",
    "HashMap",
    "HashSet",
    "RandomState",
];

/// The names of [`OUTSIDE`] the code of `text` (tests and comments left out) uses.
fn reaches_out(text: &str) -> Vec<&'static str> {
    let code = imports::code(text);
    OUTSIDE
        .iter()
        .copied()
        .filter(|n| code.contains(n))
        .collect()
}

/// The core does no I/O, reads no clock and keeps no hash order outside its tests, so the
/// same scenario gives the same trace on every host (the wasm engine's byte identity,
/// native-runner/tests/engines.rs, checks the outcome on every walkthrough and scenario).
#[test]
fn the_core_is_sans_io() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let files = imports::sources(&src);
    let wrong: Vec<String> = (files.iter())
        .map(|(f, text)| (f, reaches_out(text)))
        .filter(|(_, names)| !names.is_empty())
        .map(|(f, names)| format!("core/src/{f} uses {}", names.join(", ")))
        .collect();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    // The check can fail; a test module may use anything.
    let clock = "fn now() -> u64 { std::time::SystemTime::now(); 0 }";
    assert_eq!(reaches_out(clock), ["std::time", "SystemTime"]);
    let order =
        "use std::collections::HashMap;\n#[cfg(test)]\nmod tests {\n    std::fs::read(\"x\");\n}\n";
    assert_eq!(reaches_out(order), ["HashMap"]);
}

/// Where the inherent methods of the trace's types may live: beside the type (trace.rs),
/// in trace_read.rs (those that read through higher layers), and a state's replay in
/// replay/. Anywhere else scatters one type's methods across unrelated modules.
const METHOD_HOMES: &[(&str, &[&str])] = &[
    ("Trace", &["trace.rs", "trace_read.rs"]),
    ("State", &["trace.rs", "trace_read.rs", "replay/"]),
];

/// The inherent `impl` blocks of [`METHOD_HOMES`]' types in `text` (core/src/`file`) that
/// sit outside their homes (tests and comments left out).
fn stray_methods(file: &str, text: &str) -> Vec<String> {
    let code = imports::code(text);
    let inherent = |line: &str| {
        let ty = line
            .trim_start()
            .strip_prefix("impl ")?
            .strip_suffix(" {")?;
        let ty = ty.rsplit("::").next()?;
        METHOD_HOMES.iter().find(|(t, _)| *t == ty)
    };
    (code.lines().filter_map(inherent))
        .filter(|(_, homes)| !homes.iter().any(|h| file.starts_with(h)))
        .map(|(ty, _)| format!("core/src/{file} has methods of {ty}"))
        .collect()
}

/// `Trace`'s and `State`'s inherent methods stay in their homes.
#[test]
fn a_types_methods_live_with_it() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let files = imports::sources(&src);
    let wrong: Vec<String> = (files.iter())
        .flat_map(|(f, text)| stray_methods(f, text))
        .collect();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    // The check can fail, however the type is named; a trait impl is not an inherent one.
    let planted =
        "impl crate::trace::State {\n}\nimpl Trace {\n}\nimpl fmt::Display for Trace {\n}\n";
    assert_eq!(
        stray_methods("question.rs", planted),
        [
            "core/src/question.rs has methods of State",
            "core/src/question.rs has methods of Trace"
        ]
    );
    assert!(stray_methods("replay/skb.rs", "impl State {\n}\n").is_empty());
}

/// The mechanisms whose state is the `State` a `replay::Log` writes: each reads it and
/// changes it only by emitting an event (`Log::emit`, which applies it). The compiler
/// holds most of this (a `Live` state is reached only through `Log`); what it cannot see
/// is a mechanism keeping its own copy of what the state holds, or recording an event
/// without applying it.
const ONE_WRITER: &[&str] = &["rx/", "send/", "mptcp/"];

fn one_writer(file: &str) -> bool {
    ONE_WRITER.iter().any(|m| file.starts_with(m))
}

/// What in a mechanism's code would be a second writer or a private copy of the state:
/// building a state, queue or cursor, holding skbs or a page pool of its own, recording
/// events past its `Log` (`Events::emit`).
const SECOND_WRITER: &[&str] = &[
    "&mut State",
    "State {",
    "State::default",
    "Queue {",
    "Cursor {",
    "Option<Skb>",
    "Vec<Skb>",
    "VecDeque<Skb>",
    "PagePool",
    "ev.emit(",
];

fn second_writers(file: &str, text: &str) -> Vec<String> {
    // A function returning a state (`Machine::state`, a clone of the live one) builds none,
    // nor does one returning a borrow (of the live state's queue, say).
    let code = unqualified(&imports::code(text)).replace("-> State {", "");
    let code: String = (code.lines())
        .map(|l| match l.find("-> &").filter(|_| l.contains("fn ")) {
            Some(at) => &l[..at],
            None => l,
        })
        .flat_map(|l| [l, "\n"])
        .collect();
    (SECOND_WRITER.iter())
        .filter(|w| code.contains(*w))
        .map(|w| format!("core/src/{file}: `{w}`"))
        .collect()
}

/// `code` with every type read by its last segment: `&mut crate::trace::State` is `&mut
/// State`, `trace::Queue {` is `Queue {`.
fn unqualified(code: &str) -> String {
    let mut out = String::with_capacity(code.len());
    let mut rest = code;
    while let Some(at) = rest.find("::") {
        out.push_str(&rest[..at]);
        rest = &rest[at + 2..];
        if rest.starts_with(|c: char| c.is_ascii_uppercase()) {
            let path = |c: char| c.is_alphanumeric() || c == '_' || c == ':';
            out.truncate(out.trim_end_matches(path).len());
        } else {
            out.push_str("::");
        }
    }
    out + rest
}

#[test]
fn mechanisms_write_the_state_only_through_events() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let files = imports::sources(&src);
    let wrong: Vec<String> = (files.iter())
        .filter(|(f, _)| one_writer(f))
        .flat_map(|(f, text)| second_writers(f, text))
        .collect();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    // The check can fail: a private queue, an event recorded without being applied.
    let planted = "pub struct Gro {\n    held: Option<Skb>,\n}\nfn f(ev: &mut Events) {\n    \
                   ev.emit(|| e);\n    let s = State { ..x };\n}\n";
    assert_eq!(
        second_writers("rx/gro.rs", planted),
        [
            "core/src/rx/gro.rs: `State {`",
            "core/src/rx/gro.rs: `Option<Skb>`",
            "core/src/rx/gro.rs: `ev.emit(`"
        ]
    );
    // Each mechanism listed is checked: the send side's socket as it was before it wrote
    // through a `Log` (its own write queue and page pool, events recorded unapplied).
    assert!(one_writer("send/sock.rs") && one_writer("mptcp/subflow.rs"));
    let planted = "pub struct SendSock {\n    queue: VecDeque<Skb>,\n    pool: PagePool,\n}\n\
                   fn f(ev: &mut Events) {\n    ev.emit(|| e);\n}\n\
                   fn write_queue(s: &State) -> &Queue {\n}\n";
    assert_eq!(
        second_writers("send/sock.rs", planted),
        [
            "core/src/send/sock.rs: `VecDeque<Skb>`",
            "core/src/send/sock.rs: `PagePool`",
            "core/src/send/sock.rs: `ev.emit(`"
        ]
    );
    // MPTCP's subflow as it was: its own skbs, a state built from its parts; and a direct
    // write however the state's type is spelled.
    let planted = "pub struct Subflow {\n    pub skbs: Vec<Skb>,\n}\n\
                   fn state(&self) -> State {\n    State {\n        queues,\n    }\n}\n\
                   fn clear(s: &mut crate::trace::State) {\n    s.dfrags.clear();\n}\n";
    assert_eq!(
        second_writers("mptcp/subflow.rs", planted),
        [
            "core/src/mptcp/subflow.rs: `&mut State`",
            "core/src/mptcp/subflow.rs: `State {`",
            "core/src/mptcp/subflow.rs: `Vec<Skb>`"
        ]
    );
}

//! The core's public surface: a host imports a module made of files (the mechanisms `send`,
//! `rx`, `mptcp`, and the formats `kernel_report` and `capture`) only from its root
//! (`skblab_core::rx::Mem`, `skblab_core::capture::lessons`), never from a file inside it
//! (`skblab_core::rx::driver::...`). Each such module declares its files `pub(crate)` (or
//! private) and re-exports what hosts use, so the files can change without a host noticing. ARCHITECTURE.md (Formats, the core's code map) points here.
//!
//! The check reads every `.rs` file of every host (the runner, the playground, the wasm
//! module, xtask, the fuzz targets and checks, the shared test code, the core's own
//! integration tests and benches), comments out, and names each `skblab_core::` path, however
//! written (a group, a path in an expression, `use skblab_core::rx::{self, ..}` then
//! `rx::driver::..`), that reaches into a mechanism's file.

// Only its code reader, file walk and group expansion are used here.
#[allow(dead_code)]
#[path = "../../tests/imports.rs"]
mod imports;

use std::path::Path;

/// The modules made of files, whose files are crate-private.
const MECHANISMS: &[&str] = &["send", "rx", "mptcp", "kernel_report", "capture"];

/// The hosts' directories, from the workspace root.
const HOSTS: &[&str] = &[
    "native-runner",
    "web",
    "wasm-module",
    "xtask",
    "fuzz",
    "tests",
    "core/tests",
    "core/benches",
];

/// Each mechanism with its files' module names (`rx` with `driver`, `frag_cache`, ...), read
/// from core/src so a new file is covered without an edit here.
fn internals(core_src: &Path) -> Vec<(String, Vec<String>)> {
    let files = |m: &str| -> Vec<String> {
        let mut names: Vec<String> = (imports::sources(&core_src.join(m)).into_iter())
            .map(|(f, _)| imports::module_of(&f).join("::"))
            .filter(|f| !f.is_empty() && !f.contains("::"))
            .collect();
        names.sort();
        names
    };
    (MECHANISMS.iter())
        .map(|m| (m.to_string(), files(m)))
        .collect()
}

/// The path tree that starts `code`: `rx::Mem`, `{rx::{self, Mem}, Trace}`, up to what ends
/// it outside braces (`;`, `(`, `<`, a space).
fn tree(code: &str) -> &str {
    let mut depth = 0;
    for (i, c) in code.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => return &code[..i],
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return &code[..=i];
                }
            }
            c if c.is_alphanumeric() || c == '_' || c == ':' || c == '*' => {}
            _ if depth > 0 => {}
            _ => return &code[..i],
        }
    }
    code
}

/// Whether `s[..i]` ends a word or a path, so a name at `i` does not start a path (a leading
/// `::`, as in `::skblab_core::rx`, does).
fn continues(s: &str, i: usize) -> bool {
    let word = |c: char| c.is_alphanumeric() || c == '_' || c == '>';
    match s[..i].strip_suffix("::") {
        Some(before) => before.chars().next_back().is_some_and(word),
        None => s[..i].chars().next_back().is_some_and(word),
    }
}

/// Each `skblab_core::` path of `text` (the host file `file`) that names a mechanism's file.
fn violations(file: &str, text: &str, internals: &[(String, Vec<String>)]) -> Vec<String> {
    let code: String = (text.lines())
        .map(|l| l.split("//").next().unwrap_or("").to_string() + "\n")
        .collect();
    let inner = |m: &str, f: &str| {
        (internals.iter()).any(|(n, files)| n == m && files.iter().any(|x| x == f))
    };
    let mut out = vec![];
    let mut bound = vec![];
    for (at, _) in code.match_indices("skblab_core::") {
        if continues(&code, at) {
            continue;
        }
        for path in imports::expand(tree(&code[at..])) {
            let segs: Vec<&str> = path.split("::").map(str::trim).collect();
            match segs[..] {
                [_, m] if MECHANISMS.contains(&m) => bound.push(m.to_string()),
                [_, m, f, ..] if inner(m, f) => out.push(format!(
                    "{file}: `{path}` reaches into {m}/{f}.rs: import it from `skblab_core::{m}`"
                )),
                _ => {}
            }
        }
    }
    // `use skblab_core::rx::{self, ..}` binds `rx`: then `rx::driver::x` reaches in too.
    for m in &bound {
        for (at, _) in code.match_indices(&format!("{m}::")) {
            let rest = &code[at + m.len() + 2..];
            let f: String = (rest.chars())
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if !continues(&code, at) && inner(m, &f) && rest[f.len()..].starts_with("::") {
                out.push(format!(
                    "{file}: `{m}::{f}::` reaches into {m}/{f}.rs: import it from `skblab_core::{m}`"
                ));
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

/// Every `.rs` file under `dir` but a build's `target/`, as (path from the root, text).
fn host_files(root: &Path, dir: &str, out: &mut Vec<(String, String)>) {
    let Ok(entries) = std::fs::read_dir(root.join(dir)) else {
        return;
    };
    let mut entries: Vec<_> = entries
        .map(|e| e.expect("a directory entry").path())
        .collect();
    entries.sort();
    for p in entries {
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        let path = format!("{dir}/{name}");
        if p.is_dir() && name != "target" && name != "node_modules" {
            host_files(root, &path, out);
        } else if name.ends_with(".rs") {
            out.push((
                path,
                std::fs::read_to_string(&p).expect("a source file reads"),
            ));
        }
    }
}

#[test]
fn hosts_import_a_mechanism_only_from_its_root() {
    let core = Path::new(env!("CARGO_MANIFEST_DIR"));
    let root = core.parent().expect("the workspace root");
    let internals = internals(&core.join("src"));
    assert!(
        (internals.iter()).all(|(_, files)| files.len() >= 2),
        "module files read: {internals:?}"
    );
    let mut files = vec![];
    for dir in HOSTS {
        host_files(root, dir, &mut files);
    }
    assert!(files.len() > 100, "read only {} host files", files.len());
    // This file's own cases are planted violations.
    files.retain(|(file, _)| file != "core/tests/surface.rs");
    let bad: Vec<String> = (files.iter())
        .flat_map(|(file, text)| violations(file, text, &internals))
        .collect();
    assert!(
        bad.is_empty(),
        "hosts reaching into a mechanism's files:\n{}",
        bad.join("\n")
    );
}

/// Each such module's root (its mod.rs, or the file beside its directory) declares no `pub
/// mod`: its files are crate-private, and what hosts need is re-exported there.
#[test]
fn a_mechanisms_files_are_crate_private() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    for m in MECHANISMS {
        let text = std::fs::read_to_string(src.join(m).join("mod.rs"))
            .or_else(|_| std::fs::read_to_string(src.join(format!("{m}.rs"))))
            .expect("the module's root reads");
        let public: Vec<&str> = (text.lines())
            .filter(|l| l.trim_start().starts_with("pub mod "))
            .collect();
        assert!(
            public.is_empty(),
            "{m}/mod.rs: {public:?}: make them pub(crate)"
        );
    }
}

/// The check can fail: each way of writing a path into a mechanism's file is caught, and
/// what a mechanism's root exports is not.
#[test]
fn a_path_into_a_mechanism_is_caught_however_written() {
    let internals = internals(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    let cases = [
        "use skblab_core::rx::frag_cache::PAGE_FRAG_CACHE_MAX_SIZE;\n",
        "use skblab_core::{rx::frag_cache::PAGE_FRAG_CACHE_MAX_SIZE, Trace};\n",
        "use skblab_core::rx::{frag_cache::{PAGE_FRAG_CACHE_MAX_SIZE}, Mem};\n",
        "fn f() -> u32 {\n    skblab_core::rx::frag_cache::PAGE_FRAG_CACHE_MAX_SIZE\n}\n",
        "use skblab_core::rx::{self, Mem};\nfn f() -> u32 { rx::frag_cache::PAGE_FRAG_CACHE_MAX_SIZE }\n",
        "use skblab_core::rx;\nconst X: u32 = rx::frag_cache::PAGE_FRAG_CACHE_MAX_SIZE;\n",
        "use ::skblab_core::rx::frag_cache as c;\n",
    ];
    for text in cases {
        let got = violations("host.rs", text, &internals);
        assert_eq!(got.len(), 1, "`{text}`: {got:?}");
        assert!(got[0].contains("rx/frag_cache.rs"), "`{text}`: {got:?}");
    }
    for text in [
        "use skblab_core::kernel_report::model;\n",
        "fn f(c: &Capture) { skblab_core::capture::summary::lessons(c); }\n",
    ] {
        assert_eq!(violations("host.rs", text, &internals).len(), 1, "`{text}`");
    }
    let push = violations(
        "h.rs",
        "use skblab_core::mptcp::push::Scheduler;\n",
        &internals,
    );
    assert_eq!(
        push,
        [
            "h.rs: `skblab_core::mptcp::push::Scheduler` reaches into mptcp/push.rs: \
          import it from `skblab_core::mptcp`"
        ]
    );
    let fine = [
        "use skblab_core::rx::{self, HeadSource::*, Mem};\nfn f() { rx::copied(s); rx::Mem::new() }\n",
        "use skblab_core::mptcp::{MptcpOp, Scheduler};\n",
        "fn f() { skblab_core::send::Variant::TODAY.name() }\n",
        "use skblab_core::kernel_report::Side;\n",
        "fn f(c: &Capture) { skblab_core::capture::lessons(c); }\n",
        "// skblab_core::rx::driver::fragsz in a comment\n",
        "use crate::kernel::rx::driver::x;\n",
    ];
    for text in fine {
        let got = violations("host.rs", text, &internals);
        assert!(got.is_empty(), "`{text}`: {got:?}");
    }
}

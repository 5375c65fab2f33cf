//! The runner's layers, written once in [`LAYERS`], lowest first: a module uses only modules
//! of earlier rows; the modules of one row are peers and use none of each other (the TAP
//! runs and the kernel oracle share `net/`, never each other's insides). ARCHITECTURE.md's
//! code map points here.
//!
//! The check reads every `crate::x` path in native-runner/src/**/*.rs up to the file's first
//! `#[cfg(test)]` (tests may use anything) and names each one that points up or sideways.

use std::path::Path;

const LAYERS: &[&[&str]] = &[
    // Where every result goes: stdout, stderr, the files the runner creates.
    &["output"],
    // What moves bytes and prints, knowing no command: the network layer, the terminal text,
    // the native or wasm engine, the static server.
    &["net", "render", "engine", "serve"],
    // Reading scenario files and flags.
    &["cli"],
    // The commands built on them.
    &["tap", "kernel", "quiz"],
];

fn row(module: &str) -> Option<usize> {
    LAYERS.iter().position(|r| r.contains(&module))
}

/// Each import in `text` (of top-level module `from`) that points up or sideways.
fn violations(from: &str, text: &str) -> Vec<String> {
    let Some(own) = row(from) else {
        return vec![format!("{from}: not in LAYERS")];
    };
    let code = text.split("#[cfg(test)]").next().unwrap_or_default();
    let mut out = Vec::new();
    for (n, line) in code.lines().enumerate() {
        for (i, _) in line.match_indices("crate::") {
            let to: String = line[i + 7..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if to == from || to.is_empty() {
                continue;
            }
            match row(&to) {
                Some(r) if r < own => {}
                _ => out.push(format!("{from} line {}: uses crate::{to}", n + 1)),
            }
        }
    }
    out
}

fn files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).expect("native-runner/src reads") {
        let p = e.expect("a directory entry").path();
        if p.is_dir() {
            files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

#[test]
fn every_import_points_down() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut all = Vec::new();
    files(&src, &mut all);
    let mut bad = Vec::new();
    for p in &all {
        let rel = p.strip_prefix(&src).expect("under src");
        let first = rel.components().next().expect("a file");
        let name = first.as_os_str().to_string_lossy();
        let module = name.trim_end_matches(".rs");
        if module == "lib" || module == "main" {
            continue;
        }
        let text = std::fs::read_to_string(p).expect("a source file reads");
        bad.extend(violations(module, &text));
    }
    assert!(all.len() > 20, "read only {} files", all.len());
    assert!(
        bad.is_empty(),
        "imports that point up or sideways:\n{}",
        bad.join("\n")
    );
}

/// The check can fail: the TAP runs reaching into the oracle, and the network layer into a
/// command, are caught; a test module is not read.
#[test]
fn a_sideways_or_upward_import_is_caught() {
    assert_eq!(
        violations("tap", "use crate::kernel::probe;\n"),
        ["tap line 1: uses crate::kernel"]
    );
    assert_eq!(
        violations("net", "fn f() { crate::cli::read_scenario(p) }\n"),
        ["net line 1: uses crate::cli"]
    );
    assert!(violations("kernel", "use crate::net::netns;\nuse crate::cli;\n").is_empty());
    assert!(violations("net", "#[cfg(test)]\nmod tests { use crate::tap::x; }\n").is_empty());
}

//! The runner's layers, written once in [`LAYERS`], lowest first: a module uses only modules
//! of earlier rows; the modules of one row are peers and use none of each other (the TAP
//! runs and the kernel oracle share `net/`, never each other's insides). ARCHITECTURE.md's
//! code map points here.
//!
//! The check reads every in-crate path of native-runner/src/**/*.rs outside a
//! `#[cfg(test)] mod` (tests may use anything) with the import reader the core's layer test
//! uses (tests/imports.rs: groups, `super::super::`, a `use` in a function, code after a
//! test-only item), and names each one that points up or sideways.

#[path = "../../tests/imports.rs"]
mod imports;

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
    // Built on the oracle's probes and its run trait.
    &["trace"],
];

fn row(module: &str) -> Option<usize> {
    LAYERS.iter().position(|r| r.contains(&module))
}

/// Each import in `text` (the file `file` under src/) that points up or sideways.
fn violations(file: &str, text: &str) -> Vec<String> {
    let at = imports::module_of(file);
    let Some(from) = at.first() else {
        return vec![];
    };
    let Some(own) = row(from) else {
        return vec![format!("{file}: `{from}` is not in LAYERS")];
    };
    let mut out = Vec::new();
    for to in imports::imports(&imports::code(text), &at) {
        let to = match to {
            Ok(segs) => segs.join("::"),
            Err(e) => {
                out.push(format!("{file}: {e}"));
                continue;
            }
        };
        let top = to.split("::").next().unwrap_or_default();
        match row(top) {
            _ if top == from => {}
            Some(r) if r < own => {}
            _ => out.push(format!("{file}: uses crate::{top}")),
        }
    }
    out.sort();
    out.dedup();
    out
}

#[test]
fn every_import_points_down() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let all = imports::sources(&src);
    let bad: Vec<String> = (all.iter())
        .flat_map(|(file, text)| violations(file, text))
        .collect();
    assert!(all.len() > 20, "read only {} files", all.len());
    assert!(
        bad.is_empty(),
        "imports that point up or sideways:\n{}",
        bad.join("\n")
    );
}

/// The check can fail: each way of writing an import that points up or sideways is caught;
/// a test module is not read, and what follows a test-only item is.
#[test]
fn a_sideways_or_upward_import_is_caught() {
    let cases = [
        ("tap/mod.rs", "use crate::kernel::probe;\n"),
        ("net/mod.rs", "fn f() { crate::cli::read_scenario(p) }\n"),
        ("tap/session.rs", "use crate::{net::wire, kernel::probe};\n"),
        ("net/tcp/mod.rs", "use crate::net::{wire, tcp::{Chunk, cli}};\nuse super::super::cli;\n"),
        ("tap/plan.rs", "fn f() {\n    use super::super::kernel::verdict;\n}\n"),
        ("net/tcp/send.rs", "pub(crate) use self::super::super::super::tap::Plan;\n"),
        (
            "net/tcp/mod.rs",
            "#[cfg(test)]\nmod pair;\n#[cfg(test)]\nfn listen() {}\nfn f() -> crate::quiz::Quiz {}\n",
        ),
        ("net/mod.rs", "pub mod fuzzing {\n    pub use super::super::tap::x;\n}\n"),
    ];
    let want = [
        "tap/mod.rs: uses crate::kernel",
        "net/mod.rs: uses crate::cli",
        "tap/session.rs: uses crate::kernel",
        "net/tcp/mod.rs: uses crate::cli",
        "tap/plan.rs: uses crate::kernel",
        "net/tcp/send.rs: uses crate::tap",
        "net/tcp/mod.rs: uses crate::quiz",
        "net/mod.rs: uses crate::tap",
    ];
    for ((file, text), want) in cases.into_iter().zip(want) {
        assert_eq!(violations(file, text), [want], "{file}: `{text}`");
    }
    let climbs = violations("net/mod.rs", "use super::super::x;");
    assert_eq!(
        climbs,
        ["net/mod.rs: `super::super::x` climbs past the crate root"]
    );
    assert!(violations("kernel/mod.rs", "use crate::net::netns;\nuse crate::cli;\n").is_empty());
    assert!(violations("tap/plan.rs", "use super::session;\nuse self::inner::X;\n").is_empty());
    let inline =
        "pub mod fuzzing {\n    pub use super::wire::parse;\n}\nuse self::tcp::Endpoint;\n";
    assert!(violations("net/mod.rs", inline).is_empty());
    let test = "#[cfg(test)]\nmod tests {\n    use crate::tap::x;\n}\nuse crate::net::wire;\n";
    assert!(violations("net/mod.rs", test).is_empty());
}

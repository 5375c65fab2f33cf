//! The scenario corpus (raw and structured, and every regression) through the core natively
//! and as the wasm module under wasmtime: byte-identical trace JSON or error, in every variant.
//! Needs the module (`cargo xtask build-wasm-module`; `cargo xtask test` builds it).
#![cfg(feature = "runner")]

use skblab_core::{RunOptions, Scenario};
use skblab_fuzz::scenario::edited_text;
use skblab_runner::engine::{run_json, Engine, WasmHost};
use std::path::Path;

fn inputs(target: &str) -> Vec<Vec<u8>> {
    let fuzz = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut all = Vec::new();
    for kind in ["corpus", "regressions"] {
        let Ok(dir) = std::fs::read_dir(fuzz.join(kind).join(target)) else {
            continue;
        };
        let mut files: Vec<_> = dir.map(|e| e.expect("a corpus entry").path()).collect();
        files.sort();
        all.extend(
            files
                .iter()
                .map(|f| std::fs::read(f).expect("a corpus file")),
        );
    }
    all
}

#[test]
fn the_scenario_corpus_is_byte_identical_under_wasmtime() {
    WasmHost::shared().unwrap_or_else(|e| panic!("{e}"));
    let raw = inputs("scenario_text")
        .into_iter()
        .filter_map(|b| String::from_utf8(b).ok());
    let edited = inputs("scenario_struct")
        .into_iter()
        .filter_map(|b| edited_text(&b));
    let mut runs = 0;
    for text in raw.chain(edited) {
        let variants = Scenario::parse(&text).map_or(&[][..], |s| s.variants());
        for variant in std::iter::once(None).chain(variants.iter().map(|v| Some(v.to_string()))) {
            let opts = RunOptions::traced(variant.as_deref());
            let native = run_json(Engine::Native, &text, &opts);
            let wasm = run_json(Engine::Wasm, &text, &opts);
            assert!(
                native == wasm,
                "engines differ on {text:.200}\nnative: {native:.300?}\nwasm: {wasm:.300?}"
            );
            runs += 1;
        }
    }
    assert!(runs > 0, "no scenario corpus");
    eprintln!("{runs} runs compared");
}

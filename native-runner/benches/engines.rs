//! Native vs wasm engine: how long the core takes on the seed-000 matrix in each, and what the
//! module costs to load (compile cold, load from the compiled-module cache, one empty call).
//!
//! `cargo bench -p skblab-runner --bench engines` runs the matrix; `-- FILE...` times those
//! scenario files instead. Needs the module built (see `docs/wasm-abi.md`).
//!
//! The matrix as scenario text: a scenario drives one socket, and the seed's sockets are
//! independent and alike, so each cell (sockets x write size) is the op sequence of one of its
//! sockets in `skblab_core::send::run_cell` (write after write, transmit and ack every
//! `MATRIX_WINDOW` bytes, then close), cut to the scenario caps (`MAX_TOTAL_BYTES`,
//! `MAX_WRITES`). A window's writes are one op with a `count`, so the time goes to the model,
//! not to parsing 10,000 ops. Every cell runs in every variant, counters only, through the whole
//! engine path a CLI run takes (parse, run, serialize; for wasm also instantiate and copy).

use skblab_core::limits::{MAX_TOTAL_BYTES, MAX_WRITES};
use skblab_core::send::{MATRIX_SOCKETS, MATRIX_TOTAL, MATRIX_WINDOW, MATRIX_WRITES};
use skblab_core::{RunOptions, Scenario};
use skblab_runner::engine::{self, module_path, Engine, Limits, WasmHost};
use std::time::{Duration, Instant};

/// Each case is timed this many times; the fastest counts (least disturbed by other load).
const REPEAT: usize = 5;

fn main() {
    let path = module_path().unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(1)
    });
    load_times(&path);
    let files: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let cases = if files.is_empty() {
        matrix()
    } else {
        files
            .iter()
            .map(|f| {
                (
                    f.clone(),
                    std::fs::read_to_string(f).expect("readable file"),
                )
            })
            .collect()
    };
    let only = std::env::var("ONLY").unwrap_or_default();
    let cases: Vec<_> = cases
        .into_iter()
        .filter(|(n, _)| n.contains(&only))
        .collect();
    compare(&cases);
}

fn load_times(path: &std::path::Path) {
    let wasm = std::fs::read(path).expect("readable module");
    let t = Instant::now();
    WasmHost::from_bytes(&wasm, Limits::default()).expect("module compiles");
    println!(
        "module {} ({} KiB): compile {:.1} ms",
        path.display(),
        wasm.len() >> 10,
        ms(t.elapsed())
    );
    WasmHost::load(path, Limits::default()).expect("module loads"); // fills the cache
    let host = WasmHost::load(path, Limits::default()).expect("module loads");
    let l = host.loaded();
    println!(
        "load from cache: {:.1} ms (from cache: {}, {})",
        ms(l.elapsed),
        l.from_cache,
        l.cache
            .as_ref()
            .map_or("no cache".into(), |c| c.display().to_string())
    );
    let empty = "mechanism = \"sendmsg\"\nops = []\n";
    let opts = RunOptions::default();
    let best = (0..REPEAT)
        .map(|_| time(|| host.run_json(empty, &opts).map(drop)).0)
        .min()
        .unwrap();
    println!(
        "one call with no ops (instantiate, run, copy): {:.3} ms",
        ms(best)
    );
}

/// The seed's 9 socket counts x 4 write sizes, as one-socket scenarios (see the module doc).
fn matrix() -> Vec<(String, String)> {
    let mut cases = Vec::new();
    for sockets in MATRIX_SOCKETS {
        for write in MATRIX_WRITES {
            let w = u64::from(write);
            let per_window = MATRIX_WINDOW.div_ceil(w);
            let writes = (MATRIX_TOTAL / (u64::from(sockets) * w))
                .min(MAX_TOTAL_BYTES / w)
                .min(MAX_WRITES);
            let window = format!(r#"{{"op":"sendmsg","bytes":{w},"count":{per_window}}}"#);
            let flush = r#"{"op":"transmit"},{"op":"ack"}"#;
            let mut ops = vec![format!("{window},{flush}"); (writes / per_window) as usize];
            let rest = writes % per_window;
            if rest > 0 {
                ops.push(format!(
                    r#"{{"op":"sendmsg","bytes":{w},"count":{rest}}},{flush}"#
                ));
            }
            ops.push(r#"{"op":"close"}"#.into());
            let text = format!(r#"{{"mechanism":"sendmsg","ops":[{}]}}"#, ops.join(","));
            cases.push((format!("{sockets:>3} sockets x {write:>5} B"), text));
        }
    }
    cases
}

fn compare(cases: &[(String, String)]) {
    let host = WasmHost::shared().expect("module loads");
    let (mut native_all, mut wasm_all, mut max_fuel, mut runs) =
        (Duration::ZERO, Duration::ZERO, 0, 0);
    println!(
        "\n{:<28} {:>10} {:>10} {:>7} {:>14}",
        "case", "native ms", "wasm ms", "ratio", "fuel"
    );
    for (name, text) in cases {
        let variants: Vec<String> = match Scenario::parse(text) {
            Ok(s) => s.variants().iter().map(|v| v.to_string()).collect(),
            Err(e) => {
                println!("{name}: {e}");
                continue;
            }
        };
        let (mut native, mut wasm, mut fuel) = (Duration::ZERO, Duration::ZERO, 0);
        for v in variants {
            let opts = RunOptions::counters(Some(&v));
            let n = best(|| engine::run_json(Engine::Native, text, &opts));
            let request = host.request(text, &opts).expect("request encodes");
            let w = best(|| host.call(&request).map(|(json, _)| json));
            assert_eq!(n.1, w.1, "{name}: the engines disagree");
            fuel = fuel.max(host.call(&request).map_or(0, |(_, f)| f));
            native += n.0;
            wasm += w.0;
            runs += 1;
        }
        println!(
            "{name:<28} {:>10.2} {:>10.2} {:>7.2} {:>14}",
            ms(native),
            ms(wasm),
            wasm.as_secs_f64() / native.as_secs_f64(),
            fuel
        );
        native_all += native;
        wasm_all += wasm;
        max_fuel = max_fuel.max(fuel);
    }
    println!(
        "\ntotal over {runs} runs: native {:.1} ms, wasm {:.1} ms, wasm/native = {:.2}",
        ms(native_all),
        ms(wasm_all),
        wasm_all.as_secs_f64() / native_all.as_secs_f64()
    );
    println!(
        "most fuel one run used: {max_fuel} ({:.1} % of the default budget {})",
        100.0 * max_fuel as f64 / Limits::default().fuel as f64,
        Limits::default().fuel
    );
}

/// The fastest of [`REPEAT`] runs, and the result (which must be the same every time).
fn best<T: PartialEq + std::fmt::Debug>(f: impl Fn() -> T) -> (Duration, T) {
    let (mut fastest, first) = time(&f);
    for _ in 1..REPEAT {
        let (t, r) = time(&f);
        assert_eq!(r, first, "a run gave a different result");
        fastest = fastest.min(t);
    }
    (fastest, first)
}

fn time<T>(f: impl FnOnce() -> T) -> (Duration, T) {
    let t = Instant::now();
    let r = f();
    (t.elapsed(), r)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

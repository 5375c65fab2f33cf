//! `cargo xtask <task>`: the developer tasks cargo alone does not cover.
//!
//! - `setup`       the wasm32 target and wasm-bindgen-cli (idempotent, instant when done)
//! - `build-web`   the playground into `dist/`
//! - `serve`       build-web, then `skblab serve --dir dist` (`--port N`, default 8080)
//! - `test-web`    build-web, then the browser tests in headless Chromium
//! - `bench-web`   build-web, then wasm size, first render and per-step render time
//! - `build-wasm-module`  the core as a wasm module for `skblab --engine wasm` (wasm-engine
//!   profile: the engine wants fast code, not small code; see docs/wasm-abi.md)
//! - `test`        everything CI runs (installs what is missing first)

mod test;
mod wasm;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

const USAGE: &str =
    "usage: cargo xtask <setup | build-web | build-wasm-module | serve [--port N] | test | test-web | bench-web>";

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("setup") => setup().map(|_| ()),
        Some("build-web") => build_web().map(|_| ()),
        Some("serve") => port_arg(&args[1..]).and_then(serve),
        Some("test-web") => browser("test"),
        Some("bench-web") => browser("bench"),
        Some("build-wasm-module") => wasm::ensure_wasm_target()
            .and_then(|tc| wasm::build_wasm_module(&tc))
            .map(|_| ()),
        Some("test") => test::all(),
        _ => Err(USAGE.to_string()),
    };
    if let Err(e) = result {
        eprintln!("xtask: error: {e}");
        std::process::exit(1);
    }
}

/// The workspace root (xtask lives one level below it).
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask is inside the workspace")
        .to_path_buf()
}

/// Says what is about to happen.
pub fn step(what: &str) {
    eprintln!("xtask: {what}");
}

/// Runs `cmd`, failing with its name when it fails.
pub fn run(cmd: &mut Command) -> Result<(), String> {
    let name = format!("{cmd:?}");
    let status = cmd
        .status()
        .map_err(|e| format!("cannot start {name}: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("{name} failed ({status})"))
    }
}

fn cargo() -> Command {
    let mut c = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    c.current_dir(root());
    c
}

fn port_arg(args: &[String]) -> Result<u16, String> {
    match args {
        [] => Ok(8080),
        [flag, n] if flag == "--port" => n
            .parse()
            .map_err(|_| format!("--port {n}: expected a port number 0..=65535")),
        _ => Err(USAGE.to_string()),
    }
}

fn setup() -> Result<(wasm::WasmToolchain, PathBuf), String> {
    let tc = wasm::ensure_wasm_target()?;
    let bindgen = wasm::ensure_wasm_bindgen()?;
    Ok((tc, bindgen))
}

/// Builds the playground into `dist/`: the wasm, its JS glue, index.html and static assets.
fn build_web() -> Result<PathBuf, String> {
    let (tc, bindgen) = setup()?;
    let wasm = wasm::cargo_build_wasm(&tc, "skblab-web")?;
    let dist = root().join("dist");
    step("wasm-bindgen --target web --out-dir dist");
    run(Command::new(&bindgen)
        .args(["--target", "web", "--no-typescript"])
        // The name section only helps a debugger; it is a third of the file.
        .args([
            "--remove-name-section",
            "--remove-producers-section",
            "--out-dir",
        ])
        .arg(&dist)
        .arg(&wasm))?;
    step("copying index.html and web/static/ into dist/");
    copy(&root().join("index.html"), &dist.join("index.html"))?;
    let assets = root().join("web/static");
    for entry in std::fs::read_dir(&assets).map_err(|e| format!("{}: {e}", assets.display()))? {
        let p = entry.map_err(|e| e.to_string())?.path();
        if p.is_file() {
            copy(&p, &dist.join(p.file_name().expect("a file name")))?;
        }
    }
    // The playground fetches the walkthrough and challenge files rather than carrying them
    // in its wasm (the core's `embedded` feature is off there).
    for dir in ["walkthroughs", "challenges"] {
        step(&format!("copying core/{dir}/ into dist/{dir}/"));
        copy_tomls(&root().join("core").join(dir), &dist.join(dir))?;
    }
    Ok(dist)
}

/// Copies every `*.toml` file of `from` into `to`, which is emptied first.
fn copy_tomls(from: &Path, to: &Path) -> Result<(), String> {
    let _ = std::fs::remove_dir_all(to);
    std::fs::create_dir_all(to).map_err(|e| format!("{}: {e}", to.display()))?;
    for entry in std::fs::read_dir(from).map_err(|e| format!("{}: {e}", from.display()))? {
        let p = entry.map_err(|e| e.to_string())?.path();
        if p.extension().is_some_and(|x| x == "toml") {
            copy(&p, &to.join(p.file_name().expect("a file name")))?;
        }
    }
    Ok(())
}

fn copy(from: &Path, to: &Path) -> Result<(), String> {
    std::fs::copy(from, to)
        .map(|_| ())
        .map_err(|e| format!("copying {} to {}: {e}", from.display(), to.display()))
}

/// The `skblab` binary (built in the dev profile, shared with `cargo test`).
fn skblab_bin() -> Result<PathBuf, String> {
    step("cargo build -p skblab-runner");
    run(cargo().args(["build", "--quiet", "-p", "skblab-runner"]))?;
    Ok(root().join("target/debug/skblab"))
}

fn serve(port: u16) -> Result<(), String> {
    let dist = build_web()?;
    let bin = skblab_bin()?;
    step(&format!("skblab serve --dir dist --port {port}"));
    run(Command::new(bin)
        .arg("serve")
        .arg("--dir")
        .arg(dist)
        .args(["--port", &port.to_string()]))
}

/// A running `skblab serve`, stopped when dropped (even when a test fails).
struct Server {
    child: Child,
    url: String,
}

impl Server {
    fn start(bin: &Path, dist: &Path) -> Result<Server, String> {
        step("skblab serve --dir dist --port 0 (a free port)");
        let mut child = Command::new(bin)
            .arg("serve")
            .arg("--dir")
            .arg(dist)
            .args(["--port", "0"])
            .stdout(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", bin.display()))?;
        let mut line = String::new();
        let stdout = child.stdout.take().expect("piped stdout");
        let _ = BufReader::new(stdout).read_line(&mut line);
        let url = line
            .split_whitespace()
            .find(|w| w.starts_with("http://"))
            .map(String::from);
        match url {
            Some(url) => Ok(Server { child, url }),
            None => {
                let _ = child.kill();
                Err(format!("skblab serve printed no URL: {line:?}"))
            }
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

const CHROMIUM: &str = "/usr/bin/chromium";

fn ensure_playwright(dir: &Path) -> Result<(), String> {
    // Every dependency the tests import: a node_modules/ from before one was added installs again.
    let installed = ["playwright-core", "axe-core"].iter().all(|p| {
        dir.join("node_modules")
            .join(p)
            .join("package.json")
            .is_file()
    });
    if installed {
        return Ok(());
    }
    let ci = dir.join("package-lock.json").is_file();
    step(if ci {
        "npm ci (tests/browser)"
    } else {
        "npm install (tests/browser)"
    });
    run(Command::new("npm")
        .current_dir(dir)
        .arg(if ci { "ci" } else { "install" })
        .args(["--no-audit", "--no-fund"]))
}

/// Builds, serves and drives the playground in headless Chromium: `test` runs the browser
/// tests with node's test runner, `bench` prints the performance figures.
fn browser(what: &str) -> Result<(), String> {
    let dist = build_web()?;
    test::ensure_debian_packages()?;
    let tests = root().join("tests/browser");
    ensure_playwright(&tests)?;
    let bin = skblab_bin()?;
    let server = Server::start(&bin, &dist)?;
    let shots = root().join("target/screenshots");
    std::fs::create_dir_all(&shots).map_err(|e| format!("{}: {e}", shots.display()))?;
    let mut node = Command::new("node");
    node.current_dir(&tests)
        .env("SKBLAB_URL", &server.url)
        .env("SKBLAB_BIN", &bin)
        .env("SKBLAB_DIST", &dist)
        .env("SKBLAB_SCREENSHOTS", &shots)
        .env("CHROMIUM", CHROMIUM);
    if what == "test" {
        step(&format!(
            "node --test (browser tests against {})",
            server.url
        ));
        // A test that hangs fails by name after five minutes (the longest takes about 30 s)
        // instead of holding CI to its limit.
        node.args(["--test", "--test-concurrency=1", "--test-timeout=300000"])
            .args(browser_tests(&tests)?);
    } else {
        step(&format!("node bench.mjs (against {})", server.url));
        node.arg("bench.mjs");
    }
    let result = run(&mut node);
    drop(server);
    result?;
    if what == "test" {
        check_bundle(&dist)?;
    }
    Ok(())
}

/// Every browser test file: each `*.test.mjs` in `dir`, in name order, so a new one runs
/// without being listed anywhere.
fn browser_tests(dir: &Path) -> Result<Vec<String>, String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut out = Vec::new();
    for e in entries {
        let name = e
            .map_err(|e| format!("{}: {e}", dir.display()))?
            .file_name();
        let name = name.to_string_lossy();
        if name.ends_with(".test.mjs") {
            out.push(name.into_owned());
        }
    }
    out.sort();
    if out.is_empty() {
        return Err(format!("no *.test.mjs in {}", dir.display()));
    }
    Ok(out)
}

/// The wasm's size goal, what a learner waits for before anything runs: 300 KiB gzip from
/// issue 12, 315 KiB after both-lane event stepping, the legibility work, lesson files, the
/// handout and self-explaining reveals; since TOML is read without std's float parser and
/// the render passes of issue 22 (307,900 B), that size and 600 B, so the bundle cannot grow
/// unnoticed; since the eighth pass drew the moves ahead, their pieces parsed (310,358 B),
/// 310,500 B (docs/playground-performance.md); since the stop that typed and checked the
/// kernel report against the model (8.9 KB), bounded lessons and explanations, kept homework
/// links, lesson paragraphs, the lesson's kernel line, the filter notice and bounded picks
/// (328,822 B, about 5 KB of it not yet traced to one change), 329,500 B; since issue 36's
/// classroom (stage mode, the legend of the marks used, citations, the handout's moments,
/// counters and worksheet, slides and the deck, the embed view: 13.5 KB, measured 342,424 B
/// against main's 328,890 B), 343,000 B; merged with lockstep by input and the key moments
/// (5.6 KB) and the receive queue's coalescing (2.4 KB): 350,433 B, and 351,000 B; since
/// issue 38's hostile-input fixes and the deque of live pages, less the 380 B taken back
/// (351,055 B), 351,500 B; since issue 35's capture in the playground (a `skblab trace`
/// capture opened as a lane: the core's reader of the format, `Capture::parse`, with the
/// page's opening of it, 16.6 KB, the trace made of it, `Capture::trace`, 3.4 KB, and its
/// `seen_*` events, 0.9 KB: 371,516 B against 350,632 B before; with the captured stacks
/// read too, 372,274 B), 372,800 B; since a large capture opens quickly (its reader reads the
/// text straight into the capture's types with serde_json's own reader, about 7 times less
/// CPU than through a JSON value, its derived `Deserialize` compiled for that reader: 13.4 KB,
/// measured 385,715 B against main's 372,361 B) and the model's prediction beside a capture
/// (the scenario derived from it, its run stepped beside the capture's lane, each write's skbs
/// judged and drawn as the kernel lane's, the editor's offered text: 12.6 KB, 384,985 B against
/// 372,361 B) and the model's call paths (each model event's path to its kernel function, 43
/// paths of frames as static data, and the page's markup of them: 4.4 KB, 376,746 B against
/// 372,361 B), with an emitted event applied at its call site (issue 37's counters-only
/// speed, 2.9 KB): all merged, 405,924 B, 406,400 B; since a captured event's stack in its
/// pane (the core's `Capture::stack`, the release's Elixir tag, the frames' markup: 1.0 KB)
/// and event lockstep beside a capture (the core's `Compared::partner`, its words for an
/// event without a partner, the navigation's use of it: 1.1 KB), 407,941 B against main's
/// 405,862 B, 408,400 B; since the model's call paths for 21 more events, picked by the op
/// that emitted each (`Step::name`), told as one string a path (which cost some 740 B more
/// than static frames, the first thing to take back): merged with the above, 410,244 B,
/// 410,700 B.
const WASM_GZIP_BUDGET: u64 = 410_700;

/// Fails when the playground's wasm passes its budget; prints every part's gzip size.
fn check_bundle(dist: &Path) -> Result<(), String> {
    let wasm = gzip_size(&dist.join("skblab_web_bg.wasm"))?;
    let js = gzip_size(&dist.join("skblab_web.js"))?;
    step(&format!(
        "bundle: wasm {wasm} B gzip (budget {WASM_GZIP_BUDGET}), JS glue {js} B; \
         the walkthrough and challenge files come beside it"
    ));
    if wasm > WASM_GZIP_BUDGET {
        return Err(format!(
            "the playground's wasm is {wasm} B gzip, over its budget of {WASM_GZIP_BUDGET} B"
        ));
    }
    Ok(())
}

/// The size of `file` compressed by `gzip -9`, as a web server would send it.
fn gzip_size(file: &Path) -> Result<u64, String> {
    let out = Command::new("gzip")
        .args(["-9", "-c"])
        .arg(file)
        .output()
        .map_err(|e| format!("gzip {}: {e}", file.display()))?;
    if !out.status.success() {
        return Err(format!("gzip {} failed", file.display()));
    }
    Ok(out.stdout.len() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every `*.test.mjs` runs, a new one included; helpers and the bench do not.
    #[test]
    fn every_browser_test_file_is_found() {
        let dir = std::env::temp_dir().join(format!("xtask-browser-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for f in [
            "b.test.mjs",
            "a.test.mjs",
            "lib.mjs",
            "bench.mjs",
            "c.test.mjs.orig",
        ] {
            std::fs::write(dir.join(f), "").unwrap();
        }
        let found = browser_tests(&dir);
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(found.unwrap(), ["a.test.mjs", "b.test.mjs"]);
        let real = browser_tests(&root().join("tests/browser")).unwrap();
        assert!(real.iter().any(|f| f == "playground.test.mjs"), "{real:?}");
    }

    /// ARCHITECTURE.md's figure for the bundle budget is the one `check_bundle` enforces.
    #[test]
    fn the_architecture_document_states_the_budget() {
        let doc = std::fs::read_to_string(root().join("ARCHITECTURE.md")).unwrap();
        let b = WASM_GZIP_BUDGET;
        let figure = format!("{},{:03} B", b / 1000, b % 1000);
        assert!(
            doc.contains(&figure),
            "ARCHITECTURE.md should say the budget, {figure}"
        );
    }
}

//! `cargo xtask test`: every check CI runs, cheapest first, on a fresh machine or a warm one.
//!
//! Installs what is missing (the wasm toolchain through `setup`; Chromium for the browser
//! tests, tshark for the TAP captures, bpftrace for `skblab kernel` and `skblab trace`, and
//! curl and python3 for the trace of a program the repository did not write, through apt
//! when root), then: rustfmt, clippy over the workspace, the wasm module the engine tests load,
//! `cargo test --workspace` (core, runner, snapshots, wasm-vs-native, TAP and eBPF runs
//! against the kernel, fuzz corpus replay, the web and wasm-module unit tests, xtask), and
//! the browser tests.

use crate::{cargo, run, step, wasm};
use std::path::Path;
use std::process::Command;

/// Debian packages the tests use, each with a file that shows it is installed.
const DEBIAN: &[(&str, &str)] = &[
    ("chromium", "/usr/bin/chromium"),
    ("chromium-driver", "/usr/bin/chromedriver"),
    ("tshark", "/usr/bin/tshark"),
    ("bpftrace", "/usr/bin/bpftrace"),
    ("curl", "/usr/bin/curl"),
    ("python3", "/usr/bin/python3"),
];

/// Installs the missing [`DEBIAN`] packages with one `apt-get update`.
pub fn ensure_debian_packages() -> Result<(), String> {
    let missing: Vec<&str> = DEBIAN
        .iter()
        .filter(|(_, file)| !Path::new(file).exists())
        .map(|(pkg, _)| *pkg)
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    step(&format!(
        "apt-get update && apt-get install -y {}",
        missing.join(" ")
    ));
    run(Command::new("apt-get").arg("update").arg("-q"))?;
    run(Command::new("apt-get")
        .args(["install", "-y", "-q", "--no-install-recommends"])
        .args(&missing)
        .env("DEBIAN_FRONTEND", "noninteractive"))
}

pub fn all() -> Result<(), String> {
    let (tc, _) = crate::setup()?;
    ensure_debian_packages()?;
    step("cargo fmt --all --check");
    run(cargo().args(["fmt", "--all", "--check"]))?;
    step("cargo clippy --workspace --all-targets -- -D warnings");
    run(cargo()
        .args(["clippy", "--quiet", "--workspace", "--all-targets"])
        .args(["--", "-D", "warnings"]))?;
    step("cargo clippy -p skblab-web --target wasm32-unknown-unknown -- -D warnings");
    run(cargo()
        .args([
            "clippy",
            "--quiet",
            "-p",
            "skblab-web",
            "--target",
            wasm::TARGET,
        ])
        .args(["--", "-D", "warnings"])
        .envs(tc.env.iter().map(|(k, v)| (k, v))))?;
    // The module users run with `--engine wasm`, so the engine tests check that build.
    let module = wasm::build_wasm_module(&tc)?;
    step("cargo test --workspace (core, runner, snapshots, engines, TAP, fuzz corpus replay, web, wasm module, xtask)");
    run(cargo()
        .args(["test", "--quiet", "--no-fail-fast", "--workspace"])
        .env("SKBLAB_WASM", &module))?;
    live_fuzz()?;
    crate::browser("test")
}

/// Each fuzz target and how many inputs the live run tries: about a minute in all.
const FUZZ_TARGETS: &[(&str, u32)] = &[
    ("scenario_text", 300_000),
    ("scenario_struct", 40_000),
    ("permalink", 500_000),
    ("tap_frames", 200_000),
];

/// A short live run of every fuzz target, where the nightly toolchain and cargo-fuzz are
/// installed (the fuzz crate needs both); elsewhere it says it skipped. The run is the same
/// every time (a fixed seed, a fixed number of inputs, an emptied scratch corpus), so a CI
/// failure reproduces and never depends on timing; long exploring runs are `cargo fuzz run`
/// by hand (docs/fuzzing.md). The committed corpus (`fuzz/corpus/`) only seeds the run.
fn live_fuzz() -> Result<(), String> {
    if !nightly_fuzz()
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
    {
        step(
            "live fuzz: skipped (needs the nightly toolchain and cargo-fuzz: \
             `rustup toolchain install nightly && cargo install cargo-fuzz`)",
        );
        return Ok(());
    }
    let scratch = crate::root().join("target/fuzz-live");
    for (target, runs) in FUZZ_TARGETS {
        let new = scratch.join(target);
        let _ = std::fs::remove_dir_all(&new);
        std::fs::create_dir_all(&new).map_err(|e| format!("{}: {e}", new.display()))?;
        step(&format!("live fuzz: {target}, {runs} inputs from seed 1"));
        run(nightly_fuzz()
            .args(["run", "--sanitizer", "none", "--debug-assertions"])
            .args(["--features", "runner", target])
            .arg(&new)
            .arg(format!("corpus/{target}"))
            .args(["--", "-seed=1", &format!("-runs={runs}"), "-timeout=30"]))?;
    }
    step("live fuzz: ran every target, no crash");
    Ok(())
}

/// `cargo fuzz` on the nightly toolchain, in `fuzz/`. Through rustup, since the `cargo` that
/// runs xtask is the stable toolchain's own binary, which knows no `+nightly`.
fn nightly_fuzz() -> Command {
    let mut c = Command::new("rustup");
    c.args(["run", "nightly", "cargo", "fuzz"])
        .current_dir(crate::root().join("fuzz"))
        .env_remove("RUSTC")
        .env_remove("RUSTUP_TOOLCHAIN");
    c
}

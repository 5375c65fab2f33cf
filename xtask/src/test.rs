//! `cargo xtask test`: every check CI runs, cheapest first, on a fresh machine or a warm one.
//!
//! Installs what is missing (the wasm toolchain through `setup`; Chromium for the browser
//! tests, tshark for the TAP captures and bpftrace for `skblab kernel` through apt when
//! root), then: rustfmt, clippy over the workspace, the wasm module the engine tests load,
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

/// Each fuzz target and how long the live run gives it: about a minute in all.
const FUZZ_TARGETS: &[(&str, u32)] = &[
    ("scenario_text", 15),
    ("scenario_struct", 20),
    ("permalink", 10),
    ("tap_frames", 15),
];

/// A short live run of every fuzz target, where the nightly toolchain and cargo-fuzz are
/// installed (the fuzz crate needs both); elsewhere it says it skipped. New inputs go to a
/// scratch directory: the committed corpus (`fuzz/corpus/`) only seeds the run.
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
    for (target, secs) in FUZZ_TARGETS {
        let new = scratch.join(target);
        std::fs::create_dir_all(&new).map_err(|e| format!("{}: {e}", new.display()))?;
        step(&format!("live fuzz: {target} for {secs} s"));
        run(nightly_fuzz()
            .args(["run", "--sanitizer", "none", "--debug-assertions"])
            .args(["--features", "runner", target])
            .arg(&new)
            .arg(format!("corpus/{target}"))
            .args(["--", &format!("-max_total_time={secs}"), "-timeout=30"]))?;
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

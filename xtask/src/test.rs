//! `cargo xtask test`: every check CI runs, cheapest first, on a fresh machine or a warm one.
//!
//! Installs what is missing (the wasm toolchain through `setup`; Chromium for the browser
//! tests and tshark for the TAP captures through apt when root), then: rustfmt, clippy, the
//! wasm module the engine tests load, `cargo test --workspace` (core, runner, snapshots,
//! wasm-vs-native, TAP runs against the kernel, the web and wasm-module unit tests, xtask),
//! and the browser tests.

use crate::{cargo, run, step, wasm};
use std::path::Path;
use std::process::Command;

/// Debian packages the tests use, each with a file that shows it is installed.
const DEBIAN: &[(&str, &str)] = &[
    ("chromium", "/usr/bin/chromium"),
    ("chromium-driver", "/usr/bin/chromedriver"),
    ("tshark", "/usr/bin/tshark"),
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
    step("cargo test --workspace (core, runner, snapshots, engines, TAP, web, wasm module, xtask)");
    run(cargo()
        .args(["test", "--quiet", "--no-fail-fast", "--workspace"])
        .env("SKBLAB_WASM", &module))?;
    crate::browser("test")
}

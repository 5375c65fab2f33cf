//! The wasm32 toolchain, shared by every task that builds for the browser or for wasmtime.
//!
//! - [`ensure_wasm_target`]: the `wasm32-unknown-unknown` standard library, through rustup, or
//!   when rustup cannot download it, built from source with Debian's `rustc-web` toolchain
//!   unpacked (not installed) under `.tools/rustc-web`.
//! - [`cargo_build_wasm`]: `cargo build --profile wasm-release --target wasm32-unknown-unknown -p PACKAGE`
//!   (size-optimised profile) with whatever environment that toolchain needs; returns the `.wasm` path.
//! - [`build_wasm_module`]: the same for the wasm engine's module, speed-optimised
//!   (`wasm-engine` profile).
//! - [`ensure_wasm_bindgen`]: `wasm-bindgen-cli` of exactly the version in Cargo.lock, installed
//!   into `.tools/`.

use crate::{root, run, step};
use std::path::{Path, PathBuf};
use std::process::Command;

pub const TARGET: &str = "wasm32-unknown-unknown";

/// How to invoke cargo for wasm32: extra environment for the fallback toolchain, none with
/// rustup's.
#[derive(Clone, Debug, Default)]
pub struct WasmToolchain {
    pub env: Vec<(String, String)>,
}

/// Makes sure the wasm32 standard library is available; idempotent and instant when it is.
pub fn ensure_wasm_target() -> Result<WasmToolchain, String> {
    if rustup_has_target() {
        return Ok(WasmToolchain::default());
    }
    let fallback = root().join(".tools/rustc-web");
    if fallback.join("ready").is_file() {
        return fallback_toolchain(&fallback);
    }
    step(&format!("rustup target add {TARGET}"));
    let ok = Command::new("rustup")
        .args(["target", "add", TARGET])
        .status()
        .is_ok_and(|s| s.success());
    if ok && rustup_has_target() {
        return Ok(WasmToolchain::default());
    }
    step("rustup could not provide the wasm32 target: building its std from Debian's rustc-web");
    unpack_rustc_web(&fallback)?;
    fallback_toolchain(&fallback)
}

fn rustup_has_target() -> bool {
    Command::new("rustup")
        .args(["target", "list", "--installed"])
        .output()
        .is_ok_and(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .any(|l| l.trim() == TARGET)
        })
}

/// Downloads Debian's rustc-web, its wasm std sources and their libraries, and unpacks them
/// into `prefix` (about 850 MB) without installing anything system-wide.
fn unpack_rustc_web(prefix: &Path) -> Result<(), String> {
    run(Command::new("apt-get").arg("update"))?;
    let std_pkg = apt_depends("libstd-rust-web-dev", "libstd-rust-web-")?;
    let llvm = apt_depends(&std_pkg, "libllvm")?;
    let debs = root().join(".tools/debs");
    std::fs::create_dir_all(&debs).map_err(|e| format!("creating {}: {e}", debs.display()))?;
    run(Command::new("apt-get")
        .current_dir(&debs)
        .args([
            "download",
            "rustc-web",
            "libstd-rust-web-dev",
            "rust-web-src",
        ])
        .args([&std_pkg, &llvm]))?;
    for deb in std::fs::read_dir(&debs).map_err(|e| e.to_string())? {
        let deb = deb.map_err(|e| e.to_string())?.path();
        run(Command::new("dpkg").arg("-x").arg(&deb).arg(prefix))?;
    }
    // rustc looks for the std sources (for -Zbuild-std) under lib/rustlib/src/rust.
    let src = std::fs::read_dir(prefix.join("usr/src"))
        .map_err(|e| format!("rust-web-src unpacked no sources: {e}"))?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("rustc-"))
        })
        .ok_or("rust-web-src unpacked no usr/src/rustc-* folder")?;
    let link = prefix.join("usr/lib/rustlib/src/rust");
    std::fs::create_dir_all(link.parent().expect("has a parent")).map_err(|e| e.to_string())?;
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink(&src, &link).map_err(|e| e.to_string())?;
    let wrapper = prefix.join("rustc");
    let script = format!(
        "#!/bin/sh\nLD_LIBRARY_PATH={p}/usr/lib/x86_64-linux-gnu exec {p}/usr/bin/rustc \"$@\"\n",
        p = prefix.display()
    );
    std::fs::write(&wrapper, script).map_err(|e| e.to_string())?;
    run(Command::new("chmod").arg("+x").arg(&wrapper))?;
    std::fs::write(prefix.join("ready"), "").map_err(|e| e.to_string())
}

/// The first dependency of `pkg` whose name starts with `prefix` (Debian renames versions in
/// place, so names are looked up, not hard-coded).
fn apt_depends(pkg: &str, prefix: &str) -> Result<String, String> {
    let out = Command::new("apt-cache")
        .args(["depends", pkg])
        .output()
        .map_err(|e| format!("apt-cache: {e}"))?;
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.trim().strip_prefix("Depends:"))
        .map(str::trim)
        .find(|d| d.starts_with(prefix))
        .map(String::from)
        .ok_or_else(|| format!("apt-cache depends {pkg}: no dependency named {prefix}*"))
}

fn fallback_toolchain(prefix: &Path) -> Result<WasmToolchain, String> {
    let sysroot = Command::new("rustc")
        .args(["--print", "sysroot"])
        .output()
        .map_err(|e| format!("rustc --print sysroot: {e}"))?;
    let sysroot = String::from_utf8_lossy(&sysroot.stdout).trim().to_string();
    let lld = format!("{sysroot}/lib/rustlib/x86_64-unknown-linux-gnu/bin/rust-lld");
    let env = [
        ("RUSTC", prefix.join("rustc").display().to_string()),
        ("RUSTC_BOOTSTRAP", "1".into()),
        ("CARGO_UNSTABLE_BUILD_STD", "std,panic_abort".into()),
        ("CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_LINKER", lld),
    ];
    Ok(WasmToolchain {
        env: env.into_iter().map(|(k, v)| (k.to_string(), v)).collect(),
    })
}

/// The size-optimised profile of the workspace Cargo.toml: the browser's build.
pub const PROFILE: &str = "wasm-release";

/// The speed-optimised profile the wasm engine's module (`skblab-wasm`) is built with.
pub const ENGINE_PROFILE: &str = "wasm-engine";

/// Builds the module `skblab --engine wasm` loads; returns its path.
pub fn build_wasm_module(tc: &WasmToolchain) -> Result<PathBuf, String> {
    cargo_build_wasm_profile(tc, "skblab-wasm", ENGINE_PROFILE)
}

/// Builds `package` for wasm32 with [`PROFILE`]; returns the path of its `.wasm`.
pub fn cargo_build_wasm(tc: &WasmToolchain, package: &str) -> Result<PathBuf, String> {
    cargo_build_wasm_profile(tc, package, PROFILE)
}

/// Builds `package` for wasm32 with cargo profile `profile`; returns the path of its `.wasm`.
pub fn cargo_build_wasm_profile(
    tc: &WasmToolchain,
    package: &str,
    profile: &str,
) -> Result<PathBuf, String> {
    let mut cmd = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    cmd.current_dir(root())
        .args([
            "build",
            "--profile",
            profile,
            "--target",
            TARGET,
            "-p",
            package,
        ])
        .envs(tc.env.iter().map(|(k, v)| (k, v)));
    step(&format!(
        "cargo build --profile {profile} --target {TARGET} -p {package}"
    ));
    run(&mut cmd)?;
    let wasm = root()
        .join("target")
        .join(TARGET)
        .join(profile)
        .join(format!("{}.wasm", package.replace('-', "_")));
    if wasm.is_file() {
        Ok(wasm)
    } else {
        Err(format!("the build made no {}", wasm.display()))
    }
}

/// The wasm-bindgen version Cargo.lock pins (the CLI must match it exactly).
pub fn locked_wasm_bindgen_version() -> Result<String, String> {
    let lock = std::fs::read_to_string(root().join("Cargo.lock"))
        .map_err(|e| format!("reading Cargo.lock: {e}"))?;
    let mut lines = lock.lines();
    while let Some(l) = lines.next() {
        if l == "name = \"wasm-bindgen\"" {
            if let Some(v) = lines.next().and_then(|v| v.strip_prefix("version = \"")) {
                return Ok(v.trim_end_matches('"').to_string());
            }
        }
    }
    Err("Cargo.lock has no wasm-bindgen: is skblab-web in the workspace?".into())
}

/// `.tools/bin/wasm-bindgen` of the locked version, installed once.
pub fn ensure_wasm_bindgen() -> Result<PathBuf, String> {
    let version = locked_wasm_bindgen_version()?;
    let bin = root().join(".tools/bin/wasm-bindgen");
    let installed = Command::new(&bin).arg("--version").output().is_ok_and(|o| {
        String::from_utf8_lossy(&o.stdout).trim() == format!("wasm-bindgen {version}")
    });
    if installed {
        return Ok(bin);
    }
    step(&format!(
        "cargo install wasm-bindgen-cli --version {version} --root .tools (a few minutes, once)"
    ));
    // No --locked: the CLI's own lockfile names a crate version this registry lacks.
    run(
        Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
            .current_dir(root())
            .args([
                "install",
                "wasm-bindgen-cli",
                "--version",
                &version,
                "--root",
                ".tools",
            ]),
    )?;
    Ok(bin)
}

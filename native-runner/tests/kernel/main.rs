//! `skblab kernel` against the running kernel, each run in a fresh process (the binary
//! unshares its own network and mount namespaces). They need root, /dev/net/tun, bpftrace
//! and kernel BTF; where any is missing they say so and fail, unless SKBLAB_ALLOW_NO_TAP=1
//! asks to skip them (visibly), as the TAP tests do.
//!
//! One test crate (`cargo test --test kernel`), one file per concern: the runs beside the
//! kernel (`send`, `mptcp`, `rx`, and `napi` for tun's NAPI frags path, after `src/kernel/`)
//! and the command itself (`cli`). What they share is here.

#[path = "../common/mod.rs"]
mod common;

mod cli;
mod mptcp;
mod napi;
mod rx;
mod send;

use common::{euid_is_root, Scratch};

use serde_json::Value;
use skblab_core::kernel_report::Report;
use skblab_core::{RunOptions, Scenario};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Whether this machine can run the kernel tests; prints why not, and fails unless skipping
/// is explicitly allowed.
fn kernel_available(test: &str) -> bool {
    let mut missing = Vec::new();
    if !euid_is_root() {
        missing.push("root");
    }
    if std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/net/tun")
        .is_err()
    {
        missing.push("a usable /dev/net/tun");
    }
    if !std::path::Path::new("/usr/bin/bpftrace").exists() {
        missing.push("bpftrace (apt-get install bpftrace)");
    }
    if !std::path::Path::new("/sys/kernel/btf/vmlinux").exists() {
        missing.push("kernel BTF");
    }
    common::runnable(test, &missing)
}

fn scenario(name: &str, text: &str) -> Scratch {
    Scratch::file(&format!("{name}.toml"), text)
}

fn skblab_kernel(path: &Path, extra: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_skblab"))
        .arg("kernel")
        .arg(path)
        .args(extra)
        .output()
        .unwrap()
}

/// Runs `skblab kernel FILE --json`; returns the exit code and the report.
fn report(path: &Path) -> (i32, Value) {
    let out = skblab_kernel(path, &["--json"]);
    (out.status.code().unwrap_or(-1), read_back(&out))
}

/// The report a run printed, read as the playground reads it: the core's reader takes it
/// (every row and the verdict made again from its sides) and its model side is the model's
/// own run of its scenario in its variant.
fn read_back(out: &Output) -> Value {
    let text = String::from_utf8_lossy(&out.stdout);
    let r = Report::parse(&text).unwrap_or_else(|e| {
        panic!(
            "no report the core reads ({e}), exit {:?}: {}",
            out.status.code(),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    let opts = RunOptions::traced(Some(&r.variant));
    let t = Scenario::parse(&r.scenario).unwrap().run(&opts).unwrap();
    r.check_model(&t).unwrap_or_else(|e| panic!("{e}: {text}"));
    serde_json::from_str(&text).unwrap()
}

fn lens(v: &Value, side: &str) -> Vec<u64> {
    v[side]["skbs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["len"].as_u64().unwrap())
        .collect()
}

/// Brings an interface up in the calling thread's network namespace (SIOCSIFFLAGS).
fn link_up(name: &str) {
    // SAFETY: a datagram socket for the ioctl; ifreq is plain data with a short name.
    unsafe {
        let fd = libc::socket(libc::AF_INET, libc::SOCK_DGRAM, 0);
        assert!(fd >= 0);
        let mut r: libc::ifreq = std::mem::zeroed();
        for (i, b) in name.bytes().enumerate() {
            r.ifr_name[i] = b as libc::c_char;
        }
        assert_eq!(libc::ioctl(fd, libc::SIOCGIFFLAGS, &mut r), 0);
        r.ifr_ifru.ifru_flags |= libc::IFF_UP as libc::c_short;
        assert_eq!(libc::ioctl(fd, libc::SIOCSIFFLAGS, &mut r), 0);
        libc::close(fd);
    }
}

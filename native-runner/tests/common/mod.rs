//! What the runner's tests share: who they run as, how to drop to nobody, and scratch files
//! that leave nothing behind.
#![allow(dead_code)] // each test crate uses its own part

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A file in a folder of its own under the temp dir; dropping it removes both, so test runs
/// (hundreds of them in a stress loop) leave nothing behind, but for a failing test's, whose
/// message names the file (a pcap to open in Wireshark). Derefs to the file's path.
pub struct Scratch {
    path: PathBuf,
    dir: Option<tempfile::TempDir>,
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.dir.take().map(tempfile::TempDir::keep);
        }
    }
}

impl std::fmt::Debug for Scratch {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        self.path.fmt(f)
    }
}

impl Scratch {
    /// `name` in a new folder, not yet created: for outputs such as a pcap.
    pub fn path(name: &str) -> Self {
        let dir = tempfile::Builder::new()
            .prefix("skblab-")
            .tempdir()
            .unwrap();
        Self {
            path: dir.path().join(name),
            dir: Some(dir),
        }
    }

    /// The path as text, for a command line (the temp dir's paths are UTF-8 here).
    pub fn as_str(&self) -> &str {
        self.path.to_str().expect("a UTF-8 temp path")
    }

    /// `name` in a new folder, holding `text`.
    pub fn file(name: &str, text: &str) -> Self {
        let s = Self::path(name);
        std::fs::write(&s.path, text).unwrap();
        s
    }
}

impl std::ops::Deref for Scratch {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.path
    }
}

impl AsRef<Path> for Scratch {
    fn as_ref(&self) -> &Path {
        &self.path
    }
}

impl AsRef<OsStr> for Scratch {
    fn as_ref(&self) -> &OsStr {
        self.path.as_os_str()
    }
}

/// The effective uid is 0, read from /proc.
pub fn euid_is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Uid:"))
                .and_then(|v| v.split_whitespace().nth(1).map(|e| e == "0"))
        })
        .unwrap_or(false)
}

/// The built `skblab`, run as nobody when the test runs as root (to see a refusal).
pub fn skblab_unprivileged() -> Command {
    if euid_is_root() {
        let mut c = Command::new("setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(env!("CARGO_BIN_EXE_skblab"));
        c
    } else {
        Command::new(env!("CARGO_BIN_EXE_skblab"))
    }
}

/// Whether a root test can run, given what this machine lacks: yes when nothing; else it
/// says what is missing and fails, unless SKBLAB_ALLOW_NO_TAP=1 asks to skip (visibly).
pub fn runnable(test: &str, missing: &[&str]) -> bool {
    if missing.is_empty() {
        return true;
    }
    let why = missing.join(", ");
    if std::env::var("SKBLAB_ALLOW_NO_TAP").as_deref() == Ok("1") {
        eprintln!("SKIPPED {test}: no {why} (SKBLAB_ALLOW_NO_TAP=1)");
        return false;
    }
    panic!("{test} cannot run: no {why}; or set SKBLAB_ALLOW_NO_TAP=1 to skip");
}

/// Starts `cmd` (its output dropped), sends it `signal` once `ready(pid)` holds (asked again
/// until it does, for at most a minute), and checks it died of that signal, not by ending
/// first. SIGINT and SIGTERM are set to their default action in the child: a shell starts
/// background jobs (`cargo test &`) with SIGINT ignored, and the child would inherit that and
/// run on to its end.
pub fn stop_when(cmd: &mut Command, signal: i32, mut ready: impl FnMut(u32) -> bool) {
    use std::os::unix::process::{CommandExt, ExitStatusExt};
    use std::time::{Duration, Instant};
    // SAFETY: only signal(2), which is async-signal-safe, runs between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            for sig in [libc::SIGINT, libc::SIGTERM] {
                libc::signal(sig, libc::SIG_DFL);
            }
            Ok(())
        })
    };
    let null = std::process::Stdio::null;
    let mut child = cmd.stdout(null()).stderr(null()).spawn().unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while !ready(child.id()) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    // SAFETY: kill sends a signal to our own child, which has not been reaped yet.
    unsafe { libc::kill(child.id() as i32, signal) };
    let status = child.wait().unwrap();
    assert_eq!(
        status.signal(),
        Some(signal),
        "signal {signal}: it ended first ({status})"
    );
}

/// The names in `dir`, sorted.
pub fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

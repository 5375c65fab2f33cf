//! What the tests that run as root share: who they run as, and how to drop to nobody.

use std::process::Command;

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

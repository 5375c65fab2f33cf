//! The command itself: what it refuses before any setup, `--out` and stdout, signals, and
//! file names.

use super::*;
use common::skblab_unprivileged;
use skblab_core::kernel_report::{KernelReport, Verdict};

/// `--out` writes the same report the JSON output prints, with the scenario, and the
/// playground's reader (`kernel_report`) takes it: the kernel lane's cells are the rows.
#[test]
fn out_writes_the_report() {
    if !kernel_available("out_writes_the_report") {
        return;
    }
    let text = "mechanism = \"sendmsg\"\n[[ops]]\nop = \"sendmsg\"\nbytes = 4096\n";
    let p = scenario("out", text);
    let file = p.with_extension("json");
    let out = skblab_kernel(&p, &["--out", file.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(v["verdict"], "agree");
    assert_eq!(lens(&v, "kernel_side"), [4096]);
    let lane = KernelReport::parse(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(
        (lane.scenario.as_str(), lane.verdict.as_str()),
        (text, "agree")
    );
    assert_eq!(lane.variant, "modern");
    let len = &lane.skbs[0][0];
    assert_eq!(
        (len.field.as_str(), len.kernel, len.model, len.verdict),
        ("len", Some(4096), Some(4096), Some(Verdict::Agree))
    );
    let truesize = lane.skbs[0].iter().find(|c| c.field == "truesize").unwrap();
    assert_eq!(truesize.verdict, None, "truesize is shown, not judged");
}

#[test]
fn without_root_the_command_says_what_is_missing() {
    let p = scenario(
        "no_root",
        "mechanism = \"sendmsg\"\n[[ops]]\nop = \"sendmsg\"\nbytes = 1\n",
    );
    std::fs::set_permissions(
        p.parent().unwrap(),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    std::fs::set_permissions(&p, std::os::unix::fs::PermissionsExt::from_mode(0o644)).unwrap();
    let mut cmd = skblab_unprivileged();
    let out = cmd
        .arg("kernel")
        .arg(&p)
        .output()
        .expect("setpriv (util-linux)");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("skblab kernel needs root"), "{err}");
    assert!(err.contains("nothing was run"), "{err}");
}

#[test]
fn a_scenario_the_kernel_cannot_hold_is_refused_before_any_setup() {
    let p = scenario(
        "drain",
        "mechanism = \"sendmsg\"\n[device]\ndrain = true\n[[ops]]\nop = \"sendmsg\"\nbytes = 1\n",
    );
    let out = skblab_kernel(&p, &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("device.drain"));
    let rx = scenario(
        "rx_rps",
        "mechanism = \"rx\"\n[nic]\nrps = true\n[[ops]]\nop = \"arrive\"\nframes = 1\n",
    );
    let out = skblab_kernel(&rx, &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("nic.rps"));
}

/// A scenario in a directory and file nobody can read, for runs as nobody.
fn readable_by_all(p: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let mode = |m| std::fs::Permissions::from_mode(m);
    std::fs::set_permissions(p.parent().unwrap(), mode(0o755)).unwrap();
    std::fs::set_permissions(p, mode(0o644)).unwrap();
}

/// Settings the kernel run cannot give the kernel are refused by name before anything is
/// set up (run as nobody: a refusal that came later would say "needs root" instead), so the
/// model is never blamed for a setting the kernel did not get.
#[test]
fn settings_the_kernel_run_cannot_apply_are_refused_before_setup() {
    let mptcp = "mechanism = \"mptcp\"\n";
    let write = "[[ops]]\nop = \"sendmsg\"\nbytes = 16384\n";
    let send = "mechanism = \"sendmsg\"\n";
    for (name, text, field) in [
        (
            "mptcp_no_ts",
            format!("{mptcp}[[subflows]]\ntimestamps = false\n{write}"),
            "subflows[0].timestamps",
        ),
        (
            "mptcp_mss",
            format!("{mptcp}[[subflows]]\nmss = 1000\n{write}"),
            "subflows[0].mss",
        ),
        (
            "mptcp_hoad",
            format!("{mptcp}high_order_alloc_disable = true\n{write}"),
            "high_order_alloc_disable",
        ),
        (
            "send_hoad",
            format!("{send}[device]\nhigh_order_alloc_disable = true\n{write}"),
            "device.high_order_alloc_disable",
        ),
        (
            "send_window_100",
            format!("{send}[socket]\nmax_window = 100\n{write}"),
            "socket.max_window = 100",
        ),
        (
            "send_window_half",
            format!("{send}[socket]\nmax_window = 2048\n{write}"),
            "set socket.mss = 1024",
        ),
        (
            "send_mtu",
            format!("{send}[device]\nmtu = 65535\n{write}"),
            "device.mtu = 65535",
        ),
        (
            "send_small_mss",
            format!("{send}[socket]\nmss = 48\n{write}"),
            "MAX_TCP_HEADER",
        ),
    ] {
        let p = scenario(name, &text);
        readable_by_all(&p);
        let out = skblab_unprivileged()
            .arg("kernel")
            .arg(&p)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{name}: {err}");
        assert!(err.contains(field), "{name}: {err}");
        assert!(!err.contains("needs root"), "{name}: {err}");
    }
    // MSS 48: 192 and 320 give different size goals, so the run needs to be told which.
    let p = scenario(
        "send_small_mss_named",
        &format!("{send}[socket]\nmss = 48\n{write}"),
    );
    let err = skblab_kernel(&p, &[]).stderr;
    assert!(String::from_utf8_lossy(&err).contains("192 gives 65328"));
    assert!(String::from_utf8_lossy(&err).contains("320 gives 65184"));
}

/// `--out` never replaces a file, nor writes through a symlink (a root run once replaced a
/// symlink's target), and refuses before anything runs.
#[test]
fn out_never_replaces_a_file_or_follows_a_symlink() {
    let p = scenario(
        "out_kept",
        "mechanism = \"sendmsg\"\n[[ops]]\nop = \"sendmsg\"\nbytes = 1\n",
    );
    let kept = p.with_extension("kept");
    let link = p.with_extension("link");
    std::fs::write(&kept, "precious").unwrap();
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink(&p, &link).unwrap();
    for (target, extra, why) in [
        (&kept, None, "exists; give --force"),
        (&link, None, "is a symlink"),
        (&link, Some("--force"), "is a symlink"),
        // The scenario itself, through --out.
        (&p.to_path_buf(), None, "exists; give --force"),
    ] {
        let mut args = vec!["--out", target.to_str().unwrap()];
        args.extend(extra);
        let out = skblab_kernel(&p, &args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(why), "{args:?}: {err}");
        assert!(!err.contains("needs root"), "refused before the run: {err}");
    }
    assert_eq!(std::fs::read_to_string(&kept).unwrap(), "precious");
    assert!(std::fs::read_to_string(&p)
        .unwrap()
        .starts_with("mechanism"));
}

/// A file name with an escape sequence is printed escaped, as `run` and `tap` print it.
#[test]
fn an_escape_in_a_file_name_is_escaped() {
    let p = std::env::temp_dir().join("no-such-\u{1b}[31mred.toml");
    let out = skblab_kernel(&p, &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        !out.stderr.contains(&0x1b),
        "{:?}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("\\u{1b}[31mred"));
}

/// A stdout that fails (a full device, a reader gone) loses no report: `--out` is written
/// first; a full stdout is an error (exit 2) with a message, a closed pipe ends quietly with
/// the verdict's exit code; nothing panics.
#[test]
fn a_failing_stdout_loses_no_report() {
    if !kernel_available("a_failing_stdout_loses_no_report") {
        return;
    }
    let p = scenario(
        "stdout_fails",
        "mechanism = \"sendmsg\"\n[[ops]]\nop = \"sendmsg\"\nbytes = 4096\n",
    );
    for (name, full) in [("full", true), ("closed", false)] {
        let file = p.with_extension(format!("{name}.json"));
        let _ = std::fs::remove_file(&file);
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_skblab"));
        cmd.arg("kernel")
            .arg(&p)
            .args(["--out", file.to_str().unwrap()]);
        let out = if full {
            cmd.stdout(std::fs::File::create("/dev/full").unwrap())
                .output()
                .unwrap()
        } else {
            let mut child = cmd
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            drop(child.stdout.take());
            child.wait_with_output().unwrap()
        };
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.contains("panicked"), "{name}: {err}");
        if full {
            assert_eq!(out.status.code(), Some(2), "{name}: {err}");
            assert!(err.contains("writing to stdout"), "{name}: {err}");
        } else {
            assert_eq!(out.status.code(), Some(0), "{name}: {err}");
        }
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        assert_eq!(v["verdict"], "agree", "{name}");
    }
}

/// A run stopped by a signal while it traces (SIGINT from Ctrl-C, SIGTERM, SIGKILL) leaves
/// its `--out` as it was: no file where there was none (an empty one would be refused by the
/// next run without `--force`), the old report where `--force` was to replace one, and
/// nothing beside it. The report is named only once it is whole.
#[test]
fn a_run_stopped_by_a_signal_leaves_out_as_it_was() {
    if !kernel_available("a_run_stopped_by_a_signal_leaves_out_as_it_was") {
        return;
    }
    let p = scenario(
        "stopped",
        "mechanism = \"sendmsg\"\n[[ops]]\nop = \"sendmsg\"\nbytes = 4096\n",
    );
    for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGKILL] {
        for old in [None, Some("old report")] {
            let out = Scratch::path("report.json");
            let mut cmd = Command::new(env!("CARGO_BIN_EXE_skblab"));
            cmd.arg("kernel").arg(&p).arg("--out").arg(&*out);
            if let Some(old) = old {
                std::fs::write(&out, old).unwrap();
                cmd.arg("--force");
            }
            // Stopped while it traces: once its bpftrace runs, the output is open and the
            // report is yet to come. What the path holds then is kept.
            let mut at_kill = None;
            common::stop_when(&mut cmd, signal, |pid| {
                let tasks = std::fs::read_dir(format!("/proc/{pid}/task"));
                let mut tasks = tasks.into_iter().flatten().flatten();
                let tracing = tasks.any(|t| {
                    std::fs::read_to_string(t.path().join("children"))
                        .is_ok_and(|c| !c.trim().is_empty())
                });
                at_kill = Some(std::fs::read_to_string(&out).ok());
                tracing
            });
            let case = format!("signal {signal}, old {old:?}");
            let old_text = old.map(String::from);
            assert_eq!(at_kill, Some(old_text), "{case}: while it ran");
            assert_eq!(std::fs::read_to_string(&out).ok().as_deref(), old, "{case}");
            let left = common::names(out.parent().unwrap());
            assert_eq!(left.len(), usize::from(old.is_some()), "{case}: {left:?}");
        }
    }
}

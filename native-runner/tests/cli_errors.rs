//! Every bad input is one clear line naming the field and the allowed range, exit code 2.

use std::process::Command;

mod common;
use common::Scratch;

fn skblab(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_skblab"))
        .args(args)
        .output()
        .expect("skblab runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

/// (file name, scenario text, extra args, what stderr must contain)
const CASES: &[(&str, &str, &[&str], &[&str])] = &[
    (
        "unknown-field.toml",
        "mechanism = \"sendmsg\"\nbogus = 1\nops = []\n",
        &[],
        &["bogus", "expected one of"],
    ),
    (
        "mss0.toml",
        "mechanism = \"sendmsg\"\n[socket]\nmss = 0\n[[ops]]\nop = \"sendmsg\"\nbytes = 1\n",
        &[],
        &["socket.mss", "allowed"],
    ),
    (
        "huge.toml",
        "mechanism = \"sendmsg\"\n[[ops]]\nop = \"sendmsg\"\nbytes = 1000000000000000\n",
        &[],
        &["ops[0].bytes", "allowed"],
    ),
    (
        "variant.toml",
        "mechanism = \"sendmsg\"\nops = []\n",
        &["--variant", "nope"],
        &["unknown variant `nope`", "pre-2010"],
    ),
    (
        "mech.toml",
        "mechanism = \"teleport\"\nops = []\n",
        &[],
        &["unknown mechanism `teleport`"],
    ),
    (
        "escape.toml",
        "mechanism = \"sendmsg\"\n\"\\u001b[2J\\u0007\" = 1\nops = []\n",
        &[],
        &["`\\u{1b}[2J\\u{7}`"],
    ),
    (
        "syntax.json",
        "{\"mechanism\": ",
        &[],
        &["JSON parse error", "line 1"],
    ),
];

#[test]
fn bad_scenarios_give_one_clear_error_and_exit_2() {
    for (name, text, extra, wants) in CASES {
        let path = Scratch::file(name, text);
        let mut args = vec!["run", path.as_str()];
        args.extend_from_slice(extra);
        let (code, stdout, stderr) = skblab(&args);
        assert_eq!(code, 2, "{name}: exit code (stderr: {stderr})");
        assert!(stdout.is_empty(), "{name}: nothing on stdout");
        assert_eq!(stderr.lines().count(), 1, "{name}: one line: {stderr}");
        assert!(
            !stderr.contains(['\x1b', '\x07']),
            "{name}: raw controls: {stderr:?}"
        );
        for w in *wants {
            assert!(stderr.contains(w), "{name}: `{w}` missing from: {stderr}");
        }
    }
}

#[test]
fn missing_file_and_unknown_walkthrough_are_errors() {
    let (code, _, stderr) = skblab(&["run", "/nonexistent/skblab.toml"]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("cannot read /nonexistent/skblab.toml"),
        "{stderr}"
    );
    let (code, _, stderr) = skblab(&["walkthrough", "no-such-walk"]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("unknown walkthrough `no-such-walk`"),
        "{stderr}"
    );
}

#[test]
fn compare_needs_two_variants() {
    let path = Scratch::file("cmp.toml", "mechanism = \"sendmsg\"\nops = []\n");
    let (code, _, stderr) = skblab(&["compare", path.as_str(), "--variant", "pre-2010"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("exactly two variants"), "{stderr}");
}

#[test]
fn an_oversized_input_is_refused_after_the_cap() {
    // A sparse file of 1 GiB: only cap + 1 bytes may be read.
    let big = Scratch::path("big.toml");
    std::fs::File::create(&*big)
        .and_then(|f| f.set_len(1 << 30))
        .unwrap();
    let (code, stdout, stderr) = skblab(&["run", big.as_str()]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stdout.is_empty());
    assert!(
        stderr.contains("big.toml: too large: allowed at most 1048576 bytes"),
        "{stderr}"
    );
}

/// Runs skblab, killing it after `secs` seconds: (exit code, stderr), or `None` if it had
/// to be killed.
fn skblab_within(args: &[&str], secs: u64) -> Option<(i32, String)> {
    use std::io::Read;
    let mut child = Command::new(env!("CARGO_BIN_EXE_skblab"))
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(secs);
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let mut err = String::new();
    let _ = child.stderr.take().unwrap().read_to_string(&mut err);
    Some((child.wait().unwrap().code().unwrap_or(-1), err))
}

/// A FIFO (which would wait for a writer), a device, a folder, or a kernel file that claims
/// no size (`/proc/kmsg` waits for the kernel's log; this one is harmless) as a scenario,
/// lesson or solution: refused at once, with the path and why, by every command that reads
/// one.
#[test]
fn inputs_that_are_no_regular_files_are_refused_at_once() {
    let fifo = Scratch::path("fifo.toml");
    let c = std::ffi::CString::new(fifo.as_str()).unwrap();
    // SAFETY: mkfifo reads a NUL-terminated path and touches no memory of ours.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo");
    let f = fifo.as_str();
    let folder = fifo.parent().unwrap().to_str().unwrap();
    let not_a_file = "is not a regular file";
    let cases: &[(&[&str], &str, &str)] = &[
        (&["run", f], f, not_a_file),
        (
            &["compare", f, "--variant", "pre-2010", "--variant", "modern"],
            f,
            not_a_file,
        ),
        (&["walkthrough", f], f, not_a_file),
        (
            &["walkthrough", f, "--quiz", "--answers", "-"],
            f,
            not_a_file,
        ),
        (&["lint", f], f, not_a_file),
        (&["challenge", f], f, not_a_file),
        (&["challenge", "one-page-queue", f], f, not_a_file),
        (&["tap", "send", f], f, not_a_file),
        (&["kernel", f], f, not_a_file),
        (&["run", "/dev/zero"], "/dev/zero", not_a_file),
        (&["run", folder], folder, not_a_file),
        (
            &["run", "/proc/self/stat"],
            "/proc/self/stat",
            "is empty, or a kernel file that claims no size",
        ),
    ];
    for (args, path, why) in cases {
        let (code, err) =
            skblab_within(args, 10).unwrap_or_else(|| panic!("{args:?} blocked until killed"));
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.contains(&format!("{path}: {why}")), "{args:?}: {err}");
    }
}

/// Output that cannot be written is an error, exit 2 (as every error), never a panic.
#[test]
fn output_that_cannot_be_written_fails_but_a_closed_pipe_does_not() {
    let path = Scratch::file(
        "out.toml",
        "mechanism = \"sendmsg\"\n[[ops]]\nop = \"sendmsg\"\nbytes = 4096\n",
    );
    let full = std::fs::File::options()
        .write(true)
        .open("/dev/full")
        .unwrap();
    // clap's help and version too: clap alone exits 0 when they cannot be written.
    for args in [
        vec!["run", path.as_str()],
        vec!["walkthrough", "--list"],
        vec!["--help"],
        vec!["run", "--help"],
        vec!["--version"],
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_skblab"))
            .args(&args)
            .stdout(full.try_clone().unwrap())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains("writing to stdout"), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
    // A reader that went away (`| head`): quiet success.
    for args in [vec!["run", path.as_str()], vec!["--help"]] {
        let out = Command::new(env!("CARGO_BIN_EXE_skblab"))
            .args(&args)
            .stdout(closed_pipe())
            .output()
            .unwrap();
        assert!(out.status.success(), "{args:?}: {out:?}");
        assert!(out.stderr.is_empty(), "{args:?}: {out:?}");
    }
}

/// The write end of a pipe whose read end is already closed: every write fails (EPIPE).
fn closed_pipe() -> std::fs::File {
    use std::os::fd::FromRawFd;
    let mut fds = [0; 2];
    // SAFETY: pipe writes two new descriptors into `fds`; we own both from here on.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    // SAFETY: fds[0] and fds[1] were just created and are owned by nothing else.
    drop(unsafe { std::fs::File::from_raw_fd(fds[0]) });
    unsafe { std::fs::File::from_raw_fd(fds[1]) }
}

#[test]
fn serve_keeps_serving_when_stdout_is_closed() {
    use std::io::{BufRead, Read, Write};
    let page = Scratch::file("index.html", "<p>hi</p>");
    let mut child = Command::new(env!("CARGO_BIN_EXE_skblab"))
        .args(["serve", "--port", "0", "--dir"])
        .arg(page.parent().unwrap())
        .stdout(closed_pipe())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The URL goes to stderr instead, and the server answers.
    let mut line = String::new();
    std::io::BufReader::new(child.stderr.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let alive = child.try_wait().unwrap().is_none();
    let url = line.split_whitespace().find(|w| w.starts_with("http://"));
    let answer = url.map(|u| {
        let addr = u.trim_start_matches("http://").trim_end_matches('/');
        let mut s = std::net::TcpStream::connect(addr).unwrap();
        s.write_all(b"GET / HTTP/1.1\r\n\r\n").unwrap();
        let mut a = String::new();
        s.read_to_string(&mut a).unwrap();
        a
    });
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(alive, "serve died: {line}");
    let answer = answer.unwrap_or_else(|| panic!("no URL on stderr: {line:?}"));
    assert!(answer.starts_with("HTTP/1.1 200 OK"), "{answer}");
}

/// stdout and stderr both on a full device: every command still ends with exit 2 (the error
/// it could not print), not a panic (exit 101): a run, a quiz, a file that cannot be read, a
/// server that can tell no one its URL (or why it cannot start), help, and a usage error.
#[test]
fn a_full_stderr_is_exit_2_not_a_panic() {
    let scenario = Scratch::file(
        "full.toml",
        "mechanism = \"sendmsg\"\n[[ops]]\nop = \"sendmsg\"\nbytes = 4096\n",
    );
    let answers = Scratch::file("answers.txt", &"1\n".repeat(50));
    let page = Scratch::file("index.html", "<p>hi</p>");
    let site = page.parent().unwrap().to_str().unwrap();
    let full = || {
        std::fs::File::options()
            .write(true)
            .open("/dev/full")
            .unwrap()
    };
    let cases: &[&[&str]] = &[
        &["run", scenario.as_str()],
        &["run", "/nonexistent.toml"],
        &[
            "walkthrough",
            "anatomy",
            "--quiz",
            "--answers",
            answers.as_str(),
        ],
        &["serve", "--dir", "/nonexistent"],
        &["serve", "--port", "0", "--dir", site],
        &["--help"],
        &["run"],
    ];
    for args in cases {
        let mut child = Command::new(env!("CARGO_BIN_EXE_skblab"))
            .args(*args)
            .stdout(full())
            .stderr(full())
            .spawn()
            .unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break Some(status);
            }
            if std::time::Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        };
        let code = status.and_then(|s| s.code());
        assert_eq!(
            code,
            Some(2),
            "{args:?} (101 is a panic; None: still running)"
        );
    }
}

//! Every bad input is one clear line naming the field and the allowed range, exit code 2.

use std::process::Command;

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

fn scenario_file(name: &str, text: &str) -> String {
    let dir = std::env::temp_dir().join(format!("skblab-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.to_string_lossy().into_owned()
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
        "syntax.json",
        "{\"mechanism\": ",
        &[],
        &["JSON parse error", "line 1"],
    ),
];

#[test]
fn bad_scenarios_give_one_clear_error_and_exit_2() {
    for (name, text, extra, wants) in CASES {
        let path = scenario_file(name, text);
        let mut args = vec!["run", path.as_str()];
        args.extend_from_slice(extra);
        let (code, stdout, stderr) = skblab(&args);
        assert_eq!(code, 2, "{name}: exit code (stderr: {stderr})");
        assert!(stdout.is_empty(), "{name}: nothing on stdout");
        assert_eq!(stderr.lines().count(), 1, "{name}: one line: {stderr}");
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
    let path = scenario_file("cmp.toml", "mechanism = \"sendmsg\"\nops = []\n");
    let (code, _, stderr) = skblab(&["compare", &path, "--variant", "pre-2010"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("exactly two variants"), "{stderr}");
}

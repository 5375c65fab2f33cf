//! `skblab walkthrough NAME --quiz` and `skblab challenge`: answers from a pipe or a file, a
//! bad answer asked again, no terminal, and challenges checked against their goal.

use std::io::Write;
use std::process::{Command, Stdio};

/// Runs skblab with `stdin` piped in (never a terminal): (exit code, stdout, stderr).
fn skblab(args: &[&str], stdin: &str) -> (i32, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_skblab"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("skblab runs");
    // A run that refuses before reading closes its stdin: a failed write is fine.
    let _ = child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin.as_bytes());
    let out = child.wait_with_output().expect("skblab ends");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

/// The answers to anatomy's questions, worked out by hand from its narration.
const ANATOMY: &str = "2\nskb 0 frag 0\npage 0\n";

const QUIZ: [&str; 5] = ["--color", "never", "walkthrough", "anatomy", "--quiz"];

fn quiz(extra: &[&str], stdin: &str) -> (i32, String, String) {
    skblab(&[&QUIZ[..], extra].concat(), stdin)
}

#[test]
fn piped_answers_are_judged_and_revealed() {
    let (code, out, err) = quiz(&["--answers", "-"], ANATOMY);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.matches("  right: ").count(), 3, "{out}");
    assert!(out.contains("right: skb 0 frag 0"), "{out}");
    assert!(out.ends_with("score: 3 of 3 right\n"), "{out}");
    // Each question comes before its step's narration and state.
    let asked = out.find("After sendmsg(1000)").expect("asked");
    assert!(asked < out.find("━━ Step 1/6").expect("step 1"), "{out}");
}

#[test]
fn a_wrong_answer_reveals_the_right_one() {
    let path = std::env::temp_dir().join(format!("skblab-quiz-{}.txt", std::process::id()));
    std::fs::write(&path, ANATOMY.replacen('2', "3", 1)).unwrap();
    let (code, out, err) = quiz(&["--answers", path.to_str().unwrap()], "");
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("  wrong: the answer is 2\n"), "{out}");
    assert!(out.ends_with("score: 2 of 3 right\n"), "{out}");
}

#[test]
fn a_bad_answer_is_explained_and_asked_again() {
    let (code, out, err) = quiz(&["--answers", "-"], &format!("banana\nskb 2\n{ANATOMY}"));
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("`banana`: give a whole number; try again"),
        "{out}"
    );
    assert!(
        out.contains("`skb 2`: give a whole number; try again"),
        "{out}"
    );
    assert!(out.ends_with("score: 3 of 3 right\n"), "{out}");
}

#[test]
fn without_a_terminal_or_answers_it_says_what_it_needs() {
    let (code, out, err) = quiz(&[], ANATOMY);
    assert_eq!(code, 2);
    assert!(out.is_empty(), "{out}");
    assert!(
        err.contains("run it on a terminal, or give --answers FILE"),
        "{err}"
    );
    let (code, _, err) = quiz(&["--answers", "-"], "2\n");
    assert_eq!(code, 2);
    assert!(
        err.contains("the answers ran out before question 2"),
        "{err}"
    );
    let (code, _, err) = quiz(&["--answers", "/nonexistent/answers"], "");
    assert_eq!(code, 2);
    assert!(err.contains("cannot read /nonexistent/answers"), "{err}");
}

fn solution(name: &str) -> String {
    format!(
        "{}/../core/tests/solutions/{name}.toml",
        env!("CARGO_MANIFEST_DIR")
    )
}

#[test]
fn challenges_list_show_and_check() {
    let (code, out, _) = skblab(&["challenge", "--list"], "");
    assert_eq!(code, 0);
    assert!(out.lines().count() >= 8, "{out}");
    let (code, out, _) = skblab(&["--color", "never", "challenge", "one-page-queue"], "");
    assert_eq!(code, 0);
    assert!(
        out.contains("Three skbs, one page") && out.contains("\"mechanism\": \"sendmsg\""),
        "{out}"
    );
    let (code, out, err) = skblab(
        &["challenge", "one-page-queue", &solution("one-page-queue")],
        "",
    );
    assert_eq!(code, 0, "{err}");
    assert!(
        out.starts_with("solved: the goal holds after step 1\n"),
        "{out}"
    );
    let (code, out, _) = skblab(
        &["challenge", "one-page-queue", &solution("reuse-a-page")],
        "",
    );
    assert_eq!(code, 2, "{out}");
    let (code, out, _) = skblab(
        &[
            "challenge",
            "bh-frees-three",
            &solution("cache-frees-nothing"),
        ],
        "",
    );
    assert_eq!(code, 0);
    assert!(
        out.starts_with("not solved yet\n✗ counter rx_cache_freed >= 3: 0 >= 3"),
        "{out}"
    );
}

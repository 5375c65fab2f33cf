//! `skblab walkthrough NAME --quiz` and `skblab challenge`: answers from a pipe or a file, a
//! line that is not an answer counted wrong (asked again at a terminal), hostile and endless
//! answers, no terminal, and challenges checked against their goal.

use std::io::Write;
use std::process::{Command, Stdio};

mod common;
use common::Scratch;

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
const ANATOMY: &str = "2\n0\npage 0\n";

const QUIZ: [&str; 5] = ["--color", "never", "walkthrough", "anatomy", "--quiz"];

fn quiz(extra: &[&str], stdin: &str) -> (i32, String, String) {
    skblab(&[&QUIZ[..], extra].concat(), stdin)
}

#[test]
fn piped_answers_are_judged_and_revealed() {
    let (code, out, err) = quiz(&["--answers", "-"], ANATOMY);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.matches("  right: ").count(), 3, "{out}");
    assert!(out.contains("right: page 0"), "{out}");
    assert!(out.ends_with("score: 3 of 3 right\n"), "{out}");
    // Each question comes before its step's narration and state.
    let asked = out.find("After sendmsg(1000)").expect("asked");
    assert!(asked < out.find("━━ Step 1/6").expect("step 1"), "{out}");
}

#[test]
fn a_wrong_answer_reveals_the_right_one() {
    let answers = Scratch::file("answers.txt", &ANATOMY.replacen('2', "3", 1));
    let (code, out, err) = quiz(&["--answers", answers.as_str()], "");
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("  wrong: the answer is 2\n"), "{out}");
    // How the answer is made up, as the playground shows it.
    assert!(
        out.contains("the answer is 2\n  (page 0's count 2: 1 held by skbs: skb 0 frag 0;"),
        "{out}"
    );
    assert!(out.ends_with("score: 2 of 3 right\n"), "{out}");
}

#[test]
fn a_line_that_is_not_an_answer_is_named_and_counted_wrong() {
    // Each later line still answers its own question.
    let (code, out, err) = quiz(&["--answers", "-"], "banana\n0\npage 0\n");
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("  line 1 is not an answer: `banana`: give a whole number; counted wrong\n"),
        "{out}"
    );
    assert!(out.contains("  wrong: the answer is 2\n"), "{out}");
    assert!(out.ends_with("score: 2 of 3 right\n"), "{out}");
}

#[test]
fn a_hostile_answer_cannot_drive_the_terminal() {
    // An answer that would set the terminal's title comes back escaped.
    let (code, out, err) = quiz(&["--answers", "-"], "\x1b]0;PWNED\x07\n0\npage 0\n");
    assert_eq!(code, 0, "{err}");
    assert!(!out.contains(['\x1b', '\x07']), "{out:?}");
    assert!(
        out.contains("line 1 is not an answer: `\\u{1b}]0;PWNED\\u{7}`: give a whole number"),
        "{out}"
    );
    // So does one that would reorder the line (a bidi override) or hide in it.
    let (code, out, err) = quiz(
        &["--answers", "-"],
        "\u{202e}7\u{2066}\u{200b}\n0\npage 0\n",
    );
    assert_eq!(code, 0, "{err}");
    assert!(
        !out.contains(['\u{202e}', '\u{2066}', '\u{200b}']),
        "{out:?}"
    );
    assert!(
        out.contains("line 1 is not an answer: `\\u{202e}7\\u{2066}\\u{200b}`"),
        "{out}"
    );
}

#[test]
fn an_endless_answer_line_is_refused_unread() {
    // /dev/zero is one line that never ends: refused after MAX_ANSWER_LINE bytes.
    let (code, out, err) = quiz(&["--answers", "/dev/zero"], "");
    assert_eq!(code, 2, "{out}");
    assert!(
        err.contains("answer line 1: too long: a line may hold at most 4096 bytes"),
        "{err}"
    );
    let long = format!("2\n{}\n", "9".repeat(5000));
    let (code, _, err) = quiz(&["--answers", "-"], &long);
    assert_eq!(code, 2);
    assert!(err.contains("answer line 2: too long"), "{err}");
}

/// At a terminal a line that is not an answer is asked again; the answers in all are capped.
#[test]
fn at_a_terminal_a_bad_answer_is_asked_again_up_to_the_cap() {
    use skblab_runner::engine::Engine;
    use skblab_runner::quiz::{self, Answers};
    use skblab_runner::render::Style;
    let w = skblab_core::walkthrough::find("anatomy").expect("anatomy");
    let run = |typed: &str| {
        let mut input = std::io::Cursor::new(typed.as_bytes().to_vec());
        let mut out = Vec::new();
        let score = quiz::run(
            &w,
            Answers::Terminal(&mut input),
            &mut out,
            Engine::Native,
            Style::PLAIN,
        );
        (score, String::from_utf8(out).expect("UTF-8"))
    };
    let (score, out) = run(&format!("banana\nskb 2\n{ANATOMY}"));
    assert_eq!(score.expect("answered").right, 3, "{out}");
    assert!(
        out.contains("`banana`: give a whole number; try again"),
        "{out}"
    );
    assert!(
        out.contains("`skb 2`: give a whole number; try again"),
        "{out}"
    );
    let junk = format!("{}\n", "x".repeat(4000)).repeat(17);
    let (score, _) = run(&junk);
    let err = score.expect_err("past the cap").to_string();
    assert!(
        err.contains("answer line 17: too long: the answers in all may hold at most 65536 bytes"),
        "{err}"
    );
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
    assert_eq!(code, 1, "a goal not met fails");
    assert!(
        out.starts_with("not solved yet\n✗ counter rx_cache_freed >= 3: 0 >= 3"),
        "{out}"
    );
}

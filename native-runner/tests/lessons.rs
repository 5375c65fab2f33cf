//! Lessons of one's own: a walkthrough or challenge file run like a built-in one, `skblab
//! lint` on files, challenge verdicts as exit codes and JSON, and what the lists and the help
//! name.

use std::process::Command;

mod common;
use common::Scratch;

/// (exit code, stdout, stderr) of skblab run in the repository's root.
fn skblab(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_skblab"))
        .args(["--color", "never"])
        .args(args)
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
        .output()
        .expect("skblab runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

const LESSON: &str = "docs/examples/my-lesson.toml";
const CHALLENGE: &str = "docs/examples/my-challenge.toml";
const SOLUTION: &str = "docs/examples/my-challenge-solution.toml";

fn repo_file(path: &str) -> String {
    std::fs::read_to_string(format!("{}/../{path}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

#[test]
fn a_walkthrough_file_runs_as_a_built_in_one_does() {
    let (code, out, err) = skblab(&["walkthrough", LESSON]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.starts_with("Two writes of 1000 bytes, before and after the 2010 patch\n"),
        "{out}"
    );
    assert!(out.contains("━━ Step 3/3: transmit ━━"), "{out}");
    assert!(
        out.contains("[pre-2010]") && out.contains("[kumar-2010]"),
        "{out}"
    );
    // With --quiz, from a pipe: 0 linear bytes, "two" skbs (b), 1448 frag bytes, count 3.
    let mut child = Command::new(env!("CARGO_BIN_EXE_skblab"))
        .args([
            "--color",
            "never",
            "walkthrough",
            LESSON,
            "--quiz",
            "--answers",
            "-",
        ])
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"0\nb\n1448\n3\n").unwrap();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(text.ends_with("score: 4 of 4 right\n"), "{text}");
}

#[test]
fn an_unknown_name_says_a_file_works_too() {
    for what in ["walkthrough", "challenge"] {
        let (code, _, err) = skblab(&[what, "no-such-lesson"]);
        assert_eq!(code, 2);
        assert!(
            err.contains(&format!("unknown {what} `no-such-lesson`"))
                && err.contains("or give a file: a path with a `/` or ending in .toml"),
            "{err}"
        );
    }
    let (code, _, err) = skblab(&["walkthrough", "missing/lesson.toml"]);
    assert_eq!(code, 2);
    assert!(err.contains("cannot read missing/lesson.toml"), "{err}");
    // A bad field is named, with the file.
    let bad = Scratch::file(
        "bad.toml",
        &repo_file(LESSON).replacen("{ op = \"transmit\" },", "", 1),
    );
    let (code, _, err) = skblab(&["walkthrough", bad.as_str()]);
    assert_eq!(code, 2);
    assert!(
        err.contains("bad.toml: `my-lesson.say`: has 3 paragraphs for 2 operations"),
        "{err}"
    );
}

#[test]
fn a_challenge_file_shows_and_checks_and_a_goal_not_met_exits_1() {
    let (code, out, err) = skblab(&["challenge", CHALLENGE]);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("One frag, one full skb\n"), "{out}");
    assert!(
        out.contains(
            "Runs as variant kumar-2010; `socket`, `device`, `consts` and the variant stay as in the\nstart."
        ),
        "{out}"
    );
    assert!(
        out.contains(&format!("then run `skblab challenge {CHALLENGE} FILE`")),
        "{out}"
    );
    let (code, out, err) = skblab(&["challenge", CHALLENGE, SOLUTION]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.starts_with("solved: the goal holds after step 2\n"),
        "{out}"
    );
    // The start itself does not meet the goal: exit 1, with the values seen.
    let start = Scratch::file(
        "start.toml",
        repo_file(CHALLENGE).split("[scenario]\n").nth(1).unwrap(),
    );
    let (code, out, _) = skblab(&["challenge", CHALLENGE, start.as_str()]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.starts_with("not solved yet\n✗ skb 0 len >= 1448: 1000 >= 1448\n"),
        "{out}"
    );
    let (code, out, _) = skblab(&["challenge", "bh-frees-three", start.as_str()]);
    assert_eq!(code, 2, "another mechanism is an error: {out}");
}

#[test]
fn a_challenge_verdict_as_json() {
    let (code, out, err) = skblab(&["challenge", CHALLENGE, SOLUTION, "--json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(v["challenge"], "my-challenge");
    assert_eq!(v["solved"], true);
    assert_eq!(v["solved_at"], 2);
    assert_eq!(v["conditions"][0]["condition"], "skb 0 len >= 1448");
    assert_eq!(v["conditions"][0]["saw"], "1448 >= 1448");
    assert_eq!(v["conditions"][1]["holds"], true);
}

/// `--start` prints the start alone, a scenario as it is; a folder of solutions is graded one
/// line per file, hidden files left out, and exits 1 unless every file meets the goal.
#[test]
fn a_challenge_start_alone_and_a_folder_of_solutions_graded() {
    let (code, start, err) = skblab(&["challenge", CHALLENGE, "--start"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&start).expect("the start alone");
    assert_eq!(v["mechanism"], "sendmsg");
    let class = Scratch::path("class");
    std::fs::create_dir(&*class).unwrap();
    let put = |name: &str, text: &str| std::fs::write(class.join(name), text).unwrap();
    put("alice.toml", &repo_file(SOLUTION));
    let (code, out, err) = skblab(&["challenge", CHALLENGE, class.as_str()]);
    assert_eq!(
        (code, out.as_str()),
        (0, "alice.toml: solved at step 2\n1 of 1 solved it\n"),
        "{err}"
    );
    put("bob.json", &start);
    put("carol.toml", "mechanism = 3\n");
    put(".notes", "not a solution");
    let (code, out, _) = skblab(&["challenge", CHALLENGE, class.as_str()]);
    assert_eq!(code, 1, "{out}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 4, "{out}");
    assert_eq!(lines[0], "alice.toml: solved at step 2");
    assert_eq!(
        lines[1],
        "bob.json: not solved: ✗ skb 0 len >= 1448: 1000 >= 1448"
    );
    assert!(
        lines[2].starts_with("carol.toml: not a solution: "),
        "{out}"
    );
    assert_eq!(lines[3], "1 of 3 solved it");
    let (code, out, _) = skblab(&["challenge", CHALLENGE, class.as_str(), "--json"]);
    assert_eq!(code, 1);
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(
        (v["solved"].as_u64(), v["files"].as_u64()),
        (Some(1), Some(3))
    );
    let rows = &v["solutions"];
    assert_eq!(
        (&rows[0]["file"], &rows[0]["solved_at"]),
        (&"alice.toml".into(), &2.into())
    );
    assert_eq!(rows[1]["conditions"][0]["saw"], "1000 >= 1448");
    assert_eq!(rows[2]["solved"], false);
    assert!(
        rows[2]["error"]
            .as_str()
            .is_some_and(|e| e.contains("mechanism")),
        "{out}"
    );
    let (code, _, err) = skblab(&["challenge", CHALLENGE, SOLUTION, "--start"]);
    assert_eq!(code, 2, "--start prints the start only: {err}");
}

#[test]
fn the_lists_show_seeds_and_the_help_names_the_lessons() {
    let (code, out, _) = skblab(&["walkthrough", "--list"]);
    assert_eq!(code, 0);
    let anatomy = out
        .lines()
        .find(|l| l.starts_with("anatomy "))
        .expect("anatomy");
    assert!(anatomy.contains("  seed 000  "), "{out}");
    let cache = out
        .lines()
        .find(|l| l.starts_with("rx-skb-cache "))
        .expect("rx");
    assert!(cache.contains("  seed 002  "), "{out}");
    let (_, help, _) = skblab(&["challenge", "--help"]);
    assert!(
        help.contains("one-page-queue") && help.contains("collapse-to-full-size"),
        "{help}"
    );
    let (_, help, _) = skblab(&["walkthrough", "--help"]);
    assert!(
        help.contains("anatomy") && help.contains("a walkthrough file"),
        "{help}"
    );
}

#[test]
fn lint_passes_the_examples_and_every_built_in_lesson() {
    let (code, out, err) = skblab(&["lint", LESSON, CHALLENGE, SOLUTION]);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(
        out,
        format!(
            "{LESSON}: ok (walkthrough)\n{CHALLENGE}: ok (challenge, with solution {SOLUTION})\n"
        )
    );
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    let mut args = vec!["lint".to_string()];
    for dir in ["core/walkthroughs", "core/challenges"] {
        let mut names: Vec<String> = std::fs::read_dir(format!("{root}/{dir}"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        for n in names {
            args.push(format!("{dir}/{n}"));
            if dir == "core/challenges" {
                args.push(format!("core/tests/solutions/{n}"));
            }
        }
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (code, out, err) = skblab(&args);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(out.matches(": ok (").count(), 15 + 8, "{out}");
}

#[test]
fn lint_names_each_finding_and_exits_1_or_2() {
    let broken = repo_file(LESSON)
        .replacen("equals = 2288", "equals = 2280", 1)
        .replacen("query = \"page 0 count\"", "query = \"page 7 count\"", 1);
    let file = Scratch::file("broken.toml", &broken);
    let path = file.as_str();
    let (code, out, _) = skblab(&["lint", path, CHALLENGE]);
    assert_eq!(code, 1, "{out}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 3, "{out}");
    assert_eq!(
        lines[0],
        format!(
            "{path}: `check[0].equals` at step 1: skb_head_bytes reads 2288 in pre-2010, not 2280"
        )
    );
    assert!(
        lines[1].starts_with(&format!(
            "{path}: `question[3].query` at step 2: does not resolve"
        )),
        "{out}"
    );
    assert_eq!(lines[2], format!("{CHALLENGE}: ok (challenge)"));
    // A solution that changes a kept field.
    let sol = Scratch::file(
        "sol.toml",
        &repo_file(SOLUTION).replace("gso = false", "gso = true"),
    );
    let (code, out, _) = skblab(&["lint", CHALLENGE, sol.as_str()]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.starts_with(&format!(
            "{CHALLENGE}: the solution: `device`: challenge my-challenge keeps it as in the start"
        )),
        "{out}"
    );
    // Unreadable input: a missing file, a file that is no TOML, a scenario on its own.
    let not_toml = Scratch::file("junk.toml", "this is = = not toml");
    for (args, want) in [
        (
            vec!["lint", "/nonexistent/x.toml"],
            "cannot read /nonexistent/x.toml",
        ),
        (
            vec!["lint", not_toml.as_str()],
            "junk.toml: TOML parse error",
        ),
        (
            vec!["lint", SOLUTION],
            "a scenario: lint reads walkthroughs and challenges",
        ),
        (
            vec!["lint", "/dev/zero"],
            "/dev/zero: is not a regular file",
        ),
    ] {
        let (code, out, err) = skblab(&args);
        assert_eq!(code, 2, "{args:?}: {out}{err}");
        assert!(err.contains(want), "{args:?}: {err}");
    }
}

/// A lesson file the core refuses is refused by every command that reads it, naming the
/// field: 50 copies of one variant (805 bytes that took `walkthrough` 2.35 GB), and a
/// bidi override that would show "RTL" as "LTR".
#[test]
fn a_lesson_the_core_refuses_is_refused_by_every_command() {
    let lesson = repo_file(LESSON);
    let fifty = format!("variants = [{}]", vec!["\"pre-2010\""; 50].join(", "));
    let cases = [
        (
            lesson.replacen("variants = [\"pre-2010\", \"kumar-2010\"]", &fifty, 1),
            "`my-lesson.variants` = 50 variants is out of range: allowed 1..=2 variants",
        ),
        (
            lesson.replacen("Two writes", "\u{202e}Two writes", 1),
            "`title`: holds the control or format character U+202E",
        ),
    ];
    for (text, want) in cases {
        let file = Scratch::file("hostile.toml", &text);
        let (code, out, err) = skblab(&["walkthrough", file.as_str()]);
        assert_eq!(code, 2, "{out}{err}");
        assert!(err.contains(want) && out.is_empty(), "{err}");
        let (code, out, err) = skblab(&["lint", file.as_str()]);
        assert_eq!(code, 1, "{out}{err}");
        let line = format!("{}: {want}", file.as_str());
        assert!(out.starts_with(&line) && out.lines().count() == 1, "{out}");
    }
}

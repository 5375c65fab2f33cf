//! `skblab walkthrough NAME --quiz`: the walkthrough, with each question asked before its step
//! and answered from the learner's input; `skblab challenge`: goals to reach by editing a
//! scenario. The core judges every answer and checks every goal; this only moves lines.

use crate::cli::{lesson_file, read_scenario, walkthrough_traces, CliError, Outcome};
use crate::engine::Engine;
use crate::render::{self, Style};
use skblab_core::challenge::{self, Challenge, Verdict};
use skblab_core::error::escape_controls;
use skblab_core::limits::{MAX_ANSWERS_TEXT, MAX_ANSWER_LINE};
use skblab_core::quiz::{Quiz, Score};
use skblab_core::walkthrough::Walkthrough;
use skblab_core::Trace;
use std::io::{BufRead, Read, Write};
use std::path::Path;

/// Where the answers come from.
pub enum Answers<'a> {
    /// A person at a terminal: a closed input ends the quiz, a line that is not an answer is
    /// asked again.
    Terminal(&'a mut dyn BufRead),
    /// A file or a pipe, one answer a line: a line that is not an answer counts wrong (so
    /// each later line still answers its own question); running out is an error naming the
    /// question.
    Lines(&'a mut dyn BufRead),
}

/// Runs walkthrough `w` as a quiz, writing to `out` as it goes.
pub fn run(
    w: &Walkthrough,
    answers: Answers,
    out: &mut dyn Write,
    engine: Engine,
    st: Style,
) -> Result<Score, CliError> {
    let traces = walkthrough_traces(w, engine)?;
    quiz(w, &traces, answers, out, st)
}

/// The quiz itself: intro, then per step the core's questions (each judged, then revealed
/// with how its answer is made up) and the step; the score at the end.
pub fn quiz(
    w: &Walkthrough,
    traces: &[Trace],
    mut answers: Answers,
    out: &mut dyn Write,
    st: Style,
) -> Result<Score, CliError> {
    let io = |e: std::io::Error| CliError(format!("cannot write the quiz: {e}"));
    let mut quiz = Quiz::new(w, traces).map_err(CliError)?;
    let mut input = Input::default();
    out.write_all(render::walkthrough_intro(w, st).as_bytes())
        .map_err(io)?;
    for i in 0..w.say.len() {
        quiz.ask(i + 1);
        while let Some(item) = quiz.current() {
            write!(out, "{}", render::question(&item.q, st)).map_err(io)?;
            let asked = quiz.score().asked + 1;
            let (n, right) = loop {
                write!(out, "> ").map_err(io)?;
                out.flush().map_err(io)?;
                let line = input.next(&mut answers, asked)?;
                if let Some(judged) = quiz.answer(&line) {
                    break judged;
                }
                // The learner's own text comes back in the message: it cannot drive the
                // terminal.
                let why = escape_controls(quiz.error().unwrap_or_default()).into_owned();
                if let Answers::Terminal(_) = answers {
                    writeln!(out, "  {why}; try again").map_err(io)?;
                    continue;
                }
                let line = input.lines;
                writeln!(out, "  line {line} is not an answer: {why}; counted wrong")
                    .map_err(io)?;
                break (quiz.count_wrong().unwrap_or_default(), false);
            };
            write!(
                out,
                "{}",
                render::revealed(&quiz.items[n], traces, right, st)
            )
            .map_err(io)?;
            writeln!(out).map_err(io)?;
        }
        out.write_all(render::walkthrough_step(w, traces, i, st).as_bytes())
            .map_err(io)?;
    }
    out.write_all(render::walkthrough_outro(traces, w, st).as_bytes())
        .map_err(io)?;
    let score = quiz.score();
    writeln!(out, "\nscore: {} of {} right", score.right, score.asked).map_err(io)?;
    Ok(score)
}

/// The answers read so far, in lines and bytes. A line is read at most
/// [`MAX_ANSWER_LINE`] bytes at a time and all of them at most [`MAX_ANSWERS_TEXT`], so a
/// file of one endless line (`/dev/zero`) is refused, not held in memory.
#[derive(Default)]
struct Input {
    lines: usize,
    bytes: usize,
}

impl Input {
    /// The next line, for question number `n`.
    fn next(&mut self, answers: &mut Answers, n: usize) -> Result<String, CliError> {
        let (input, what) = match answers {
            Answers::Terminal(i) => (i, "the input closed: quiz ended"),
            Answers::Lines(i) => (i, "the answers ran out"),
        };
        let room = MAX_ANSWER_LINE.min(MAX_ANSWERS_TEXT.saturating_sub(self.bytes));
        let mut line = Vec::new();
        let read = input
            .by_ref()
            .take(room as u64 + 1)
            .read_until(b'\n', &mut line)
            .map_err(|e| CliError(format!("cannot read an answer: {e}")))?;
        self.lines += 1;
        self.bytes += read;
        if read == 0 {
            return Err(CliError(format!("{what} before question {n} was answered")));
        }
        if read > room && !line.ends_with(b"\n") {
            let (what, cap) = if room < MAX_ANSWER_LINE {
                ("the answers in all", MAX_ANSWERS_TEXT)
            } else {
                ("a line", MAX_ANSWER_LINE)
            };
            return Err(CliError(format!(
                "answer line {}: too long: {what} may hold at most {cap} bytes; give one \
                 answer a line (a number, a letter, or an object such as `skb 0`)",
                self.lines
            )));
        }
        let text = String::from_utf8_lossy(&line);
        Ok(text.trim_end_matches(['\n', '\r']).to_string())
    }
}

/// What `--quiz` needs when no answers file is given and stdin is not a terminal.
pub const NEEDS_INPUT: &str = "--quiz asks questions: run it on a terminal, or give \
--answers FILE with one answer a line (--answers - reads them from stdin)";

/// `skblab challenge --list`.
pub fn list_challenges() -> Result<String, CliError> {
    let all = challenge::all()?;
    let width = all.iter().map(|c| c.name.len()).max().unwrap_or(0);
    Ok(all
        .iter()
        .map(|c| format!("{:<width$}  seed {}  {}\n", c.name, c.seed, c.title))
        .collect())
}

/// The challenge `arg` names: a built-in one, or a challenge file (see
/// [`crate::cli::lesson_file`]).
pub fn load(arg: &str) -> Result<Challenge, CliError> {
    match lesson_file(arg) {
        Some(path) => {
            let text = read_scenario(path)?;
            challenge::parse(&text).map_err(|e| CliError(format!("{}: {e}", path.display())))
        }
        None => challenge::find(arg).map_err(crate::cli::or_a_file),
    }
}

/// `skblab challenge NAME`: the goal, a hint and the starting scenario to edit.
pub fn show_challenge(arg: &str, st: Style) -> Result<String, CliError> {
    let c = load(arg)?;
    let run = format!("skblab challenge {arg} FILE");
    Ok(format!(
        "{}\n{}\n{}\n{}\n\n{}\n{}\n",
        render::title(&c.title, st),
        render::wrap(&c.goal, ""),
        render::wrap(&format!("Hint: {}", c.hint), ""),
        render::wrap(&runs_as(&c), ""),
        format_args!(
            "The starting scenario (save it as FILE, or get it alone with `skblab challenge \
             {arg} --start > FILE`; edit it, then run `{run}`):"
        ),
        c.start()
    ))
}

/// The variant and what must stay as in the start (the core's list).
fn runs_as(c: &Challenge) -> String {
    let kept = c.kept_besides_variant();
    let kept: Vec<String> = kept.iter().map(|k| format!("`{k}`")).collect();
    format!(
        "Runs as variant {}; {} and the variant stay as in the start.",
        c.variant,
        kept.join(", ")
    )
}

/// `skblab challenge NAME --start`: the starting scenario alone, to save as a file and edit.
pub fn start_file(arg: &str) -> Result<String, CliError> {
    Ok(load(arg)?.start() + "\n")
}

/// `skblab challenge NAME FILE|DIR [--json]`: checks the scenario in FILE against the goal,
/// or each file in DIR ([`grade`]); a goal not met is a failure (exit 1).
pub fn check_challenge(arg: &str, file: &Path, json: bool) -> Result<Outcome, CliError> {
    let c = load(arg)?;
    if file.is_dir() {
        return grade(&c, file, json);
    }
    let v = verdict(&c, file).map_err(CliError)?;
    let ok = v.solved_at.is_some();
    let out = if json {
        let mut j = serde_json::json!({ "challenge": c.name });
        add_verdict(&mut j, &v);
        pretty(&j)
    } else {
        let head = match v.solved_at {
            Some(step) => format!("solved: the goal holds after step {step}"),
            None => "not solved yet".to_string(),
        };
        format!("{head}\n{}\n", v.report.join("\n"))
    };
    Ok(Outcome { out, ok })
}

/// At most this many files in a folder of solutions: a class's, not a file system's.
pub const MAX_SOLUTIONS: usize = 1000;

/// A folder of solutions graded: one line per file (in name order; hidden files left out),
/// solved at which step, or the conditions not met, or why the file is no solution; then how
/// many solved it. With `json`, the same as one object. Any file not solving it exits 1.
fn grade(c: &Challenge, dir: &Path, json: bool) -> Result<Outcome, CliError> {
    let fail = |e: std::io::Error| CliError(format!("cannot read {}: {e}", dir.display()));
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(fail)? {
        let path = entry.map_err(fail)?.path();
        let hidden = path
            .file_name()
            .is_some_and(|n| n.as_encoded_bytes().starts_with(b"."));
        if path.is_file() && !hidden {
            files.push(path);
        }
        if files.len() > MAX_SOLUTIONS {
            return Err(CliError(format!(
                "{}: too many files: a folder of solutions holds at most {MAX_SOLUTIONS}",
                dir.display()
            )));
        }
    }
    if files.is_empty() {
        return Err(CliError(format!(
            "{}: no solution files in it",
            dir.display()
        )));
    }
    files.sort();
    let (mut out, mut rows, mut solved) = (String::new(), Vec::new(), 0);
    for path in &files {
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        let name = escape_controls(&name).into_owned();
        let mut row = serde_json::json!({ "file": name });
        let said = match verdict(c, path) {
            Ok(v) => {
                add_verdict(&mut row, &v);
                solved += usize::from(v.solved_at.is_some());
                match v.solved_at {
                    Some(step) => format!("solved at step {step}"),
                    None => {
                        let unmet = v.conditions.iter().filter(|s| !s.holds);
                        let unmet: Vec<String> = unmet.map(|s| s.to_string()).collect();
                        format!("not solved: {}", unmet.join("; "))
                    }
                }
            }
            Err(e) => {
                let e = escape_controls(&e).into_owned();
                row["solved"] = false.into();
                row["error"] = e.clone().into();
                format!("not a solution: {e}")
            }
        };
        out.push_str(&format!("{name}: {said}\n"));
        rows.push(row);
    }
    let total = files.len();
    out.push_str(&format!("{solved} of {total} solved it\n"));
    if json {
        let j = serde_json::json!({ "challenge": c.name, "solved": solved, "files": total, "solutions": rows });
        out = pretty(&j);
    }
    Ok(Outcome {
        out,
        ok: solved == total,
    })
}

/// The verdict on the scenario in `file`, or why there is none (unreadable, not a scenario,
/// a kept field changed), naming the file.
fn verdict(c: &Challenge, file: &Path) -> Result<Verdict, String> {
    let text = read_scenario(file).map_err(|e| e.0)?;
    c.check(&text)
        .map_err(|e| format!("{}: {e}", file.display()))
}

/// Adds `solved` and the verdict's fields to the JSON object `j`.
fn add_verdict(j: &mut serde_json::Value, v: &Verdict) {
    let solved = serde_json::json!({ "solved": v.solved_at.is_some() });
    for part in [solved, serde_json::json!(v)] {
        if let (Some(j), serde_json::Value::Object(m)) = (j.as_object_mut(), part) {
            j.extend(m);
        }
    }
}

fn pretty(j: &serde_json::Value) -> String {
    serde_json::to_string_pretty(j).expect("verdicts serialize") + "\n"
}

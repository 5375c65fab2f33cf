//! `skblab walkthrough NAME --quiz`: the walkthrough, with each question asked before its step
//! and answered from the learner's input; `skblab challenge`: goals to reach by editing a
//! scenario. The core judges every answer and checks every goal; this only moves lines.

use crate::cli::{read_scenario, walkthrough_traces, CliError};
use crate::engine::Engine;
use crate::render::{self, Style};
use skblab_core::challenge;
use skblab_core::walkthrough::{self, Walkthrough};
use skblab_core::Trace;
use std::io::{BufRead, Write};
use std::path::Path;

/// Right answers out of questions asked.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Score {
    pub right: usize,
    pub asked: usize,
}

/// Where the answers come from.
pub enum Answers<'a> {
    /// A person at a terminal: a closed input ends the quiz.
    Terminal(&'a mut dyn BufRead),
    /// A file or a pipe, one answer a line: running out is an error naming the question.
    Lines(&'a mut dyn BufRead),
}

/// Runs walkthrough `name` as a quiz, writing to `out` as it goes.
pub fn run(
    name: &str,
    answers: Answers,
    out: &mut dyn Write,
    engine: Engine,
    st: Style,
) -> Result<Score, CliError> {
    let w = walkthrough::find(name)?;
    let traces = walkthrough_traces(&w, engine)?;
    quiz(&w, &traces, answers, out, st)
}

/// The quiz itself: intro, then per step its questions (each asked until the input is an
/// answer, then judged and revealed) and the step; the score at the end.
pub fn quiz(
    w: &Walkthrough,
    traces: &[Trace],
    mut answers: Answers,
    out: &mut dyn Write,
    st: Style,
) -> Result<Score, CliError> {
    let io = |e: std::io::Error| CliError(format!("cannot write the quiz: {e}"));
    let questions = w.questions()?;
    let mut score = Score::default();
    out.write_all(render::walkthrough_intro(w, st).as_bytes())
        .map_err(io)?;
    for i in 0..w.say.len() {
        for q in questions.iter().filter(|q| q.step == i + 1) {
            let answer = w
                .answer(q, traces)
                .map_err(|e| CliError(format!("{}: question on step {}: {e}", w.name, q.step)))?;
            score.asked += 1;
            write!(out, "{}", render::question(q, st)).map_err(io)?;
            let right = loop {
                write!(out, "> ").map_err(io)?;
                out.flush().map_err(io)?;
                let line = next_line(&mut answers, score.asked)?;
                match q.judge(&line, answer) {
                    Ok(right) => break right,
                    Err(why) => writeln!(out, "  {why}; try again").map_err(io)?,
                }
            };
            score.right += usize::from(right);
            let verdict = if right {
                format!("right: {}", q.say(answer))
            } else {
                format!("wrong: the answer is {}", q.say(answer))
            };
            writeln!(out, "  {verdict}\n").map_err(io)?;
        }
        out.write_all(render::walkthrough_step(w, traces, i, st).as_bytes())
            .map_err(io)?;
    }
    out.write_all(render::walkthrough_outro(traces, w, st).as_bytes())
        .map_err(io)?;
    writeln!(out, "\nscore: {} of {} right", score.right, score.asked).map_err(io)?;
    Ok(score)
}

/// The next line of input, for question number `n`.
fn next_line(answers: &mut Answers, n: usize) -> Result<String, CliError> {
    let (input, what) = match answers {
        Answers::Terminal(i) => (i, "the input closed: quiz ended"),
        Answers::Lines(i) => (i, "the answers ran out"),
    };
    let mut line = String::new();
    match input.read_line(&mut line) {
        Ok(0) => Err(CliError(format!("{what} before question {n} was answered"))),
        Ok(_) => Ok(line.trim_end_matches(['\n', '\r']).to_string()),
        Err(e) => Err(CliError(format!("cannot read an answer: {e}"))),
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

/// `skblab challenge NAME`: the goal, a hint and the starting scenario to edit.
pub fn show_challenge(name: &str, st: Style) -> Result<String, CliError> {
    let c = challenge::find(name)?;
    Ok(format!(
        "{}\n{}\n{}\n{}\n\n{}\n{}\n",
        render::title(&c.title, st),
        render::wrap(&c.goal, ""),
        render::wrap(&format!("Hint: {}", c.hint), ""),
        render::wrap(&format!("Runs as variant {}.", c.variant), ""),
        "The starting scenario (save it, edit it, then run `skblab challenge NAME FILE`):",
        c.start()
    ))
}

/// `skblab challenge NAME FILE`: checks the scenario in FILE against the goal.
pub fn check_challenge(name: &str, file: &Path) -> Result<String, CliError> {
    let c = challenge::find(name)?;
    let v = c.check(&read_scenario(file)?)?;
    let head = match v.solved_at {
        Some(step) => format!("solved: the goal holds after step {step}"),
        None => "not solved yet".to_string(),
    };
    Ok(format!("{head}\n{}\n", v.report.join("\n")))
}

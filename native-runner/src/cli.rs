//! The subcommands that run the model: `run`, `compare`, `walkthrough`, `lint`.

use crate::engine::{self, Engine, EngineError};
use crate::render::{self, Style};
use skblab_core::error::escape_controls;
use skblab_core::lint::{self, Kind};
use skblab_core::walkthrough::{self, Walkthrough};
use skblab_core::{RunOptions, Trace};
use std::fmt;
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// A user-facing failure: one clear line, exit code 2.
#[derive(Debug)]
pub struct CliError(pub String);

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// What a command prints, and whether it succeeded: a goal not met or a lint finding prints
/// its report and exits 1.
pub struct Outcome {
    pub out: String,
    pub ok: bool,
}

impl From<String> for Outcome {
    fn from(out: String) -> Self {
        Outcome { out, ok: true }
    }
}

impl From<EngineError> for CliError {
    fn from(e: EngineError) -> Self {
        CliError(e.to_string())
    }
}

impl From<skblab_core::Error> for CliError {
    fn from(e: skblab_core::Error) -> Self {
        CliError(e.to_string())
    }
}

/// Reads a scenario, walkthrough or challenge file, refusing anything over the core's text
/// cap: at most cap + 1 bytes are ever read, whatever the file's size claims. Only a regular
/// file with a size is read: a FIFO would wait for a writer and a device (`/dev/zero`) need not
/// end, so both are refused before a byte is read (the open does not wait: `O_NONBLOCK`); a
/// kernel file that claims no size (`/proc/kmsg`, which waits for the kernel's log and
/// consumes it) is refused unread too.
pub fn read_scenario(path: &Path) -> Result<String, CliError> {
    let cap = skblab_core::limits::MAX_SCENARIO_TEXT;
    let fail = |e: std::io::Error| CliError(format!("cannot read {}: {e}", path.display()));
    let refuse = |why: &str| CliError(format!("{}: {why}", path.display()));
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .map_err(fail)?;
    let meta = file.metadata().map_err(fail)?;
    if !meta.is_file() {
        return Err(refuse(crate::output::NOT_A_FILE));
    }
    if meta.len() == 0 {
        return Err(refuse(EMPTY));
    }
    let mut text = Vec::new();
    file.take(cap as u64 + 1)
        .read_to_end(&mut text)
        .map_err(fail)?;
    if text.len() > cap {
        return Err(refuse(&format!("too large: allowed at most {cap} bytes")));
    }
    String::from_utf8(text).map_err(|e| {
        fail(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("not UTF-8 text (byte {})", e.utf8_error().valid_up_to()),
        ))
    })
}

const EMPTY: &str = "is empty, or a kernel file that claims no size (such as /proc/kmsg)";

/// Parses and runs scenario text on `engine` with an optional variant override.
pub fn run_text(
    text: &str,
    variant: Option<&str>,
    counters_only: bool,
    engine: Engine,
) -> Result<Trace, CliError> {
    let opts = RunOptions::new(variant, counters_only);
    Ok(engine::run(engine, text, &opts)?)
}

/// `skblab run FILE [--json] [--variant V] [--counters-only]`.
pub fn run(
    path: &Path,
    variant: Option<&str>,
    json: bool,
    counters_only: bool,
    engine: Engine,
    st: Style,
) -> Result<String, CliError> {
    let trace = run_text(&read_scenario(path)?, variant, counters_only, engine)?;
    Ok(if json {
        to_json(&trace)
    } else {
        render::trace(&trace, st)
    })
}

/// `skblab compare FILE --variant A --variant B [--json]`.
pub fn compare(
    path: &Path,
    variants: &[String],
    json: bool,
    engine: Engine,
    st: Style,
) -> Result<String, CliError> {
    let [a, b] = variants else {
        return Err(CliError(format!(
            "--variant: give exactly two variants to compare, got {}",
            variants.len()
        )));
    };
    let text = read_scenario(path)?;
    let (ta, tb) = (
        run_text(&text, Some(a), true, engine)?,
        run_text(&text, Some(b), true, engine)?,
    );
    Ok(if json {
        let v = serde_json::json!({ "a": ta.counters, "b": tb.counters, "variants": [a, b] });
        serde_json::to_string_pretty(&v).expect("counters serialize") + "\n"
    } else {
        render::compare(&ta, &tb, st)
    })
}

/// `skblab walkthrough --list`: each walkthrough's name, seed and title.
pub fn list_walkthroughs() -> Result<String, CliError> {
    let all = walkthrough::all()?;
    let width = all.iter().map(|w| w.name.len()).max().unwrap_or(0);
    Ok(all
        .iter()
        .map(|w| format!("{:<width$}  seed {}  {}\n", w.name, w.seed(), w.title))
        .collect())
}

/// A walkthrough or challenge named on the command line is a file when its name has a `/`
/// or ends in `.toml`; otherwise it is a built-in one's name.
pub fn lesson_file(arg: &str) -> Option<&Path> {
    (arg.contains('/') || arg.ends_with(".toml")).then_some(Path::new(arg))
}

/// An unknown built-in name's error, saying a file works too.
pub fn or_a_file(e: skblab_core::Error) -> CliError {
    CliError(format!(
        "{e}; or give a file: a path with a `/` or ending in .toml"
    ))
}

/// The walkthrough `arg` names: a built-in one, or a walkthrough file (its moments checked).
pub fn load_walkthrough(arg: &str) -> Result<Walkthrough, CliError> {
    match lesson_file(arg) {
        Some(path) => walkthrough::parse(&read_scenario(path)?)
            .and_then(|w| w.moments().map(|_| w))
            .map_err(|e| CliError(format!("{}: {e}", path.display()))),
        None => walkthrough::find(arg).map_err(or_a_file),
    }
}

/// Help text for a lesson argument: the built-in names, or a file.
pub fn names_help(what: &str, names: &[&str]) -> String {
    format!(
        "The {what}: one of {}; or a {what} file (a path with a `/` or ending in .toml)",
        names.join(", ")
    )
}

/// The traces of a walkthrough's variants, in order, within the lesson's budget.
pub fn walkthrough_traces(w: &Walkthrough, engine: Engine) -> Result<Vec<Trace>, CliError> {
    w.traces(|_, opts| Ok(engine::run_scenario(engine, &w.scenario, opts)?))
}

/// `skblab walkthrough NAME|FILE`.
pub fn walkthrough(arg: &str, engine: Engine, st: Style) -> Result<String, CliError> {
    let w = load_walkthrough(arg)?;
    let traces = walkthrough_traces(&w, engine)?;
    Ok(render::walkthrough(&w, &w.questions()?, &traces, st))
}

/// `skblab lint FILE...`: the core's checks ([`skblab_core::lint`]) on each walkthrough or
/// challenge file; a scenario file right after a challenge is checked as its solution. A
/// finding fails (exit 1); a file that cannot be read, or is no lesson, is an error (exit 2).
pub fn lint(files: &[PathBuf]) -> Result<Outcome, CliError> {
    let mut read = Vec::with_capacity(files.len());
    for path in files {
        let text = read_scenario(path)?;
        let kind = lint::kind(&text).map_err(|e| CliError(format!("{}: {e}", path.display())))?;
        read.push((path, kind, text));
    }
    let mut out = String::new();
    let mut ok = true;
    let mut items = read.iter().peekable();
    while let Some((path, kind, text)) = items.next() {
        let name = escape_controls(&path.to_string_lossy()).into_owned();
        let solution = match (kind, items.peek()) {
            (Kind::Challenge, Some((sol, Kind::Scenario, text))) => {
                items.next();
                Some((escape_controls(&sol.to_string_lossy()).into_owned(), text))
            }
            (Kind::Scenario, _) => {
                return Err(CliError(format!(
                    "{name}: a scenario: lint reads walkthroughs and challenges; give a \
                     scenario right after a challenge to check it as its solution"
                )))
            }
            _ => None,
        };
        let found = lint::file(text, solution.as_ref().map(|(_, t)| t.as_str()))?;
        ok &= found.is_empty();
        for f in &found {
            out.push_str(&format!("{name}: {f}\n"));
        }
        if found.is_empty() {
            let with = solution.map_or(String::new(), |(s, _)| format!(", with solution {s}"));
            out.push_str(&format!("{name}: ok ({kind}{with})\n"));
        }
    }
    Ok(Outcome { out, ok })
}

/// The trace as pretty JSON, newline-terminated.
pub fn to_json(t: &Trace) -> String {
    serde_json::to_string_pretty(t).expect("traces serialize") + "\n"
}

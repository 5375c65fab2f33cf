//! The subcommands that run the model: `run`, `compare`, `walkthrough`.

use crate::engine::{self, Engine, EngineError};
use crate::render::{self, Style};
use skblab_core::walkthrough::{self, Walkthrough};
use skblab_core::{RunOptions, Trace};
use std::fmt;
use std::path::Path;

/// A user-facing failure: one clear line, exit code 2.
#[derive(Debug)]
pub struct CliError(pub String);

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(&self.0)
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

/// Reads a scenario file, refusing anything over the core's text cap before reading it all.
pub fn read_scenario(path: &Path) -> Result<String, CliError> {
    let cap = skblab_core::limits::MAX_SCENARIO_TEXT as u64;
    let meta = std::fs::metadata(path)
        .map_err(|e| CliError(format!("cannot read {}: {e}", path.display())))?;
    if meta.len() > cap {
        return Err(CliError(format!(
            "{}: {} bytes is too large: allowed at most {cap} bytes",
            path.display(),
            meta.len()
        )));
    }
    std::fs::read_to_string(path)
        .map_err(|e| CliError(format!("cannot read {}: {e}", path.display())))
}

/// Parses and runs scenario text on `engine` with an optional variant override.
pub fn run_text(
    text: &str,
    variant: Option<&str>,
    counters_only: bool,
    engine: Engine,
) -> Result<Trace, CliError> {
    let opts = RunOptions {
        variant: variant.map(str::to_string),
        counters_only,
    };
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

/// `skblab walkthrough --list`.
pub fn list_walkthroughs() -> Result<String, CliError> {
    let all = walkthrough::all()?;
    let width = all.iter().map(|w| w.name.len()).max().unwrap_or(0);
    Ok(all
        .iter()
        .map(|w| format!("{:<width$}  {}\n", w.name, w.title))
        .collect())
}

/// The traces of a walkthrough's variants, in order.
pub fn walkthrough_traces(w: &Walkthrough, engine: Engine) -> Result<Vec<Trace>, CliError> {
    w.variants
        .iter()
        .map(|v| {
            let opts = RunOptions {
                variant: Some(v.clone()),
                ..Default::default()
            };
            Ok(engine::run_scenario(engine, &w.scenario, &opts)?)
        })
        .collect()
}

/// `skblab walkthrough NAME`.
pub fn walkthrough(name: &str, engine: Engine, st: Style) -> Result<String, CliError> {
    let w = walkthrough::find(name)?;
    let traces = walkthrough_traces(&w, engine)?;
    Ok(render::walkthrough(&w, &w.questions()?, &traces, st))
}

/// The trace as pretty JSON, newline-terminated.
pub fn to_json(t: &Trace) -> String {
    serde_json::to_string_pretty(t).expect("traces serialize") + "\n"
}

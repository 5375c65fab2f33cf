//! `skblab`: learn how Linux builds and recycles network buffers, in the terminal.

use clap::{Parser, Subcommand, ValueEnum};
use skblab_core::{challenge, walkthrough};
use skblab_runner::cli::{self, CliError, Outcome};
use skblab_runner::engine::Engine;
use skblab_runner::output::error as fail;
use skblab_runner::render::Style;
use skblab_runner::{kernel, quiz, tap, trace};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "skblab",
    version,
    about = "How Linux builds and recycles sk_buffs and pages, before and after four kernel patches"
)]
struct Cli {
    /// When to colour the output.
    #[arg(long, value_enum, default_value_t = Color::Auto, global = true)]
    color: Color,
    /// Which build of the core runs the model: this binary's, or the wasm module under
    /// wasmtime (same output, byte for byte).
    #[arg(long, value_enum, default_value_t = Engine::Native, global = true)]
    engine: Engine,
    /// Print every event of a step (`run`, `walkthrough`): by default a long list keeps its
    /// first and last few events and, in a walkthrough, every key moment, and counts the rest.
    #[arg(long, global = true)]
    all_events: bool,
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Clone, Copy, ValueEnum)]
enum Color {
    Auto,
    Always,
    Never,
}

#[derive(Subcommand)]
enum Cmd {
    /// Print a narrated walkthrough step by step (or list them), built in or from a file.
    Walkthrough {
        #[arg(required_unless_present = "list", value_name = "NAME|FILE",
              help = cli::names_help("walkthrough", walkthrough::NAMES))]
        name: Option<String>,
        /// List the walkthroughs, with the seed (patch) each is about.
        #[arg(long)]
        list: bool,
        /// Ask the walkthrough's questions before their steps, and reveal each answer.
        #[arg(long)]
        quiz: bool,
        /// With --quiz: read the answers from FILE, one a line (`-`: from stdin).
        #[arg(long, requires = "quiz")]
        answers: Option<PathBuf>,
    },
    /// Goals to reach by editing a scenario: show one, or check a scenario FILE against it
    /// (exit 1 when the goal is not met), or grade a folder of them.
    Challenge {
        #[arg(required_unless_present = "list", value_name = "NAME|FILE",
              help = cli::names_help("challenge", challenge::NAMES))]
        name: Option<String>,
        /// A scenario to check against the challenge's goal, or a folder of them to grade
        /// (one line per file; exit 1 unless every one meets the goal).
        #[arg(value_name = "SOLUTION|DIR")]
        file: Option<PathBuf>,
        /// List the challenges.
        #[arg(long)]
        list: bool,
        /// Print only the starting scenario, to save as a file and edit.
        #[arg(long, conflicts_with = "file")]
        start: bool,
        /// With SOLUTION or DIR: print the verdict as JSON.
        #[arg(long, requires = "file")]
        json: bool,
    },
    /// Check walkthrough and challenge files as the project's tests check its own (a scenario
    /// right after a challenge is checked as its solution): exit 0 clean, 1 on findings,
    /// 2 on unreadable input.
    Lint {
        #[arg(required = true, value_name = "FILE")]
        files: Vec<PathBuf>,
    },
    /// Run a scenario file (TOML or JSON) and print its trace.
    Run {
        file: PathBuf,
        /// Print the trace as JSON.
        #[arg(long)]
        json: bool,
        /// Run this variant instead of the file's.
        #[arg(long)]
        variant: Option<String>,
        /// Keep only the final counters (no per-step trace): for scenarios too big to trace.
        #[arg(long)]
        counters_only: bool,
    },
    /// Run a scenario in two variants and print their counters side by side.
    Compare {
        file: PathBuf,
        /// A variant to compare; give it twice.
        #[arg(long = "variant", required = true, num_args = 1)]
        variants: Vec<String>,
        /// Print the two counter sets as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Serve the built playground (dist/) on 127.0.0.1 (or --bind ADDR) and print its URL.
    Serve(skblab_runner::serve::Args),
    /// The model's segments on a real wire against the kernel's TCP (root, /dev/net/tun).
    Tap(tap::TapArgs),
    /// The model's skbs beside the running kernel's, traced with eBPF (root, bpftrace, BTF).
    Kernel(kernel::KernelArgs),
    /// A program's own skbs on the running kernel, traced at tracepoints: per socket, the
    /// skbs sent and received, their frags, pages and frees (root, bpftrace, BTF).
    Trace(trace::TraceArgs),
}

fn style(cli: &Cli) -> Style {
    let color = match cli.color {
        Color::Always => true,
        Color::Never => false,
        Color::Auto => std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none(),
    };
    Style {
        color,
        all_events: cli.all_events,
    }
}

fn dispatch(cli: Cli) -> Result<Outcome, CliError> {
    let st = style(&cli);
    let out = match cli.cmd {
        Cmd::Walkthrough { list: true, .. } => cli::list_walkthroughs(),
        Cmd::Walkthrough {
            name,
            quiz: true,
            answers,
            ..
        } => quiz(name.as_deref().unwrap_or_default(), answers, cli.engine, st),
        Cmd::Walkthrough { name, .. } => {
            cli::walkthrough(name.as_deref().unwrap_or_default(), cli.engine, st)
        }
        Cmd::Challenge { list: true, .. } => quiz::list_challenges(),
        Cmd::Challenge {
            name, start: true, ..
        } => quiz::start_file(name.as_deref().unwrap_or_default()),
        Cmd::Challenge {
            name, file: None, ..
        } => quiz::show_challenge(name.as_deref().unwrap_or_default(), st),
        Cmd::Challenge {
            name,
            file: Some(f),
            json,
            ..
        } => return quiz::check_challenge(name.as_deref().unwrap_or_default(), &f, json),
        Cmd::Lint { files } => return cli::lint(&files),
        Cmd::Run {
            file,
            json,
            variant,
            counters_only,
        } => cli::run(
            &file,
            variant.as_deref(),
            json,
            counters_only,
            cli.engine,
            st,
        ),
        Cmd::Compare {
            file,
            variants,
            json,
        } => cli::compare(&file, &variants, json, cli.engine, st),
        Cmd::Serve(a) => skblab_runner::serve::serve(&a)
            .map(|()| String::new())
            .map_err(CliError),
        Cmd::Tap(_) | Cmd::Kernel(_) | Cmd::Trace(_) => {
            unreachable!("tap, kernel and trace run before dispatch")
        }
    };
    out.map(Outcome::from)
}

/// `walkthrough NAME|FILE --quiz`: answers from the file, stdin (`-`), or the terminal.
fn quiz(
    name: &str,
    answers: Option<PathBuf>,
    engine: Engine,
    st: Style,
) -> Result<String, CliError> {
    let w = cli::load_walkthrough(name)?;
    let stdin = std::io::stdin();
    let mut out = std::io::stdout().lock();
    let mut input: Box<dyn std::io::BufRead> = match &answers {
        Some(p) if p.as_os_str() == "-" => Box::new(stdin.lock()),
        Some(p) => Box::new(std::io::BufReader::new(
            std::fs::File::open(p)
                .map_err(|e| CliError(format!("cannot read {}: {e}", p.display())))?,
        )),
        None if stdin.is_terminal() => Box::new(stdin.lock()),
        None => return Err(CliError(quiz::NEEDS_INPUT.into())),
    };
    let answers = match answers {
        Some(_) => quiz::Answers::Lines(&mut input),
        None => quiz::Answers::Terminal(&mut input),
    };
    quiz::run(&w, answers, &mut out, engine, st)?;
    Ok(String::new())
}

/// Prints clap's help, version or usage error where clap would, and exits with clap's code,
/// or 2 when that stream cannot take it: `Cli::parse` would exit 0 after `--help >/dev/full`.
/// A reader that went away (`skblab --help | head`) is no failure, as for any output.
fn parse_failed(e: &clap::Error) -> ExitCode {
    use std::io::Write;
    let printed = e.print().and_then(|()| std::io::stdout().flush());
    match printed {
        Err(err) if err.kind() != std::io::ErrorKind::BrokenPipe => {
            let stream = if e.use_stderr() { "stderr" } else { "stdout" };
            fail(&format!("writing to {stream}: {err}"));
            ExitCode::from(2)
        }
        _ => ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(2)),
    }
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return parse_failed(&e),
    };
    // `tap` and `kernel` unshare the network namespace, which must happen before any thread
    // starts.
    if let Cmd::Tap(args) = &cli.cmd {
        return match tap::run(args) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                fail(&e);
                ExitCode::from(2)
            }
        };
    }
    if let Cmd::Kernel(args) = &cli.cmd {
        return kernel::main(args);
    }
    // `trace` unshares the mount namespace for tracefs: before any thread starts too.
    if let Cmd::Trace(args) = &cli.cmd {
        return trace::main(args);
    }
    match dispatch(cli) {
        Ok(Outcome { out, ok }) => match skblab_runner::output::stdout(&out) {
            Ok(()) if ok => ExitCode::SUCCESS,
            Ok(()) => ExitCode::FAILURE,
            Err(e) => {
                fail(&e);
                ExitCode::from(2)
            }
        },
        Err(e) => {
            fail(&e);
            ExitCode::from(2)
        }
    }
}

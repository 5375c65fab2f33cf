//! One kernel run, whatever it runs: a mechanism's scenario beside its model (the oracle), or
//! a program of the user's (`skblab trace`). Each is one impl of [`KernelRun`]: it plans from
//! what it is asked (refusing what it cannot do before anything is set up), names its probes
//! (the tracepoints they need and bpftrace's script), runs once under them, and reads the
//! kernel's side off the probes' lines. [`compare`] drives an [`Oracle`] the same way for
//! every mechanism: the variant picked once, the machine checked, untrusted runs retried, the
//! report made by the core's rules.

use super::probe;
use super::verdict::{self, RunError, Side};
use super::Report;
use crate::net::netns;
use skblab_core::mechanism::Mechanism;

/// A run on the running kernel, read at its tracepoints.
pub trait KernelRun: Sized {
    /// What it is asked: a scenario and the model's variant, or a command.
    type Ask;
    /// What one run reads off the kernel.
    type Seen;
    /// Everything the ask can get wrong, refused naming the field, before any setup.
    fn plan(ask: Self::Ask) -> Result<Self, String>;
    /// The tracepoints (`group/name`) its probes attach to, checked before anything runs.
    fn tracepoints(&self) -> Vec<&'static str>;
    /// Its probes: bpftrace's script (`$1` is this process).
    fn script(&self) -> String;
    /// One run under the probes (the `n`th try, from 0: a run may take ports of its own, as
    /// a torn-down connection lingers) and the kernel's side read from their lines.
    fn once(&self, n: u16) -> Result<Self::Seen, RunError>;
}

/// What the oracle asks of a mechanism's run: its scenario and the model's variant (the
/// one `--variant` names, else the mechanism's variant of today: [`ask`]).
pub struct Ask<S> {
    pub sc: S,
    pub variant: String,
}

/// The oracle's ask, the variant picked the one way every mechanism shares.
pub fn ask<S: Mechanism>(sc: S, flag: Option<&str>) -> Ask<S> {
    Ask {
        sc,
        variant: flag.unwrap_or(S::TODAY).to_string(),
    }
}

/// What an oracle run saw: the kernel's side, how the run was set up, and what the report
/// shows beside the judged fields.
pub struct Seen {
    pub side: Side,
    pub setup: serde_json::Value,
    pub shown: serde_json::Map<String, serde_json::Value>,
}

impl Seen {
    /// A side with its setup and nothing shown.
    pub fn new(side: Side, setup: serde_json::Value) -> Seen {
        Seen {
            side,
            setup,
            shown: serde_json::Map::new(),
        }
    }
}

/// A mechanism's kernel run set beside its model.
pub trait Oracle: KernelRun<Seen = Seen> {
    /// The core's name of the mechanism.
    const MECHANISM: &'static str;
    /// The model's variant set beside the kernel.
    fn variant(&self) -> &str;
    /// The model's side after the ops the run drives.
    fn model(&self) -> Side;
    /// The ops the run leaves out (a suffix of the scenario's).
    fn not_driven(&self) -> Vec<String> {
        Vec::new()
    }
}

/// Checks the machine and the probes' tracepoints, then enters private network and mount
/// namespaces with tracefs.
pub fn isolate(tracepoints: &[&str]) -> Result<(), String> {
    probe::preflight()?;
    netns::preflight()?;
    netns::enter_private_netns()?;
    probe::private_tracefs()?;
    probe::need_tracepoints(tracepoints)
}

/// The oracle for any mechanism: plan, isolate, a trusted run, the report.
pub fn compare<K: Oracle>(ask: K::Ask) -> Result<Report, String> {
    let k = K::plan(ask)?;
    isolate(&k.tracepoints())?;
    let (seen, why) = trusted(|n| k.once(n))?;
    let mut setup = seen.setup;
    setup["untrusted_runs_retried"] = why.len().into();
    let mut r = report(
        K::MECHANISM,
        k.variant(),
        setup,
        k.model(),
        seen.side,
        k.not_driven(),
    );
    r.shown = seen.shown;
    Ok(r)
}

/// The report of a comparison, its rows and verdict the core's ([`verdict::compare`]); the
/// scenario and how many ops ran are the caller's to fill in.
pub fn report(
    mechanism: &'static str,
    variant: &str,
    setup: serde_json::Value,
    model: Side,
    kernel_side: Side,
    not_driven: Vec<String>,
) -> Report {
    let rows = verdict::compare(&model, &kernel_side);
    let serde_json::Value::Object(setup) = setup else {
        unreachable!("setup is an object literal")
    };
    Report {
        mechanism: mechanism.to_string(),
        variant: variant.to_string(),
        kernel: kernel_release(),
        setup,
        verdict: verdict::Verdict::of(&rows),
        model,
        kernel_side,
        rows,
        not_driven,
        scenario: String::new(),
        driven: 0,
        shown: serde_json::Map::new(),
    }
}

/// The running kernel's release.
pub fn kernel_release() -> String {
    std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

/// How many kernel runs a comparison may take when a trace cannot be trusted.
const TRIES: usize = 3;

/// Runs `attempt(n)` (n = 0, 1, ...) until one gives a trace that can be trusted, at most
/// [`TRIES`] times. An untrusted run (its trace, or a kernel too slow:
/// [`RunError::Untrusted`]) is retried; any other error ends the comparison. Returns the
/// result and why the runs before it were not trusted.
fn trusted<T>(
    mut attempt: impl FnMut(u16) -> Result<T, RunError>,
) -> Result<(T, Vec<String>), String> {
    let mut why = Vec::new();
    loop {
        let verdict::Inconclusive(w) = match attempt(why.len() as u16) {
            Ok(t) => return Ok((t, why)),
            Err(RunError::Untrusted(untrusted)) => untrusted,
            Err(RunError::Failed(e)) => return Err(e),
        };
        why.push(w);
        if why.len() == TRIES {
            return Err(inconclusive(&why));
        }
    }
}

/// The error for a comparison no run could make: every run's reason.
fn inconclusive(why: &[String]) -> String {
    format!(
        "inconclusive: no verdict, the trace could not be trusted in {} runs: {}",
        why.len(),
        why.join("; ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each untrusted run (a spoiled trace, a kernel too slow) is retried on the next
    /// number; a trusted one ends the retries; any other error ends the comparison at once.
    #[test]
    fn untrusted_runs_are_retried_then_inconclusive() {
        let mut tried = Vec::new();
        let runs = |n: u16| -> Result<u16, RunError> {
            match n {
                0 => Err(verdict::too_slow("late")),
                1 => Err(verdict::Inconclusive("spoiled".into()).into()),
                _ => Ok(n),
            }
        };
        let (n, why) = trusted(|n| {
            tried.push(n);
            runs(n)
        })
        .unwrap();
        assert_eq!((n, tried), (2, vec![0, 1, 2]));
        assert_eq!(why, ["too slow under load: late", "spoiled"]);
        let e = trusted(|_| -> Result<(), _> { Err(verdict::too_slow("late")) }).unwrap_err();
        assert!(e.starts_with("inconclusive: no verdict"), "{e}");
        assert_eq!(e.matches("late").count(), TRIES, "{e}");
        let mut calls = 0;
        let e = trusted(|_| -> Result<(), RunError> {
            calls += 1;
            Err("bind: address in use".to_string().into())
        })
        .unwrap_err();
        assert_eq!((e.as_str(), calls), ("bind: address in use", 1));
    }
}

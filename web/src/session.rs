//! What the playground shows: a walkthrough or the learner's own scenario, run in one or two
//! variants, and the permalink that names it. Pure Rust (no DOM), so it is tested natively.
//!
//! Everything the page displays comes from the core's [`Trace`]s held here; this module only
//! chooses what to run and remembers where the learner is.

use skblab_core::kernel_report::KernelReport;
pub use skblab_core::permalink::{Link, Position};
use skblab_core::walkthrough::Walkthrough;
use skblab_core::{RunOptions, Scenario, Trace};

/// A loaded scenario: its traces (one per variant shown) and its text for the editor.
#[derive(Clone, Debug)]
pub struct Session {
    pub title: String,
    /// The walkthrough, when the session is one (narration, default variants).
    pub walk: Option<Walkthrough>,
    /// The scenario as text (what the editor and the permalink hold).
    pub text: String,
    /// One trace per variant shown: the first is the left/only one.
    pub traces: Vec<Trace>,
    /// A `skblab kernel` report opened beside them: the running kernel's skbs, a lane of
    /// their own.
    pub kernel: Option<KernelReport>,
    /// What the link names instead, when the session is a challenge's start or a lesson file.
    pub lesson: Option<Link>,
}

impl Session {
    /// Steps in each trace (all variants run the same operations).
    pub fn len(&self) -> usize {
        self.traces[0].steps.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The narration for position `pos` (0 = before the first operation).
    pub fn narration(&self, pos: usize) -> Option<(&str, Option<&str>)> {
        let w = self.walk.as_ref()?;
        let main = match pos {
            0 => w.intro.as_str(),
            p => w.say.get(p - 1).map(String::as_str).unwrap_or(""),
        };
        let outro = (pos == self.len()).then_some(w.outro.as_str());
        Some((main, outro))
    }

    /// The link to this session at `at`.
    pub fn link(&self, at: Position) -> Link {
        if let Some(l) = &self.lesson {
            return l.clone().moved(at);
        }
        match &self.walk {
            Some(w) => Link::Walk {
                name: w.name.clone(),
                at,
            },
            None => Link::Custom {
                text: self.text.clone(),
                compare: self.traces.get(1).map(|t| t.variant.clone()),
                at,
            },
        }
    }
}

/// Runs a walkthrough in each of its variants.
pub fn load_walkthrough(w: &Walkthrough) -> Result<Session, String> {
    let traces = w
        .variants
        .iter()
        .map(|v| run(&w.scenario, Some(v)))
        .collect::<Result<Vec<_>, _>>()?;
    if traces.is_empty() {
        return Err(format!("walkthrough {} names no variant", w.name));
    }
    Ok(Session {
        title: w.title.clone(),
        walk: Some(w.clone()),
        text: scenario_text(&w.scenario),
        traces,
        kernel: None,
        lesson: None,
    })
}

/// Parses scenario text and checks every cap: what the editor says at each keystroke, before
/// [`check`] runs it once typing pauses.
pub fn parse(text: &str) -> Result<Scenario, String> {
    Scenario::parse(text).map_err(|e| e.to_string())
}

/// Checks scenario text the way the editor does once typing pauses: parse, every cap, and
/// the traced run the page would show (its cap on the trace's size stops a heavy scenario
/// early, where a counters-only check would run it whole). The run is kept for
/// [`load_custom`], so a text runs once however often it is checked and shown.
pub fn check(text: &str) -> Result<Scenario, String> {
    traced(text).map(|(s, _)| s)
}

/// Runs the learner's scenario, and a second variant beside it when `compare` names one.
pub fn load_custom(text: &str, compare: Option<&str>) -> Result<Session, String> {
    let (s, first) = traced(text)?;
    let mut traces = vec![first];
    if let Some(v) = compare.filter(|v| *v != traces[0].variant) {
        traces.push(run(&s, Some(v))?);
    }
    Ok(Session {
        title: title(&s),
        walk: None,
        text: text.to_string(),
        traces,
        kernel: None,
        lesson: None,
    })
}

/// Opens a `skblab kernel` report: its scenario in the scenario's own variant and in the one
/// the runner set beside the kernel, then the kernel's skbs as a third lane.
pub fn load_report(text: &str) -> Result<Session, String> {
    let r = KernelReport::parse(text).map_err(|e| e.to_string())?;
    let s = load_custom(&r.scenario, Some(&r.variant))?;
    Ok(Session {
        title: format!("{} beside Linux {}", s.title, r.kernel),
        kernel: Some(r),
        ..s
    })
}

/// The scenario's `title` (every mechanism's scenario may carry one).
fn title(s: &Scenario) -> String {
    let v: serde_json::Value = serde_json::from_str(&s.to_json()).expect("scenario JSON");
    v["title"].as_str().unwrap_or("Your scenario").to_string()
}

type Checked = Result<(Scenario, Trace), String>;

thread_local! {
    /// The last text run and its result: the editor's check, the Run button, a permalink and
    /// the editor taking the text back after a run all ask for the same text.
    static LAST: std::cell::RefCell<Option<(String, Checked)>> = const { std::cell::RefCell::new(None) };
}

/// The scenario in `text` and its traced run in the scenario's own variant, run once per text.
fn traced(text: &str) -> Checked {
    if let Some(hit) = LAST.with_borrow(|l| {
        l.as_ref()
            .filter(|(t, _)| t == text)
            .map(|(_, r)| r.clone())
    }) {
        return hit;
    }
    let result = parse(text).and_then(|s| run(&s, None).map(|t| (s, t)));
    LAST.set(Some((text.to_string(), result.clone())));
    result
}

fn run(s: &Scenario, variant: Option<&str>) -> Result<Trace, String> {
    s.run(&RunOptions {
        variant: variant.map(str::to_string),
        counters_only: false,
    })
    .map_err(|e| e.to_string())
}

/// A scenario as text for the editor: the core's JSON (the editor reads TOML and JSON alike;
/// a TOML writer would cost the download more than the 300 KiB budget leaves).
pub fn scenario_text(s: &Scenario) -> String {
    s.to_json()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Checking, running and checking again (the editor taking the text back) run the
    /// scenario once: the trace of the check is the one shown.
    #[test]
    fn a_text_runs_once() {
        let text = "mechanism = \"sendmsg\"\n[[ops]]\nop = \"sendmsg\"\nbytes = 4096\n";
        check(text).unwrap();
        let (_, first) = LAST.with_borrow(|l| l.clone()).unwrap().1.unwrap();
        let shown = load_custom(text, None).unwrap();
        check(text).unwrap();
        // The same run (not merely an equal one) would need pointers; equal traces and the
        // cache still holding this text are what the one-run path guarantees.
        assert_eq!(shown.traces, vec![first]);
        assert!(LAST.with_borrow(|l| l.as_ref().is_some_and(|(t, _)| t == text)));
    }

    /// The editor's check reports what the shown run would: a scenario too large to trace
    /// is an error as soon as it is typed, not after a whole counters-only run.
    #[test]
    fn the_check_is_the_traced_run() {
        let arrive = "[[ops]]\nop = \"arrive\"\nframes = 100000\nlen = 43\n";
        let text = format!(
            "mechanism = \"rx\"\n[socket]\nproto = \"udp\"\n{}",
            arrive.repeat(3)
        );
        let err = check(&text).unwrap_err();
        assert!(err.contains("traced run"), "{err}");
    }

    /// A report opens as its scenario in both variants, the kernel lane beside them.
    #[test]
    fn a_kernel_report_opens_as_a_third_lane() {
        let text = include_str!("../../tests/fixtures/kernel-report.json");
        let s = load_report(text).unwrap();
        let variants: Vec<&str> = s.traces.iter().map(|t| t.variant.as_str()).collect();
        // sendmsg-small-writes.toml says kumar-2010; the runner set `modern` beside the kernel.
        assert_eq!(variants, ["kumar-2010", "modern"]);
        let r = s.kernel.as_ref().unwrap();
        assert_eq!((r.driven, r.skbs.len()), (1, 2));
        assert!(
            s.title.ends_with("beside Linux 6.18.44-fc-v669"),
            "{}",
            s.title
        );
        // A report of the scenario's own variant: one trace, the lane beside it.
        let same = text.replacen("\"variant\": \"modern\"", "\"variant\": \"kumar-2010\"", 1);
        let s = load_report(&same).unwrap();
        assert_eq!((s.traces.len(), s.kernel.is_some()), (1, true));
        let err = load_report("{}").unwrap_err();
        assert!(err.contains("report.rows"), "{err}");
    }

    #[test]
    fn bad_scenarios_name_the_problem() {
        let cases: &[(&str, &str)] = &[
            ("mechanism = ", "TOML parse error"),
            ("mechanism = \"nope\"\nops = []", "unknown mechanism `nope`"),
            ("{\"mechanism\": 3}", "unknown mechanism"),
        ];
        for (text, want) in cases {
            let err = check(text).unwrap_err();
            assert!(err.contains(want), "{text}: {err}");
        }
    }
}

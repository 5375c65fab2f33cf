//! What the playground shows: a walkthrough or the learner's own scenario, run in one or two
//! variants, a `skblab kernel` report beside them, or a `skblab trace` capture, and the
//! permalink that names it. Pure Rust (no DOM), so it is tested natively.
//!
//! Everything the page displays comes from the core's [`Trace`]s held here; this module only
//! chooses what to run and remembers where the learner is.

use skblab_core::capture::{Capture, Partner};
use skblab_core::events::Event;
use skblab_core::input::{self, Counterpart};
use skblab_core::kernel_report::{KernelReport, Report};
pub use skblab_core::permalink::{Link, Position, LANES};

/// A step and, per lane, the event it is shown after (`None`: the whole step).
pub type Moment = (usize, [Option<usize>; LANES]);
use crate::beside::Beside;
use skblab_core::walkthrough::Walkthrough;
use skblab_core::{RunOptions, Scenario, Trace};
use std::cell::RefCell;
use std::rc::Rc;
use yew::AttrValue;

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
    /// A `skblab trace` capture shown as the only lane: the running kernel's own skbs, with
    /// no scenario (`text` is empty) and no link.
    pub capture: Option<Captured>,
    /// What the link names instead, when the session is a challenge's start or a lesson file.
    pub lesson: Option<Link>,
    /// The variant run beside the learner's scenario's own (on whichever side its kernel's
    /// age puts it), for the link.
    pub compare: Option<String>,
    /// Per lane, the texts of the events of the step last listed ([`Session::event_text`]).
    pub(crate) texts: RefCell<Vec<(usize, Vec<Option<AttrValue>>)>>,
}

/// A capture shown: the capture (its lane names the kernel it was traced on,
/// [`Session::lane_name`]; the model's prediction is made of it), and that prediction once
/// asked for.
#[derive(Clone, Debug)]
pub struct Captured {
    pub capture: Rc<Capture>,
    /// The model's prediction, the second lane ([`crate::beside`]).
    pub beside: Option<Rc<Beside>>,
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

    /// What the session cites, each as words and an address (the core's
    /// [`skblab_core::walkthrough::citations`]): the walkthrough's, else those of the
    /// scenario's variants.
    pub fn citations(&self) -> Vec<(String, String)> {
        if let Some(w) = &self.walk {
            return w.citations();
        }
        let variants = self.traces.iter().map(|t| t.variant.as_str());
        Scenario::parse(&self.text).map_or(Vec::new(), |sc| {
            skblab_core::walkthrough::citations(&sc, variants)
        })
    }

    /// The lane stepped by event until the learner picks one: where the walkthrough's patch
    /// acts (the core says which), else the left.
    pub fn patched_lane(&self) -> usize {
        let lane = self.walk.as_ref().map_or(0, |w| w.patched());
        lane.min(self.traces.len() - 1)
    }

    /// The events step `pos` (0: none) made in lane `lane`.
    pub fn events(&self, lane: usize, pos: usize) -> &[Event] {
        let step = pos
            .checked_sub(1)
            .and_then(|i| self.traces.get(lane)?.steps.get(i));
        step.map_or(&[], |s| &s.events)
    }

    /// The text of event `k` (0-based) of step `pos` in lane `lane`, kept while that lane
    /// lists this step: an event's `Display` goes through `serde_json::Value`, and moving
    /// from one event to the next lists the same texts again.
    pub fn event_text(&self, lane: usize, pos: usize, k: usize) -> AttrValue {
        let mut texts = self.texts.borrow_mut();
        if texts.len() <= lane {
            texts.resize_with(lane + 1, Default::default);
        }
        let (at, kept) = &mut texts[lane];
        if *at != pos || kept.is_empty() {
            *at = pos;
            *kept = vec![None; self.events(lane, pos).len()];
        }
        let text = kept[k].get_or_insert_with(|| self.events(lane, pos)[k].to_string().into());
        text.clone()
    }

    /// The moment one move from `at` the way `d` (1 or -1) goes, as the learner most often
    /// moves: a step (→, ←) from a whole step, else each lane stepped by event an event on or
    /// back (↓, ↑; a lane in lockstep may follow to another event). `None` past either end.
    pub fn ahead(&self, (pos, events): Moment, d: isize) -> Option<Moment> {
        let whole = events == [None; LANES];
        let mut at = (
            if whole {
                pos.checked_add_signed(d)?
            } else {
                pos
            },
            events,
        );
        for (lane, k) in at.1.iter_mut().enumerate() {
            if let Some(k) = k {
                let n = self.events(lane, pos).len();
                *k = k.checked_add_signed(d).filter(|k| (1..=n).contains(k))?;
            }
        }
        (at.0 <= self.len()).then_some(at)
    }

    /// From event `k` (1-based; `None`: the whole step) of step `pos` in lane `lane`, the
    /// next (`d > 0`) or previous event that `keep` admits, as (step, event): in this step
    /// (forward from a whole step, its first), else in the nearest step that has one.
    pub fn seek(
        &self,
        lane: usize,
        (mut p, k): (usize, Option<usize>),
        d: isize,
        keep: &dyn Fn(&Event) -> bool,
    ) -> Option<(usize, usize)> {
        let n = |p| self.events(lane, p).len();
        // A whole step is after its last event, and before its first going forward.
        let mut j = k.unwrap_or(if d > 0 { 0 } else { n(p) + 1 });
        loop {
            (p, j) = match (d > 0, j) {
                (true, j) if j < n(p) => (p, j + 1),
                (true, _) if p < self.len() => (p + 1, 1),
                (false, j) if j > 1 => (p, j - 1),
                (false, _) if p > 1 => (p - 1, n(p - 1)),
                _ => return None,
            };
            // (A step without events has no event 1, and is passed over.)
            if self
                .events(lane, p)
                .get(j.wrapping_sub(1))
                .is_some_and(keep)
            {
                return Some((p, j));
            }
        }
    }

    /// Lockstep: where lane `other` stands beside event `k` (1-based) of step `pos` in lane
    /// `lead`: at the same input (the core's [`input::counterpart`]).
    pub fn counterpart(
        &self,
        lead: usize,
        other: usize,
        pos: usize,
        k: usize,
    ) -> Option<Counterpart> {
        input::counterpart(self.events(lead, pos), self.events(other, pos), k)
    }

    /// With the model's prediction beside a capture: lane `other`'s event beside event `k`
    /// (1-based) of step `pos` in lane `lead`, the same skb's, or why there is none (the
    /// core's [`Compared::partner`](skblab_core::capture::Compared::partner)). `None` for
    /// any other session.
    pub fn partner(&self, lead: usize, other: usize, pos: usize, k: usize) -> Option<Partner> {
        let b = self.capture.as_ref()?.beside.as_ref()?;
        let (ours, theirs) = (self.events(lead, pos), self.events(other, pos));
        Some(b.compared.partner(ours, k, theirs))
    }

    /// Whether the two lanes, each after its event of step `pos` (`None`: the whole step),
    /// stand at the same input: only then are their states compared.
    pub fn same_input(&self, pos: usize, at: [Option<usize>; LANES]) -> bool {
        let input = |lane: usize| {
            let events = self.events(lane, pos);
            let k = at[lane].unwrap_or(events.len()).min(events.len());
            input::inputs(&events[..k]).pop()
        };
        at == [None; LANES] || input(0) == input(1)
    }

    /// Each lane's key moments, as (step, event) in order: its patches' own events anywhere,
    /// and the events of the kind each `[[moment]]` names in its step.
    pub fn moments(&self) -> Vec<Vec<(usize, usize)>> {
        let Some(w) = &self.walk else {
            return Vec::new();
        };
        let mut all = vec![Vec::new(); self.traces.len().min(LANES)];
        for (lane, list) in all.iter_mut().enumerate() {
            for p in 1..=self.len() {
                for (i, e) in self.events(lane, p).iter().enumerate() {
                    if w.is_key(p, e.kind()) {
                        list.push((p, i + 1));
                    }
                }
            }
        }
        all
    }

    /// Of the key moments `all` ([`Session::moments`]), the one nearest `at` (a step and each
    /// lane's event in it; `None`: the whole step, before its first event going forward,
    /// after its last going back) the way `d` goes, in whichever lane has it in the nearer
    /// step, `lane` first: (lane, step, event).
    pub fn moment(
        &self,
        all: &[Vec<(usize, usize)>],
        lane: usize,
        at: Moment,
        d: isize,
    ) -> Option<(usize, usize, usize)> {
        let near = |(l, list): (usize, &Vec<(usize, usize)>)| {
            let n = self.events(l, at.0).len();
            let here = (at.0, at.1[l].unwrap_or(if d > 0 { 0 } else { n + 1 }));
            let m = match d > 0 {
                true => list.iter().find(|m| **m > here),
                false => list.iter().rev().find(|m| **m < here),
            };
            m.map(|&(p, k)| (l, p, k))
        };
        let found = all.iter().enumerate().filter_map(near);
        // The nearer step; on a tie, `lane`'s.
        found.min_by_key(|&(l, p, _)| ((p as isize) * d.signum(), l != lane))
    }

    /// The link to this session at `at`; none for a capture, which a link cannot carry (a
    /// file of up to megabytes, and the learner's own: it stays on their machine).
    pub fn link(&self, at: Position) -> Option<Link> {
        if let Some(l) = &self.lesson {
            return Some(l.clone().moved(at));
        }
        if self.capture.is_some() {
            return None;
        }
        Some(match &self.walk {
            Some(w) => Link::Walk {
                name: w.name.clone(),
                at,
            },
            None => Link::Custom {
                text: self.text.clone(),
                compare: self.compare.clone(),
                at,
            },
        })
    }

    /// Lane `i` in words, for the captions of figures and the handout: its variant and the
    /// kernel it models, or a capture's running kernel.
    pub fn lane_name(&self, i: usize) -> String {
        match (&self.capture, self.traces.get(i)) {
            (Some(c), _) if i == 0 => {
                format!("Linux {}, its own skbs (skblab trace)", c.capture.kernel)
            }
            (_, Some(t)) => format!("{} · kernel {}", t.variant, t.era.name()),
            (_, None) => String::new(),
        }
    }
}

/// Runs a walkthrough in each of its variants.
pub fn load_walkthrough(w: &Walkthrough) -> Result<Session, String> {
    let traces = w.traces(|_, opts| w.scenario.run(opts));
    let traces = traces.map_err(|e| e.to_string())?;
    if traces.is_empty() {
        return Err(format!("walkthrough {} names no variant", w.name));
    }
    Ok(Session {
        title: w.title.clone(),
        walk: Some(w.clone()),
        text: scenario_text(&w.scenario),
        traces,
        kernel: None,
        capture: None,
        lesson: None,
        compare: None,
        texts: RefCell::default(),
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
    traced(text, false).0
}

/// Runs the learner's scenario, and a second variant beside it when `compare` names one,
/// before on the left as in the walkthroughs: the older kernel first.
pub fn load_custom(text: &str, compare: Option<&str>) -> Result<Session, String> {
    let mut s = runs(text, compare)?;
    if let [a, b] = &s.traces[..] {
        if b.era < a.era {
            s.traces.swap(0, 1);
        }
    }
    Ok(s)
}

/// Runs the learner's scenario, then (when `compare` names another) that variant's run.
fn runs(text: &str, compare: Option<&str>) -> Result<Session, String> {
    let (s, first) = traced(text, true);
    let s = s?;
    let first = match first {
        Some(t) => t,
        None => run(&s, None)?,
    };
    let mut traces = vec![first];
    let compare = compare.filter(|v| *v != traces[0].variant);
    if let Some(v) = compare {
        traces.push(run(&s, Some(v))?);
    }
    Ok(Session {
        title: title(&s),
        walk: None,
        text: text.to_string(),
        traces,
        kernel: None,
        capture: None,
        lesson: None,
        compare: compare.map(String::from),
        texts: RefCell::default(),
    })
}

/// Opens a `skblab kernel` report: its scenario in the scenario's own variant and in the one
/// the runner set beside the kernel, then the kernel's skbs as a third lane.
pub fn load_report(text: &str) -> Result<Session, String> {
    let r = Report::parse(text).map_err(|e| e.to_string())?;
    let s = runs(&r.scenario, Some(&r.variant))?;
    // The lane of the runner's variant: the last (the only one when it is the scenario's).
    if let Some(t) = s.traces.last() {
        r.check_model(t).map_err(|e| e.to_string())?;
    }
    Ok(Session {
        title: format!("{} beside Linux {}", s.title, r.kernel),
        kernel: Some(KernelReport::new(r)),
        ..s
    })
}

/// Opens a `skblab trace` capture (told by [`Capture::is_one`]): the program's own skbs as one
/// lane, a step per syscall of the program on a traced socket (the core's
/// [`Capture::trace`]). It has no scenario (the editor keeps its text), no walkthrough and no
/// link.
pub fn load_capture(text: &str) -> Result<Session, String> {
    let c = Capture::parse(text).map_err(|e| e.to_string())?;
    let trace = c.trace().map_err(|e| e.to_string())?;
    Ok(Session {
        title: c.caption(),
        walk: None,
        text: String::new(),
        traces: vec![trace],
        kernel: None,
        capture: Some(Captured {
            capture: Rc::new(c),
            beside: None,
        }),
        lesson: None,
        compare: None,
        texts: RefCell::default(),
    })
}

/// The scenario's `title` (every mechanism's scenario may carry one).
fn title(s: &Scenario) -> String {
    let v: serde_json::Value = serde_json::from_str(&s.to_json()).expect("scenario JSON");
    v["title"].as_str().unwrap_or("Your scenario").to_string()
}

type Checked = Result<Scenario, String>;

thread_local! {
    /// The last text run, its scenario and its traced run until a session takes it: the
    /// editor's check, the Run button, a permalink and the editor taking the text back after
    /// a run all ask for the same text. The run is moved, never copied (a copy of a trace
    /// cost the download 2 KB).
    static LAST: std::cell::RefCell<Option<(String, Checked, Option<Trace>)>> = const { std::cell::RefCell::new(None) };
}

/// The scenario in `text` and its traced run in the scenario's own variant, run once per text;
/// `take`: the run is handed over (a session shows it), else it stays for the next call.
/// The run is `None` when it was taken already.
fn traced(text: &str, take: bool) -> (Checked, Option<Trace>) {
    let hit = LAST.with_borrow_mut(|l| {
        let (_, checked, trace) = l.as_mut().filter(|(t, ..)| t == text)?;
        Some((checked.clone(), if take { trace.take() } else { None }))
    });
    if let Some(hit) = hit {
        return hit;
    }
    let (checked, trace) = match parse(text).and_then(|s| run(&s, None).map(|t| (s, t))) {
        Ok((s, t)) => (Ok(s), Some(t)),
        Err(e) => (Err(e), None),
    };
    let (kept, given) = if take { (None, trace) } else { (trace, None) };
    LAST.set(Some((text.to_string(), checked.clone(), kept)));
    (checked, given)
}

fn run(s: &Scenario, variant: Option<&str>) -> Result<Trace, String> {
    s.run(&RunOptions::traced(variant))
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
        let kept = |l: &Option<(String, Checked, Option<Trace>)>| {
            l.as_ref()
                .filter(|(t, ..)| t == text)
                .map(|(.., run)| run.clone())
        };
        let first = LAST
            .with_borrow(kept)
            .flatten()
            .expect("the check's run is kept");
        let shown = load_custom(text, None).unwrap();
        check(text).unwrap();
        // The session took the check's run (moved, not run again), and the cache still
        // holds the text, so the editor's check after it runs nothing.
        assert_eq!(shown.traces, vec![first]);
        assert_eq!(LAST.with_borrow(kept), Some(None));
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
        // The same report claimed of kumar-2010: its model side is not that variant's.
        let other = text.replacen("\"variant\": \"modern\"", "\"variant\": \"kumar-2010\"", 1);
        let err = load_report(&other).map(|_| ()).unwrap_err();
        assert!(
            err.contains("`report.model`") && err.contains("`kumar-2010`"),
            "{err}"
        );
        // A report of the scenario's own variant (seed 001's): one trace, the pages beside it.
        let pages = include_str!("../../tests/fixtures/kernel-report-napi-frags.json");
        let s = load_report(pages).unwrap();
        let r = s.kernel.as_ref().unwrap();
        assert_eq!((s.traces.len(), r.skbs.len(), r.pages.len()), (1, 0, 1));
        let err = load_report("{}").unwrap_err();
        assert!(err.contains("report.mechanism"), "{err}");
    }

    /// A report whose model side is not the model's lane beside it is refused, naming the
    /// field, even with its rows and verdict made to match.
    #[test]
    fn a_report_whose_model_side_the_model_denies_is_refused() {
        use skblab_core::kernel_report::{compare, Verdict};
        let text = include_str!("../../tests/fixtures/kernel-report.json");
        let mut r = Report::parse(text).unwrap();
        r.model.size_goals = vec![1];
        r.rows = compare(&r.model, &r.kernel_side);
        r.verdict = Verdict::of(&r.rows);
        let err = load_report(&serde_json::to_string(&r).unwrap())
            .map(|_| ())
            .unwrap_err();
        assert!(
            err.contains("`report.model`") && err.contains("`size_goal` is 1"),
            "{err}"
        );
    }

    /// A hostile report (1,000 skbs, each with a field name of its own) is refused with the
    /// field named, before any table is drawn.
    #[test]
    fn a_report_of_fields_the_runner_never_writes_is_refused() {
        let text = include_str!("../../tests/fixtures/kernel-report.json");
        let mut v: serde_json::Value = serde_json::from_str(text).unwrap();
        let skbs = (0..1000).map(|i| serde_json::json!({ format!("f{i}"): 1 }));
        v["kernel_side"]["skbs"] = skbs.collect();
        let err = load_report(&v.to_string()).map(|_| ()).unwrap_err();
        assert!(err.contains("`report.kernel_side.skbs[0].f0`"), "{err}");
        assert!(err.contains("not a field the runner writes"), "{err}");
    }

    /// A capture opens as one lane of the core's making, named by the kernel it ran on, with
    /// no scenario and no link; a kernel report is not taken for one.
    #[test]
    fn a_capture_opens_as_its_own_lane() {
        let text = include_str!("../../tests/fixtures/capture-tcp.json");
        assert!(Capture::is_one(text));
        let report = include_str!("../../tests/fixtures/kernel-report.json");
        let not = |t: &str| !Capture::is_one(t);
        assert!(not(report) && not("{}") && not("[1]") && not("{"));
        let s = load_capture(text).unwrap();
        let c = Capture::parse(text).unwrap();
        assert_eq!(s.title, c.caption());
        assert_eq!(s.traces, vec![c.trace().unwrap()]);
        let t = &s.traces[0];
        assert_eq!(t.mechanism, skblab_core::capture::MECHANISM);
        assert!(s.walk.is_none() && s.text.is_empty());
        // A step per write or read (3 and 2), and one for the facts after the last.
        assert_eq!(s.len(), 6);
        assert!(t.steps[0].op.starts_with("write 14480 B on tcp socket 1"));
        assert_eq!(s.link(Position::default()), None);
        assert!(s.citations().is_empty() && s.moments().is_empty());
        assert_eq!(
            s.lane_name(0),
            "Linux 6.18.44-fc-v1300, its own skbs (skblab trace)"
        );
    }

    /// A capture the core refuses gets its error, naming the field: here a timeline moment
    /// of an skb past the table.
    #[test]
    fn a_bad_capture_names_its_field() {
        let text = include_str!("../../tests/fixtures/capture-tcp.json");
        let mut v: serde_json::Value = serde_json::from_str(text).unwrap();
        v["timeline"][3]["skb"] = 12.into();
        let bad = v.to_string();
        assert!(Capture::is_one(&bad));
        let err = load_capture(&bad).map(|_| ()).unwrap_err();
        assert!(err.contains("capture.timeline[3].skb"), "{err}");
    }

    fn walk(name: &str) -> Session {
        load_walkthrough(&skblab_core::walkthrough::find(name).unwrap()).unwrap()
    }

    /// An event's text is its `Display`, for the step asked, whichever step came before.
    #[test]
    fn event_texts_follow_the_step() {
        let s = walk("rx-page-reuse");
        let (lane, steps) = (s.traces.len() - 1, s.len());
        for pos in (1..=steps).chain((1..=steps).rev()) {
            for (k, e) in s.events(lane, pos).iter().enumerate() {
                assert_eq!(s.event_text(lane, pos, k).as_str(), e.to_string());
            }
        }
    }

    /// The moves ahead: → and ← from a whole step, ↓ and ↑ in each lane stepped by event;
    /// none past either end.
    #[test]
    fn the_moves_ahead_are_a_step_or_each_stepped_lane_an_event_either_way() {
        let s = walk("rx-page-reuse");
        let (len, n) = (s.len(), s.events(1, 1).len());
        assert!(len > 1 && n > 2 && s.events(0, 1).len() > 2);
        let whole = [None, None];
        assert_eq!(s.ahead((0, whole), 1), Some((1, whole)));
        assert_eq!(s.ahead((0, whole), -1), None);
        assert_eq!(s.ahead((len - 1, whole), 1), Some((len, whole)));
        assert_eq!(s.ahead((len, whole), 1), None);
        assert_eq!(s.ahead((len, whole), -1), Some((len - 1, whole)));
        assert_eq!(s.ahead((1, [None, Some(1)]), 1), Some((1, [None, Some(2)])));
        assert_eq!(s.ahead((1, [None, Some(1)]), -1), None);
        assert_eq!(
            s.ahead((1, [Some(2), Some(2)]), 1),
            Some((1, [Some(3), Some(3)]))
        );
        assert_eq!(
            s.ahead((1, [Some(2), Some(3)]), -1),
            Some((1, [Some(1), Some(2)]))
        );
        assert_eq!(s.ahead((1, [None, Some(n)]), 1), None);
    }

    /// The patch's lane leads: Duyck's in rx-page-reuse (right), the only one in anatomy.
    #[test]
    fn the_patched_lane_leads() {
        assert_eq!(walk("rx-page-reuse").patched_lane(), 1);
        assert_eq!(walk("anatomy").patched_lane(), 0);
        let custom = load_custom("mechanism = \"sendmsg\"\nops = []\n", Some("modern")).unwrap();
        assert_eq!(custom.patched_lane(), 0);
    }

    /// Seeking walks a lane's events in order, across steps, and keeps to a kind when asked.
    #[test]
    fn seeking_walks_a_lanes_events() {
        let s = walk("rx-page-reuse");
        let any = &|_: &Event| true;
        let n1 = s.events(1, 1).len();
        assert!(n1 > 2 && s.events(1, 0).is_empty());
        // From before the first op, and from a whole step: its first event.
        assert_eq!(s.seek(1, (0, None), 1, any), Some((1, 1)));
        assert_eq!(s.seek(1, (2, None), 1, any), Some((2, 1)));
        assert_eq!(s.seek(1, (1, Some(2)), 1, any), Some((1, 3)));
        // Past the step's last event: the next step's first; back from it, this one's last.
        assert_eq!(s.seek(1, (1, Some(n1)), 1, any), Some((2, 1)));
        assert_eq!(s.seek(1, (2, Some(1)), -1, any), Some((1, n1)));
        assert_eq!(
            s.seek(1, (2, None), -1, any),
            Some((2, s.events(1, 2).len()))
        );
        assert_eq!(s.seek(1, (1, Some(1)), -1, any), None);
        // Only reuse_page: seeking from the start lands on the first one, wherever it is.
        let reuse = &|e: &Event| e.kind().name() == "reuse_page";
        let first = (1..=s.traces[1].steps.len())
            .find_map(|p| Some((p, s.events(1, p).iter().position(reuse)? + 1)))
            .expect("the patched kernel reuses a page");
        assert_eq!(s.seek(1, (0, None), 1, reuse), Some(first));
        let (p, k) = first;
        assert_eq!(s.events(1, p)[k - 1].kind().name(), "reuse_page");
        assert_eq!(
            s.seek(0, (0, None), 1, reuse),
            None,
            "the kernel before never reuses"
        );
    }

    /// Lockstep stands the other lane at the same input: the n-th frag_alloc beside the
    /// n-th (one a frame); the lanes are compared only where they stand at the same input.
    #[test]
    fn lockstep_stands_the_lanes_at_the_same_input() {
        let s = walk("rx-page-reuse");
        let nth = |lane: usize, pos: usize, kind: &str, n: usize| {
            let ev = s.events(lane, pos).iter().enumerate();
            ev.filter(|(_, e)| e.kind().name() == kind)
                .nth(n)
                .map(|(i, _)| i + 1)
                .unwrap()
        };
        for n in [0, 3] {
            let (mine, theirs) = (nth(1, 2, "frag_alloc", n), nth(0, 2, "frag_alloc", n));
            assert_eq!(
                s.counterpart(1, 0, 2, mine),
                Some(Counterpart::Same(theirs))
            );
            assert_eq!(
                s.counterpart(0, 1, 2, theirs),
                Some(Counterpart::Same(mine))
            );
        }
        // Step 1's reuse_page comes after five frames: the kernel before stands after its
        // fifth frame (the core's `input` tests where), and only there are they compared.
        let reuse = nth(1, 1, "reuse_page", 0);
        let Some(Counterpart::Nearest { at, .. }) = s.counterpart(1, 0, 1, reuse) else {
            panic!("the kernel before reuses no page");
        };
        assert!(s.same_input(1, [Some(at), Some(reuse)]));
        assert!(!s.same_input(1, [Some(1), Some(reuse)]));
        assert_eq!(s.counterpart(1, 0, 2, 0), None);
        // send-sg-nogso step 2: whole steps compare; a whole step and its first copy do not.
        let s = walk("send-sg-nogso");
        assert!(s.same_input(2, [None, None]) && !s.same_input(2, [None, Some(3)]));
    }

    /// The key moments: rx-skb-cache's park and take in the cache's lane only, reached from
    /// a whole step either way, the nearer step first; none past either end.
    #[test]
    fn key_moments_are_the_patchs_events_in_the_lane_that_makes_them() {
        let s = walk("rx-skb-cache");
        let all = s.moments();
        assert!(all[0].is_empty() && all[1].len() >= 2, "{all:?}");
        let kind = |(p, k): (usize, usize)| s.events(1, p)[k - 1].kind().name();
        assert_eq!(kind(all[1][0]), "rx_cache_park");
        assert_eq!(kind(all[1][1]), "rx_cache_take");
        let whole = [None, None];
        let first = s.moment(&all, 0, (0, whole), 1);
        assert_eq!(first, Some((1, all[1][0].0, all[1][0].1)));
        let (p, k) = all[1][1];
        assert_eq!(s.moment(&all, 1, (p, [None, Some(k)]), -1), first);
        assert_eq!(s.moment(&all, 1, (p, whole), -1), Some((1, p, k)));
        assert_eq!(s.moment(&all, 1, (0, whole), -1), None);
        assert!(walk("anatomy").moments().iter().all(Vec::is_empty));
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

//! Narrated walkthroughs: a scenario, the variants to compare, and one short paragraph per
//! operation. Each lives in `core/walkthroughs/NAME.toml`, compiled in, so every host (terminal,
//! browser, wasm) tells the same story. A walkthrough's `[[check]]` entries pin down the facts
//! its narration claims; `tests/walkthroughs.rs` runs them.

use crate::events::EventKind;
use crate::field_path::{self, Path};
use crate::limits::{
    check_count, MAX_CHECKS, MAX_CHOICES, MAX_LESSON_TRACE_OBJECTS, MAX_LESSON_VARIANTS,
    MAX_QUESTIONS,
};
use crate::question::Question;
use crate::scenario::Scenario;
use crate::{Error, RunOptions, Trace};
use serde::Deserialize;

toml_files!("walkthroughs": "anatomy", "send-sg-gso", "send-sg-nogso", "send-nosg", "send-pgbreak", "send-modern", "rx-page-reuse", "rx-page-reuse-shipped", "rx-page-reuse-lagging", "rx-page-frag-cache", "rx-skb-cache", "rx-skb-cache-rps", "rx-defer-free", "mptcp-max-size", "mptcp-round-robin");

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Walkthrough {
    pub name: String,
    pub title: String,
    /// A paragraph before the first step.
    pub intro: String,
    /// The variants shown side by side (one or two): the kernel before the patch, then after
    /// it (see [`Walkthrough::patched`]).
    pub variants: Vec<String>,
    /// One paragraph per scenario operation.
    pub say: Vec<String>,
    /// A paragraph after the last step.
    pub outro: String,
    /// What the running kernel judges of the numbers this lesson states (`skblab kernel`,
    /// docs/kernel-oracle.md) and what rests on reading the source alone: one line, shown
    /// beside the citation. Every built-in lesson has it; a learner's own may leave it out.
    #[serde(default)]
    pub kernel: Option<String>,
    /// The counter the narration tells the learner to watch: the one a host charts first
    /// (lint checks it is one of the mechanism's counters).
    #[serde(default)]
    pub chart: Option<String>,
    /// Facts the narration states, checked by the test suite.
    #[serde(default, rename = "check")]
    pub checks: Vec<Check>,
    /// Predict, then see: questions asked before their steps, read by
    /// [`Walkthrough::questions`]. Kept unread until then, so a host that asks none (the web
    /// bundle has a size budget) links no code to read them.
    #[serde(default, rename = "question")]
    questions: Vec<serde_json::Value>,
    /// The moments the lesson names as its key ones, besides its patches' own, read by
    /// [`Walkthrough::moments`] (unread until then, as the questions are).
    #[serde(default, rename = "moment")]
    moments: Vec<serde_json::Value>,
    pub scenario: Scenario,
}

/// A key moment a lesson names: the `kind` events of step `step` (1-based), in every variant
/// that makes one.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Moment {
    pub step: usize,
    /// An event kind's trace name (`reuse_page`).
    pub kind: String,
}

impl Moment {
    /// Where it is in `t`: the numbers (1-based) of its step's `kind` events, none when the
    /// step has none (or `t` has no such step).
    pub fn events(&self, t: &crate::Trace) -> Vec<usize> {
        let step = self.step.checked_sub(1).and_then(|i| t.steps.get(i));
        let events = step.map_or(&[][..], |s| &s.events);
        (events.iter().enumerate())
            .filter(|(_, e)| e.kind().name() == self.kind)
            .map(|(k, _)| k + 1)
            .collect()
    }
}

/// "After step `step` (1-based; 0 = the end) of `variant`, counter `counter` is `equals`";
/// or, with `path` instead of `counter`, the number at that JSON pointer into the step
/// (`/state/queues/0/skbs/1/len`) or, at step 0, into the trace (`/consts/max_skb_frags`).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Check {
    pub variant: String,
    #[serde(default)]
    pub step: usize,
    #[serde(default)]
    pub counter: Option<String>,
    #[serde(default)]
    pub path: Option<String>,
    pub equals: u64,
}

impl Check {
    /// What it reads: its counter or its path.
    pub fn what(&self) -> &str {
        self.counter
            .as_deref()
            .or(self.path.as_deref())
            .unwrap_or("?")
    }

    /// The value this check reads from `t`, the trace of its variant (lane `lane`), or why it
    /// cannot. A path is looked up in `built`, the JSON value of the step the last path was
    /// read in, built anew only for another step: serializing a 79,000-skb step once per
    /// check took lint a minute for 200 checks (issue 38).
    fn read(&self, t: &Trace, lane: usize, built: &mut Built) -> Result<u64, String> {
        let step = match self.step {
            0 => None,
            n => Some(t.steps.get(n - 1).ok_or(format!("no step {n}"))?),
        };
        match (&self.counter, &self.path) {
            (Some(c), None) => step
                .map_or(&t.counters, |s| &s.counters)
                .get(c)
                .ok_or_else(|| crate::query::no_counter(&t.counters, c)),
            (None, Some(p)) => {
                let at = (lane, self.step);
                let v = match built.take() {
                    Some((k, v)) if k == at => v,
                    _ => {
                        count_built();
                        match step {
                            Some(s) => serde_json::to_value(s),
                            None => serde_json::to_value(t),
                        }
                        .map_err(|e| e.to_string())?
                    }
                };
                let n = v.pointer(p).and_then(|v| v.as_u64());
                *built = Some((at, v));
                n.ok_or(format!("no number at `{p}`"))
            }
            _ => Err("give exactly one of `counter` and `path`".into()),
        }
    }
}

/// The JSON value of the step (lane, step) a check last read a path in.
type Built = Option<((usize, usize), serde_json::Value)>;

/// Counts a JSON value of a step (or of the trace) built for [`Check::read`]: the tests
/// count how many a lesson's checks build.
fn count_built() {
    #[cfg(test)]
    STEPS_BUILT.with(|n| n.set(n.get() + 1));
}

#[cfg(test)]
thread_local! {
    static STEPS_BUILT: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

impl Walkthrough {
    /// Runs the walkthrough in each of its variants, in order, with `run` (a host's engine),
    /// refusing runs that together hold more than [`MAX_LESSON_TRACE_OBJECTS`]: one run's own
    /// cap bounds it alone, this bounds the lesson. `run` is told each variant's index.
    pub fn traces<E: From<Error>>(
        &self,
        mut run: impl FnMut(usize, &RunOptions) -> Result<Trace, E>,
    ) -> Result<Vec<Trace>, E> {
        let mut size = 0;
        let mut traces = Vec::with_capacity(self.variants.len());
        for (i, v) in self.variants.iter().enumerate() {
            let opts = RunOptions::traced(Some(v));
            let t = run(i, &opts)?;
            size += t.steps.iter().map(crate::trace::Step::size).sum::<usize>();
            if size > MAX_LESSON_TRACE_OBJECTS {
                return Err(Error::Range {
                    field: format!("{}.variants", self.name),
                    value: format!(
                        "runs of {} holding over {size} events, skbs, frags and pages",
                        self.variants[..=i].join(" and ")
                    ),
                    allowed: format!(
                        "at most {MAX_LESSON_TRACE_OBJECTS} over a walkthrough's runs \
                         together: shorten the scenario, or compare one variant"
                    ),
                }
                .into());
            }
            traces.push(t);
        }
        Ok(traces)
    }

    /// What each of [`Walkthrough::checks`] reads from `traces` (the runs of its variants),
    /// in order: `None` for a check of a variant not listed. Checks are read grouped by lane
    /// and step, so a step's JSON value is built once for all the paths into it.
    pub fn read_checks(&self, traces: &[Trace]) -> Vec<Option<Result<u64, String>>> {
        let lane = |c: &Check| self.variants.iter().position(|v| *v == c.variant);
        let mut order: Vec<usize> = (0..self.checks.len()).collect();
        order.sort_by_key(|&i| (lane(&self.checks[i]), self.checks[i].step));
        let mut out = vec![None; self.checks.len()];
        let mut built = None;
        for i in order {
            let c = &self.checks[i];
            let Some((l, t)) = lane(c).and_then(|l| Some((l, traces.get(l)?))) else {
                continue;
            };
            out[i] = Some(c.read(t, l, &mut built));
        }
        out
    }

    /// The lane (an index into [`Walkthrough::variants`]) where the walkthrough's patch acts:
    /// the variant after it, listed last. A host steps this lane's events first.
    pub fn patched(&self) -> usize {
        self.variants.len().saturating_sub(1)
    }

    /// The questions, each checked: its step is one of the walkthrough's, its variant one of
    /// its variants (the first when left out), its choices at most [`MAX_CHOICES`], each of
    /// its own value.
    pub fn questions(&self) -> Result<Vec<Question>, Error> {
        let mut all = Vec::with_capacity(self.questions.len());
        for (i, v) in self.questions.iter().enumerate() {
            let field = |f: &str| format!("{}.question[{i}]{f}", self.name);
            let mut q: Question = self.entry(&field(""), v)?;
            self.a_step(&field(".step"), q.step)?;
            if q.variant.is_empty() {
                q.variant = self.variants.first().cloned().unwrap_or_default();
            }
            if !self.variants.contains(&q.variant) {
                return Err(Error::invalid(
                    field(".variant"),
                    format!("expected one of {}", self.variants.join(", ")),
                ));
            }
            let choices = (0, MAX_CHOICES);
            check_count(|| field(".choices"), q.choices.len(), choices, "choices")?;
            if let Some((first, again)) = repeated_choice(&q) {
                return Err(Error::invalid(
                    field(&format!(".choices[{again}].value")),
                    format!(
                        "{} is choices[{first}]'s value too: each choice needs its own",
                        q.choices[again].value
                    ),
                ));
            }
            all.push(q);
        }
        Ok(all)
    }

    /// The trace that answers `q` among `traces`, the runs of [`Walkthrough::variants`].
    pub fn trace_for<'a>(
        &self,
        q: &Question,
        traces: &'a [crate::Trace],
    ) -> Result<&'a crate::Trace, String> {
        (self.trace_index(q))
            .and_then(|i| traces.get(i))
            .ok_or(format!("no trace of variant {}", q.variant))
    }

    /// Where the trace that answers `q` is among the runs of [`Walkthrough::variants`].
    pub fn trace_index(&self, q: &Question) -> Option<usize> {
        self.variants.iter().position(|v| *v == q.variant)
    }

    /// The seed (patch) it is about, from its scenario and variants (see [`seeds`]):
    /// `001`, or `001+002` for a walkthrough of both rx axes.
    pub fn seed(&self) -> String {
        seeds(&self.scenario, self.variants.iter().map(String::as_str)).join("+")
    }

    /// The patches it teaches, one per seed it is about, for its citation lines.
    pub fn patches(&self) -> Vec<&'static crate::patches::Patch> {
        let seeds = seeds(&self.scenario, self.variants.iter().map(String::as_str));
        seeds
            .into_iter()
            .filter_map(crate::patches::by_seed)
            .collect()
    }

    /// What it cites ([`citations`]), for the page and the figures.
    pub fn citations(&self) -> Vec<(String, String)> {
        citations(&self.scenario, self.variants.iter().map(String::as_str))
    }

    /// A table of the file read as a `T`, a bad field named under `at` (`w.question[2]`).
    fn entry<T: serde::de::DeserializeOwned>(
        &self,
        at: &str,
        v: &serde_json::Value,
    ) -> Result<T, Error> {
        field_path::from_value(v).map_err(|e| Error::Parse {
            format: "TOML",
            field: match Path(&e.path).to_string().as_str() {
                "" => at.to_string(),
                path => format!("{at}.{path}"),
            },
            message: e.error.to_string(),
        })
    }

    /// Refuses a `step` (field `at`) that is none of the walkthrough's.
    fn a_step(&self, at: &str, step: usize) -> Result<(), Error> {
        let ops = self.say.len();
        if (1..=ops).contains(&step) {
            return Ok(());
        }
        Err(Error::Range {
            field: at.to_string(),
            value: step.to_string(),
            allowed: format!("1 to {ops}, the walkthrough's steps"),
        })
    }

    /// The `[[moment]]`s, each checked: its step is one of the walkthrough's, its kind an
    /// event kind.
    pub fn moments(&self) -> Result<Vec<Moment>, Error> {
        let mut all = Vec::with_capacity(self.moments.len());
        for (i, v) in self.moments.iter().enumerate() {
            let field = |f: &str| format!("{}.moment[{i}]{f}", self.name);
            let m: Moment = self.entry(&field(""), v)?;
            self.a_step(&field(".step"), m.step)?;
            if m.kind.parse::<EventKind>().is_err() {
                let why = format!(
                    "`{}` is no event kind: one of {}",
                    m.kind,
                    EventKind::NAMES.join(", ")
                );
                return Err(Error::invalid(field(".kind"), why));
            }
            all.push(m);
        }
        Ok(all)
    }

    /// The event kinds that are its key moments: its patches' own (see
    /// [`crate::patches::Patch::moments`]) and those its `[[moment]]`s name (when they are
    /// sound), each once.
    pub fn key_kinds(&self) -> Vec<EventKind> {
        let own = self
            .patches()
            .into_iter()
            .flat_map(|p| p.moments.iter().copied());
        let named = self.moments().unwrap_or_default();
        let named = named.iter().map(|m| m.kind.as_str());
        let mut kinds: Vec<EventKind> = own.chain(named).filter_map(|k| k.parse().ok()).collect();
        kinds.sort_unstable();
        kinds.dedup();
        kinds
    }

    /// Whether `kind`'s events are key moments in step `step` (1-based): one of its patches'
    /// own kinds, or the kind a `[[moment]]` names for that step. The `[[moment]]`s are read
    /// as they stand, not through [`Walkthrough::moments`] (lint refuses unsound ones), and
    /// kinds compared by name: the playground, which asks of every event, then links no
    /// parsing nor sorting for it (9 KB).
    pub fn is_key(&self, step: usize, kind: EventKind) -> bool {
        let name = kind.name();
        let named = |m: &serde_json::Value| {
            m["step"].as_u64() == Some(step as u64) && m["kind"].as_str() == Some(name)
        };
        self.moments.iter().any(named) || (self.patches().iter()).any(|p| p.moments.contains(&name))
    }

    /// `q`'s answer, read from its variant's trace among `traces`.
    pub fn answer(
        &self,
        q: &Question,
        traces: &[crate::Trace],
    ) -> Result<crate::query::Value, String> {
        q.answer(self.trace_for(q, traces)?)
    }
}

/// Two of `q`'s choices with one value, by index (the first, then the other): the learner's
/// pick could not tell them apart. Sorted, as a question may list any number of choices.
fn repeated_choice(q: &Question) -> Option<(usize, usize)> {
    let mut values: Vec<(u64, usize)> = q.choices.iter().map(|c| c.value).zip(0..).collect();
    values.sort_unstable();
    let same = values.windows(2).find(|w| w[0].0 == w[1].0)?;
    Some((same[0].1, same[1].1))
}

/// A lesson text's paragraphs, each trimmed: a blank line (or one of spaces) starts the next,
/// in every host alike.
pub fn paragraphs(text: &str) -> Vec<&str> {
    let (mut out, mut start, mut at) = (Vec::new(), None, 0);
    for line in text.split_inclusive('\n') {
        match (line.trim().is_empty(), start) {
            (true, Some(s)) => {
                out.push(text[s..at].trim());
                start = None;
            }
            (false, None) => start = Some(at),
            _ => {}
        }
        at += line.len();
    }
    out.extend(start.map(|s| text[s..].trim()));
    out
}

/// The seeds (patches) runs of `scenario` in `variants` are about, in order: tcp_sendmsg is
/// seed 000 and MPTCP seed 003 in every variant; on the receive side each variant names an
/// allocator (seed 001, netdev_alloc_frag), an rx skb cache (seed 002), or one of each
/// (`ALLOCATOR+CACHE`). A name the mechanism does not have counts for nothing.
pub fn seeds<'a>(
    scenario: &Scenario,
    variants: impl IntoIterator<Item = &'a str>,
) -> Vec<&'static str> {
    let found: Vec<&'static str> = match scenario {
        Scenario::Sendmsg(_) => vec!["000"],
        Scenario::Mptcp(_) => vec!["003"],
        Scenario::Rx(_) => variants
            .into_iter()
            .flat_map(|v| v.split('+'))
            .filter_map(|axis| {
                let has = |names: &[&str]| names.contains(&axis);
                (has(crate::rx::ALLOCATORS).then_some("001"))
                    .or(has(crate::rx::CACHES).then_some("002"))
            })
            .collect(),
    };
    // In seed order, each once: the patches' order (a sort would cost the playground's
    // bundle kilobytes).
    (crate::patches::PATCHES.iter())
        .map(|p| p.seed)
        .filter(|s| found.contains(s))
        .collect()
}

/// What runs of `scenario` in `variants` cite, each as its words and its address: the patch
/// of each seed they are about ([`seeds`]), the commit that shipped it where the post never
/// merged, then the commits behind each later variant ([`crate::patches::later`]).
pub fn citations<'a>(
    scenario: &Scenario,
    variants: impl IntoIterator<Item = &'a str> + Clone,
) -> Vec<(String, String)> {
    let patches = seeds(scenario, variants.clone())
        .into_iter()
        .filter_map(crate::patches::by_seed);
    let mut out = Vec::new();
    for p in patches {
        out.push(p.cited());
        out.extend(p.shipped.map(|c| c.cited()));
    }
    let axes = variants.into_iter().flat_map(|v| v.split('+'));
    let mechanism = scenario.mechanism();
    for c in axes.flat_map(|v| crate::patches::later(mechanism, v)) {
        if !out.contains(&c.cited()) {
            out.push(c.cited());
        }
    }
    out
}

/// Every walkthrough, parsed. The files are part of the build, so a parse error is a bug
/// caught by the test suite, reported here as an error rather than a panic.
#[cfg(feature = "embedded")]
pub fn all() -> Result<Vec<Walkthrough>, Error> {
    TEXTS.iter().map(|text| parse(text)).collect()
}

/// The walkthrough called `name`.
#[cfg(feature = "embedded")]
pub fn find(name: &str) -> Result<Walkthrough, Error> {
    find_named(all()?, "walkthrough", name, |w| &w.name)
}

/// The item of `all` called `name`, or an error listing the names.
#[cfg(feature = "embedded")]
pub(crate) fn find_named<T>(
    all: Vec<T>,
    what: &'static str,
    name: &str,
    name_of: impl Fn(&T) -> &String,
) -> Result<T, Error> {
    let names: Vec<String> = all.iter().map(|t| name_of(t).clone()).collect();
    all.into_iter()
        .find(|t| name_of(t) == name)
        .ok_or_else(|| Error::Unknown {
            what,
            name: name.to_string(),
            expected: names.join(", "),
        })
}

/// A walkthrough or challenge file, with the path of a bad field. Read through a JSON value,
/// as scenarios are, so the derived code is compiled for one deserializer only. Its text is
/// printed to a terminal and a page: a control or format character other than a newline or a
/// tab is refused.
pub(crate) fn from_toml<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, Error> {
    let v: serde_json::Value = crate::toml_value::parse(text)?;
    crate::limits::plain_values(&v)?;
    field_path::from_value(&v).map_err(|e| Error::Parse {
        format: "TOML",
        field: Path(&e.path).to_string(),
        message: e.error.to_string(),
    })
}

/// Reads one walkthrough file, checking it has a paragraph per operation, one or two
/// different variants ([`MAX_LESSON_VARIANTS`]), at most [`MAX_CHECKS`] checks and at most
/// [`MAX_QUESTIONS`] questions.
pub fn parse(text: &str) -> Result<Walkthrough, Error> {
    let w: Walkthrough = from_toml(text)?;
    let field = |f: &str| format!("{}.{f}", w.name);
    let ops = w.scenario.op_count();
    if w.say.len() != ops {
        return Err(Error::invalid(
            field("say"),
            format!("has {} paragraphs for {ops} operations", w.say.len()),
        ));
    }
    let variants = (1, MAX_LESSON_VARIANTS);
    check_count(|| field("variants"), w.variants.len(), variants, "variants")?;
    if let [a, b] = &w.variants[..] {
        if a == b {
            return Err(Error::invalid(
                field("variants[1]"),
                format!("`{b}` is variants[0] too: name two different variants, or one"),
            ));
        }
    }
    check_count(|| field("check"), w.checks.len(), (0, MAX_CHECKS), "checks")?;
    let n = w.questions.len();
    check_count(|| field("question"), n, (0, MAX_QUESTIONS), "questions")?;
    Ok(w)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A lesson's `[[check]]` paths into one step build its JSON value once, however many
    /// they are and in whatever order they come (issue 38: each check serialized its step,
    /// and 200 checks on a 79,000-skb step took lint a minute).
    #[test]
    fn a_steps_json_is_built_once_for_all_its_checks() {
        let text = include_str!("../../docs/examples/my-lesson.toml");
        let mut w = parse(text).unwrap();
        let traces = w.traces(|_, o| w.scenario.run(o)).unwrap();
        let check = |variant: &str, step| Check {
            variant: variant.into(),
            step,
            counter: None,
            path: Some("/state/pages/0/count".into()),
            equals: 0,
        };
        // 200 checks, alternating between step 1 and step 2 of both variants.
        let at = [
            ("pre-2010", 1),
            ("kumar-2010", 2),
            ("kumar-2010", 1),
            ("pre-2010", 2),
        ];
        w.checks = (0..200)
            .map(|i| at[i % 4])
            .map(|(v, s)| check(v, s))
            .collect();
        let built = || STEPS_BUILT.with(std::cell::Cell::get);
        let before = built();
        let read = w.read_checks(&traces);
        assert_eq!(built() - before, 4, "one per step and lane");
        assert_eq!(read[2], Some(Ok(2)), "kumar-2010's page 0 after step 1");
    }

    #[test]
    fn a_control_or_format_character_in_a_text_is_an_error_naming_its_field() {
        let text = |title: &str, say: &str, label: &str| {
            format!(
                "name = \"w\"\ntitle = \"{title}\"\nintro = \"i\\n\\tj\"\n\
                 variants = [\"kumar-2010\"]\nsay = [\"{say}\"]\noutro = \"o\"\n\
                 [[question]]\nstep = 1\nask = \"a\"\nquery = \"pages live\"\n\
                 choices = [{{ value = 1, label = \"{label}\" }}]\n\
                 [scenario]\nmechanism = \"sendmsg\"\nops = [{{ op = \"close\" }}]\n"
            )
        };
        let pwned = "\\u001b]0;PWNED\\u0007";
        let cases = [
            (
                text(pwned, "s", "l"),
                "`title`: holds the control or format character U+001B",
            ),
            (text("t", pwned, "l"), "`say[0]`: holds"),
            (
                text("t", "s", "\\u009b2J"),
                "`question[0].choices[0].label`: holds the control or format character U+009B",
            ),
        ];
        for (t, want) in cases {
            let err = parse(&t).unwrap_err().to_string();
            assert!(err.contains(want), "{err}");
        }
        // Format characters and separators reorder or hide what the page and the terminal
        // show: a bidi override makes "RTL" read "LTR".
        let hidden = ["202E", "2066", "2028", "200B", "E0041"];
        for code in hidden {
            let err = parse(&text(&format!("\\U{code:0>8}RTL"), "s", "l")).unwrap_err();
            let want = format!("`title`: holds the control or format character U+{code}");
            assert!(err.to_string().contains(&want), "{err}");
        }
        parse(&text("t", "s", "l")).expect("newlines and tabs are plain text");
    }

    #[test]
    fn a_blank_line_starts_a_paragraph() {
        assert_eq!(
            paragraphs("one\ntwo\n\nthree\n  \n\n four "),
            ["one\ntwo", "three", "four"]
        );
        assert_eq!(paragraphs("\n\nalone\n"), ["alone"]);
        assert!(paragraphs(" \n").is_empty());
    }

    #[test]
    fn a_bad_question_is_an_error_naming_its_field() {
        let text = |q: &str| {
            format!(
                "name = \"w\"\ntitle = \"t\"\nintro = \"i\"\nvariants = [\"kumar-2010\"]\n\
                 say = [\"s\"]\noutro = \"o\"\n[[question]]\n{q}\n\
                 [scenario]\nmechanism = \"sendmsg\"\nops = [{{ op = \"close\" }}]\n"
            )
        };
        let cases = [
            (
                "step = 2\nask = \"a\"\nquery = \"pages live\"",
                "w.question[0].step",
            ),
            (
                "step = 1\nask = \"a\"\nquery = \"skb 0 colour\"",
                "w.question[0].query",
            ),
            (
                "step = 1\nask = \"a\"\nquery = \"pages live\"\nvariant = \"x\"",
                "w.question[0].variant",
            ),
            (
                "step = 1\nquery = \"pages live\"",
                "`w.question[0]`: missing field `ask`",
            ),
            // Two choices of one value: the learner's pick could not tell them apart.
            (
                "step = 1\nask = \"a\"\nquery = \"pages live\"\nchoices = [\
                 { value = 1, label = \"x\" }, { value = 0, label = \"y\" }, \
                 { value = 1, label = \"z\" }]",
                "`w.question[0].choices[2].value`: 1 is choices[0]'s value too",
            ),
        ];
        for (q, field) in cases {
            let w = parse(&text(q)).expect("the walkthrough parses");
            let err = w.questions().unwrap_err().to_string();
            assert!(err.contains(field), "{q}: {err}");
        }
    }
}

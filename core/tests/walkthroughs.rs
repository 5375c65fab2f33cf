//! Every walkthrough in `walkthrough::all()` passes `skblab lint` (each listed variant runs its
//! scenario, every `[[check]]`, a number the narration states, holds), and lint finds what is
//! wrong in a broken one.

use skblab_core::{lint, walkthrough};

/// The checks `skblab lint` runs: each variant runs, every `[[check]]` holds, every question
/// resolves and is hidden until asked.
#[test]
fn every_walkthrough_passes_lint() {
    let all = walkthrough::all().expect("walkthroughs parse");
    let mut problems = Vec::new();
    for w in &all {
        assert!(!w.checks.is_empty(), "{}: no checks", w.name);
        problems.extend(lint::lesson(w).iter().map(|f| format!("{}: {f}", w.name)));
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn walkthrough_names_are_unique_and_findable() {
    let all = walkthrough::all().expect("walkthroughs parse");
    for w in &all {
        assert_eq!(
            all.iter().filter(|o| o.name == w.name).count(),
            1,
            "{}",
            w.name
        );
        assert_eq!(walkthrough::find(&w.name).expect("found").name, w.name);
    }
}

fn example(name: &str) -> String {
    let path = format!("{}/../docs/examples/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn every_walkthrough_is_about_one_seed() {
    for w in walkthrough::all().expect("walkthroughs parse") {
        let seed = w.seed();
        assert!(
            ["000", "001", "002", "003"].contains(&seed.as_str()),
            "{}: seed {seed}",
            w.name
        );
    }
}

/// Every walkthrough cites its seed's patch first; seed 001's, the commit v3.6 shipped; the
/// walkthrough of today's page_frag_cache, the commits after it, in release order.
#[test]
fn every_walkthrough_cites_its_patch_and_the_commits_behind_its_variants() {
    let hash = |text: &str| text.split("commit ").nth(1).map(|h| h[..12].to_string());
    for w in walkthrough::all().expect("walkthroughs parse") {
        let cited = w.citations();
        assert!(
            cited[0].0.starts_with(&format!("seed {}, ", w.seed())),
            "{}: {cited:?}",
            w.name
        );
        let hashes: Vec<_> = cited.iter().skip(1).filter_map(|(t, _)| hash(t)).collect();
        let want: &[&str] = match (w.seed().as_str(), w.name.as_str()) {
            ("001", "rx-page-frag-cache") => &["540eb7bf0bbe", "69b08f62e174", "b63ae8ca096d"],
            ("001", _) => &["540eb7bf0bbe"],
            _ => &[],
        };
        assert_eq!(hashes, want, "{}", w.name);
        for (_, url) in &cited {
            assert!(url.starts_with("https://"), "{}: {url}", w.name);
        }
    }
}

/// A walkthrough's `chart` names a counter its runs count; lint refuses one they do not.
#[test]
fn lint_refuses_a_chart_that_is_no_counter() {
    let w = walkthrough::find("rx-page-reuse").expect("found");
    assert_eq!(w.chart.as_deref(), Some("frag_cache_pages"));
    let text = include_str!("../walkthroughs/rx-page-reuse.toml").replace(
        "chart = \"frag_cache_pages\"",
        "chart = \"frag_cache_pagez\"",
    );
    let bad = walkthrough::parse(&text).expect("parses");
    let found: Vec<String> = lint::lesson(&bad).iter().map(|f| f.to_string()).collect();
    assert!(
        found
            .iter()
            .any(|f| f.contains("chart") && f.contains("`frag_cache_pagez` is no counter")),
        "{found:?}"
    );
}

/// docs/examples/my-lesson.toml, the format's documented example, passes lint; each
/// mistake made in a copy of it is found, naming the field and the step.
#[test]
fn lint_passes_the_example_and_finds_each_mistake() {
    let text = example("my-lesson.toml");
    assert_eq!(lint::file(&text, None), Ok(vec![]));
    let w = walkthrough::parse(&text).expect("parses");
    assert_eq!(w.seed(), "000");
    // (replace, with, the finding's start)
    let cases = [
        ("equals = 2288", "equals = 2280", "`check[0].equals` at step 1: skb_head_bytes reads 2288 in pre-2010, not 2280"),
        ("path = \"/state/pages/0/count\"\nequals = 2", "path = \"/state/pages/9/count\"\nequals = 2", "`check[2]` at step 1: no number at `/state/pages/9/count`"),
        ("variant = \"kumar-2010\"\ncounter = \"linear_bytes\"", "variant = \"modern\"\ncounter = \"linear_bytes\"", "`check[6].variant`: `modern` is not one of the variants"),
        ("query = \"page 0 count\"", "query = \"page 7 count\"", "`question[3].query` at step 2: does not resolve in kumar-2010"),
        ("query = \"skb 0 linear_len\"", "query = \"counter pages_freed\"", "`question[0]` at step 1: the answer is visible before it is asked: the step before already gives 0"),
        ("variants = [\"pre-2010\", \"kumar-2010\"]", "variants = [\"pre-2010\", \"kumar-2011\"]", "`variants[1]`: unknown variant `kumar-2011`"),
        ("  { op = \"transmit\" },\n", "", "`my-lesson.say`: has 3 paragraphs for 2 operations"),
        ("step = 1\nvariant = \"kumar-2010\"\nkey", "step = 4\nvariant = \"kumar-2010\"\nkey", "`my-lesson.question[0].step` = 4 is out of range"),
        ("counter = \"skb_head_bytes\"", "counter = \"skb_head_byte\"", "`check[0]` at step 1: no counter `skb_head_byte`: did you mean `skb_head_bytes`?"),
        ("query = \"skb 0 linear_len\"", "query = \"counter page_allocated\"", "`question[0].query` at step 1: does not resolve in kumar-2010: no counter `page_allocated`: did you mean `pages_allocated`?"),
        ("kind = \"new_frag\"", "kind = \"new_frags\"", "`my-lesson.moment[0].kind`: `new_frags` is no event kind: one of alloc_page, "),
        ("step = 1\nkind", "step = 9\nkind", "`my-lesson.moment[0].step` = 9 is out of range: allowed 1 to 3"),
        ("step = 1\nkind", "step = 3\nkind", "`moment[0]` at step 3: no new_frag event in pre-2010 or kumar-2010"),
        ("{ value = 3, label = \"three\" }", "{ value = 2, label = \"three\" }", "`my-lesson.question[1].choices[2].value`: 2 is choices[1]'s value too"),
    ];
    for (from, to, want) in cases {
        assert!(text.contains(from), "{from}");
        let found = lint::file(&text.replacen(from, to, 1), None).expect("a walkthrough");
        let found: Vec<String> = found.iter().map(|f| f.to_string()).collect();
        assert!(
            found.iter().any(|f| f.starts_with(want)),
            "{want}\n found: {found:#?}"
        );
    }
    // A count of the asked step's own events is not seen before it is asked, even when the
    // step before made as many (0 free_page events in steps 1 and 2).
    let sound = text.replacen(
        "query = \"skb 0 data_len\"",
        "query = \"events free_page\"",
        1,
    );
    assert_ne!(sound, text);
    assert_eq!(lint::file(&sound, None), Ok(vec![]));
}

/// The lane a walkthrough names as patched runs the later of its two variants: the kernel
/// after the patch, in the order the mechanism lists its variants (oldest first).
#[test]
fn the_patched_lane_is_the_variant_after_the_patch() {
    for w in walkthrough::all().expect("walkthroughs parse") {
        let order = w.scenario.variants();
        let at = |v: &String| order.iter().position(|o| o == v);
        let patched = &w.variants[w.patched()];
        for v in w.variants.iter().filter(|v| *v != patched) {
            assert!(
                at(v) < at(patched),
                "{}: {patched} is not after {v}",
                w.name
            );
        }
    }
    let anatomy = walkthrough::find("anatomy").expect("anatomy");
    assert_eq!(anatomy.patched(), 0, "one lane: it is the patched one");
    let reuse = walkthrough::find("rx-page-reuse").expect("rx-page-reuse");
    assert_eq!(reuse.variants[reuse.patched()], "duyck-2012");
}

/// The example lesson with its `variants` line replaced by `variants`.
fn with_variants(variants: &str) -> String {
    let text = example("my-lesson.toml");
    let line = "variants = [\"pre-2010\", \"kumar-2010\"]";
    assert!(text.contains(line));
    text.replacen(line, &format!("variants = {variants}"), 1)
}

/// A walkthrough compares a kernel before a patch with one after: one or two variants, each
/// once. 50 copies of one variant took lint 1.33 GB (each is a whole traced run) and said ok.
#[test]
fn a_lesson_names_one_or_two_different_variants() {
    let fifty = format!("[{}]", vec!["\"pre-2010\""; 50].join(", "));
    let cases = [
        (
            fifty.as_str(),
            "`my-lesson.variants` = 50 variants is out of range: allowed 1..=2 variants",
        ),
        (
            "[\"pre-2010\", \"kumar-2010\", \"modern\"]",
            "`my-lesson.variants` = 3 variants is out of range",
        ),
        ("[]", "`my-lesson.variants` = 0 variants is out of range"),
        (
            "[\"kumar-2010\", \"kumar-2010\"]",
            "`my-lesson.variants[1]`: `kumar-2010` is variants[0] too",
        ),
    ];
    for (variants, want) in cases {
        let text = with_variants(variants);
        let e = walkthrough::parse(&text).unwrap_err().to_string();
        assert!(e.starts_with(want), "{variants}: {e}");
        let found = lint::file(&text, None).expect("a walkthrough");
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].to_string().starts_with(want), "{}", found[0]);
    }
    for one in ["[\"kumar-2010\"]", "[\"pre-2010\"]"] {
        let w = walkthrough::parse(&with_variants(one)).expect("one variant is a walkthrough");
        assert_eq!(w.variants.len(), 1);
    }
}

/// A lesson's runs share one budget: two runs each under a traced run's cap are refused when
/// together they are over it, by lint and by every host's [`walkthrough::Walkthrough::traces`].
#[test]
fn a_lessons_runs_together_are_within_one_budget() {
    use skblab_core::limits::MAX_LESSON_TRACE_OBJECTS;
    let w = walkthrough::parse(&heavy_lesson()).expect("parses");
    let size = |t: &skblab_core::Trace| t.steps.iter().map(|s| s.size()).sum::<usize>();
    let mut sizes = Vec::new();
    for v in &w.variants {
        let alone = skblab_core::RunOptions::traced(Some(v));
        sizes.push(size(
            &w.scenario
                .run(&alone)
                .expect("each run alone is within its cap"),
        ));
    }
    assert!(
        sizes.iter().all(|&s| s <= MAX_LESSON_TRACE_OBJECTS)
            && sizes.iter().sum::<usize>() > MAX_LESSON_TRACE_OBJECTS,
        "{sizes:?}"
    );
    let want = "`heavy.variants` = runs of pre-2010 and kumar-2010 holding over";
    let e = w.traces(|_, o| w.scenario.run(o)).unwrap_err().to_string();
    assert!(e.starts_with(want), "{e}");
    assert!(
        e.contains("allowed at most 250000 over a walkthrough's runs together"),
        "{e}"
    );
    let found = lint::lesson(&w);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].to_string().starts_with(want), "{}", found[0]);
    let one = walkthrough::parse(&heavy_lesson().replace(", \"kumar-2010\"]", "]")).unwrap();
    assert_eq!(
        one.traces(|_, o| one.scenario.run(o)).map(|t| t.len()),
        Ok(1)
    );
}

/// A lesson whose scenario runs heavy in both its variants: writes that queue skbs untransmitted,
/// so every step holds all the skbs so far.
fn heavy_lesson() -> String {
    let ops = HEAVY_OPS;
    format!(
        "name = \"heavy\"\ntitle = \"t\"\nintro = \"i\"\nvariants = [\"pre-2010\", \"kumar-2010\"]\n\
         say = [{}]\noutro = \"o\"\n[scenario]\nmechanism = \"sendmsg\"\n\
         socket = {{ mss = 1448 }}\ndevice = {{ sg = true, gso = false, csum = true, mtu = 1500 }}\n\
         ops = [{}]\n",
        vec!["\"s\""; ops].join(", "),
        vec!["{ op = \"sendmsg\", bytes = 1448 }"; ops].join(", ")
    )
}

const HEAVY_OPS: usize = 400;

/// At most `MAX_CHECKS` checks, counted by name.
#[test]
fn a_lessons_checks_are_capped() {
    use skblab_core::limits::MAX_CHECKS;
    let check = "\n[[check]]\nvariant = \"pre-2010\"\ncounter = \"skbs_allocated\"\nequals = 2\n";
    let text = example("my-lesson.toml");
    let have = walkthrough::parse(&text).unwrap().checks.len();
    let at_cap = format!("{text}{}", check.repeat(MAX_CHECKS - have));
    assert_eq!(
        walkthrough::parse(&at_cap).map(|w| w.checks.len()),
        Ok(MAX_CHECKS)
    );
    let over = format!("{at_cap}{check}");
    let e = walkthrough::parse(&over).unwrap_err().to_string();
    assert_eq!(
        e,
        "`my-lesson.check` = 1001 checks is out of range: allowed 0..=1000 checks"
    );
}

/// At most `MAX_QUESTIONS` questions in a lesson, each of at most `MAX_CHOICES` choices (a
/// letter each), counted by name: every answer is read when the lesson opens.
#[test]
fn a_lessons_questions_and_choices_are_capped() {
    use skblab_core::limits::{MAX_CHOICES, MAX_QUESTIONS};
    let ask = "\n[[question]]\nstep = 1\nask = \"a\"\nquery = \"pages live\"\n";
    let text = example("my-lesson.toml");
    let w = walkthrough::parse(&text).unwrap();
    let at_cap = format!(
        "{text}{}",
        ask.repeat(MAX_QUESTIONS - w.questions().unwrap().len())
    );
    let w = walkthrough::parse(&at_cap).unwrap();
    assert_eq!(w.questions().map(|q| q.len()), Ok(MAX_QUESTIONS));
    let e = walkthrough::parse(&format!("{at_cap}{ask}")).unwrap_err();
    assert_eq!(
        e.to_string(),
        "`my-lesson.question` = 101 questions is out of range: allowed 0..=100 questions"
    );
    let three = "choices = [{ value = 1, label = \"one\" }, { value = 2, label = \"two\" }, { value = 3, label = \"three\" }]";
    let choices = |n: usize| {
        let all: Vec<String> = (1..=n)
            .map(|v| format!("{{ value = {v}, label = \"{v}\" }}"))
            .collect();
        text.replacen(three, &format!("choices = [{}]", all.join(", ")), 1)
    };
    let w = walkthrough::parse(&choices(MAX_CHOICES)).unwrap();
    assert_eq!(
        w.questions().unwrap()[1].options()[MAX_CHOICES - 1],
        "z) 26"
    );
    let w = walkthrough::parse(&choices(MAX_CHOICES + 1)).unwrap();
    assert_eq!(
        w.questions().unwrap_err().to_string(),
        "`my-lesson.question[1].choices` = 27 choices is out of range: allowed 0..=26 choices"
    );
}

/// Checks read grouped by step, each step's JSON built once, read what reading each check on
/// its own step's JSON read: in every built-in walkthrough, every path below at every step
/// (0 = the trace) of every variant, asked in an order that jumps between steps and lanes.
#[test]
fn checks_read_by_step_read_what_each_read_alone() {
    let paths = [
        "/state/queues/0/skbs/0/len",
        "/state/queues/0/skbs/1/frags/0/size",
        "/state/pages/0/count",
        "/events/0/page",
        "/counters/skbs_allocated",
        "/consts/max_skb_frags",
        "/steps/0/state/pages/0/count",
        "/state/queues/9/skbs/0/len",
        "/op",
    ];
    let unlisted = "no-such-variant".to_string();
    let (mut compared, mut numbers) = (0, 0);
    for mut w in walkthrough::all().expect("walkthroughs parse") {
        let traces = w.traces(|_, o| w.scenario.run(o)).expect("runs");
        let steps = traces[0].steps.len();
        w.checks.clear();
        for path in paths {
            for step in (0..=steps).rev() {
                for v in w.variants.iter().chain([&unlisted]) {
                    w.checks.push(walkthrough::Check {
                        variant: v.clone(),
                        step,
                        counter: None,
                        path: Some(path.into()),
                        equals: 0,
                    });
                }
            }
        }
        let read = w.read_checks(&traces);
        assert_eq!(read.len(), w.checks.len());
        for (c, got) in w.checks.iter().zip(read) {
            let Some(lane) = w.variants.iter().position(|v| *v == c.variant) else {
                assert_eq!(got, None, "{}: a variant not listed reads nothing", w.name);
                continue;
            };
            let t = &traces[lane];
            let value = match c.step {
                0 => serde_json::to_value(t),
                n => serde_json::to_value(&t.steps[n - 1]),
            };
            let path = c.path.as_deref().unwrap();
            let alone = value.unwrap().pointer(path).and_then(|v| v.as_u64());
            let alone = alone.ok_or(format!("no number at `{path}`"));
            assert_eq!(
                got,
                Some(alone),
                "{} {} step {} {path}",
                w.name,
                c.variant,
                c.step
            );
            compared += 1;
            numbers += usize::from(matches!(got, Some(Ok(_))));
        }
    }
    assert!(
        compared > 1000 && numbers > 100,
        "{compared} read, {numbers} numbers"
    );
}

/// The MPTCP lessons' premise: a steady state whose peer window ends at least this far past
/// the first data byte (v5.11 `mptcp_check_allowed_size` maps up to `wnd_end`), which the
/// model, having no window, assumes; their narration names it.
const STEADY_STATE_WINDOW: u64 = 131_072;
/// v5.11's `wnd_end` on a fresh loopback connection with nothing acked: the SYN-ACK's
/// window (docs/mechanisms.md, seed 003).
const SYN_ACK_WINDOW: u64 = 65_483;

/// Every MPTCP lesson maps no more than the open window it names, and one that maps past the
/// SYN-ACK's window tells the learner what v5.11 would do there: the told simplification.
#[test]
fn mptcp_lessons_stay_inside_the_window_they_name() {
    let mut mptcp = 0;
    for w in walkthrough::all().expect("walkthroughs parse") {
        if w.scenario.mechanism() != "mptcp" {
            continue;
        }
        mptcp += 1;
        let text = format!("{} {}", w.intro, w.outro);
        assert!(
            text.contains(&STEADY_STATE_WINDOW.to_string())
                && text.contains("mptcp_check_allowed_size"),
            "{}: the narration names the open window",
            w.name
        );
        let traces = w.traces(|_, o| w.scenario.run(o)).expect("runs");
        let mapped = |s: &skblab_core::trace::Step| {
            serde_json::to_value(&s.counters).unwrap()["bytes_mapped"].as_u64()
        };
        let most = traces
            .iter()
            .flat_map(|t| &t.steps)
            .map(|s| mapped(s).expect("an MPTCP step counts bytes_mapped"))
            .max()
            .unwrap_or(0);
        assert!(most <= STEADY_STATE_WINDOW, "{}: maps {most}", w.name);
        if most > SYN_ACK_WINDOW {
            assert!(
                text.contains(&SYN_ACK_WINDOW.to_string()),
                "{}: maps {most}, past the SYN-ACK's window, and does not say so",
                w.name
            );
        }
    }
    assert_eq!(mptcp, 2);
}

/// Every built-in lesson says what the running kernel judged of it and what rests on the
/// source alone (docs/kernel-oracle.md, "What each walkthrough's kernel run judges").
#[test]
fn every_walkthrough_says_what_the_kernel_judged() {
    for w in walkthrough::all().expect("walkthroughs parse") {
        let line = w.kernel.as_deref().unwrap_or("").to_lowercase();
        assert!(
            line.contains("judged by the running kernel") && line.contains("source reading"),
            "{}: `kernel` missing or not saying both sides: {line:?}",
            w.name
        );
    }
}

/// A `[[moment]]` is a key moment in its own step only; a patch's own kinds in every step.
#[test]
fn a_named_moment_is_key_in_its_step_only() {
    use skblab_core::events::EventKind::{NewFrag, ReusePage};
    let w = walkthrough::parse(&example("my-lesson.toml")).expect("parses");
    assert!(w.is_key(1, NewFrag) && !w.is_key(2, NewFrag) && !w.is_key(1, ReusePage));
    assert_eq!(w.key_kinds(), [NewFrag]);
    let reuse = walkthrough::find("rx-page-reuse").expect("a walkthrough");
    assert!(reuse.is_key(3, ReusePage) && !reuse.is_key(3, NewFrag));
}

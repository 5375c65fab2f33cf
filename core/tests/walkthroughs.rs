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

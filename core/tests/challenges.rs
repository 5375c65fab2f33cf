//! Every challenge passes `skblab lint` with its reference solution
//! (`tests/solutions/NAME.toml`): its start does not reach the goal and the solution does,
//! keeping every kept field. The obvious shortcuts, which reach the goal without the lesson,
//! are refused.

use serde_json::{json, Value};
use skblab_core::{challenge, lint};
use std::path::Path;

fn solution(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/solutions/{name}.toml"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn each_challenge_passes_lint_with_its_solution() {
    let all = challenge::all().expect("challenges parse");
    let mut problems = Vec::new();
    for c in &all {
        let found = lint::goal(c, Some(&solution(&c.name)));
        problems.extend(found.iter().map(|f| format!("{}: {f}", c.name)));
        let done = c.check(&solution(&c.name)).expect("the solution runs");
        assert!(done.conditions.iter().all(|s| s.holds), "{:?}", done.report);
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// (challenge, a merge patch to its start (RFC 7386: objects merge, the rest replaces), the
/// field that refuses it, whether it reaches the goal when nothing is kept). A shortcut
/// reaches the goal without what the lesson teaches (checked below); the others are the
/// obvious tries.
fn shortcuts() -> Vec<(&'static str, Value, &'static str, bool)> {
    let arrive = |frames: u64| json!({"op": "arrive", "frames": frames});
    let sendmsg = |bytes: u64| json!({"op": "sendmsg", "bytes": bytes});
    vec![
        // A smaller MSS makes more skbs out of the one write: the lesson is the write.
        (
            "one-page-queue",
            json!({"socket": {"mss": 300}}),
            "socket",
            true,
        ),
        // select_size's linear room follows the MSS, never to 0: the obvious try is refused
        // all the same.
        (
            "no-linear-before-2010",
            json!({"socket": {"mss": 536}}),
            "socket",
            false,
        ),
        // Frames that come two per poll are the NIC's budget in disguise.
        (
            "reuse-a-page",
            json!({"ops": vec![arrive(2); 60]}),
            "ops",
            true,
        ),
        // A 2 KiB shared info leaves one frame a page, whatever the reader does.
        (
            "twice-the-pages",
            json!({"consts": {"shinfo_size": 2048}}),
            "consts",
            true,
        ),
        // UDP and RPS turn the 2019 cache off instead of using it.
        (
            "cache-frees-nothing",
            json!({"socket": {"proto": "udp"}}),
            "socket",
            true,
        ),
        (
            "cache-frees-nothing",
            json!({"nic": {"rps": true}}),
            "nic",
            true,
        ),
        // A prompt reader reads after every poll: the reads interleave by themselves.
        (
            "bh-frees-three",
            json!({"app": {"prompt": true}, "ops": vec![arrive(45); 4]}),
            "app",
            true,
        ),
        // A subflow whose sk_gso_max_size is one write: each write fills a new skb to the
        // goal, nothing collapses; the goal asks for an skb longer than a write.
        (
            "collapse-to-full-size",
            json!({"subflows": vec![json!({"mtu": 1500, "gso_max_size": 16384}); 2]}),
            "require",
            true,
        ),
        // Kernel constants and variants are the challenge's (its variant wins anyway).
        // A larger page frag holds the whole goal in one dfrag.
        (
            "full-size-before-2020",
            json!({"consts": {"skb_frag_page_order": 4}, "ops": [sendmsg(65536)]}),
            "consts",
            true,
        ),
        (
            "full-size-before-2020",
            json!({"variant": "abeni-2020"}),
            "variant",
            false,
        ),
    ]
}

fn merge(into: &mut Value, patch: &Value) {
    match (into, patch) {
        (Value::Object(a), Value::Object(b)) => {
            for (k, v) in b {
                merge(a.entry(k.clone()).or_insert(Value::Null), v);
            }
        }
        (a, b) => *a = b.clone(),
    }
}

#[test]
fn the_obvious_shortcuts_are_refused() {
    let all = shortcuts();
    for (name, patch, field, reaches) in &all {
        let c = challenge::find(name).expect("challenge");
        let mut v: Value = serde_json::from_str(&c.start()).expect("start is JSON");
        merge(&mut v, patch);
        let text = v.to_string();
        // Unguarded (the start itself edited, so every kept field matches).
        let mut open = c.clone();
        open.scenario = skblab_core::Scenario::parse(&text).expect("edited start parses");
        let unguarded = open.check(&text);
        if *field == "require" {
            // Refused by one condition: it meets all the others.
            let v = unguarded.expect("runs");
            let failed: Vec<_> = v.conditions.iter().filter(|s| !s.holds).collect();
            assert_eq!(failed.len(), 1, "{name}: {:?}", v.report);
            continue;
        }
        let solved = unguarded.map(|v| v.solved_at.is_some());
        assert_eq!(solved, Ok(*reaches), "{name} {patch}: a shortcut?");
        let err = c.check(&text).expect_err("refused").to_string();
        assert!(
            err.contains(&format!("`{field}`")) && err.contains("keeps it"),
            "{name} {patch}: {err}"
        );
    }
    for c in challenge::all().expect("challenges parse") {
        let tried = all.iter().any(|(n, ..)| *n == c.name);
        assert!(tried, "{}: no shortcut tried", c.name);
    }
}

#[test]
fn two_challenges_per_seed_with_unique_names() {
    let all = challenge::all().expect("challenges parse");
    assert!(all.len() >= 8);
    for seed in ["000", "001", "002", "003"] {
        assert!(
            all.iter().filter(|c| c.seed == seed).count() >= 2,
            "seed {seed}"
        );
    }
    let mut names: Vec<&str> = all.iter().map(|c| c.name.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), all.len(), "a name is used twice");
    for name in names {
        assert_eq!(challenge::find(name).expect("found").name, name);
    }
}

#[test]
fn a_kept_field_changed_is_an_error_naming_it() {
    let c = challenge::find("one-page-queue").expect("challenge");
    let text = c.start().replace("\"mss\": 1448", "\"mss\": 1000");
    let err = c.check(&text).unwrap_err().to_string();
    assert!(
        err.contains("`socket`") && err.contains("keeps it") && err.contains("put it back"),
        "{err}"
    );
    let other = challenge::find("reuse-a-page").expect("challenge").start();
    let err = c.check(&other).unwrap_err().to_string();
    assert!(err.contains("`mechanism`"), "{err}");
}

#[test]
fn lint_finds_what_is_wrong_with_a_challenge() {
    let c = challenge::find("one-page-queue").expect("challenge");
    let start = c.start();
    type Edit = Box<dyn Fn(&mut challenge::Challenge)>;
    let cases: Vec<(Edit, Option<String>, &str)> = vec![
        (
            Box::new(|c| c.seed = "001".into()),
            None,
            "`seed`: `001`, but sendmsg",
        ),
        (
            Box::new(|c| c.keep[1] = "devcie".into()),
            None,
            "`keep[1]`: `devcie` is no field of the start: keep one of mechanism, socket, device, ops",
        ),
        (
            Box::new(|c| c.conditions[0] = "queue write_queue len >= 1".parse().unwrap()),
            None,
            "`scenario` at step 1: the start already meets the goal",
        ),
        (
            Box::new(|c| c.conditions[0] = "counter no_such >= 1".parse().unwrap()),
            None,
            "`require[0]`: cannot be read on the start: no counter `no_such`",
        ),
        (
            Box::new(|_| {}),
            Some(start.clone()),
            "`require[0]`: the solution does not meet it: 1 >= 3",
        ),
        (
            Box::new(|_| {}),
            Some(start.replace("\"sg\": true", "\"sg\": false")),
            "the solution: `device`: challenge one-page-queue keeps it",
        ),
    ];
    for (edit, sol, want) in cases {
        let mut c = c.clone();
        edit(&mut c);
        let found: Vec<String> = lint::goal(&c, sol.as_deref())
            .iter()
            .map(|f| f.to_string())
            .collect();
        assert!(
            found.iter().any(|f| f.starts_with(want)),
            "{want}: {found:?}"
        );
    }
}

#[test]
fn a_challenge_s_verdict_serializes_each_condition() {
    let c = challenge::find("one-page-queue").expect("challenge");
    let v = c.check(&solution("one-page-queue")).expect("runs");
    let j = serde_json::to_value(&v).expect("serializes");
    assert_eq!(
        j,
        json!({"solved_at": 1, "conditions": [
            {"condition": "queue write_queue len >= 3", "holds": true, "saw": "3 >= 3", "readable": true},
            {"condition": "queue write_queue pages == 1", "holds": true, "saw": "1 == 1", "readable": true},
        ]})
    );
}

/// docs/examples/my-challenge.toml, the format's documented example, passes lint with its
/// solution, and its start does not.
#[test]
fn the_example_challenge_passes_lint_with_its_solution() {
    let example = |name: &str| {
        let path = format!("{}/../docs/examples/{name}", env!("CARGO_MANIFEST_DIR"));
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
    };
    let text = example("my-challenge.toml");
    let solution = example("my-challenge-solution.toml");
    assert_eq!(lint::file(&text, Some(&solution)), Ok(vec![]));
    let c = challenge::parse(&text).expect("parses");
    let found = lint::file(&text, Some(&c.start())).expect("a challenge");
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(
        found[0].to_string(),
        "`require[0]`: the solution does not meet it: 1000 >= 1448"
    );
}

/// The page's variant picker writes the challenge's own variant into the learner's text:
/// that keeps the variant, as leaving it out does; another variant is still refused.
#[test]
fn naming_the_challenge_s_own_variant_keeps_it() {
    for c in challenge::all().expect("challenges parse") {
        let mut start: Value = serde_json::from_str(&c.start()).expect("json");
        start["variant"] = Value::String(c.variant.clone());
        let named = c.check(&start.to_string());
        assert!(named.is_ok(), "{}: {named:?}", c.name);
        assert_eq!(
            named.unwrap().solved_at,
            None,
            "{}: the start is not solved",
            c.name
        );
    }
}

/// At most `MAX_CONDITIONS` conditions, counted by name: 32,757 took 83 s to check. A goal
/// at the cap is checked as the same goal written once: its verdict is the same.
#[test]
fn a_challenges_conditions_are_capped() {
    use skblab_core::limits::MAX_CONDITIONS;
    let example = |name: &str| {
        let path = format!("{}/../docs/examples/{name}", env!("CARGO_MANIFEST_DIR"));
        std::fs::read_to_string(path).unwrap()
    };
    let text = example("my-challenge.toml");
    let goal = "require = [\"skb 0 len >= 1448\", \"skb 0 nr_frags == 1\"]";
    assert!(text.contains(goal));
    let with = |n: usize| {
        let conditions = ["\"pages live >= 0\""; MAX_CONDITIONS + 1];
        let mut all = conditions[..n - 2].to_vec();
        all.extend(["\"skb 0 len >= 1448\"", "\"skb 0 nr_frags == 1\""]);
        text.replace(goal, &format!("require = [{}]", all.join(", ")))
    };
    let e = challenge::parse(&with(MAX_CONDITIONS + 1)).unwrap_err();
    assert_eq!(
        e.to_string(),
        "`require` = 65 conditions is out of range: allowed 0..=64 conditions"
    );
    let (at_cap, once) = (
        challenge::parse(&with(MAX_CONDITIONS)).unwrap(),
        challenge::parse(&text).unwrap(),
    );
    for s in [once.start(), example("my-challenge-solution.toml")] {
        let (a, b) = (at_cap.check(&s).unwrap(), once.check(&s).unwrap());
        assert_eq!(a.solved_at, b.solved_at, "{s}");
        assert_eq!(a.conditions[MAX_CONDITIONS - 2..], b.conditions[..], "{s}");
    }
}

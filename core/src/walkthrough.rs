//! Narrated walkthroughs: a scenario, the variants to compare, and one short paragraph per
//! operation. Each lives in `core/walkthroughs/NAME.toml`, compiled in, so every host (terminal,
//! browser, wasm) tells the same story. A walkthrough's `[[check]]` entries pin down the facts
//! its narration claims; `tests/walkthroughs.rs` runs them.

use crate::scenario::Scenario;
use crate::Error;
use serde::Deserialize;

/// The walkthrough files, in the order a learner should take them.
const FILES: &[&str] = &[
    include_str!("../walkthroughs/anatomy.toml"),
    include_str!("../walkthroughs/send-sg-gso.toml"),
    include_str!("../walkthroughs/send-sg-nogso.toml"),
    include_str!("../walkthroughs/send-nosg.toml"),
    include_str!("../walkthroughs/send-pgbreak.toml"),
    include_str!("../walkthroughs/send-modern.toml"),
    include_str!("../walkthroughs/rx-page-reuse.toml"),
    include_str!("../walkthroughs/rx-page-reuse-lagging.toml"),
    include_str!("../walkthroughs/rx-skb-cache.toml"),
    include_str!("../walkthroughs/rx-skb-cache-rps.toml"),
    include_str!("../walkthroughs/rx-defer-free.toml"),
    include_str!("../walkthroughs/mptcp-max-size.toml"),
    include_str!("../walkthroughs/mptcp-round-robin.toml"),
];

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Walkthrough {
    pub name: String,
    pub title: String,
    /// A paragraph before the first step.
    pub intro: String,
    /// The variants shown side by side (one or two).
    pub variants: Vec<String>,
    /// One paragraph per scenario operation.
    pub say: Vec<String>,
    /// A paragraph after the last step.
    pub outro: String,
    /// Facts the narration states, checked by the test suite.
    #[serde(default, rename = "check")]
    pub checks: Vec<Check>,
    pub scenario: Scenario,
}

/// "After step `step` (1-based; 0 = the end) of `variant`, counter `counter` is `equals`."
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Check {
    pub variant: String,
    #[serde(default)]
    pub step: usize,
    pub counter: String,
    pub equals: u64,
}

/// Every walkthrough, parsed. The files are part of the build, so a parse error is a bug
/// caught by the test suite, reported here as an error rather than a panic.
pub fn all() -> Result<Vec<Walkthrough>, Error> {
    FILES.iter().map(|text| parse(text)).collect()
}

/// The walkthrough called `name`.
pub fn find(name: &str) -> Result<Walkthrough, Error> {
    let all = all()?;
    let names: Vec<String> = all.iter().map(|w| w.name.clone()).collect();
    all.into_iter()
        .find(|w| w.name == name)
        .ok_or_else(|| Error::Unknown {
            what: "walkthrough",
            name: name.to_string(),
            expected: names.join(", "),
        })
}

fn parse(text: &str) -> Result<Walkthrough, Error> {
    let de = toml::Deserializer::new(text);
    let w: Walkthrough = serde_path_to_error::deserialize(de).map_err(|e| Error::Parse {
        format: "TOML",
        field: e.path().to_string(),
        message: e.into_inner().message().to_string(),
    })?;
    let ops = w.scenario.op_count();
    if w.say.len() != ops {
        return Err(Error::invalid(
            format!("{}.say", w.name),
            format!("has {} paragraphs for {ops} operations", w.say.len()),
        ));
    }
    Ok(w)
}

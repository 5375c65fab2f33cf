//! What every mechanism shares with the dispatcher in [`crate::scenario`]: the [`Mechanism`]
//! trait its scenario type implements, [`RunOptions`], variant picking and serde helpers of
//! the scenario formats.
//!
//! A leaf for the mechanisms: `send/`, `rx/` and `mptcp/` use it, `scenario.rs` lists them,
//! and neither side imports the other.

use crate::trace::Trace;
use crate::Error;
use std::str::FromStr;

/// How to run a scenario.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// Overrides the scenario's variant.
    pub variant: Option<String>,
    /// Keep only the final counters (benchmarks).
    pub counters_only: bool,
}

impl RunOptions {
    /// A run under `variant` (the scenario's own when `None`), keeping every step's state
    /// and events when `counters_only` is false.
    pub fn new(variant: Option<&str>, counters_only: bool) -> RunOptions {
        RunOptions {
            variant: variant.map(str::to_string),
            counters_only,
        }
    }

    /// A full trace: every step's state and events.
    pub fn traced(variant: Option<&str>) -> RunOptions {
        RunOptions::new(variant, false)
    }

    /// Only the final counters (benchmarks, checks of the caps).
    pub fn counters(variant: Option<&str>) -> RunOptions {
        RunOptions::new(variant, true)
    }
}

/// A mechanism's scenario format: the fields after `mechanism = NAME`, and how it runs.
pub trait Mechanism {
    /// The `mechanism` field's value, also the trace's.
    const NAME: &'static str;
    /// Every name a variant string may use; the first is the default.
    const VARIANTS: &'static [&'static str];
    /// The variant that stands for a kernel of today: what the runner sets beside the running
    /// kernel unless told otherwise.
    const TODAY: &'static str;
    /// The scenario's own `variant` field.
    fn variant(&self) -> Option<&str>;
    /// Number of operations (trace steps).
    fn op_count(&self) -> usize;
    /// Checks every field and cap, then runs the operations into a trace.
    fn run(&self, opts: &RunOptions) -> Result<Trace, Error>;
    /// What a trace's variant name means, where the name alone does not say (a pairing of
    /// patches from different kernels); `None` for a name this mechanism does not know.
    fn about_variant(_variant: &str) -> Option<String> {
        None
    }
}

/// The two [`Mechanism`] methods a scenario type answers from its `variant` and `ops`
/// fields, written once.
macro_rules! variant_and_ops {
    () => {
        fn variant(&self) -> Option<&str> {
            self.variant.as_deref()
        }

        fn op_count(&self) -> usize {
            self.ops.len()
        }
    };
}
pub(crate) use variant_and_ops;

/// Picks the variant: the override, else the scenario's own, else the default; an unknown
/// name is an error listing the known ones.
pub fn pick_variant<V: FromStr<Err = Error> + Default>(
    over: Option<&str>,
    own: Option<&str>,
) -> Result<V, Error> {
    over.or(own).map_or(Ok(V::default()), str::parse)
}

/// The default `count` of a sendmsg op: one call.
pub(crate) fn one() -> u64 {
    1
}

pub(crate) fn is_one(n: &u64) -> bool {
    *n == 1
}

/// Checks an op enum's `name` against serde, the one source of an op's name: `ops` must hold
/// every variant serde knows (its list, from the error an unknown tag gets), and each op's
/// name must be the `op` tag it serializes with. Each op enum's test calls this, so a renamed
/// or added op cannot leave a hand-typed name behind.
#[cfg(test)]
pub(crate) fn assert_named_by_tag<T>(ops: &[T], name: fn(&T) -> &'static str)
where
    T: serde::Serialize + serde::de::DeserializeOwned,
{
    let err = serde_json::from_str::<T>(r#"{"op": "?"}"#)
        .err()
        .expect("no op is named `?`")
        .to_string();
    let expected = err.split_once("expected").expect("serde lists the tags").1;
    let mut tags: Vec<&str> = expected.split('`').skip(1).step_by(2).collect();
    let mut names: Vec<&str> = ops.iter().map(name).collect();
    tags.sort_unstable();
    names.sort_unstable();
    assert_eq!(names, tags, "one op of each variant, each named by its tag");
    for op in ops {
        assert_eq!(serde_json::to_value(op).unwrap()["op"], name(op));
    }
}

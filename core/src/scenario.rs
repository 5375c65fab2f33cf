//! Scenarios: what to run. Parsed from TOML or JSON text (no I/O here: the host reads the
//! file), validated against the caps in [`crate::limits`], then run into a [`Trace`].
//!
//! This module only dispatches: each mechanism's scenario type implements
//! [`Mechanism`], and [`Scenario`] is declared over the one list of them below.

use crate::field_path::{self, Path, Segment};
use crate::limits::MAX_SCENARIO_TEXT;
pub use crate::mechanism::{Mechanism, RunOptions};
use crate::trace::Trace;
use crate::{mptcp, rx, send, Error};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Declares [`Scenario`] over the mechanisms and dispatches each method to the mechanism's
/// [`Mechanism`] impl: adding a mechanism adds one line to the list below.
macro_rules! mechanisms {
    ($($(#[$doc:meta])* $variant:ident($ty:ty)),* $(,)?) => {
        /// A scenario names its mechanism; the rest of the fields belong to that mechanism.
        ///
        /// Parsing goes through a generic value first so that errors can name the full path
        /// of the offending field (`socket.mss`, `ops[3].bytes`), which serde's tagged enums
        /// would lose.
        #[derive(Clone, Debug, PartialEq)]
        pub enum Scenario {
            $($(#[$doc])* $variant($ty),)*
        }

        /// The mechanisms a scenario can name.
        pub const MECHANISMS: &[&str] = &[$(<$ty as Mechanism>::NAME),*];

        /// Every mechanism's names, in the order of [`MECHANISMS`]: what a host's help text
        /// and a check of the hosts' literals read.
        pub const NAMES: &[MechanismNames] = &[$(MechanismNames {
            name: <$ty as Mechanism>::NAME,
            variants: <$ty as Mechanism>::VARIANTS,
            today: <$ty as Mechanism>::TODAY,
        }),*];

        /// What the variant a trace names means, where its name alone does not say
        /// (`modern+dumazet-2019`: a v6.12 allocator with the 2019 cache put back).
        pub fn about_variant(mechanism: &str, variant: &str) -> Option<String> {
            $(if mechanism == <$ty as Mechanism>::NAME {
                return <$ty as Mechanism>::about_variant(variant);
            })*
            None
        }

        impl Scenario {
            /// Reads the fields of the mechanism named `mech`, if there is one of that name.
            fn of(mech: &str, v: &Value, format: &'static str) -> Option<Result<Self, Error>> {
                $(if mech == <$ty as Mechanism>::NAME {
                    return Some(de(v, format).map(Scenario::$variant));
                })*
                None
            }

            pub fn mechanism(&self) -> &'static str {
                match self {
                    $(Scenario::$variant(_) => <$ty as Mechanism>::NAME,)*
                }
            }

            /// The variants this scenario's mechanism offers; the first is its default.
            pub fn variants(&self) -> &'static [&'static str] {
                match self {
                    $(Scenario::$variant(_) => <$ty as Mechanism>::VARIANTS,)*
                }
            }

            /// The variant that stands for a kernel of today ([`Mechanism::TODAY`]).
            pub fn today(&self) -> &'static str {
                match self {
                    $(Scenario::$variant(_) => <$ty as Mechanism>::TODAY,)*
                }
            }

            /// The scenario's own `variant`, else its mechanism's default.
            pub fn variant(&self) -> &str {
                let own = match self {
                    $(Scenario::$variant(s) => s.variant(),)*
                };
                own.unwrap_or(self.variants()[0])
            }

            /// Number of operations (trace steps).
            pub fn op_count(&self) -> usize {
                match self {
                    $(Scenario::$variant(s) => s.op_count(),)*
                }
            }

            /// Runs the scenario into a trace.
            pub fn run(&self, opts: &RunOptions) -> Result<Trace, Error> {
                match self {
                    $(Scenario::$variant(s) => s.run(opts),)*
                }
            }
        }

        impl Serialize for Scenario {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let mechanism = self.mechanism();
                match self {
                    $(Scenario::$variant(fields) => Tagged { mechanism, fields }.serialize(s),)*
                }
            }
        }
    };
}

mechanisms! {
    /// tcp_sendmsg and the transmit path (seed 000).
    Sendmsg(send::SendScenario),
    /// The receive side on two CPUs (seeds 001 and 002).
    Rx(rx::RxScenario),
    /// MPTCP collapsing onto the subflow's tail skb (seed 003).
    Mptcp(mptcp::MptcpScenario),
}

/// A mechanism's name, its variants (the first its default) and the one that stands for a
/// kernel of today ([`Mechanism::TODAY`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MechanismNames {
    pub name: &'static str,
    pub variants: &'static [&'static str],
    pub today: &'static str,
}

/// A mechanism's fields behind its `mechanism` tag, as scenario text has them.
#[derive(Serialize)]
struct Tagged<'a, M> {
    mechanism: &'static str,
    #[serde(flatten)]
    fields: &'a M,
}

impl Scenario {
    /// Parses TOML or JSON (JSON when the first non-blank character is `{`).
    pub fn parse(text: &str) -> Result<Scenario, Error> {
        if text.len() > MAX_SCENARIO_TEXT {
            return Err(Error::Range {
                field: "scenario".into(),
                value: format!("{} bytes of text", text.len()),
                allowed: format!("at most {MAX_SCENARIO_TEXT} bytes"),
            });
        }
        // A byte order mark some editors write is not part of the text.
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        if text.trim_start().starts_with('{') {
            Self::from_json(text)
        } else {
            Self::from_toml(text)
        }
    }

    pub fn from_json(text: &str) -> Result<Scenario, Error> {
        let v = serde_json::from_str(text).map_err(|e| Error::Parse {
            format: "JSON",
            field: format!("line {} column {}", e.line(), e.column()),
            message: e.to_string(),
        })?;
        Self::from_value(v, "JSON")
    }

    pub fn from_toml(text: &str) -> Result<Scenario, Error> {
        Self::from_value(crate::toml_value::parse(text)?, "TOML")
    }

    /// Builds the mechanism's scenario from a parsed value, naming the path of any bad field.
    /// Its text reaches a terminal and a page (the playground titles a run by its `title`):
    /// a control or format character in a string is refused, naming the field.
    pub fn from_value(mut v: serde_json::Value, format: &'static str) -> Result<Scenario, Error> {
        crate::limits::plain_values(&v)?;
        let unknown = |name: String| Error::Unknown {
            what: "mechanism",
            name,
            expected: MECHANISMS.join(", "),
        };
        let mech = match v.as_object_mut().map(|o| o.remove("mechanism")) {
            Some(Some(serde_json::Value::String(m))) => m,
            Some(Some(other)) => return Err(unknown(other.to_string())),
            Some(None) => {
                return Err(Error::Parse {
                    format,
                    field: "mechanism".into(),
                    message: format!("missing field: one of {}", MECHANISMS.join(", ")),
                })
            }
            None => {
                return Err(Error::Parse {
                    format,
                    field: "scenario".into(),
                    message: "expected a table of fields".into(),
                })
            }
        };
        Self::of(&mech, &v, format).unwrap_or_else(|| Err(unknown(mech)))
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("scenarios always serialize")
    }

    /// Checks every field and cap without running.
    pub fn validate(&self) -> Result<(), Error> {
        self.run(&RunOptions::counters(None)).map(|_| ())
    }
}

impl<'de> Deserialize<'de> for Scenario {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = serde_json::Value::deserialize(d)?;
        Scenario::from_value(v, "TOML").map_err(serde::de::Error::custom)
    }
}

fn de<T: serde::de::DeserializeOwned>(v: &Value, format: &'static str) -> Result<T, Error> {
    let t = field_path::from_value(v).map_err(|e| {
        let message = e.error.to_string();
        let mut field = Path(&e.path).to_string();
        if field.is_empty() {
            // A missing top-level field: the error is about the scenario's own table.
            field = "scenario".into();
        }
        if let Some(key) = op_field::<T>(v, &e.path, &message) {
            field = format!("{field}.{key}");
        }
        Error::Parse {
            format,
            field,
            message,
        }
    })?;
    no_fields_on_bare_ops::<T>(v, format)?;
    Ok(t)
}

/// serde lets an op without fields (`transmit`, `close`, `lock`, ...) carry any key
/// unchecked, which would drop what the user wrote without a word: a key on such an op is an
/// error. An op takes no fields when a made-up key does not upset it.
fn no_fields_on_bare_ops<T: serde::de::DeserializeOwned>(
    v: &Value,
    format: &'static str,
) -> Result<(), Error> {
    let Some(ops) = v.get("ops").and_then(Value::as_array) else {
        return Ok(());
    };
    // (tag, takes no fields) per op kind seen: a handful, so a list.
    let mut bare: Vec<(&str, bool)> = Vec::new();
    for (i, op) in ops.iter().enumerate() {
        let Some((tag, key)) = op.as_object().and_then(|o| {
            let key = o.keys().find(|k| *k != "op")?;
            Some((o.get("op")?.as_str()?, key))
        }) else {
            continue;
        };
        let takes_none = match bare.iter().find(|(t, _)| *t == tag) {
            Some(&(_, none)) => none,
            None => {
                let none = try_op::<T>("ops", serde_json::json!({ "op": tag, "a made-up key": 0 }))
                    .is_ok();
                bare.push((tag, none));
                none
            }
        };
        if takes_none {
            return Err(Error::Parse {
                format,
                field: format!("ops[{i}].{key}"),
                message: format!("unknown field `{key}`: `{tag}` takes no fields"),
            });
        }
    }
    Ok(())
}

/// Which field of `ops[i]` an error at `ops[i]` is about. An op is read whole before its
/// fields (its `op` tag picks the variant), so the path stops at the op. Each field is tried
/// alone with the tag: a bad field fails with the same message as the whole op (a field's
/// error comes as it is read, before any missing-field error), where the tag alone does not.
fn op_field<T: serde::de::DeserializeOwned>(
    v: &Value,
    path: &[Segment],
    message: &str,
) -> Option<String> {
    let [Segment::Key(key), Segment::Index(index)] = path else {
        return None;
    };
    let op = v.get(key)?.get(index)?.as_object()?;
    let tag = op.get("op")?;
    let fails_alike = |op: Value| try_op::<T>(key, op).is_err_and(|e| e == message);
    if fails_alike(serde_json::json!({ "op": tag })) {
        return None; // the tag, or a missing field
    }
    op.iter()
        .filter(|(k, _)| *k != "op")
        .find(|(k, field)| fails_alike(serde_json::json!({ "op": tag, *k: field })))
        .map(|(k, _)| k.clone())
}

/// Reads a scenario whose only field is `key = [op]`; the error message if that fails.
fn try_op<T: serde::de::DeserializeOwned>(key: &str, op: Value) -> Result<(), String> {
    // Through the same deserializer as `de`, so no second copy of the Deserialize code.
    field_path::from_value::<T>(&serde_json::json!({ key: [op] }))
        .map(drop)
        .map_err(|e| e.error.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::consts::Era;

    #[test]
    fn about_variant_asks_the_trace_s_mechanism() {
        let about = about_variant("rx", "modern+dumazet-2019").expect("an rx pairing");
        assert!(
            about.starts_with("v6.12's page_frag_cache, with Dumazet's"),
            "{about}"
        );
        // Send and MPTCP variants are one patch each: their names say it all.
        assert_eq!(about_variant("sendmsg", "kumar-2010"), None);
        assert_eq!(about_variant("rx", "nope"), None);
        assert_eq!(about_variant("nope", "modern"), None);
    }

    /// Each mechanism's today runs under the newest kernel any of its variants reaches, and
    /// the trace names it as the constant does.
    #[test]
    fn today_is_a_variant_of_the_newest_era() {
        let era_index = |e| Era::ALL.iter().position(|&x| x == e).unwrap();
        for text in [
            "mechanism = \"sendmsg\"\nops = [{ op = \"sendmsg\", bytes = 1000 }]",
            "mechanism = \"rx\"\nops = [{ op = \"arrive\", frames = 1 }]",
            "mechanism = \"mptcp\"\nops = [{ op = \"sendmsg\", bytes = 1000 }]",
        ] {
            let sc = Scenario::parse(text).unwrap();
            let run = |v: &str| sc.run(&RunOptions::traced(Some(v))).unwrap();
            let today = run(sc.today());
            assert_eq!(today.variant, sc.today());
            let newest = sc.variants().iter().map(|v| era_index(run(v).era)).max();
            assert_eq!(Some(era_index(today.era)), newest, "{}", sc.mechanism());
        }
    }
}

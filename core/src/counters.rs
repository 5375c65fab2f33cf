//! Counters: the named, ordered numbers a trace carries, and [`counters!`], which declares a
//! mechanism's counters once, as a struct of `u64`s in trace order.

use serde::{Deserialize, Serialize};

/// Named counters in the mechanism's chosen order; serialized as a JSON/TOML map.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Counters(pub Vec<(String, u64)>);

impl Counters {
    pub fn with(mut self, name: &str, value: u64) -> Self {
        self.0.push((name.to_string(), value));
        self
    }

    pub fn get(&self, name: &str) -> Option<u64> {
        self.0.iter().find(|(n, _)| n == name).map(|(_, v)| *v)
    }

    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.0.iter().map(|(n, _)| n.as_str())
    }
}

impl Serialize for Counters {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.0.iter().map(|(k, v)| (k, v)))
    }
}

impl<'de> Deserialize<'de> for Counters {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Counters;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a map of counter names to numbers")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut m: A,
            ) -> Result<Counters, A::Error> {
                let mut c = Counters::default();
                while let Some((k, v)) = m.next_entry::<String, u64>()? {
                    c.0.push((k, v));
                }
                Ok(c)
            }
        }
        d.deserialize_map(V)
    }
}

/// Declares a mechanism's counters: a struct of `u64` fields, one per counter, in trace order,
/// with `NAMES`, `to_counters` (the trace's form) and `add` (sums; `max_*` fields keep the
/// larger). The list is the only place a counter is named.
macro_rules! counters {
    ($(#[$meta:meta])* pub struct $ty:ident { $($(#[$doc:meta])* $name:ident),* $(,)? }) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
        pub struct $ty {
            $($(#[$doc])* pub $name: u64,)*
        }

        impl $ty {
            /// Counter names in trace order (stable: hosts and snapshots rely on them).
            pub const NAMES: &'static [&'static str] = &[$(stringify!($name)),*];

            /// The named, ordered form the trace carries.
            pub fn to_counters(&self) -> $crate::counters::Counters {
                $crate::counters::Counters(vec![$((stringify!($name).to_string(), self.$name)),*])
            }

            /// Adds `o` to `self` (maxima stay maxima).
            pub fn add(&mut self, o: &$ty) {
                $(self.$name = if stringify!($name).starts_with("max_") {
                    self.$name.max(o.$name)
                } else {
                    self.$name + o.$name
                };)*
            }
        }
    };
}
pub(crate) use counters;

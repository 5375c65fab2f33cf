//! Reading the quiz's tables (questions, their choices, challenges) by hand from a
//! `serde_json::Value`: each field taken by name, an unknown one refused, and every error
//! named by its field's path (`choices[1].label`) with serde's own message, as
//! [`field_path::from_value`](crate::field_path::from_value) does for the derived types.
//!
//! Derived `Deserialize` code is compiled per type, with its visitors and the deserializer's
//! methods for each: for these three types, 16 KB of the playground's code, where these
//! readers, shared by all, take 7 KB.

use crate::field_path::{unexpected, Located, Segment};
use serde::de::Error as _;
use serde_json::{Error, Map, Value};
use std::fmt::Display;
use std::str::FromStr;

/// A part of a file read, or the path to what failed in it.
pub(crate) type Read<T> = Result<T, Located>;

/// An object's fields, every one of them among the names the table may have.
pub(crate) struct Table<'a>(&'a Map<String, Value>);

impl<'a> Table<'a> {
    /// `v` as a table whose fields are among `known`; another field is an error at its key.
    pub fn new(v: &'a Value, known: &'static [&'static str]) -> Read<Table<'a>> {
        let fields = v.as_object().ok_or_else(|| wrong(v, "a table"))?;
        match fields.keys().find(|k| !known.contains(&k.as_str())) {
            Some(k) => Err(under(
                Segment::Key(k.clone()),
                here(Error::unknown_field(k, known)),
            )),
            None => Ok(Table(fields)),
        }
    }

    /// Field `name` read by `read`, if it is given.
    pub fn opt<T>(&self, name: &str, read: impl FnOnce(&'a Value) -> Read<T>) -> Read<Option<T>> {
        let Some(v) = self.0.get(name) else {
            return Ok(None);
        };
        read(v).map(Some).map_err(|e| under_key(name, e))
    }

    /// Field `name` read by `read`; leaving it out is an error naming the table.
    pub fn req<T>(&self, name: &'static str, read: impl FnOnce(&'a Value) -> Read<T>) -> Read<T> {
        self.opt(name, read)?
            .ok_or_else(|| here(Error::missing_field(name)))
    }
}

pub(crate) fn string(v: &Value) -> Read<String> {
    v.as_str()
        .map(String::from)
        .ok_or_else(|| wrong(v, "a string"))
}

pub(crate) fn boolean(v: &Value) -> Read<bool> {
    v.as_bool().ok_or_else(|| wrong(v, "a boolean"))
}

/// A whole number that fits `T` (`u64`, `usize`); the message names the type as serde does.
pub(crate) fn whole<T: TryFrom<u64>>(v: &Value) -> Read<T> {
    let fits = v.as_u64().and_then(|n| T::try_from(n).ok());
    fits.ok_or_else(|| match v.is_i64() || v.is_u64() {
        // The right type, out of range (`-1`).
        true => here(Error::invalid_value(
            unexpected(v),
            &std::any::type_name::<T>(),
        )),
        false => wrong(v, std::any::type_name::<T>()),
    })
}

/// A text read through its `FromStr` (a query, a condition).
pub(crate) fn parsed<T: FromStr<Err = String>>(v: &Value) -> Read<T> {
    string(v)?.parse().map_err(custom)
}

/// A list, each item read by `item`; an item's error is at its index.
pub(crate) fn list<'a, T>(v: &'a Value, item: impl Fn(&'a Value) -> Read<T>) -> Read<Vec<T>> {
    let items = v.as_array().ok_or_else(|| wrong(v, "a list"))?;
    let mut out = Vec::with_capacity(items.len());
    for (i, v) in items.iter().enumerate() {
        out.push(item(v).map_err(|e| under(Segment::Index(i), e))?);
    }
    Ok(out)
}

/// An error with `message`, at the value being read.
pub(crate) fn custom(message: impl Display) -> Located {
    here(Error::custom(message))
}

/// `error` at the value being read (a caller puts its own path in front).
fn here(error: Error) -> Located {
    Located {
        path: Vec::new(),
        error,
    }
}

/// `e`, one level down at field `name`.
fn under_key(name: &str, e: Located) -> Located {
    under(Segment::Key(name.into()), e)
}

/// `e`, one level down at `seg`.
#[inline(never)]
fn under(seg: Segment, mut e: Located) -> Located {
    e.path.insert(0, seg);
    e
}

/// serde's message for `v` where `expected` should be: `invalid type: string "x", expected
/// a boolean`.
fn wrong(v: &Value, expected: &str) -> Located {
    here(Error::invalid_type(unexpected(v), &expected))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::field_path::Path;
    use serde_json::json;

    /// A pair of a number and a list of labelled numbers, as a question and its choices.
    fn pair(v: &Value) -> Read<(u64, Vec<(bool, String)>)> {
        let t = Table::new(v, &["n", "items"])?;
        let item = |v: &Value| {
            let t = Table::new(v, &["on", "label"])?;
            Ok((
                t.opt("on", boolean)?.unwrap_or_default(),
                t.req("label", string)?,
            ))
        };
        Ok((
            t.req("n", whole)?,
            t.opt("items", |v| list(v, item))?.unwrap_or_default(),
        ))
    }

    fn error(v: Value) -> (String, String) {
        let e = pair(&v).expect_err("a bad table");
        (Path(&e.path).to_string(), e.error.to_string())
    }

    #[test]
    fn a_good_table_reads_whole() {
        let v = json!({"n": 3, "items": [{"label": "a"}, {"on": true, "label": "b"}]});
        let (n, items) = pair(&v).expect("a good table");
        assert_eq!((n, items[0].0, items[1].1.as_str()), (3, false, "b"));
    }

    #[test]
    fn errors_name_their_field_with_serdes_messages() {
        let cases = [
            (
                json!({"n": -1}),
                "n",
                "invalid value: integer `-1`, expected u64",
            ),
            (
                json!({"n": "3"}),
                "n",
                "invalid type: string \"3\", expected u64",
            ),
            (json!({"items": []}), "", "missing field `n`"),
            (
                json!({"n": 1, "m": 2}),
                "m",
                "unknown field `m`, expected `n` or `items`",
            ),
            (
                json!({"n": 1, "items": {}}),
                "items",
                "invalid type: map, expected a list",
            ),
            (
                json!({"n": 1, "items": [{"label": "a"}, {"label": 2}]}),
                "items[1].label",
                "invalid type: integer `2`, expected a string",
            ),
            (
                json!({"n": 1, "items": [{"label": "a", "on": 1.5}]}),
                "items[0].on",
                "invalid type: floating point `1.5`, expected a boolean",
            ),
            (
                json!({"n": 1, "items": [3]}),
                "items[0]",
                "invalid type: integer `3`, expected a table",
            ),
        ];
        for (v, path, message) in cases {
            assert_eq!(error(v), (path.to_string(), message.to_string()));
        }
    }
}

//! Reading a `serde_json::Value` into a type while keeping the path to the field that failed
//! (`ops[2].bytes`), so every parse error names its field.
//!
//! It wraps only the deserializer and its map and sequence access, never the visitors, so the
//! derived `Deserialize` code is compiled once. (A general path-tracking wrapper that also
//! wraps each visitor cost the playground's bundle about 110 KB before compression.)
//! Internally tagged enums (the ops) are read whole before their fields, so a path stops at
//! the op; `scenario::op_field` finds the field inside it.
//!
//! A large file is read by [`from_str`] instead: serde_json's own reader straight off the text,
//! with no value built, and on an error the path found again in the text at the error's
//! position ([`at_offset`]).

use serde::de::value::BorrowedStrDeserializer;
use serde::de::{self, DeserializeOwned, DeserializeSeed, Deserializer, MapAccess, SeqAccess};
use serde::de::{IntoDeserializer, Unexpected, Visitor};
use serde_json::Value;
use std::cell::RefCell;
use std::fmt;

/// One step of a path: a table key or an array index.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Segment {
    Key(String),
    Index(usize),
}

/// A parse error and where it happened.
#[derive(Debug)]
pub struct Located {
    pub path: Vec<Segment>,
    pub error: serde_json::Error,
}

/// Prints `ops[2].bytes`; the top level prints as an empty string.
pub struct Path<'a>(pub &'a [Segment]);

impl fmt::Display for Path<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, s) in self.0.iter().enumerate() {
            match s {
                Segment::Key(k) if i == 0 => f.write_str(k)?,
                Segment::Key(k) => write!(f, ".{k}")?,
                Segment::Index(n) => write!(f, "[{n}]")?,
            }
        }
        Ok(())
    }
}

/// Reads `T` from `v`; on error, the path to the innermost field that failed.
pub fn from_value<T: DeserializeOwned>(v: &Value) -> Result<T, Located> {
    let track = Track::default();
    T::deserialize(De { v, track: &track }).map_err(|error| Located {
        path: track.failed.into_inner().unwrap_or_default(),
        error,
    })
}

/// Reads `T` from JSON `text` with serde_json's own reader (several times quicker than building
/// a [`Value`] first: no map or string of the text is kept but `T`'s); on an error in the
/// data, the path to the field at the error's position, and the error without its position.
/// Text that is no JSON gives serde_json's error, at its line and column, and no path. Unlike
/// [`from_value`] it refuses a key given twice, and fills a struct from a list of its fields
/// in order as serde_json does.
pub fn from_str<T: DeserializeOwned>(text: &str) -> Result<T, Located> {
    serde_json::from_str(text).map_err(|error| match error.classify() {
        serde_json::error::Category::Data => {
            let offset = offset_of(text, error.line(), error.column());
            let line = format!(" at line {} column {}", error.line(), error.column());
            let message = error.to_string();
            let message = message.strip_suffix(&line).unwrap_or(&message);
            Located {
                path: at_offset(text, offset),
                error: de::Error::custom(message),
            }
        }
        _ => Located {
            path: Vec::new(),
            error,
        },
    })
}

/// The byte offset of serde_json's `line` (from 1) and `column` (bytes into the line).
fn offset_of(text: &str, line: usize, column: usize) -> usize {
    let start = match line {
        0 | 1 => 0,
        n => (text.match_indices('\n').nth(n - 2)).map_or(text.len(), |(i, _)| i + 1),
    };
    (start + column).min(text.len())
}

/// The path of the value JSON `text` is in at byte `offset`: each object's last key read
/// and each array's element index, read off the text before it. Just past a value's end (where
/// serde_json puts an error found once a table is read whole, such as a missing field), the
/// path is the value's own.
pub fn at_offset(text: &str, offset: usize) -> Vec<Segment> {
    /// An object (its last key, and whether a key comes next) or an array (its element).
    enum Level {
        Object(Option<String>, bool),
        Array(usize),
    }
    let mut levels: Vec<Level> = Vec::new();
    let bytes = &text.as_bytes()[..offset.min(text.len())];
    let mut i = 0;
    while i < bytes.len() {
        match (bytes[i], levels.last_mut()) {
            (b'{', _) => levels.push(Level::Object(None, true)),
            (b'[', _) => levels.push(Level::Array(0)),
            (b'}' | b']', _) => drop(levels.pop()),
            (b',', Some(Level::Array(n))) => *n += 1,
            (b',', Some(Level::Object(_, next))) => *next = true,
            (b'"', top) => {
                let start = i + 1;
                i = start;
                while i < bytes.len() && bytes[i] != b'"' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
                if let Some(Level::Object(key, next @ true)) = top {
                    let end = i.min(bytes.len());
                    *key = Some(String::from_utf8_lossy(&bytes[start..end]).into_owned());
                    *next = false;
                }
            }
            _ => {}
        }
        i += 1;
    }
    (levels.into_iter())
        .filter_map(|l| match l {
            Level::Object(key, _) => key.map(Segment::Key),
            Level::Array(n) => Some(Segment::Index(n)),
        })
        .collect()
}

/// The path being read, and the first (innermost) path an error passed through.
#[derive(Default)]
struct Track {
    stack: RefCell<Vec<Segment>>,
    failed: RefCell<Option<Vec<Segment>>>,
}

impl Track {
    /// Runs `f` one level down at `seg`, keeping the path if it fails there first.
    ///
    /// Compiled for every field type read; the bookkeeping is kept out of line in
    /// [`Track::enter`] and [`Track::leave`] (inlined, it was 38 KB of the playground's
    /// bundle), and what is left is two calls, inlined into its caller (as a function of its
    /// own, each copy moved its result once more: 4 KB).
    #[inline(always)]
    fn at<R, E>(&self, seg: Segment, f: impl FnOnce() -> Result<R, E>) -> Result<R, E> {
        self.enter(seg);
        let r = f();
        self.leave(r.is_err());
        r
    }

    #[inline(never)]
    fn enter(&self, seg: Segment) {
        self.stack.borrow_mut().push(seg);
    }

    /// Leaves the level entered last, keeping its path if it `failed` there first.
    #[inline(never)]
    fn leave(&self, failed: bool) {
        if failed {
            let mut first = self.failed.borrow_mut();
            first.get_or_insert_with(|| self.stack.borrow().clone());
        }
        self.stack.borrow_mut().pop();
    }
}

/// Deserializer methods for numbers of every type, each through `deserialize_u64`: a
/// `Number` offers its visitor the u64, i64 or f64 it holds, and the visitor converts (or
/// refuses) it as it would from serde_json.
macro_rules! numbers_through_u64 {
    ($($method:ident)*) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
            self.deserialize_u64(visitor)
        }
    )*};
}

struct De<'de> {
    v: &'de Value,
    track: &'de Track,
}

impl<'de> De<'de> {
    fn map(&self, m: &'de serde_json::Map<String, Value>) -> Map<'de> {
        Map {
            iter: m.iter(),
            value: None,
            track: self.track,
        }
    }

    fn seq(&self, a: &'de [Value]) -> Seq<'de> {
        Seq {
            iter: a.iter().enumerate(),
            track: self.track,
        }
    }

    /// serde's error for this value where `visitor` wanted another type.
    fn wrong<V: Visitor<'de>>(&self, visitor: &V) -> serde_json::Error {
        de::Error::invalid_type(unexpected(self.v), visitor)
    }
}

/// The deserializer's methods each call only the visitor method for the type asked for, as
/// serde_json's own do: every `visit_*` a visitor could be offered (most of them serde's
/// default, an error) is compiled for each visitor read through `deserialize_any`.
impl<'de> Deserializer<'de> for De<'de> {
    type Error = serde_json::Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        match self.v {
            Value::Object(m) => visitor.visit_map(self.map(m)),
            Value::Array(a) => visitor.visit_seq(self.seq(a)),
            // The scalars by hand: serde_json's `deserialize_any` for a `&Value` would be
            // compiled for each visitor with its object and array arms too.
            Value::Null => visitor.visit_unit(),
            Value::Bool(b) => visitor.visit_bool(*b),
            Value::Number(n) => n.deserialize_any(visitor),
            Value::String(s) => visitor.visit_borrowed_str(s),
        }
    }

    /// A table only. serde_json would also fill a struct from a list of its fields in order
    /// (`socket = [1448, 40]`): no scenario or file is written so, the editor's error and
    /// docs speak of tables, and that second reader, compiled into every struct, was 4 KiB
    /// gzip of the playground.
    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        self.deserialize_map(visitor)
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        match self.v {
            Value::Object(m) => visitor.visit_map(self.map(m)),
            _ => Err(self.wrong(&visitor)),
        }
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        match self.v {
            Value::Array(a) => visitor.visit_seq(self.seq(a)),
            _ => Err(self.wrong(&visitor)),
        }
    }

    fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        match self.v {
            Value::Bool(b) => visitor.visit_bool(*b),
            _ => Err(self.wrong(&visitor)),
        }
    }

    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        match self.v {
            Value::String(s) => visitor.visit_borrowed_str(s),
            _ => Err(self.wrong(&visitor)),
        }
    }

    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        self.deserialize_str(visitor)
    }

    fn deserialize_identifier<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        self.deserialize_str(visitor)
    }

    fn deserialize_u64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        match self.v {
            Value::Number(n) => n.deserialize_any(visitor),
            _ => Err(self.wrong(&visitor)),
        }
    }

    fn deserialize_unit<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        match self.v {
            Value::Null => visitor.visit_unit(),
            _ => Err(self.wrong(&visitor)),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        match self.v {
            Value::Null => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        match self.v {
            Value::String(s) => visitor.visit_enum(s.as_str().into_deserializer()),
            // A variant with data (`{ name = ... }`): read as serde_json does, path ends here.
            other => other.deserialize_enum(name, variants, visitor),
        }
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        visitor.visit_unit()
    }

    serde::forward_to_deserialize_any! {
        char bytes byte_buf unit_struct tuple tuple_struct
    }

    numbers_through_u64! {
        deserialize_u8 deserialize_u16 deserialize_u32 deserialize_u128 deserialize_i8
        deserialize_i16 deserialize_i32 deserialize_i64 deserialize_i128 deserialize_f32
        deserialize_f64
    }
}

struct Map<'de> {
    iter: serde_json::map::Iter<'de>,
    value: Option<(&'de str, &'de Value)>,
    track: &'de Track,
}

impl<'de> MapAccess<'de> for Map<'de> {
    type Error = serde_json::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Self::Error> {
        let Some((k, v)) = self.iter.next() else {
            return Ok(None);
        };
        self.value = Some((k, v));
        // An unknown key fails here: the path names it.
        self.track.at(Segment::Key(k.clone()), || {
            seed.deserialize(BorrowedStrDeserializer::new(k)).map(Some)
        })
    }

    fn next_value_seed<S: DeserializeSeed<'de>>(
        &mut self,
        seed: S,
    ) -> Result<S::Value, Self::Error> {
        let (k, v) = self
            .value
            .take()
            .ok_or_else(|| de::Error::custom("a value asked for before its key"))?;
        let track = self.track;
        track.at(Segment::Key(k.to_string()), || {
            seed.deserialize(De { v, track })
        })
    }
}

struct Seq<'de> {
    iter: std::iter::Enumerate<std::slice::Iter<'de, Value>>,
    track: &'de Track,
}

impl<'de> SeqAccess<'de> for Seq<'de> {
    type Error = serde_json::Error;

    fn next_element_seed<S: DeserializeSeed<'de>>(
        &mut self,
        seed: S,
    ) -> Result<Option<S::Value>, Self::Error> {
        let Some((i, v)) = self.iter.next() else {
            return Ok(None);
        };
        let track = self.track;
        track.at(Segment::Index(i), || {
            seed.deserialize(De { v, track }).map(Some)
        })
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.iter.len())
    }
}

/// What `v` is, in serde's words for an error (`integer `-1``, `string "x"`, `map`).
fn unexpected(v: &Value) -> Unexpected<'_> {
    match v {
        Value::Null => Unexpected::Unit,
        Value::Bool(b) => Unexpected::Bool(*b),
        Value::Number(n) => match (n.as_u64(), n.as_i64()) {
            (Some(u), _) => Unexpected::Unsigned(u),
            (_, Some(i)) => Unexpected::Signed(i),
            _ => Unexpected::Float(n.as_f64().unwrap_or_default()),
        },
        Value::String(s) => Unexpected::Str(s),
        Value::Array(_) => Unexpected::Seq,
        Value::Object(_) => Unexpected::Map,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Deserialize, Debug)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Op {
        bytes: u32,
        eor: Option<bool>,
    }

    #[derive(Deserialize, Debug)]
    #[allow(dead_code)]
    struct Doc {
        name: String,
        ops: Vec<Op>,
    }

    fn path_of(v: Value) -> (String, String) {
        let e = from_value::<Doc>(&v).expect_err("a bad document");
        (Path(&e.path).to_string(), e.error.to_string())
    }

    #[test]
    fn the_path_names_the_innermost_field_that_failed() {
        let (p, m) =
            path_of(serde_json::json!({"name": "a", "ops": [{"bytes": 1}, {"bytes": -1}]}));
        assert_eq!(p, "ops[1].bytes");
        assert!(m.contains("invalid value: integer `-1`"), "{m}");
        let (p, m) = path_of(serde_json::json!({"name": "a", "ops": [{"bytes": 1, "eor": 3}]}));
        assert_eq!(
            (p.as_str(), m.contains("expected a boolean")),
            ("ops[0].eor", true)
        );
    }

    #[test]
    fn unknown_and_missing_fields_name_the_key_and_the_table() {
        let (p, m) = path_of(serde_json::json!({"name": "a", "ops": [{"bytes": 1, "byts": 2}]}));
        assert_eq!(p, "ops[0].byts");
        assert!(m.starts_with("unknown field `byts`"), "{m}");
        let (p, m) = path_of(serde_json::json!({"name": "a", "ops": [{}]}));
        assert_eq!(
            (p.as_str(), m.as_str()),
            ("ops[0]", "missing field `bytes`")
        );
        let (p, m) = path_of(serde_json::json!({"ops": []}));
        assert_eq!((p.as_str(), m.as_str()), ("", "missing field `name`"));
    }

    #[test]
    fn a_struct_is_a_table_not_a_list_of_its_fields() {
        let (p, m) = path_of(serde_json::json!({"name": "a", "ops": [[1, true]]}));
        assert_eq!(
            (p.as_str(), m.as_str()),
            ("ops[0]", "invalid type: sequence, expected struct Op")
        );
    }

    /// Read off the text, each kind of error names the field [`from_value`] names; the
    /// message has no position, and text that is no JSON has no path.
    #[test]
    fn read_off_the_text_the_path_is_the_same() {
        let docs = [
            r#"{"name": "a", "ops": [{"bytes": 1}, {"bytes": -1}]}"#,
            r#"{"name": "a",
                "ops": [{"bytes": 1, "eor": 3}]}"#,
            r#"{"name": "a", "ops": [{"bytes": 1, "byts": 2}]}"#,
            r#"{"name": "a", "ops": [{"bytes": 1}, {}]}"#,
            r#"{"ops": [], "other": {"x": "}]"}}"#,
            r#"{"name": "a\"b", "ops": [{"eor": true, "bytes": "7"}]}"#,
        ];
        for text in docs {
            let v: Value = serde_json::from_str(text).unwrap();
            let want = path_of(v);
            let e = from_str::<Doc>(text).expect_err(text);
            assert_eq!(
                (Path(&e.path).to_string(), e.error.to_string()),
                want,
                "{text}"
            );
        }
        let e = from_str::<Doc>("{\"name\": ").unwrap_err();
        assert!(
            e.path.is_empty() && e.error.to_string().contains("line 1"),
            "{}",
            e.error
        );
        let d: Doc = from_str(r#"{"name": "a", "ops": [{"bytes": 7}]}"#).unwrap();
        assert_eq!((d.name.as_str(), d.ops[0].bytes), ("a", 7));
    }

    #[test]
    fn a_good_document_reads_whole() {
        let v = serde_json::json!({"name": "a", "ops": [{"bytes": 7, "eor": true}, {"bytes": 0}]});
        let d: Doc = from_value(&v).expect("a good document");
        assert_eq!(
            (d.ops[0].bytes, d.ops[0].eor, d.ops[1].eor),
            (7, Some(true), None)
        );
    }
}

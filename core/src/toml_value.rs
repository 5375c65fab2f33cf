//! TOML text read into a `serde_json::Value`, as `toml::from_str::<Value>` reads it (same
//! values, same errors, keys in the same order), but without toml's serde layer, whose float
//! arm calls `str::parse::<f64>` and so brings std's float parser into the playground
//! (`decimal` says what that cost). toml parses the text into its document tree; [`value`]
//! turns the tree into a `Value`, each float through [`nearest_f64`].

use crate::decimal::nearest_f64;
use serde_json::{Map, Number, Value};
use std::fmt;
use std::ops::Range;
use toml::de::{DeTable, DeValue};
use toml::Spanned;

/// Why a text was not read: toml's parse error, or a number no JSON value can hold (at the
/// number's place, shown as toml shows its errors).
#[derive(Debug)]
pub struct Error {
    message: String,
    span: Option<Range<usize>>,
    shown: String,
}

impl Error {
    /// What went wrong, without the place.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// Where in the text (bytes).
    pub fn span(&self) -> Option<Range<usize>> {
        self.span.clone()
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.shown)
    }
}

/// Reads `text` as `toml::from_str::<Value>` does, with the same errors.
pub fn from_str(text: &str) -> Result<Value, Error> {
    let root = DeTable::parse(text).map_err(|e| Error {
        message: e.message().to_owned(),
        span: e.span(),
        shown: e.to_string(),
    })?;
    let span = root.span();
    value(Spanned::new(span, DeValue::Table(root.into_inner()))).map_err(|(message, span)| Error {
        shown: shown(text, &span, message),
        message: message.to_owned(),
        span: Some(span),
    })
}

/// A value of the tree as toml's deserializer hands it to serde_json's `Value` reader; a
/// number that reader refuses is an error at its place.
fn value(v: Spanned<DeValue<'_>>) -> Result<Value, (&'static str, Range<usize>)> {
    let span = v.span();
    Ok(match v.into_inner() {
        DeValue::String(s) => Value::String(s.into_owned()),
        DeValue::Integer(i) => {
            let (s, radix) = (i.as_str(), i.radix());
            if let Ok(i) = i64::from_str_radix(s, radix) {
                Value::from(i)
            } else if let Ok(u) = u64::from_str_radix(s, radix) {
                Value::from(u)
            } else if i128::from_str_radix(s, radix).is_ok()
                || u128::from_str_radix(s, radix).is_ok()
            {
                return Err(("JSON number out of range", span));
            } else {
                return Err(("integer number overflowed", span));
            }
        }
        // nan and inf, which a JSON number cannot hold, are null.
        DeValue::Float(f) if f.as_str().contains("nan") || f.as_str().contains("inf") => {
            Value::Null
        }
        DeValue::Float(f) => match Number::from_f64(nearest_f64(f.as_str())) {
            Some(n) => Value::Number(n),
            None => return Err(("floating-point number overflowed", span)),
        },
        DeValue::Boolean(b) => Value::Bool(b),
        // As toml's datetime deserializer hands a datetime over.
        DeValue::Datetime(d) => {
            let mut m = Map::new();
            m.insert(
                "$__toml_private_datetime".into(),
                Value::String(d.to_string()),
            );
            Value::Object(m)
        }
        DeValue::Array(a) => Value::Array(a.into_iter().map(value).collect::<Result<_, _>>()?),
        DeValue::Table(t) => {
            let mut m = Map::new();
            for (k, v) in t {
                m.insert(k.into_inner().into_owned(), value(v)?);
            }
            Value::Object(m)
        }
    })
}

/// `message` at `span` of `text`, laid out as toml lays out its errors (line, the line
/// itself, a caret under the place).
fn shown(text: &str, span: &Range<usize>, message: &str) -> String {
    let before = &text[..span.start];
    let line = before.matches('\n').count();
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = text[line_start..span.start].chars().count();
    let content = text.split('\n').nth(line).unwrap_or("");
    let carets = (span.end - span.start)
        .min(content.len().saturating_sub(column))
        .max(1);
    let n = (line + 1).to_string();
    let gutter = " ".repeat(n.len() + 1);
    format!(
        "TOML parse error at line {n}, column {}\n{gutter}|\n{n} | {content}\n{gutter}|{} {}\n{message}\n",
        column + 1,
        " ".repeat(column),
        "^".repeat(carets),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Ours against `toml::from_str::<Value>`: the same value (keys in the same order), or
    /// the same error, placed and shown the same.
    fn as_toml(text: &str) {
        match (from_str(text), toml::from_str::<Value>(text)) {
            (Ok(ours), Ok(toml)) => assert_eq!(ours.to_string(), toml.to_string(), "{text}"),
            (Err(ours), Err(toml)) => assert_eq!(
                (ours.message(), ours.span(), ours.to_string()),
                (toml.message(), toml.span(), toml.to_string()),
                "{text}"
            ),
            (ours, toml) => panic!("{text}: ours {ours:?}, toml's {toml:?}"),
        }
    }

    #[test]
    fn documents_read_as_toml_reads_them() {
        for text in [
            "",
            "z = 1\na = 2\n[t]\ny = \"s\\u00e9\"\nb.c = [1, [2, 3], {d = true}]\n[[ops]]\nop = 'x'\n[[ops]]\n",
            "i = [0x7f, 0o17, 0b101, -9223372036854775808, 18446744073709551615, 1_000]",
            "f = [1.5, -0.0, 1e3, 1_000.5e-3, 3.0e+2, 12345678901234567890.5]",
            "f = [nan, +nan, -nan, inf, +inf, -inf]",
            "d = [1979-05-27T07:32:00Z, 1979-05-27T00:32:00.999999-07:00, 1979-05-27, 07:32:00]",
            "a = 18446744073709551616",
            "a = -9223372036854775809",
            "a = 0xffffffffffffffffffffffffffffffff",
            "a = 340282366920938463463374607431768211456",
            "a = 1e400",
            "[b]\nc = [\"\u{e9}\u{e9}\", {d = -2e400}]\n",
            "[b]\n\n\n\n\n\n\n\n\n\n\nc = 1e999\n",
            "a = ",
            "a = [1,\n",
            "a = 1\na = 2\n",
            "a = 1\n\u{7}",
        ] {
            as_toml(text);
        }
    }

    #[test]
    fn the_project_files_read_as_toml_reads_them() {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
        let mut n = 0;
        for dir in ["core/walkthroughs", "core/challenges", "scenarios"] {
            for entry in std::fs::read_dir(format!("{root}/{dir}")).unwrap() {
                let path = entry.unwrap().path();
                if path.extension().is_some_and(|x| x == "toml") {
                    as_toml(&std::fs::read_to_string(&path).unwrap());
                    n += 1;
                }
            }
        }
        assert!(n > 30, "only {n} files");
    }
}

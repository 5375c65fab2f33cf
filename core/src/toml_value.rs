//! TOML text read into a `serde_json::Value`, as `toml::from_str::<Value>` reads it (same
//! values, keys in the same order), but for floats, and without toml's serde layer: its
//! float arm calls `str::parse::<f64>`, whose table of powers of five and code cost the
//! playground 14.8 KB gzip. No field of a scenario, lesson or challenge takes a float, so a
//! float is refused here, naming its field. toml parses the text into its document tree;
//! [`value`] turns the tree into a `Value`.

use crate::error::Error;
use serde_json::{Map, Value};
use std::ops::Range;
use toml::de::{DeTable, DeValue};
use toml::Spanned;

/// Reads TOML `text`; an error names the field (or the line and column) and what is wrong.
pub fn parse(text: &str) -> Result<Value, Error> {
    read(text).map_err(|r| Error::Parse {
        format: "TOML",
        message: message(text, &r),
        field: match r.field {
            Some(field) => field,
            None => location(text, r.span),
        },
    })
}

/// Why a text was not read: toml's message or ours, where, and the field if it is known.
#[derive(Debug)]
struct Refused {
    message: String,
    span: Option<Range<usize>>,
    field: Option<String>,
}

fn read(text: &str) -> Result<Value, Refused> {
    let root = DeTable::parse(text).map_err(|e| Refused {
        message: e.message().to_owned(),
        span: e.span(),
        field: None,
    })?;
    let span = root.span();
    value(
        Spanned::new(span, DeValue::Table(root.into_inner())),
        String::new(),
    )
}

/// The value at `field` of the tree, as toml's deserializer hands it to serde_json's `Value`
/// reader; a number that reader refuses, or a float, is refused at its place.
fn value(v: Spanned<DeValue<'_>>, field: String) -> Result<Value, Refused> {
    let span = v.span();
    let refuse = |message: String| Refused {
        message,
        span: Some(span.clone()),
        field: Some(field.clone()),
    };
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
                return Err(refuse("JSON number out of range".into()));
            } else {
                return Err(refuse("integer number overflowed".into()));
            }
        }
        // A JSON number cannot hold them, and as null an optional field took them as absent.
        DeValue::Float(f) if f.as_str().contains("nan") || f.as_str().contains("inf") => {
            return Err(refuse(
                "nan and inf are not allowed: give a number in range".into(),
            ));
        }
        DeValue::Float(f) => {
            return Err(refuse(format!(
                "{} is a float: every number here is an integer (no fraction, no exponent)",
                f.as_str()
            )));
        }
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
        DeValue::Array(a) => Value::Array(
            a.into_iter()
                .enumerate()
                .map(|(i, x)| value(x, format!("{field}[{i}]")))
                .collect::<Result<_, _>>()?,
        ),
        DeValue::Table(t) => {
            let mut m = Map::new();
            for (k, x) in t {
                let k = k.into_inner().into_owned();
                let at = if field.is_empty() {
                    k.clone()
                } else {
                    format!("{field}.{k}")
                };
                m.insert(k, value(x, at)?);
            }
            Value::Object(m)
        }
    })
}

/// toml's message, except where what stands at the error says more plainly what is wrong:
/// a control character (in a comment, say: found by fuzzing), or the end of the text where a
/// value should be (toml asks for a quoted string there).
fn message(text: &str, r: &Refused) -> String {
    let rest = r
        .span
        .as_ref()
        .and_then(|s| text.get(s.start..))
        .unwrap_or("");
    match rest.chars().next() {
        // U+ form, not `{c:?}`: char's Debug pulls Unicode tables into the web bundle.
        Some(c) if c.is_control() && !c.is_whitespace() => {
            format!("unexpected control character U+{:04X}", u32::from(c))
        }
        _ if rest.trim().is_empty() && r.span.is_some() => {
            "expected a value here (the text ends)".into()
        }
        _ => r.message.trim().to_string(),
    }
}

/// `line L column C` of a place in `text` (columns in bytes, as toml counts them).
fn location(text: &str, span: Option<Range<usize>>) -> String {
    let Some(span) = span else {
        return "the text".into();
    };
    let before = &text[..span.start.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let col = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
    format!("line {line} column {col}")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Ours against `toml::from_str::<Value>`: the same value (keys in the same order), or
    /// the same error at the same place.
    fn as_toml(text: &str) {
        match (read(text), toml::from_str::<Value>(text)) {
            (Ok(ours), Ok(toml)) => assert_eq!(ours.to_string(), toml.to_string(), "{text}"),
            (Err(ours), Err(toml)) => assert_eq!(
                (ours.message.as_str(), ours.span),
                (toml.message(), toml.span()),
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
            "d = [1979-05-27T07:32:00Z, 1979-05-27T00:32:00.999999-07:00, 1979-05-27, 07:32:00]",
            "a = 18446744073709551616",
            "a = -9223372036854775809",
            "a = 0xffffffffffffffffffffffffffffffff",
            "a = 340282366920938463463374607431768211456",
            "a = ",
            "a = [1,\n",
            "a = 1\na = 2\n",
            "a = 1\n\u{7}",
        ] {
            as_toml(text);
        }
    }

    /// Every float, in a table, an array or an inline table, is refused at its place with its
    /// field named; the message quotes it as written.
    #[test]
    fn floats_are_refused_naming_their_field() {
        for (text, field, at, words) in [
            ("a = 1.5", "a", "1.5", "1.5 is a float"),
            ("[s]\nmss = 1e3\n", "s.mss", "1e3", "1e3 is a float"),
            (
                "[[ops]]\n[[ops]]\niov = [1, 2_000.5e-3]",
                "ops[1].iov[1]",
                "2_000.5e-3",
                "float",
            ),
            (
                "[b]\nc = [\"\u{e9}\", {d = -2e400}]\n",
                "b.c[1].d",
                "-2e400",
                "float",
            ),
            ("x = [-nan]", "x[0]", "-nan", "nan and inf are not allowed"),
            ("y = +inf", "y", "+inf", "nan and inf are not allowed"),
        ] {
            let r = read(text).expect_err(text);
            assert_eq!(r.field.as_deref(), Some(field), "{text}");
            assert_eq!(r.span.map(|s| &text[s]), Some(at), "{text}");
            assert!(r.message.contains(words), "{text}: {}", r.message);
            let shown = parse(text).unwrap_err().to_string();
            assert!(
                shown.starts_with(&format!("TOML parse error at `{field}`: ")),
                "{shown}"
            );
        }
        // The integers toml accepts and JSON cannot hold stay refused as toml refuses them.
        let shown = parse("[t]\na = 18446744073709551616")
            .unwrap_err()
            .to_string();
        assert_eq!(shown, "TOML parse error at `t.a`: JSON number out of range");
    }

    /// A text that is no TOML is placed by line and column, on one line (toml's own layout,
    /// a caret under the line, came out escaped: `\u{a}`), in plain words where toml's are
    /// not.
    #[test]
    fn syntax_errors_are_placed_in_one_line() {
        for (text, shown) in [
            (
                "steps = = 1\n",
                "TOML parse error at `line 1 column 9`: extra `=`, expected nothing",
            ),
            (
                "a = 1\nb = ",
                "TOML parse error at `line 2 column 5`: expected a value here (the text ends)",
            ),
            (
                "# x \u{1}\n",
                "TOML parse error at `line 1 column 5`: unexpected control character U+0001",
            ),
        ] {
            assert_eq!(parse(text).unwrap_err().to_string(), shown, "{text:?}");
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

//! The one error type every host shows to the user.
//!
//! Messages quote what a stranger wrote (field names, values, variant names): control
//! characters in them are shown escaped (`\u{1b}`), so a message never drives the terminal.

/// Everything that can be wrong with a scenario, named by field with the allowed range.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The text is not valid TOML/JSON, or a field is unknown, missing or of the wrong type.
    #[error("{format} parse error at `{}`: {}", escape_controls(.field), escape_controls(.message))]
    Parse {
        format: &'static str,
        field: String,
        message: String,
    },
    /// A value is outside the allowed range.
    #[error("`{}` = {} is out of range: allowed {allowed}", escape_controls(.field), escape_controls(.value))]
    Range {
        field: String,
        value: String,
        allowed: String,
    },
    /// A name (variant, walkthrough, operation) that does not exist.
    #[error("unknown {what} `{}`: expected one of {expected}", escape_controls(.name))]
    Unknown {
        what: &'static str,
        name: String,
        expected: String,
    },
    /// A well-formed scenario the mechanism cannot run (an op another mechanism owns, ...).
    #[error("`{}`: {}", escape_controls(.field), escape_controls(.message))]
    Invalid { field: String, message: String },
}

impl Error {
    pub fn invalid(field: impl Into<String>, message: impl Into<String>) -> Self {
        Error::Invalid {
            field: field.into(),
            message: message.into(),
        }
    }
}

/// Unicode's format characters (general category Cf: bidi overrides and isolates, zero-width
/// spaces and joiners, tags, the byte order mark) and its line and paragraph separators (Zl,
/// Zp; Unicode 15.0). A terminal or a page acts on them unseen: `U+202E` shows "RTL" as
/// "LTR". Written out, as `escape_debug`'s tables cost the web bundle 3 KiB.
const FORMAT_CHARS: [(char, char); 21] = [
    ('\u{ad}', '\u{ad}'),
    ('\u{600}', '\u{605}'),
    ('\u{61c}', '\u{61c}'),
    ('\u{6dd}', '\u{6dd}'),
    ('\u{70f}', '\u{70f}'),
    ('\u{890}', '\u{891}'),
    ('\u{8e2}', '\u{8e2}'),
    ('\u{180e}', '\u{180e}'),
    ('\u{200b}', '\u{200f}'),
    ('\u{2028}', '\u{202e}'),
    ('\u{2060}', '\u{2064}'),
    ('\u{2066}', '\u{206f}'),
    ('\u{feff}', '\u{feff}'),
    ('\u{fff9}', '\u{fffb}'),
    ('\u{110bd}', '\u{110bd}'),
    ('\u{110cd}', '\u{110cd}'),
    ('\u{13430}', '\u{1343f}'),
    ('\u{1bca0}', '\u{1bca3}'),
    ('\u{1d173}', '\u{1d17a}'),
    ('\u{e0001}', '\u{e0001}'),
    ('\u{e0020}', '\u{e007f}'),
];

/// Whether `c` acts rather than shows when printed: a control character (C0, DEL, C1: escape
/// sequences, newlines, bells) or a format or separator character ([`FORMAT_CHARS`]). The
/// one test of what a stranger's text may not carry raw to a terminal or a page.
pub(crate) fn is_hidden(c: char) -> bool {
    c.is_control() || FORMAT_CHARS.iter().any(|&(lo, hi)| (lo..=hi).contains(&c))
}

/// `text` with every hidden character ([`is_hidden`]) written as a `\u{..}` escape; the rest
/// is kept as is, so escaping twice changes nothing.
pub fn escape_controls(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(is_hidden) {
        return text.into();
    }
    text.chars()
        .map(|c| {
            if is_hidden(c) {
                format!("\\u{{{:x}}}", c as u32)
            } else {
                c.to_string()
            }
        })
        .collect::<String>()
        .into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_in_messages_are_escaped() {
        let e = Error::Unknown {
            what: "variant",
            name: "\x1b[31mred\x07\n".into(),
            expected: "a, b".into(),
        };
        assert_eq!(
            e.to_string(),
            "unknown variant `\\u{1b}[31mred\\u{7}\\u{a}`: expected one of a, b"
        );
        let once = escape_controls("a\u{9b}b\u{7f}");
        assert_eq!(once, "a\\u{9b}b\\u{7f}");
        assert_eq!(escape_controls(&once), once, "idempotent");
        let bidi = escape_controls("\u{202e}RTL\u{2066}\u{2028}\u{200b}\u{e0041}");
        assert_eq!(bidi, "\\u{202e}RTL\\u{2066}\\u{2028}\\u{200b}\\u{e0041}");
        assert_eq!(
            escape_controls("é → ✓ 漢"),
            "é → ✓ 漢",
            "printing text is kept"
        );
    }
}

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

/// `text` with every control character (C0, DEL, C1: escape sequences, newlines, bells)
/// written as a `\u{..}` escape; the rest is kept as is, so escaping twice changes nothing.
pub fn escape_controls(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(char::is_control) {
        return text.into();
    }
    text.chars()
        .map(|c| {
            if c.is_control() {
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
    }
}

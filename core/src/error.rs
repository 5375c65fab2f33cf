//! The one error type every host shows to the user.

/// Everything that can be wrong with a scenario, named by field with the allowed range.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The text is not valid TOML/JSON, or a field is unknown, missing or of the wrong type.
    #[error("{format} parse error at `{field}`: {message}")]
    Parse {
        format: &'static str,
        field: String,
        message: String,
    },
    /// A value is outside the allowed range.
    #[error("`{field}` = {value} is out of range: allowed {allowed}")]
    Range {
        field: String,
        value: String,
        allowed: String,
    },
    /// A name (variant, walkthrough, operation) that does not exist.
    #[error("unknown {what} `{name}`: expected one of {expected}")]
    Unknown {
        what: &'static str,
        name: String,
        expected: String,
    },
    /// A well-formed scenario the mechanism cannot run (an op another mechanism owns, ...).
    #[error("`{field}`: {message}")]
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

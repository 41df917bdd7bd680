//! The one error type of this crate. Every message names the file it is about and says, on the
//! same line, what the operator can do about it: these errors end up verbatim in `bakeoff audit`
//! output, where a bare "invalid data" would send someone digging.

use std::path::PathBuf;

/// What went wrong while inspecting a checkpoint file or directory.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    /// The file could not be opened, read or sought.
    #[error("{}: cannot read it ({source}); fix: check the path exists and is readable", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    /// The file ends before a structure it declares.
    #[error(
        "{}: truncated at byte {offset} while reading {what}; fix: re-download the file (a partial download or a copy cut short looks like this)",
        path.display()
    )]
    Truncated {
        path: PathBuf,
        offset: u64,
        what: String,
    },

    /// The bytes are not in the format the caller asked for, or contradict themselves.
    #[error("{}: {what}; fix: {fix}", path.display())]
    Malformed {
        path: PathBuf,
        what: String,
        fix: String,
    },

    /// A JSON file (config.json, an index, a safetensors header) did not parse.
    #[error("{}: invalid JSON ({source}); fix: repair or re-download the file", path.display())]
    Json {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },

    /// A `config.json` lacks a field the KV arithmetic cannot do without.
    #[error("{}: no `{field}` in config.json{}; fix: {fix}", path.display(), if let Some(w) = within { format!(" (looked at the top level and in `{w}`)") } else { String::new() })]
    MissingField {
        path: PathBuf,
        field: String,
        within: Option<String>,
        fix: String,
    },
}

impl ModelError {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Self::Io {
            path: path.into(),
            source,
        }
    }

    pub(crate) fn malformed(
        path: impl Into<PathBuf>,
        what: impl Into<String>,
        fix: impl Into<String>,
    ) -> Self {
        Self::Malformed {
            path: path.into(),
            what: what.into(),
            fix: fix.into(),
        }
    }
}

/// Shorthand for results of this crate.
pub type Result<T, E = ModelError> = std::result::Result<T, E>;

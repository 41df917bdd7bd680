//! The one error type of this crate: each message names the thing and the fix on one line.

use std::path::PathBuf;

/// What went wrong while planning.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    #[error("{}: cannot read it ({source}); fix: check the path exists and is readable", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}: not a valid fleet file ({message}); fix: compare it with examples/fleet.toml and docs/fleet.md", path.display())]
    Fleet { path: PathBuf, message: String },
    #[error("{what}; fix: {fix}")]
    Invalid { what: String, fix: String },
}

impl PlanError {
    pub(crate) fn invalid(what: impl Into<String>, fix: impl Into<String>) -> Self {
        Self::Invalid {
            what: what.into(),
            fix: fix.into(),
        }
    }
}

/// Shorthand for results of this crate.
pub type Result<T, E = PlanError> = std::result::Result<T, E>;

//! The one error type of this crate: each message names the thing and the fix on one line.

/// What went wrong while planning.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
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

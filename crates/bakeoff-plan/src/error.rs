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

/// Why a term of a seat's claim (its weights, llama.cpp's KV buffers) cannot be priced here:
/// the claim lists it, unpriced, with this text.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Unpriced {
    #[error("no model in the launch arguments (--model, -m, `serve MODEL`)")]
    NoModel,
    #[error("no model (-m) in the launch arguments")]
    NoGgufModel,
    #[error(
        "model `{0}` is not a local path here (give a local path, or run the plan on the seat's host, to size them)"
    )]
    NotLocal(String),
    #[error("model `{0}` is not a local path here")]
    GgufNotLocal(String),
    #[error("no weights found in `{0}`")]
    NoWeights(String),
    #[error(transparent)]
    Model(#[from] bakeoff_model::ModelError),
    #[error("cache type {k}/{v} unknown, or the buffers overflow")]
    CacheType { k: String, v: String },
}

/// Shorthand for results of this crate.
pub type Result<T, E = PlanError> = std::result::Result<T, E>;

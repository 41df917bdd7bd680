//! How a tool call fails its check ([`super::checker`]): one variant per check, its text the
//! one the artifact records.

/// Why calls do not match their expectations: the check's detail in the artifact, in BFCL's
/// words. Model text in it (names, values) is shortened to one line by the checker.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Mismatch {
    #[error("called {called:?}, expected {expected:?}")]
    Name { called: String, expected: String },
    #[error("{name}: arguments are not valid JSON ({reason})")]
    NotJson { name: String, reason: String },
    #[error("{0}: arguments are not a JSON object")]
    NotAnObject(String),
    #[error("{name}: arguments fail the tool's JSON Schema at {at:?}: {reason}")]
    Schema {
        name: String,
        at: String,
        reason: String,
    },
    #[error("{name}: the tool's own schema is invalid: {reason}")]
    InvalidSchema { name: String, reason: String },
    #[error("{name}: required parameter {param:?} is missing")]
    RequiredMissing { name: String, param: String },
    #[error("{name}: unexpected parameter {param:?}")]
    Unexpected { name: String, param: String },
    /// `want`/`got`: "a number", "an integer", "a string", "a boolean", ….
    #[error("{name}: {param} should be {want}, got {got}")]
    Type {
        name: String,
        param: String,
        want: &'static str,
        got: &'static str,
    },
    #[error("{name}: parameter {param:?} is missing")]
    Missing { name: String, param: String },
    #[error("{name}: {param} = {value} is not an allowed value ({allowed})")]
    NotAllowed {
        name: String,
        param: String,
        value: String,
        allowed: String,
    },
    #[error("no tool fits this request, but the model called {0:?}")]
    Irrelevant(String),
    #[error("no tool call was made")]
    NoCall,
    #[error("{made} call(s) made, {expected} expected")]
    Count { made: usize, expected: usize },
    #[error("calls do not match")]
    NoMatch,
}

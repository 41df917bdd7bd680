//! The one error type of this crate.

/// Why a statistic could not be computed.
///
/// Every variant is a caller mistake or an empty input; none of them is recoverable by
/// retrying, so callers usually turn them into an explicit "no data" cell in a report.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum StatsError {
    /// Zero trials, zero pairs: there is nothing to estimate.
    #[error("no data: {what} is zero")]
    NoData {
        /// Which count was zero (e.g. "n", "n_pairs").
        what: &'static str,
    },
    /// More successes than trials.
    #[error("{successes} successes out of {n} trials is impossible")]
    SuccessesExceedTrials {
        /// Successes given.
        successes: u64,
        /// Trials given.
        n: u64,
    },
    /// A probability parameter (alpha, power, discordance) outside its valid range; each
    /// function documents the range it accepts.
    #[error("{name} = {value} is outside its valid range")]
    InvalidProbability {
        /// Parameter name.
        name: &'static str,
        /// Value given.
        value: f64,
    },
    /// The HDR histogram refused to be built or merged (mismatched bounds).
    #[error("latency histogram: {0}")]
    Histogram(String),
}

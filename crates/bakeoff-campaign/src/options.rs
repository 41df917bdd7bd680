//! What `campaign run` was asked to do: the options the driver (`run.rs`) passes down to each
//! attempt, the recovery and the dry run.

use bakeoff_seats::WatchOptions;

/// What `campaign run` was asked to do.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Displaced production seats may be stopped.
    pub confirm: bool,
    /// Start over: the old files move under `previous-<time>/` first.
    pub fresh: bool,
    /// Only these candidates or variants (empty: all).
    pub only: Vec<String>,
    pub watch: WatchOptions,
    /// The suites' options (thinking, …); the campaign sets `limit` and the context seed.
    pub suite_options: bakeoff_suites::SuiteOptions,
    /// `nvidia-smi` for the memory check's GPU readings.
    pub nvidia_smi: String,
    /// `--allow contaminated`: suggest verdicts for variants measured under contaminated
    /// conditions too (they stay marked); without it those verdicts are withheld.
    pub allow_contaminated: bool,
    /// The harness ceiling, measured once per campaign run when a load step first needs it
    /// (plain and over TLS), so every candidate's throughput steps and every tuning trial are
    /// checked against the same figure and flagged `client-bound` near it, as `eval run`'s are.
    pub ceilings: bakeoff_measure::ceiling::Ceilings,
}

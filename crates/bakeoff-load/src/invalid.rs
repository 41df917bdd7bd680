//! Why a load plan or one of its inputs is refused: the payload of [`crate::LoadError::Config`]
//! (exit 2 in the binary). Each text names the flag or file and the fix; the binary prints it
//! after `error: ` and its tests compare stderr, so the words are pinned (`invalid/tests.rs`).
//!
//! [`PlanInvalid`] sorts the refusals by kind; each kind's enum names the flag and holds the
//! value at fault where one is. The file inputs' problems are defined beside their readers:
//! [`LengthFileInvalid`] in `lengths.rs`, [`ShareGptInvalid`] in `workload/sharegpt.rs`.

use std::time::Duration;

use bakeoff_client::UrlError;

pub use crate::lengths::{LengthFileInvalid, LengthProblem};
pub use crate::workload::sharegpt::{Place, RecordProblem, ShareGptInvalid};

/// The shortest `--gauge-interval` accepted (re-exported by [`crate::plan`]).
pub const MIN_GAUGE_INTERVAL: Duration = Duration::from_millis(100);

/// The most concurrent requests a level may hold: each is a task and a connection
/// (re-exported by [`crate::plan`]).
pub const MAX_CONCURRENCY: u32 = 4096;
/// The highest arrival rate, in requests per second (re-exported by [`crate::plan`]).
pub const MAX_RATE: f64 = 10_000.0;

/// Why `--versus` refuses `--find-capacity`: the search picks each endpoint's own rates, so the
/// two sides would not share levels to pair (re-exported by [`crate::runner`]).
pub const VERSUS_NO_SEARCH: &str = "--versus compares two endpoints at the same levels; \
--find-capacity searches each endpoint's own rates: search each first, then compare at fixed --rate";

/// Why a plan, a flag's value or an input file is refused.
#[derive(Debug, thiserror::Error)]
pub enum PlanInvalid {
    /// A count, level, factor or duration that must be above zero.
    #[error(transparent)]
    NotPositive(#[from] NotPositive),
    /// A value outside the range it must lie in.
    #[error(transparent)]
    OutOfRange(#[from] OutOfRange),
    /// Options given together that cannot be combined.
    #[error(transparent)]
    Conflict(#[from] Conflict),
    /// Something a step or an option needs that the plan lacks.
    #[error(transparent)]
    Missing(#[from] Missing),
    /// A flag's value, or one item of its comma-separated list, that does not parse.
    #[error(transparent)]
    Unparsable(#[from] Unparsable),
    #[error(transparent)]
    Slo(#[from] SloInvalid),
    #[error(transparent)]
    LengthFile(#[from] LengthFileInvalid),
    #[error(transparent)]
    ShareGpt(#[from] ShareGptInvalid),
    /// The calibration target's URL, in the endpoint parser's own words.
    #[error(transparent)]
    Endpoint(#[from] UrlError),
}

/// A setting that must be above zero (at least 1, for counts).
#[derive(Debug, thiserror::Error)]
pub enum NotPositive {
    /// `--requests 0` or `--duration 0`.
    #[error("--requests and --duration must be positive")]
    StepBound,
    #[error("--repeat must be 1 or more (1 measures each level once)")]
    Repeat,
    /// `--step-requests 0`.
    #[error("--step-requests must be 1 or more completed requests per step, e.g. 200")]
    StepRequests,
    /// No level, or a level of 0.
    #[error("--concurrency needs positive levels, e.g. 1,2,4,8")]
    Concurrency,
    /// No rate, or one that is not a positive finite number.
    #[error("--rate needs positive rates, e.g. 2,5,10")]
    Rates,
    #[error("--ramp-up must be a positive number of seconds")]
    RampUp,
    /// `--multi-turn 0`.
    #[error("--multi-turn needs at least 1 turn per conversation")]
    Turns,
    /// `--sessions 0`.
    #[error("--sessions needs at least 1 turn per session")]
    SessionTurns,
    /// `--fork 0` or `--fork-turns 0`.
    #[error("--fork and --fork-turns need at least 1 (sub-sessions, turns each)")]
    Fork,
    /// Not a positive finite factor.
    #[error("--trace-speedup must be a positive number, e.g. 2")]
    TraceSpeedup(f64),
    /// `--speedup` of a session replay: not a positive finite factor.
    #[error("--speedup must be a positive number, e.g. 2")]
    SessionSpeedup(f64),
    /// Gamma's shape K, not a positive finite number.
    #[error("--burstiness {0}: must be a positive number (1 is Poisson, below 1 burstier)")]
    Burstiness(f64),
}

/// A value outside the range it must lie in.
#[derive(Debug, thiserror::Error)]
pub enum OutOfRange {
    /// Not in [0, 1), or not a number.
    #[error("--cancel-rate {0}: a share from 0 up to (not including) 1, e.g. 0.2")]
    CancelRate(f64),
    /// Below [`MIN_GAUGE_INTERVAL`].
    #[error(
        "--gauge-interval must be at least {} s (0 turns the gauges off)",
        MIN_GAUGE_INTERVAL.as_secs_f64()
    )]
    GaugeInterval(Duration),
}

/// Options given together that cannot be combined; the text says what to give instead.
#[derive(Debug, thiserror::Error)]
pub enum Conflict {
    #[error("--trace replays the trace's own arrivals: it cannot be combined with --find-capacity")]
    TraceWithCapacity,
    #[error(
        "--multi-turn runs whole conversations on closed-loop workers: give --concurrency, not --rate"
    )]
    MultiTurnWithRate,
    #[error(
        "--sessions runs whole sessions on closed-loop workers (a level is the number of concurrent sessions): give --concurrency, not --rate"
    )]
    SessionsWithRate,
    #[error(
        "--sessions-file replays the recorded sessions' own starts: it cannot be combined with --find-capacity"
    )]
    ReplayWithCapacity,
    /// `--find-capacity` on a closed-loop plan (`--concurrency`).
    #[error("--find-capacity searches arrival rates: give --rate START (open loop)")]
    CapacityWithConcurrency,
    #[error(
        "--find-capacity and --repeat cannot be combined: search first, then repeat the found rates with --rate"
    )]
    CapacityWithRepeat,
    /// `--ramp-up` or `--cancel-rate` on a workload that has no such shape; `workload` is
    /// [`crate::Workload::kind`].
    #[error(
        "--ramp-up and --cancel-rate apply to synthetic and ShareGPT prompts: not to --trace, --multi-turn, --sessions or --sessions-file"
    )]
    ShapesWithWorkload { workload: &'static str },
    #[error("{}", VERSUS_NO_SEARCH)]
    VersusWithCapacity,
    /// `--step-requests` with `--requests`: two counts for one step.
    #[error(
        "--step-requests counts completed requests and --requests counts sent ones: give one of them (e.g. --step-requests 200 --duration 600)"
    )]
    StepRequestsWithRequests,
    /// `--step-requests` with `--rate`, `--trace`, `--multi-turn` or `--find-capacity`.
    #[error(
        "--step-requests applies to closed-loop steps of single requests (--concurrency): with --rate, --requests N schedules N arrivals and each completes; not with --trace or --multi-turn"
    )]
    StepRequestsOutsideClosedLoop,
    /// `--burstiness` with an arrival process other than gamma.
    #[error("--burstiness is the shape of gamma arrivals: add --arrival gamma")]
    BurstinessWithoutGamma {
        /// The arrival process given ([`crate::schedule::Arrival::as_str`]).
        arrival: &'static str,
    },
}

/// Something a step or an option needs that the plan lacks.
#[derive(Debug, thiserror::Error)]
pub enum Missing {
    /// Neither `--requests` nor `--duration`: a step would never end.
    #[error("each step needs a bound: --requests N and/or --duration SECS")]
    StepBound,
    #[error("--find-capacity needs the objectives to meet: add --slo, e.g. ttft=500ms,tpot=50ms")]
    CapacitySlo,
    /// `--step-requests` without `--duration`: a step that never completes N requests would
    /// never end.
    #[error(
        "--step-requests needs --duration SECS as each step's upper bound, so a step that never completes N requests still ends (e.g. --step-requests 200 --duration 600)"
    )]
    StepRequestsCap,
    #[error("--find-capacity needs a start rate: --rate R")]
    CapacityStartRate,
}

/// A flag's value, or one item of its comma-separated list, that does not parse; each holds
/// the text as given (trimmed).
#[derive(Debug, thiserror::Error)]
pub enum Unparsable {
    /// An item of `--concurrency` that is not an integer from 1 to `MAX_CONCURRENCY`.
    #[error(
        "concurrency level {0:?}: each level must be a whole number from 1 to {max}; fix: e.g. 1,2,4,8",
        max = MAX_CONCURRENCY
    )]
    Level(String),
    /// An item of `--rate` that is not a number above 0 and at most `MAX_RATE`.
    #[error(
        "rate {0:?}: each rate must be a number of requests/s above 0 and at most {max}; fix: e.g. 2,5,10",
        max = MAX_RATE
    )]
    Rate(String),
    #[error("--arrival {0:?}: use poisson, constant or gamma (with --burstiness K)")]
    Arrival(String),
    /// A length (`--prompt-tokens`, `--output-tokens`, a suite's lengths): `N`, `A-B` or
    /// `@file.jsonl`.
    #[error("length {spec:?}: {problem}; use N, A-B or @file.jsonl")]
    Length {
        spec: String,
        #[source]
        problem: LengthProblem,
    },
}

/// `--slo ttft=500ms,tpot=50ms,e2e=10s`.
#[derive(Debug, thiserror::Error)]
pub enum SloInvalid {
    /// A comma-separated part without `=`.
    #[error("--slo {part:?}: expected key=value, e.g. ttft=500ms")]
    NotKeyValue { part: String },
    #[error("--slo {part:?}: {value:?} is not a duration like 500ms or 2s")]
    NotADuration { part: String, value: String },
    #[error("--slo key {key:?} is not one of ttft, tpot, e2e")]
    UnknownKey { key: String },
    /// No objective at all.
    #[error("--slo is empty; e.g. ttft=500ms,tpot=50ms")]
    Empty,
}

/// Each kind converts straight into [`crate::LoadError::Config`], so a check returns
/// `Err(Kind::Variant.into())` and `?` takes a reader's error as it is.
macro_rules! config_error {
    ($($kind:ty),* $(,)?) => {$(
        impl From<$kind> for crate::LoadError {
            fn from(e: $kind) -> Self {
                crate::LoadError::Config(e.into())
            }
        }
    )*};
}

config_error!(
    NotPositive,
    OutOfRange,
    Conflict,
    Missing,
    Unparsable,
    SloInvalid,
    LengthFileInvalid,
    ShareGptInvalid,
    UrlError,
);

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;

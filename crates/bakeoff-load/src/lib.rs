//! The load engine behind `bakeoff bench` and the `throughput` and `longgen` suites: closed-loop
//! concurrency sweeps and open-loop (constant or Poisson, seeded) arrivals, warm-up, steps bounded
//! by count and/or duration, length distributions, output-length pinning, unique prompt
//! prefixes, per-request records with intended and actual send times, coordinated-omission
//! corrected latencies, HDR summaries, reconciliation with the server's own numbers (llama.cpp
//! `timings`, Prometheus `/metrics`), and the loopback calibration target that measures the
//! harness's own ceiling.
//!
//! It owns the measurement and its arithmetic (docs/metrics.md is the prose of [`measure`]).
//! It must never print, never retry a request, never drop a scheduled request to keep up, and
//! never let parsing cost reach a timestamp: the streaming client stamps each network chunk
//! before the SSE parser sees it.
//!
//! The hot path reuses `bakeoff_client::Client::chat_stream` (reqwest + `bakeoff_wire::SseParser`)
//! rather than a second hyper client: `harness-bench` (docs/performance.md) measures what that
//! client sustains on one core against the calibration target, and the sweep flags any step
//! above half of it as `client-bound`.

pub mod calibrate;
pub mod capacity;
pub mod compare;
pub mod compare_text;
pub mod difference;
pub mod gauges;
pub mod invalid;
pub mod lengths;
pub mod limit;
pub mod measure;
pub mod paired;
pub mod pin;
pub mod plan;
pub mod prompt;
pub mod reconcile;
pub mod repeats;
pub mod runner;
pub mod schedule;
pub mod session_capacity;
pub mod shapes;
pub mod sweep_input;
pub mod workload;

mod prng;

/// The `/metrics` parser and the engines' gauge table are `bakeoff-client`'s (the seat monitor
/// and a campaign's idle probe read them too); the engine's modules name them here.
pub use bakeoff_client::prometheus;

pub use calibrate::{CalibrationOptions, CalibrationTarget, measure_ceiling};
pub use invalid::PlanInvalid;
pub use lengths::LengthSpec;
pub use pin::PinPolicy;
pub use plan::{LoadPlan, Mode, Slo, StepBound};
pub use prng::SplitMix64;
pub use runner::{NoProgress, Progress, Side, run, run_versus};
pub use schedule::Arrival;
pub use workload::Workload;

#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// Bad plan or input: the message names the thing and the fix.
    #[error(transparent)]
    Config(#[from] PlanInvalid),
    #[error(transparent)]
    Stats(#[from] bakeoff_stats::StatsError),
    #[error("load engine: {0}")]
    Internal(String),
}

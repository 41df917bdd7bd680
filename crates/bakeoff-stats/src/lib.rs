//! The statistics behind every verdict bakeoff prints: proportions with Wilson intervals,
//! chance floors and instrument checks, exact McNemar tests for paired comparisons with the
//! minimum detectable difference, HDR-histogram latency summaries and throughput rates, the
//! order statistics (median, quantiles, nearest-rank percentiles) and the project's one seeded
//! generator (SplitMix64), which the bootstraps' draws and the load engine's schedules share.
//!
//! This crate owns arithmetic and the serializable result types that go straight into
//! versioned JSON artifacts. It must never do I/O, print, read a clock or decide policy
//! beyond the documented statistical rules: callers hand it counts and durations, it hands
//! back numbers with their uncertainty. "No data" is always an explicit state (an error or a
//! `None`), never a NaN, because NaN does not survive JSON and hides bugs in reports.

pub mod chance;
pub mod cheaper_fix;
pub mod cluster;
pub mod effect;
pub mod error;
pub mod kl;
pub mod latency;
pub mod mcnemar;
pub mod order;
pub mod proportion;
pub mod repeats;
pub mod rng;
pub mod throughput;
pub mod trend;

mod binomial;
mod normal;

pub use chance::{InstrumentCheck, InstrumentFlag, chance_floor, check_instrument};
pub use cheaper_fix::{CheaperFix, FixKind, RepeatSample, cheaper_fix};
pub use cluster::{ClusteredSummary, summarize_clustered};
pub use effect::format_effect;
pub use error::StatsError;
pub use kl::{KlSummary, KlTerms, kl_top_k};
pub use latency::{LatencyBucket, LatencyRecorder, LatencySummary};
pub use mcnemar::{
    MinDetectableDifference, PairedComparison, mcnemar_exact_p_value, min_detectable_difference,
    min_detectable_difference_with_discordance,
};
pub use order::{median, percentile_nearest_rank};
pub use proportion::{Proportion, Z_95};
pub use repeats::{
    Heterogeneity, MeanInterval, RELATIVE_HALF_WIDTH_GOAL, RelativePrecision, cochran_q,
    mean_interval, mean_interval_nonnegative,
};
pub use rng::SplitMix64;
pub use throughput::{Throughput, rate_per_second};
pub use trend::least_squares_slope;

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod schema_tests {
    /// Every public result type must produce a JSON Schema, since artifacts embed them.
    #[test]
    fn result_types_have_schemas() {
        let schemas = [
            schemars::schema_for!(crate::Proportion),
            schemars::schema_for!(crate::InstrumentCheck),
            schemars::schema_for!(crate::PairedComparison),
            schemars::schema_for!(crate::MinDetectableDifference),
            schemars::schema_for!(crate::LatencySummary),
            schemars::schema_for!(crate::LatencyBucket),
            schemars::schema_for!(crate::Throughput),
        ];
        for schema in schemas {
            assert!(
                serde_json::to_value(&schema)
                    .unwrap()
                    .get("properties")
                    .is_some()
            );
        }
        let flag = serde_json::to_value(schemars::schema_for!(crate::InstrumentFlag)).unwrap();
        assert!(flag.to_string().contains("suspect-instrument"));
    }
}

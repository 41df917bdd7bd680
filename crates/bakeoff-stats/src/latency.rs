//! Latency summaries from HDR histograms.
//!
//! Why HDR histograms rather than a sorted `Vec`: recorders from many client tasks merge
//! exactly (`add`), memory is fixed however long a load test runs, and every quantile carries
//! a known relative error (3 significant digits: at most 0.1 %), which we state instead of
//! pretending to exactness.

use std::time::Duration;

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use crate::StatsError;

/// Records latencies in whole microseconds, 1 µs to 1 h, at 3 significant digits.
#[derive(Debug, Clone)]
pub struct LatencyRecorder {
    hist: Histogram<u64>,
    // saturating_record hides values above the top bound silently; we count them so a summary
    // can say how many maxima are really "an hour or more".
    clamped_high: u64,
}

/// Count, mean and quantiles in milliseconds. With `count == 0` every number is `None`:
/// an empty run has no latency, and we never write a fake 0.
#[derive(Serialize, Deserialize, schemars::JsonSchema, Debug, Clone, PartialEq)]
pub struct LatencySummary {
    /// Values recorded.
    pub count: u64,
    /// Values above [`LatencyRecorder::HIGHEST_MICROS`], recorded as that bound.
    pub clamped_high: u64,
    /// Mean, from histogram bins (within 0.1 %).
    pub mean_ms: Option<f64>,
    /// Smallest value (lower edge of its bin).
    pub min_ms: Option<f64>,
    /// Median.
    pub p50_ms: Option<f64>,
    /// 90th percentile.
    pub p90_ms: Option<f64>,
    /// 95th percentile.
    pub p95_ms: Option<f64>,
    /// 99th percentile.
    pub p99_ms: Option<f64>,
    /// Largest value (upper edge of its bin).
    pub max_ms: Option<f64>,
}

/// One bar of a log-scale histogram for charts: `count` values fell below `upper_ms` and at or
/// above the previous bucket's edge (to histogram precision).
#[derive(Serialize, Deserialize, schemars::JsonSchema, Debug, Clone, PartialEq)]
pub struct LatencyBucket {
    /// Exclusive upper edge in milliseconds; edges are `0.1 · 2^k` ms, so buckets from
    /// different runs line up.
    pub upper_ms: f64,
    /// Values in the bucket.
    pub count: u64,
}

impl LatencyRecorder {
    /// Lowest discernible value, 1 µs; sub-microsecond durations record as 0.
    pub const LOWEST_MICROS: u64 = 1;
    /// Highest trackable value: one hour in microseconds.
    pub const HIGHEST_MICROS: u64 = 3_600_000_000;
    /// Significant decimal digits kept per value.
    pub const SIGNIFICANT_DIGITS: u8 = 3;
    /// Upper edge of the first chart bucket, 0.1 ms.
    const FIRST_BUCKET_MICROS: u64 = 100;

    /// An empty recorder.
    ///
    /// # Errors
    /// [`StatsError::Histogram`] only if the histogram rejects the constant bounds above,
    /// which would be a bug in this crate (it is a `Result` because the `hdrhistogram`
    /// constructor is one, and we do not panic in library code).
    pub fn new() -> Result<Self, StatsError> {
        let hist = Histogram::new_with_bounds(
            Self::LOWEST_MICROS,
            Self::HIGHEST_MICROS,
            Self::SIGNIFICANT_DIGITS,
        )
        .map_err(|e| StatsError::Histogram(e.to_string()))?;
        Ok(Self {
            hist,
            clamped_high: 0,
        })
    }

    /// Record one latency in microseconds; values above one hour are clamped to it.
    pub fn record_micros(&mut self, micros: u64) {
        if micros > Self::HIGHEST_MICROS {
            self.clamped_high += 1;
        }
        self.hist.saturating_record(micros);
    }

    /// Record one latency, truncated to whole microseconds.
    pub fn record(&mut self, latency: Duration) {
        self.record_micros(u64::try_from(latency.as_micros()).unwrap_or(u64::MAX));
    }

    /// Merge another recorder into this one (e.g. one recorder per client task).
    ///
    /// # Errors
    /// [`StatsError::Histogram`] if the histograms are incompatible; cannot happen between
    /// two `LatencyRecorder`s, which share bounds.
    pub fn add(&mut self, other: &Self) -> Result<(), StatsError> {
        self.hist
            .add(&other.hist)
            .map_err(|e| StatsError::Histogram(e.to_string()))?;
        self.clamped_high += other.clamped_high;
        Ok(())
    }

    /// Values recorded so far.
    pub fn count(&self) -> u64 {
        self.hist.len()
    }

    /// Count, mean and quantiles. Quantiles are HdrHistogram's: the smallest recorded value
    /// with at least that fraction of values at or below it (nearest rank), reported as the
    /// upper edge of its bin.
    pub fn summary(&self) -> LatencySummary {
        let count = self.hist.len();
        let present = |micros: f64| (count > 0).then(|| micros / 1000.0);
        let q = |quantile: f64| present(self.hist.value_at_quantile(quantile) as f64);
        LatencySummary {
            count,
            clamped_high: self.clamped_high,
            mean_ms: present(self.hist.mean()),
            min_ms: present(self.hist.min() as f64),
            p50_ms: q(0.50),
            p90_ms: q(0.90),
            p95_ms: q(0.95),
            p99_ms: q(0.99),
            max_ms: present(self.hist.max() as f64),
        }
    }

    /// Log-scale buckets with edges 0.1, 0.2, 0.4, … ms up to the bucket holding the maximum
    /// (at most ~26 for the 1 h range). Leading empty buckets are dropped to keep artifacts
    /// compact; each remaining bucket covers `[upper_ms / 2, upper_ms)`, except the 0.1 ms
    /// one, which starts at 0. Empty recorder: empty vector.
    pub fn buckets(&self) -> Vec<LatencyBucket> {
        if self.hist.is_empty() {
            return Vec::new();
        }
        self.hist
            .iter_log(Self::FIRST_BUCKET_MICROS, 2.0)
            .map(|v| LatencyBucket {
                // value_iterated_to is the inclusive top of the step (99, 199, 399 µs …).
                upper_ms: (v.value_iterated_to() + 1) as f64 / 1000.0,
                count: v.count_since_last_iteration(),
            })
            .skip_while(|b| b.count == 0)
            .collect()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// Within HdrHistogram's stated precision: 3 significant digits = 0.1 % relative error.
    fn within_precision(got: Option<f64>, want: f64) -> bool {
        got.is_some_and(|g| ((g - want) / want).abs() <= 1e-3)
    }

    fn one_to_hundred_ms() -> LatencyRecorder {
        let mut r = LatencyRecorder::new().unwrap();
        for ms in 1..=100u64 {
            r.record(Duration::from_millis(ms));
        }
        r
    }

    // Known values: 1, 2, …, 100 ms. By hand, nearest-rank percentiles are p50 = 50,
    // p90 = 90, p95 = 95, p99 = 99; min 1, max 100, mean 50.5.
    #[test]
    fn summary_of_one_to_hundred() {
        let s = one_to_hundred_ms().summary();
        assert_eq!(s.count, 100);
        assert_eq!(s.clamped_high, 0);
        assert!(within_precision(s.min_ms, 1.0), "{s:?}");
        assert!(within_precision(s.p50_ms, 50.0), "{s:?}");
        assert!(within_precision(s.p90_ms, 90.0), "{s:?}");
        assert!(within_precision(s.p95_ms, 95.0), "{s:?}");
        assert!(within_precision(s.p99_ms, 99.0), "{s:?}");
        assert!(within_precision(s.max_ms, 100.0), "{s:?}");
        assert!(within_precision(s.mean_ms, 50.5), "{s:?}");
    }

    #[test]
    fn merging_equals_recording_together() {
        let (mut low, mut high) = (
            LatencyRecorder::new().unwrap(),
            LatencyRecorder::new().unwrap(),
        );
        for ms in 1..=50u64 {
            low.record_micros(ms * 1000);
        }
        for ms in 51..=100u64 {
            high.record_micros(ms * 1000);
        }
        low.add(&high).unwrap();
        assert_eq!(low.summary(), one_to_hundred_ms().summary());
    }

    #[test]
    fn empty_summary_has_no_numbers() {
        let r = LatencyRecorder::new().unwrap();
        let s = r.summary();
        assert_eq!(s.count, 0);
        assert_eq!(
            [
                s.mean_ms, s.min_ms, s.p50_ms, s.p90_ms, s.p95_ms, s.p99_ms, s.max_ms
            ],
            [None; 7]
        );
        assert!(r.buckets().is_empty());
        let json = serde_json::to_value(&s).unwrap();
        assert_eq!(json["p99_ms"], serde_json::Value::Null);
    }

    #[test]
    fn values_above_an_hour_are_clamped_and_counted() {
        let mut r = LatencyRecorder::new().unwrap();
        r.record(Duration::from_secs(2 * 3600));
        let s = r.summary();
        assert_eq!((s.count, s.clamped_high), (1, 1));
        assert!(within_precision(s.max_ms, 3_600_000.0), "{s:?}");
    }

    #[test]
    fn log_buckets() {
        let mut r = LatencyRecorder::new().unwrap();
        for micros in [1_000, 1_000, 1_000, 3_000, 150_000, 150_000] {
            r.record_micros(micros);
        }
        let got: Vec<(f64, u64)> = r.buckets().iter().map(|b| (b.upper_ms, b.count)).collect();
        // 1 ms ∈ [0.8, 1.6), 3 ms ∈ [1.6, 3.2), 150 ms ∈ [102.4, 204.8).
        let want = vec![
            (1.6, 3),
            (3.2, 1),
            (6.4, 0),
            (12.8, 0),
            (25.6, 0),
            (51.2, 0),
            (102.4, 0),
            (204.8, 2),
        ];
        assert_eq!(got, want);
    }
}

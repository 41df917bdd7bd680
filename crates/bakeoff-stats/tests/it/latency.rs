//! HDR latency summaries and rates: 1 to 100 ms, one of each, has quantiles one can count.

use std::time::Duration;

use bakeoff_stats::{LatencyRecorder, Throughput, least_squares_slope, rate_per_second};

use crate::close;

/// Within HdrHistogram's precision (three significant digits).
fn near(got: Option<f64>, want: f64) -> bool {
    got.is_some_and(|g| close(g, want, want * 1e-3))
}

#[test]
fn one_to_a_hundred_ms_has_the_quantiles_one_counts() {
    let mut r = LatencyRecorder::new().unwrap();
    for ms in 1..=100 {
        r.record(Duration::from_millis(ms));
    }
    let s = r.summary();
    assert_eq!(s.count, 100);
    assert!(near(s.min_ms, 1.0), "{s:?}");
    assert!(near(s.p50_ms, 50.0), "{s:?}");
    assert!(near(s.p90_ms, 90.0), "{s:?}");
    assert!(near(s.p99_ms, 99.0), "{s:?}");
    assert!(near(s.max_ms, 100.0), "{s:?}");
    assert!(near(s.mean_ms, 50.5), "{s:?}");
    // Buckets double from 0.1 ms and hold every value once.
    let b = r.buckets();
    assert_eq!(b.iter().map(|b| b.count).sum::<u64>(), 100);
    assert!(
        b.windows(2)
            .all(|w| close(w[1].upper_ms, 2.0 * w[0].upper_ms, 1e-9))
    );
}

#[test]
fn an_empty_recorder_has_no_latency_not_zero() {
    let s = LatencyRecorder::new().unwrap().summary();
    assert_eq!(s.count, 0);
    assert_eq!((s.p50_ms, s.p99_ms, s.mean_ms), (None, None, None));
    assert!(LatencyRecorder::new().unwrap().buckets().is_empty());
}

#[test]
fn recorders_add_up() {
    let mut a = LatencyRecorder::new().unwrap();
    let mut b = LatencyRecorder::new().unwrap();
    for ms in 1..=50 {
        a.record(Duration::from_millis(ms));
        b.record(Duration::from_millis(ms + 50));
    }
    a.add(&b).unwrap();
    assert_eq!(a.count(), 100);
    assert!(near(a.summary().p50_ms, 50.0));
}

#[test]
fn rates_and_slopes() {
    assert_eq!(rate_per_second(10, 4.0), Some(2.5));
    assert_eq!(rate_per_second(10, 0.0), None);
    assert_eq!(rate_per_second(10, f64::NAN), None);
    let t = Throughput::new(30, Duration::from_secs(12));
    assert_eq!((t.completed, t.per_second), (30, Some(2.5)));
    assert_eq!(
        least_squares_slope(&[(0.0, 1.0), (1.0, 3.0), (2.0, 5.0)]),
        Some(2.0)
    );
}

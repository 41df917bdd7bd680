//! The cluster bootstrap on two replies whose every resample can be listed: it draws whole
//! replies, so a pooled mean is one of three values and the interval's ends are two of them.

use bakeoff_stats::{SplitMix64, StatsError, summarize_clustered};

#[test]
fn whole_replies_are_resampled_never_single_positions() {
    // Reply A: 1, 2, 3; reply B: 10. Two replies drawn with replacement pool to A+A (mean 2,
    // median 2), A+B (mean 4, median 2.5) or B+B (mean 10, median 10), each pair of draws
    // with probability 1/4 at least: the 2.5th and 97.5th percentiles are 2 and 10.
    let clusters = vec![vec![1.0, 2.0, 3.0], vec![10.0]];
    let mut rng = SplitMix64::new(11);
    let mut draws = 0;
    let mut draw = |n: usize| {
        draws += 1;
        rng.below(n as u64) as usize
    };
    let s = summarize_clustered(&clusters, 2000, &mut draw).unwrap();
    assert_eq!(draws, 2 * 2000, "one draw per reply per resample");
    assert_eq!((s.clusters, s.n, s.resamples), (2, 4, 2000));
    assert_eq!((s.mean, s.median, s.max), (4.0, 2.5, 10.0));
    assert_eq!((s.low, s.high), (2.0, 10.0), "{s:?}");
    assert_eq!((s.median_low, s.median_high), (2.0, 10.0), "{s:?}");
}

#[test]
fn the_same_seed_gives_the_same_interval_and_empty_replies_are_no_data() {
    let clusters: Vec<Vec<f64>> = (0..8)
        .map(|k| (0..5).map(|i| f64::from(k * 5 + i) / 7.0).collect())
        .collect();
    let run = |seed| {
        let mut rng = SplitMix64::new(seed);
        summarize_clustered(&clusters, 500, &mut |n| rng.below(n as u64) as usize).unwrap()
    };
    assert_eq!(run(3), run(3));
    let s = run(3);
    assert!(s.low <= s.mean && s.mean <= s.high, "{s:?}");
    assert!(s.low > 0.0 && s.high < s.max, "{s:?}");
    // A reply of only missing values is no reply; none left is no data.
    let mut never = |_| 0;
    assert!(matches!(
        summarize_clustered(&[vec![f64::NAN], vec![]], 10, &mut never),
        Err(StatsError::NoData { .. })
    ));
}

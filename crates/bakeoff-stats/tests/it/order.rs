//! The median and the nearest-rank percentile, and the one seeded generator.

use bakeoff_stats::{SplitMix64, median, percentile_nearest_rank};

#[test]
fn the_median_of_odd_and_even_counts_in_any_order() {
    assert_eq!(median(vec![9.0, 1.0, 5.0]), Some(5.0));
    assert_eq!(median(vec![10.0, 1.0, 3.0, 2.0]), Some(2.5));
    // A missing reading (NaN, an infinity) is dropped, never sorted in as an extreme.
    assert_eq!(
        median(vec![f64::NEG_INFINITY, 4.0, f64::NAN, 2.0]),
        Some(3.0)
    );
    assert_eq!(median(vec![f64::NAN]), None);
    assert_eq!(median(Vec::new()), None);
}

#[test]
fn nearest_rank_percentiles_of_one_to_a_hundred_are_the_values_themselves() {
    let v: Vec<f64> = (1..=100).map(f64::from).collect();
    for p in [1.0, 50.0, 90.0, 99.0, 100.0] {
        assert_eq!(percentile_nearest_rank(&v, p), Some(p), "p{p}");
    }
    // Between ranks: the smallest value with at least p % at or below it.
    assert_eq!(percentile_nearest_rank(&v, 50.5), Some(51.0));
    assert_eq!(percentile_nearest_rank(&v, 0.0), Some(1.0));
    // Ten values: p90 is the 9th, p91 already the 10th.
    let ten: Vec<f64> = (1..=10).map(|x| f64::from(x) * 10.0).collect();
    assert_eq!(percentile_nearest_rank(&ten, 90.0), Some(90.0));
    assert_eq!(percentile_nearest_rank(&ten, 91.0), Some(100.0));
    assert_eq!(percentile_nearest_rank(&[], 50.0), None);
}

#[test]
fn the_generator_replays_its_seed_and_stays_in_range() {
    // SplitMix64's reference output for seed 0.
    let mut r = SplitMix64::new(0);
    assert_eq!(r.next_u64(), 0xE220_A839_7B1D_CDAF);
    let draws = |seed| {
        let mut r = SplitMix64::new(seed);
        (0..64).map(|_| r.below(10)).collect::<Vec<_>>()
    };
    assert_eq!(draws(42), draws(42));
    assert_ne!(draws(42), draws(43));
    // Every value of a small range turns up, and nothing outside it.
    let mut r = SplitMix64::new(7);
    let mut seen = [0u32; 3];
    for _ in 0..3000 {
        seen[(r.range_inclusive(4, 6) - 4) as usize] += 1;
        let f = r.next_f64();
        assert!((0.0..1.0).contains(&f), "{f}");
    }
    assert!(seen.iter().all(|&n| n > 800), "{seen:?}");
}

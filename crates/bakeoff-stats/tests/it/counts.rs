//! Proportions with Wilson intervals, the chance floor's instrument check, and McNemar's exact
//! test, each against R's own figures (`prop.test(k, n, correct = FALSE)$conf.int`,
//! `binom.test(min(b, c), b + c)$p.value`).

use std::num::NonZeroU32;

use bakeoff_stats::{
    InstrumentFlag, PairedComparison, Proportion, StatsError, chance_floor, check_instrument,
    format_effect, mcnemar_exact_p_value, min_detectable_difference,
};

use crate::close;

#[test]
fn wilson_intervals_match_r() {
    let p = Proportion::wilson(5, 10).unwrap();
    assert_eq!(p.estimate, 0.5);
    assert!(close(p.wilson_low, 0.236_593_1, 1e-6), "{p:?}");
    assert!(close(p.wilson_high, 0.763_406_9, 1e-6), "{p:?}");
    // At 0/n the interval starts at exactly 0 and still has width.
    let none = Proportion::wilson(0, 10).unwrap();
    assert_eq!(none.wilson_low, 0.0);
    assert!(close(none.wilson_high, 0.277_532_8, 1e-6), "{none:?}");
    let all = Proportion::wilson(10, 10).unwrap();
    assert_eq!(all.wilson_high, 1.0);
    assert!(close(all.wilson_low, 0.722_467_2, 1e-6), "{all:?}");
    // No items, or more successes than items: no estimate at all, never a NaN.
    assert!(matches!(
        Proportion::wilson(0, 0),
        Err(StatsError::NoData { .. })
    ));
    assert!(matches!(
        Proportion::wilson(3, 2),
        Err(StatsError::SuccessesExceedTrials { .. })
    ));
}

#[test]
fn a_score_below_chance_is_suspect_and_wholly_below_it_is_an_instrument_failure() {
    let four = chance_floor(NonZeroU32::new(4));
    assert_eq!(four, 0.25);
    assert_eq!(chance_floor(None), 0.0);
    // 4/32 against 1/4: below chance, but the interval reaches it.
    let c = check_instrument(&Proportion::wilson(4, 32).unwrap(), four);
    assert_eq!(c.flag, Some(InstrumentFlag::SuspectInstrument), "{c:?}");
    assert!(c.is_scored());
    // 0/64: even the upper bound is below 1/4.
    let c = check_instrument(&Proportion::wilson(0, 64).unwrap(), four);
    assert_eq!(c.flag, Some(InstrumentFlag::InstrumentFailure), "{c:?}");
    assert!(!c.is_scored());
    assert!(c.reason.contains("0/64"), "{}", c.reason);
    let c = check_instrument(&Proportion::wilson(16, 32).unwrap(), four);
    assert_eq!(c.flag, None);
}

#[test]
fn mcnemar_exact_p_values_match_binom_test() {
    // binom.test(1, 10): 2 · (1 + 10) / 2^10.
    assert!(close(mcnemar_exact_p_value(1, 9), 22.0 / 1024.0, 1e-12));
    assert!(close(mcnemar_exact_p_value(9, 1), 22.0 / 1024.0, 1e-12));
    // Five discordant pairs all one way: 2 / 2^5, still not below 0.05.
    assert!(close(mcnemar_exact_p_value(0, 5), 0.0625, 1e-12));
    assert_eq!(mcnemar_exact_p_value(3, 3), 1.0);
    assert_eq!(mcnemar_exact_p_value(0, 0), 1.0);

    // Pairs (a correct, b correct): only the discordant ones count.
    let pairs = [(true, true), (true, false), (true, false), (false, true)]
        .into_iter()
        .chain(std::iter::repeat_n((false, false), 6));
    let c = PairedComparison::from_pairs(pairs).unwrap();
    assert_eq!(c.discordant(), 3);
    assert!(close(c.discordance(), 0.3, 1e-12));
}

#[test]
fn the_detectable_difference_shrinks_with_more_pairs() {
    let small = min_detectable_difference(32, 0.05, 0.8).unwrap();
    let large = min_detectable_difference(512, 0.05, 0.8).unwrap();
    let (s, l) = (small.difference.unwrap(), large.difference.unwrap());
    // About 2/√n (Lehr's rule) at discordance 0.5.
    assert!((0.3..0.4).contains(&s), "{small:?}");
    assert!(l < s / 3.0, "{large:?}");
    assert_eq!(small.items, Some((s * 32.0).ceil() as u64));
    assert!(min_detectable_difference(0, 0.05, 0.8).is_err());
}

#[test]
fn effects_are_told_in_items_and_points() {
    assert_eq!(format_effect(-5, 32), "\u{2212}5 items (\u{2212}15.6 pts)");
    assert_eq!(format_effect(1, 64), "+1 item (+1.6 pts)");
    assert_eq!(format_effect(0, 0), "0 items (no data)");
}

//! The refusal suite in a paired comparison: items paired by id on *refused or not* (not on
//! passed or not), one group for the whole battery, and the verdict worded for refusals — "B
//! refuses more" or "fewer", never "ahead". A reply that was neither refused nor answered
//! (empty, reasoning only, a failed request) pairs with nothing.
//!
//! With few discordant pairs the exact McNemar test cannot reach p < 0.05 whatever they show
//! (the smallest two-sided p with m discordant pairs is 2 · 2⁻ᵐ: m ≥ 6 is needed); then no
//! verdict is given and the reason says so, so "3/100 against 7/100" gets an honest verdict or
//! none.

use bakeoff_artifact::ItemRecord;
use bakeoff_stats::{PairedComparison, format_effect, mcnemar_exact_p_value};

/// The suite's name in artifacts (`bakeoff_suites::refusal::SUITE`).
pub const SUITE: &str = "refusal";

/// The one group the whole battery is paired in.
pub const FAMILY: &str = "refusals";

/// What a paired "success" means in this suite's rows (`FamilyComparison::measure`).
pub const MEASURE: &str = "refusals";

/// Level of the verdicts.
const ALPHA: f64 = 0.05;

/// Refused (`true`) or answered (`false`), from a record's `extra.refused`; `None` when the
/// reply was neither, or its `extra` does not read (the comparison's notice).
pub fn refused(it: &ItemRecord) -> Option<bool> {
    crate::read::noted(crate::read::refusal_item(SUITE, it))?.refused
}

/// The fewest discordant pairs with which the exact McNemar test can reach p < [`ALPHA`].
pub fn discordant_needed() -> u64 {
    (1..64u64)
        .find(|&m| mcnemar_exact_p_value(0, m) < ALPHA)
        .unwrap_or(64)
}

/// The verdict on paired refusals (`p` built from `(A refused, B refused)` pairs), and whether
/// it is one; `detect` is the smallest-detectable-difference sentence.
pub fn verdict(p: &PairedComparison, detect: &str) -> (String, bool) {
    let n = p.n_pairs;
    let (ra, rb) = (p.both_correct + p.only_a, p.both_correct + p.only_b);
    let counts = format!(
        "refusals A {ra}/{n}, B {rb}/{n}; refused by A alone {}, by B alone {}",
        p.only_a, p.only_b
    );
    let m = p.discordant();
    let needed = discordant_needed();
    if m < needed {
        return (
            format!(
                "no verdict: {m} discordant pair(s) ({counts}); the exact McNemar test needs at least {needed} to reach p < {ALPHA} whatever they show"
            ),
            false,
        );
    }
    if p.p_value < ALPHA {
        let more = if p.delta_items > 0 { "more" } else { "fewer" };
        (
            format!(
                "B refuses {more}: {} ({counts}; exact McNemar p = {:.3}); {detect}",
                format_effect(p.delta_items, n),
                p.p_value
            ),
            true,
        )
    } else {
        (
            format!(
                "no detectable difference in refusals ({counts}; exact McNemar p = {:.3}); {detect}",
                p.p_value
            ),
            true,
        )
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn six_discordant_pairs_are_the_fewest_that_can_decide() {
        // 2 · 2⁻⁵ = 0.0625, 2 · 2⁻⁶ = 0.03125.
        assert_eq!(discordant_needed(), 6);
    }

    #[test]
    fn three_against_seven_in_a_hundred() {
        // A refused 3, B 7, all of A's also refused by B: 4 discordant pairs, no verdict.
        let p = PairedComparison::from_counts(3, 0, 4, 93).unwrap();
        let (v, has) = verdict(&p, "d");
        assert!(!has);
        assert!(
            v.starts_with("no verdict: 4 discordant pair(s) (refusals A 3/100, B 7/100;"),
            "{v}"
        );
        assert!(v.contains("needs at least 6"), "{v}");
        // B refuses 8 that A answered, A none that B answered: p = 2 · 2⁻⁸.
        let p = PairedComparison::from_counts(2, 0, 8, 90).unwrap();
        let (v, has) = verdict(&p, "d");
        assert!(has);
        assert!(
            v.starts_with("B refuses more: +8 items (+8.0 pts) (refusals A 2/100, B 10/100;"),
            "{v}"
        );
        assert!(v.contains("p = 0.008"), "{v}");
        let p = PairedComparison::from_counts(0, 7, 0, 93).unwrap();
        assert!(
            verdict(&p, "d")
                .0
                .starts_with("B refuses fewer: \u{2212}7 items")
        );
        // Discordant both ways: a verdict of no difference.
        let p = PairedComparison::from_counts(0, 3, 4, 93).unwrap();
        let (v, has) = verdict(&p, "d");
        assert!(
            has && v.starts_with("no detectable difference in refusals"),
            "{v}"
        );
    }
}

//! Paired comparison of two deployments on the same items: exact McNemar test, and the
//! minimum detectable difference for planning.
//!
//! Paired because both deployments answer the *same* items: items both get right or both get
//! wrong say nothing about which is better, and only the discordant pairs carry signal.
//! Comparing two independent intervals for overlap throws that away and is far too
//! conservative.

use serde::{Deserialize, Serialize};

use crate::{Proportion, StatsError, binomial, normal};

/// Paired outcomes of deployment A and deployment B on the same `n_pairs` items.
#[derive(Serialize, Deserialize, schemars::JsonSchema, Debug, Clone, PartialEq)]
pub struct PairedComparison {
    /// Items both deployments answered (all four cells summed).
    pub n_pairs: u64,
    /// A right, B right.
    pub both_correct: u64,
    /// A right, B wrong (McNemar's `b`).
    pub only_a: u64,
    /// A wrong, B right (McNemar's `c`).
    pub only_b: u64,
    /// A wrong, B wrong.
    pub both_wrong: u64,
    /// A's accuracy over the pairs.
    pub accuracy_a: Proportion,
    /// B's accuracy over the pairs.
    pub accuracy_b: Proportion,
    /// B minus A in items: `only_b − only_a` (= correct_B − correct_A). Positive: B is ahead.
    pub delta_items: i64,
    /// B minus A in percentage points of `n_pairs`.
    pub delta_pts: f64,
    /// Two-sided exact McNemar p-value (see [`mcnemar_exact_p_value`]).
    pub p_value: f64,
}

impl PairedComparison {
    /// Build from per-item outcomes `(a_correct, b_correct)`, one tuple per shared item.
    ///
    /// # Errors
    /// [`StatsError::NoData`] when there are no pairs.
    pub fn from_pairs(pairs: impl IntoIterator<Item = (bool, bool)>) -> Result<Self, StatsError> {
        let mut cells = [0u64; 4];
        for (a, b) in pairs {
            cells[usize::from(a) * 2 + usize::from(b)] += 1;
        }
        let [both_wrong, only_b, only_a, both_correct] = cells;
        Self::from_counts(both_correct, only_a, only_b, both_wrong)
    }

    /// Build from the four cells of the 2×2 paired table.
    ///
    /// # Errors
    /// [`StatsError::NoData`] when all cells are zero.
    pub fn from_counts(
        both_correct: u64,
        only_a: u64,
        only_b: u64,
        both_wrong: u64,
    ) -> Result<Self, StatsError> {
        let n_pairs = both_correct
            .saturating_add(only_a)
            .saturating_add(only_b)
            .saturating_add(both_wrong);
        let accuracy_a = Proportion::wilson(both_correct + only_a, n_pairs)?;
        let accuracy_b = Proportion::wilson(both_correct + only_b, n_pairs)?;
        let delta = i128::from(only_b) - i128::from(only_a);
        // Counts anywhere near i64::MAX cannot come from an eval; saturate rather than wrap.
        let delta_items =
            i64::try_from(delta).unwrap_or(if delta < 0 { i64::MIN } else { i64::MAX });
        Ok(Self {
            n_pairs,
            both_correct,
            only_a,
            only_b,
            both_wrong,
            accuracy_a,
            accuracy_b,
            delta_items,
            delta_pts: 100.0 * delta as f64 / n_pairs as f64,
            p_value: mcnemar_exact_p_value(only_a, only_b),
        })
    }

    /// Pairs on which the deployments disagree (`only_a + only_b`).
    pub fn discordant(&self) -> u64 {
        self.only_a + self.only_b
    }

    /// Observed discordance rate, the input to
    /// [`min_detectable_difference_with_discordance`] for the next run of the same pair.
    pub fn discordance(&self) -> f64 {
        self.discordant() as f64 / self.n_pairs as f64
    }
}

/// Two-sided exact McNemar p-value from the discordant counts `b` (only A right) and `c`
/// (only B right): `min(1, 2 · P(X ≤ min(b, c)))` with `X ~ Binomial(b + c, 1/2)`.
///
/// This is R's `binom.test(min(b, c), b + c, 0.5)$p.value` (for p = 1/2 the doubling rule
/// and R's likelihood rule coincide, the distribution being symmetric). No discordant pairs
/// gives 1. Stable for any `b + c` (log-space, see the private `binomial` module); p-values
/// below ~1e-308 come out as 0.
///
/// Note the discreteness: with fewer than 6 discordant pairs no outcome reaches p < 0.05.
pub fn mcnemar_exact_p_value(b: u64, c: u64) -> f64 {
    let m = b.saturating_add(c);
    if m == 0 {
        return 1.0;
    }
    (2.0 * binomial::fair_lower_tail(b.min(c), m)).min(1.0)
}

/// Smallest true accuracy difference a paired comparison of `n_pairs` items detects with
/// two-sided level `alpha` and probability `power`, under stated assumptions.
#[derive(Serialize, Deserialize, schemars::JsonSchema, Debug, Clone, PartialEq)]
pub struct MinDetectableDifference {
    /// Items per deployment (pairs).
    pub n_pairs: u64,
    /// Two-sided significance level.
    pub alpha: f64,
    /// Probability of detecting a difference of exactly `difference`.
    pub power: f64,
    /// Assumed fraction of items on which the deployments disagree.
    pub discordance: f64,
    /// The difference as a proportion (0.337 = 33.7 pts); `None` when no difference is
    /// detectable at this `n_pairs` — a comparison should then give no verdict at all.
    pub difference: Option<f64>,
    /// The same difference in items, rounded up.
    pub items: Option<u64>,
}

/// [`min_detectable_difference_with_discordance`] at discordance 0.5.
///
/// Why 0.5: it is the discordance of two *independent* deployments that each score 50 %, so
/// the result matches the classic unpaired two-proportion calculation at p = 0.5 (Lehr's rule
/// gives δ ≈ 2/√n: 35 pts at n = 32). It is a conservative planning default, not a strict
/// worst case: discordance can reach 1 (deployments disagree on every item), but two
/// deployments of the same model agree far more often, and then pairing detects much smaller
/// differences — pass the observed [`PairedComparison::discordance`] when you have one.
///
/// Do not confuse this with the Wilson half-width ("n = 32 gives about ±16 pp"): that is the
/// uncertainty of *one* score; detecting a *difference* with 80 % power needs roughly twice
/// that.
///
/// # Errors
/// As [`min_detectable_difference_with_discordance`].
pub fn min_detectable_difference(
    n_pairs: u64,
    alpha: f64,
    power: f64,
) -> Result<MinDetectableDifference, StatsError> {
    min_detectable_difference_with_discordance(n_pairs, alpha, power, 0.5)
}

/// Minimum detectable difference for McNemar's test, from the normal approximation of
/// Connor (1987, *Biometrics* 43:207–211):
///
/// `n = (z_{1−α/2} · √ψ + z_{power} · √(ψ − δ²))² / δ²`
///
/// solved for δ by bisection, where ψ = `discordance` is the probability that the two
/// deployments disagree on an item and δ the difference in accuracy. Since `|δ| ≤ ψ`, a
/// sample too small to detect even δ = ψ yields `difference: None`. The approximation
/// ignores the exact test's discreteness and is optimistic for very few discordant pairs.
///
/// # Errors
/// [`StatsError::NoData`] for `n_pairs == 0`; [`StatsError::InvalidProbability`] unless
/// `0 < alpha < 1`, `0.5 ≤ power < 1` (below 0.5 the planning question is meaningless and the
/// equation stops being monotone) and `0 < discordance ≤ 1`.
pub fn min_detectable_difference_with_discordance(
    n_pairs: u64,
    alpha: f64,
    power: f64,
    discordance: f64,
) -> Result<MinDetectableDifference, StatsError> {
    if n_pairs == 0 {
        return Err(StatsError::NoData { what: "n_pairs" });
    }
    // Written as negated ranges so that NaN is rejected too.
    if !(alpha > 0.0 && alpha < 1.0) {
        return Err(StatsError::InvalidProbability {
            name: "alpha",
            value: alpha,
        });
    }
    if !(0.5..1.0).contains(&power) {
        return Err(StatsError::InvalidProbability {
            name: "power",
            value: power,
        });
    }
    if !(discordance > 0.0 && discordance <= 1.0) {
        return Err(StatsError::InvalidProbability {
            name: "discordance",
            value: discordance,
        });
    }
    let z_alpha = normal::quantile(1.0 - alpha / 2.0);
    let z_power = normal::quantile(power);
    let psi = discordance;
    let sqrt_n = (n_pairs as f64).sqrt();
    // f is increasing in δ (z_power ≥ 0), negative at 0; a root exists iff f(ψ) ≥ 0.
    let f = |d: f64| sqrt_n * d - z_alpha * psi.sqrt() - z_power * (psi - d * d).max(0.0).sqrt();

    let difference = if f(psi) < 0.0 {
        None
    } else {
        let (mut lo, mut hi) = (0.0_f64, psi);
        // 100 halvings take the bracket below f64 resolution for any ψ ≤ 1.
        for _ in 0..100 {
            let mid = 0.5 * (lo + hi);
            if f(mid) < 0.0 { lo = mid } else { hi = mid }
        }
        Some(hi)
    };
    // Rounding up: detecting 10.8 items of difference needs 11 items in practice. The small
    // slack keeps an exact integer (e.g. 11.000000000000002) from becoming 12.
    let items = difference.map(|d| (d * n_pairs as f64 - 1e-9).ceil().max(0.0) as u64);
    Ok(MinDetectableDifference {
        n_pairs,
        alpha,
        power,
        discordance,
        difference,
        items,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        ((a - b) / b).abs() < tol
    }

    // Known values: exact two-sided binomial on the discordant pairs, 2 · Σ_{i ≤ min} C(m, i)/2^m,
    // computed with exact big-integer rationals (Python `fractions`), = R's
    // `binom.test(min(b, c), b + c, 0.5)$p.value`.
    #[test]
    fn exact_p_values() {
        let cases: [(u64, u64, f64); 10] = [
            (1, 9, 0.021_484_375), // 2 · 11/1024, by hand
            (0, 5, 0.0625),        // 2/32: five discordant pairs cannot reach 0.05
            (0, 6, 0.031_25),      // 2/64
            (3, 12, 0.035_156_25), // 2 · 576/32768
            (10, 25, 0.016_673_847_800_120_71),
            (40, 60, 0.056_887_933_640_980_79),
            (950, 1050, 0.026_824_146_240_280_695),
            (900, 1100, 8.457_089_535_503_927e-6),
            (1200, 1300, 0.047_681_865_221_043_604),
            (1000, 1000, 1.0),
        ];
        for (b, c, want) in cases {
            let got = mcnemar_exact_p_value(b, c);
            assert!(
                close(got, want, 1e-10),
                "b={b} c={c}: got {got}, want {want}"
            );
            assert_eq!(got, mcnemar_exact_p_value(c, b), "symmetric in b, c");
        }
        assert_eq!(mcnemar_exact_p_value(0, 0), 1.0);
        // 2 · 2^-2000 is below the smallest f64: an honest 0, not NaN or a panic.
        assert_eq!(mcnemar_exact_p_value(0, 2000), 0.0);
    }

    #[test]
    fn from_pairs_fills_the_table() {
        // 20 items: 10 both right, 1 only A, 6 only B, 3 both wrong.
        let pairs = std::iter::repeat_n((true, true), 10)
            .chain(std::iter::once((true, false)))
            .chain(std::iter::repeat_n((false, true), 6))
            .chain(std::iter::repeat_n((false, false), 3));
        let cmp = PairedComparison::from_pairs(pairs).unwrap();
        assert_eq!(
            (
                cmp.n_pairs,
                cmp.both_correct,
                cmp.only_a,
                cmp.only_b,
                cmp.both_wrong
            ),
            (20, 10, 1, 6, 3)
        );
        assert_eq!(cmp.delta_items, 5);
        assert!((cmp.delta_pts - 25.0).abs() < 1e-12);
        assert_eq!(
            (cmp.accuracy_a.successes, cmp.accuracy_b.successes),
            (11, 16)
        );
        // 2 · (1 + 7)/128 = 0.125, by hand.
        assert!((cmp.p_value - 0.125).abs() < 1e-14);
        assert_eq!(cmp.discordant(), 7);
        assert!((cmp.discordance() - 0.35).abs() < 1e-12);
    }

    #[test]
    fn b_minus_a_sign_convention() {
        let cmp = PairedComparison::from_counts(0, 9, 1, 0).unwrap();
        assert_eq!(cmp.delta_items, -8);
        assert!(PairedComparison::from_counts(0, 0, 0, 0).is_err());
        assert!(PairedComparison::from_pairs(std::iter::empty()).is_err());
    }

    #[test]
    fn mdd_solves_connor_equation() {
        // Connor (1987) round trip: plugging δ back into the sample-size formula returns n.
        let za = 1.959_963_984_540_054;
        let zb = 0.841_621_233_572_914_4;
        for (n, psi) in [(16u64, 0.5), (32, 0.5), (64, 0.5), (100, 0.1), (32, 1.0)] {
            let m = min_detectable_difference_with_discordance(n, 0.05, 0.8, psi).unwrap();
            let d = m.difference.unwrap();
            let n_back = (za * psi.sqrt() + zb * (psi - d * d).sqrt()).powi(2) / (d * d);
            assert!(
                close(n_back, n as f64, 1e-9),
                "n={n} ψ={psi}: δ={d} gives n={n_back}"
            );
        }
    }

    #[test]
    fn mdd_known_values() {
        // Values from solving Connor's equation independently (Python bisection,
        // statistics.NormalDist quantiles): n = 32, ψ = 0.5 → 0.33745; n = 16 → 0.45955.
        let m32 = min_detectable_difference(32, 0.05, 0.8).unwrap();
        assert!(close(
            m32.difference.unwrap(),
            0.337_445_863_059_912_8,
            1e-9
        ));
        assert_eq!(m32.items, Some(11));
        let m16 = min_detectable_difference(16, 0.05, 0.8).unwrap();
        assert!(close(
            m16.difference.unwrap(),
            0.459_550_603_900_822_1,
            1e-9
        ));
        // Lehr's rule for two independent proportions at p = 0.5, δ ≈ 2/√n, agrees within a few pts.
        assert!((m32.difference.unwrap() - 2.0 / 32f64.sqrt()).abs() < 0.02);
        // Low discordance: n = 100, ψ = 0.1 → 0.087553.
        let low = min_detectable_difference_with_discordance(100, 0.05, 0.8, 0.1).unwrap();
        assert!(close(
            low.difference.unwrap(),
            0.087_553_488_934_613_98,
            1e-9
        ));
    }

    #[test]
    fn mdd_undetectable_and_invalid() {
        // n = 8, ψ = 0.5: even δ = ψ leaves f(ψ) < 0.
        let m = min_detectable_difference(8, 0.05, 0.8).unwrap();
        assert_eq!((m.difference, m.items), (None, None));
        assert!(min_detectable_difference(0, 0.05, 0.8).is_err());
        assert!(min_detectable_difference(32, 0.0, 0.8).is_err());
        assert!(min_detectable_difference(32, f64::NAN, 0.8).is_err());
        assert!(min_detectable_difference(32, 0.05, 0.3).is_err());
        assert!(min_detectable_difference_with_discordance(32, 0.05, 0.8, 0.0).is_err());
    }
}

//! KL divergence between two next-token distributions that are known only by their top-K
//! (what an OpenAI-compatible server returns as `top_logprobs`), and the summary of many such
//! figures: mean and median with a bootstrap interval of the mean. Rules in docs/statistics.md
//! ("KL divergence from top-K logprobs").
//!
//! The estimator coarse-grains both distributions onto the same partition: one cell per token
//! that BOTH lists carry, and one tail bucket holding everything else (a token in one list but
//! not the other, and every unlisted token). Both masses of every cell are then known exactly —
//! the tail's is one minus the shared mass — so nothing is guessed about unlisted tokens, and
//! by the log-sum inequality the figure is a lower bound of the full-vocabulary KL (it misses
//! only the divergence inside the tail bucket).

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::StatsError;
use crate::order::{median_sorted, quantile_sorted};

/// The smallest mass a log ratio uses. A tail is `1 − Σ shared`, and probabilities read from
/// float32 logprobs carry ~6e-8 relative error each, so a sum of 20 is known to ~1e-6: a tail
/// below that is rounding, not mass. The floor keeps such a tail (or a listed probability of
/// exactly 0, which llama.cpp writes as the lowest float) from making a term infinite; the
/// term's weight is the unfloored mass, so a floored cell contributes at most ~1e-6·ln(1e6).
pub const MASS_FLOOR: f64 = 1e-6;

/// KL(reference ‖ candidate) of one position, in nats, with what it rested on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct KlTerms {
    /// KL of the coarse-grained distributions, in nats (≥ 0; a rounding below 0 reads 0).
    pub kl: f64,
    /// Distinct tokens listed by both sides (the partition's cells, the tail aside).
    pub shared: u32,
    /// Probability mass each side listed (its top-K).
    pub reference_listed: f64,
    pub candidate_listed: f64,
    /// Mass of the tail bucket on each side: one minus the mass of the shared tokens.
    pub reference_tail: f64,
    pub candidate_tail: f64,
}

/// Probabilities by token; a token listed twice (two ids with the same bytes) is one outcome
/// whose probability is their sum.
fn merge<K: Ord + Clone>(
    list: &[(K, f64)],
    side: &'static str,
) -> Result<BTreeMap<K, f64>, StatsError> {
    let mut m = BTreeMap::new();
    for (k, lp) in list {
        // A log probability is ≤ 0; rounding may print +1e-7 for a certain token.
        if lp.is_nan() || *lp > 1e-6 {
            return Err(StatsError::InvalidProbability {
                name: side,
                value: *lp,
            });
        }
        *m.entry(k.clone()).or_insert(0.0) += lp.min(0.0).exp();
    }
    if m.is_empty() {
        return Err(StatsError::NoData { what: side });
    }
    Ok(m)
}

/// `p · ln(p / q)` with both masses floored at [`MASS_FLOOR`] inside the log.
fn term(p: f64, q: f64) -> f64 {
    if p <= 0.0 {
        return 0.0;
    }
    p * (p.max(MASS_FLOOR) / q.max(MASS_FLOOR)).ln()
}

/// KL(reference ‖ candidate) from each side's top-K `(token, logprob)` list.
///
/// # Errors
/// [`StatsError::NoData`] when a list is empty; [`StatsError::InvalidProbability`] for a NaN
/// or a positive log probability.
pub fn kl_top_k<K: Ord + Clone>(
    reference: &[(K, f64)],
    candidate: &[(K, f64)],
) -> Result<KlTerms, StatsError> {
    let p = merge(reference, "reference top-K")?;
    let q = merge(candidate, "candidate top-K")?;
    let mut kl = 0.0;
    let mut shared = 0u32;
    let (mut shared_p, mut shared_q) = (0.0, 0.0);
    for (k, &pk) in &p {
        if let Some(&qk) = q.get(k) {
            shared += 1;
            shared_p += pk;
            shared_q += qk;
            kl += term(pk, qk);
        }
    }
    let reference_tail = (1.0 - shared_p).max(0.0);
    let candidate_tail = (1.0 - shared_q).max(0.0);
    kl += term(reference_tail, candidate_tail);
    Ok(KlTerms {
        kl: kl.max(0.0),
        shared,
        reference_listed: p.values().sum(),
        candidate_listed: q.values().sum(),
        reference_tail,
        candidate_tail,
    })
}

/// Many per-prompt KL figures: their mean with a percentile-bootstrap 95 % interval, median
/// and maximum.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct KlSummary {
    pub n: u64,
    /// Mean KL, in nats.
    pub mean: f64,
    /// 2.5th and 97.5th percentiles of the bootstrap distribution of the mean.
    pub low: f64,
    pub high: f64,
    pub median: f64,
    pub max: f64,
    /// Bootstrap resamples drawn.
    pub resamples: u32,
}

/// Resamples of the bootstrap: the 2.5 % quantile of 2000 means moves by well under a tenth
/// of the interval's width between seeds.
pub const BOOTSTRAP_RESAMPLES: u32 = 2000;

/// Summarize per-prompt KL `values`. `draw(n)` must return a uniform index in `0..n`: the
/// caller's seeded generator, so an artifact's interval replays exactly.
///
/// # Errors
/// [`StatsError::NoData`] when no value is finite.
pub fn summarize(
    values: &[f64],
    resamples: u32,
    draw: &mut dyn FnMut(usize) -> usize,
) -> Result<KlSummary, StatsError> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return Err(StatsError::NoData { what: "KL values" });
    }
    let n = v.len();
    let mean = v.iter().sum::<f64>() / n as f64;
    let mut means: Vec<f64> = (0..resamples.max(1))
        .map(|_| (0..n).map(|_| v[draw(n).min(n - 1)]).sum::<f64>() / n as f64)
        .collect();
    means.sort_by(f64::total_cmp);
    v.sort_by(f64::total_cmp);
    Ok(KlSummary {
        n: n as u64,
        mean,
        // The bootstrap means and the mean are sums of the same values in another order: keep
        // the interval around the estimate whatever the rounding.
        low: quantile_sorted(&means, 0.025).min(mean),
        high: quantile_sorted(&means, 0.975).max(mean),
        median: median_sorted(&v),
        max: v[n - 1],
        resamples: resamples.max(1),
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn lp(pairs: &[(&'static str, f64)]) -> Vec<(&'static str, f64)> {
        pairs.iter().map(|(k, p)| (*k, p.ln())).collect()
    }

    /// A tiny deterministic index source for the tests (the suites pass SplitMix64).
    fn lcg(seed: u64) -> impl FnMut(usize) -> usize {
        let mut s = seed;
        move |n| {
            s = s
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            ((s >> 33) % n as u64) as usize
        }
    }

    #[test]
    fn identical_lists_give_exactly_zero() {
        let a = lp(&[("a", 0.5), ("b", 0.3), ("c", 0.1)]);
        let t = kl_top_k(&a, &a).unwrap();
        assert_eq!(t.kl, 0.0);
        assert_eq!(t.shared, 3);
        assert!((t.reference_tail - 0.1).abs() < 1e-12);
    }

    #[test]
    fn full_support_matches_the_closed_form() {
        // Both lists carry the whole distribution: the tail is empty and the figure is the
        // textbook KL. P = (0.5, 0.5), Q = (0.9, 0.1): 0.5 ln(0.5/0.9) + 0.5 ln(0.5/0.1).
        let p = lp(&[("x", 0.5), ("y", 0.5)]);
        let q = lp(&[("x", 0.9), ("y", 0.1)]);
        let want = 0.5 * (0.5f64 / 0.9).ln() + 0.5 * (0.5f64 / 0.1).ln();
        assert!((kl_top_k(&p, &q).unwrap().kl - want).abs() < 1e-12);
        // Not symmetric: KL(Q‖P) differs.
        let back = 0.9 * (0.9f64 / 0.5).ln() + 0.1 * (0.1f64 / 0.5).ln();
        assert!((kl_top_k(&q, &p).unwrap().kl - back).abs() < 1e-12);
    }

    #[test]
    fn tokens_listed_by_one_side_go_to_the_tail_bucket() {
        // Reference lists a, b; candidate lists a, c. Shared: a. Tails: 1 − 0.6 and 1 − 0.3.
        let p = lp(&[("a", 0.6), ("b", 0.3)]);
        let q = lp(&[("a", 0.3), ("c", 0.6)]);
        let t = kl_top_k(&p, &q).unwrap();
        let want = 0.6 * (0.6f64 / 0.3).ln() + 0.4 * (0.4f64 / 0.7).ln();
        assert!((t.kl - want).abs() < 1e-12, "{t:?}");
        assert_eq!(t.shared, 1);
        assert!((t.reference_tail - 0.4).abs() < 1e-12);
        assert!((t.candidate_tail - 0.7).abs() < 1e-12);
    }

    #[test]
    fn the_estimate_never_exceeds_the_full_vocabulary_kl() {
        // Full distributions over 6 tokens, truncated to their top 3: the coarse-grained figure
        // is a lower bound (log-sum inequality).
        let full_p: [(&str, f64); 6] = [
            ("a", 0.4),
            ("b", 0.25),
            ("c", 0.15),
            ("d", 0.1),
            ("e", 0.06),
            ("f", 0.04),
        ];
        let full_q: [(&str, f64); 6] = [
            ("a", 0.2),
            ("c", 0.3),
            ("e", 0.2),
            ("b", 0.1),
            ("d", 0.1),
            ("f", 0.1),
        ];
        let exact: f64 = full_p
            .iter()
            .map(|(k, p)| {
                let q = full_q.iter().find(|(j, _)| j == k).unwrap().1;
                p * (p / q).ln()
            })
            .sum();
        let top = |v: &[(&'static str, f64)]| lp(&v[..3]);
        let mut sorted_q = full_q;
        sorted_q.sort_by(|a, b| b.1.total_cmp(&a.1));
        let est = kl_top_k(&top(&full_p), &top(&sorted_q)).unwrap().kl;
        assert!(est > 0.0 && est <= exact + 1e-12, "{est} vs {exact}");
    }

    #[test]
    fn duplicates_merge_and_zero_probabilities_are_floored() {
        // Two ids with the same bytes are one outcome.
        let p = vec![("a", 0.25f64.ln()), ("a", 0.25f64.ln()), ("b", 0.5f64.ln())];
        let q = lp(&[("a", 0.5), ("b", 0.5)]);
        assert!(kl_top_k(&p, &q).unwrap().kl < 1e-12);
        // llama.cpp writes p = 0 as the lowest float: finite, floored, never infinite.
        let zero = vec![("a", f32::MIN as f64), ("b", 0.0)];
        let t = kl_top_k(&lp(&[("a", 0.5), ("b", 0.5)]), &zero).unwrap();
        assert!(t.kl.is_finite() && t.kl > 1.0);
    }

    #[test]
    fn bad_input_is_an_error_not_a_nan() {
        let ok = lp(&[("a", 0.5)]);
        assert!(matches!(
            kl_top_k::<&str>(&[], &ok),
            Err(StatsError::NoData { .. })
        ));
        assert!(kl_top_k(&[("a", f64::NAN)], &ok).is_err());
        assert!(kl_top_k(&[("a", 0.5)], &ok).is_err());
    }

    #[test]
    fn summary_of_constant_values_has_a_point_interval() {
        let s = summarize(&[0.25; 10], 500, &mut lcg(1)).unwrap();
        assert_eq!(
            (s.low, s.mean, s.median, s.high, s.max),
            (0.25, 0.25, 0.25, 0.25, 0.25)
        );
        let zeros = summarize(&[0.0; 30], 500, &mut lcg(1)).unwrap();
        assert_eq!((zeros.low, zeros.mean, zeros.high), (0.0, 0.0, 0.0));
    }

    #[test]
    fn bootstrap_interval_covers_the_mean_and_replays() {
        let v: Vec<f64> = (0..40).map(|i| (i % 7) as f64 * 0.01).collect();
        let a = summarize(&v, BOOTSTRAP_RESAMPLES, &mut lcg(7)).unwrap();
        let b = summarize(&v, BOOTSTRAP_RESAMPLES, &mut lcg(7)).unwrap();
        assert_eq!(a, b, "the same seed gives the same interval");
        assert!(a.low < a.mean && a.mean < a.high);
        // The mean's standard error is sd/√n ≈ 0.02/6.3: the 95 % interval is about ±0.006.
        assert!(a.high - a.low > 0.006 && a.high - a.low < 0.02, "{a:?}");
        assert_eq!(a.median, 0.03);
        assert_eq!(a.max, 0.06);
        assert!(summarize(&[], 10, &mut lcg(1)).is_err());
    }
}

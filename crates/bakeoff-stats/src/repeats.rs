//! Repeated measurements of one figure (`bench run --repeat N`): the mean with a 95 % interval
//! across repeats — Student-t for a figure of any sign, on the log scale for one that cannot be
//! negative (a rate, a latency, a power) so that its bounds never leave its range — and whether
//! the repeats disagree beyond their own within-run uncertainty (Cochran's Q heterogeneity
//! test). Rules in docs/metrics.md ("Repeats") and docs/statistics.md ("Intervals that stay
//! in range").

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Two-sided 97.5 % quantiles of Student's t for 1…30 degrees of freedom (standard tables).
const T_975: [f64; 30] = [
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
    2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
    2.052, 2.048, 2.045, 2.042,
];

/// 95 % quantiles of χ² for 1…10 degrees of freedom (standard tables).
const CHI2_95: [f64; 10] = [
    3.841, 5.991, 7.815, 9.488, 11.070, 12.592, 14.067, 15.507, 16.919, 18.307,
];

/// t(0.975, df). Past the table, 1.96 + 2.5/df stays within 0.002 of the exact value.
pub fn t_975(df: usize) -> f64 {
    match df {
        0 => f64::INFINITY,
        d if d <= T_975.len() => T_975[d - 1],
        d => 1.96 + 2.5 / d as f64,
    }
}

/// χ²(0.95, df). Past the table, the Wilson–Hilferty approximation (within 0.3 %).
pub fn chi2_95(df: usize) -> f64 {
    match df {
        0 => f64::INFINITY,
        d if d <= CHI2_95.len() => CHI2_95[d - 1],
        d => {
            let k = d as f64;
            let a = 2.0 / (9.0 * k);
            k * (1.0 - a + 1.645 * a.sqrt()).powi(3)
        }
    }
}

/// A figure measured `n` times: its mean and the 95 % interval of that mean.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MeanInterval {
    pub n: u64,
    pub mean: f64,
    pub low: f64,
    pub high: f64,
    /// Each repeat's value, in run order.
    pub values: Vec<f64>,
}

impl MeanInterval {
    /// The Student-t half-width of the mean, t(0.975, n − 1) · s/√n, from the repeats' values
    /// (whatever scale `low` and `high` were drawn on); the printed interval's half-width where
    /// it is symmetric.
    pub fn half_width(&self) -> f64 {
        match self.standard_error() {
            Some(se) => t_975(self.values.len().saturating_sub(1)) * se,
            // An interval stored without its values (hand-written): its own half-width.
            None => (self.high - self.low) / 2.0,
        }
    }

    /// The standard error of the mean, s/√n, from the repeats' values; `None` below two.
    pub fn standard_error(&self) -> Option<f64> {
        let v = &self.values;
        if v.len() < 2 {
            return None;
        }
        let n = v.len() as f64;
        let mean = v.iter().sum::<f64>() / n;
        let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
        Some((var / n).sqrt())
    }

    /// The half-width as a share of the mean, t(0.975, n − 1) · s/(√n · |mean|) (0.05: the mean
    /// is known to ±5 %; on the log scale, the interval's half-width in log units); `None` for
    /// a mean of zero or a non-finite one (docs/statistics.md, "Relative width and repeats
    /// needed").
    pub fn relative_half_width(&self) -> Option<f64> {
        let m = self.mean.abs();
        let h = self.half_width();
        (m.is_finite() && m > 0.0 && h.is_finite()).then(|| h / m)
    }

    /// The interval is too wide to say much: its relative half-width is 100 % or more, where a
    /// symmetric interval of a non-negative figure would reach below zero (n = 2 with any real
    /// spread: t(0.975, 1) = 12.7). Renderers say so beside it (docs/statistics.md).
    pub fn too_few(&self) -> bool {
        self.relative_half_width().is_none_or(|r| r >= 1.0)
    }

    /// How precise the mean is against `target` (a share of the mean, 0.05 for ±5 %), and how
    /// many repeats would bring the half-width there if the repeats' spread stays what it was.
    /// `None` without a relative width or below two repeats.
    pub fn precision(&self, target: f64) -> Option<RelativePrecision> {
        let relative_half_width = self.relative_half_width()?;
        if self.n < 2 || !(target.is_finite() && target > 0.0) {
            return None;
        }
        let n = self.values.len().max(self.n as usize);
        // The sample standard deviation behind the interval: half-width = t(n−1)·s/√n.
        let sd = self.half_width() * (n as f64).sqrt() / t_975(n - 1);
        let goal = target * self.mean.abs();
        let repeats_needed = (2..=MAX_REPEATS_ESTIMATE)
            .find(|&m| t_975(m as usize - 1) * sd / (m as f64).sqrt() <= goal);
        Some(RelativePrecision {
            relative_half_width,
            target,
            repeats_needed,
        })
    }
}

/// The most repeats [`MeanInterval::precision`] searches; past it, "more than this many".
pub const MAX_REPEATS_ESTIMATE: u64 = 10_000;

/// The goal for output tokens/s under `--repeat` (docs/statistics.md, "Relative width and
/// repeats needed"): a level's mean known to ±5 %.
pub const RELATIVE_HALF_WIDTH_GOAL: f64 = 0.05;

/// A repeated figure's relative precision and the repeats a goal needs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RelativePrecision {
    /// The 95 % interval's half-width ÷ |mean| (0.05: ±5 %).
    pub relative_half_width: f64,
    /// The goal for `relative_half_width`.
    pub target: f64,
    /// The fewest repeats m with t(0.975, m − 1)·s/√m ≤ target·|mean|, s the repeats' standard
    /// deviation so far; at most the current count when the goal is already met. Absent past
    /// [`MAX_REPEATS_ESTIMATE`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeats_needed: Option<u64>,
}

/// Mean and Student-t 95 % interval of `values`; `None` below two finite values (one run has
/// no spread to speak of: say so, never print a zero-width interval).
pub fn mean_interval(values: &[f64]) -> Option<MeanInterval> {
    let v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    if v.len() < 2 {
        return None;
    }
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    let half = t_975(v.len() - 1) * (var / n).sqrt();
    Some(MeanInterval {
        n: v.len() as u64,
        mean,
        low: mean - half,
        high: mean + half,
        values: v,
    })
}

/// Mean and 95 % interval of `values` of a figure that cannot be negative (a rate, a latency,
/// a power, tokens per joule): the arithmetic mean, and the interval drawn on the log scale,
/// mean · exp(∓ t(0.975, n − 1) · s/(√n · mean)) — the delta-method interval of ln(mean), so
/// its bounds stay above zero and it is as wide as the Student-t one when that is narrow
/// (docs/statistics.md, "Intervals that stay in range"). A mean of zero (every value zero)
/// gets [0, 0]. `None` below two finite values, or when a value is negative (then the
/// figure can be negative: use [`mean_interval`]).
pub fn mean_interval_nonnegative(values: &[f64]) -> Option<MeanInterval> {
    let mut m = mean_interval(values)?;
    if m.values.iter().any(|x| *x < 0.0) {
        return None;
    }
    let r = m.relative_half_width().unwrap_or(0.0);
    m.low = m.mean * (-r).exp();
    m.high = m.mean * r.exp();
    Some(m)
}

/// Cochran's Q: do `values` (each with its own standard error) disagree by more than their
/// standard errors allow? The inverse-variance weighted spread against χ²(n−1) at 5 %.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Heterogeneity {
    pub q: f64,
    pub df: u64,
    /// χ²(0.95, df): Q above it rejects "the repeats measure one value".
    pub critical: f64,
    pub disagree: bool,
}

/// `None` below two values, or when a standard error is missing or not positive (a value
/// with no stated uncertainty cannot be tested against it).
pub fn cochran_q(values: &[f64], standard_errors: &[f64]) -> Option<Heterogeneity> {
    if values.len() < 2 || values.len() != standard_errors.len() {
        return None;
    }
    if standard_errors.iter().any(|s| !(s.is_finite() && *s > 0.0)) {
        return None;
    }
    let w: Vec<f64> = standard_errors.iter().map(|s| 1.0 / (s * s)).collect();
    let wsum: f64 = w.iter().sum();
    let pooled = values.iter().zip(&w).map(|(x, w)| x * w).sum::<f64>() / wsum;
    let q = values
        .iter()
        .zip(&w)
        .map(|(x, w)| w * (x - pooled).powi(2))
        .sum::<f64>();
    let df = values.len() - 1;
    let critical = chi2_95(df);
    Some(Heterogeneity {
        q,
        df: df as u64,
        critical,
        disagree: q > critical,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn interval_of_known_values() {
        // mean 10, sd 1 (values 9, 10, 11), n 3: half-width 4.303 × 1/√3 = 2.484.
        let m = mean_interval(&[9.0, 10.0, 11.0]).unwrap();
        assert!((m.mean - 10.0).abs() < 1e-12);
        assert!((m.half_width() - 2.484).abs() < 1e-3, "{m:?}");
    }

    #[test]
    fn relative_width_and_repeats_needed() {
        // mean 100, sd 10 (values 90, 100, 110), n 3: half-width 4.303·10/√3 = 24.84 → ±24.8 %.
        let m = mean_interval(&[90.0, 100.0, 110.0]).unwrap();
        let p = m.precision(RELATIVE_HALF_WIDTH_GOAL).unwrap();
        assert!((p.relative_half_width - 0.2484).abs() < 1e-3, "{p:?}");
        // ±5 % of 100 is 5: the fewest m with t(m−1)·10/√m ≤ 5 is 18 (t(17) = 2.110:
        // 2.110·10/√18 = 4.97; m = 17: 2.120·10/√17 = 5.14). The naive n·(w/5 %)² = 3·(24.84/5)²
        // ≈ 74 overstates it, since it keeps t at n = 3's 4.303.
        assert_eq!(p.repeats_needed, Some(18));
        // Already within the goal: the estimate is at most the repeats so far.
        let tight = mean_interval(&[99.9, 100.0, 100.1]).unwrap();
        let p = tight.precision(RELATIVE_HALF_WIDTH_GOAL).unwrap();
        assert!(p.relative_half_width < 0.005, "{p:?}");
        assert_eq!(p.repeats_needed, Some(2));
        // A mean of zero has no relative width; a hopeless spread has no estimate.
        assert!(
            mean_interval(&[-1.0, 1.0])
                .unwrap()
                .precision(0.05)
                .is_none()
        );
        let wild = mean_interval(&[1.0, 1000.0, 1.0]).unwrap();
        assert_eq!(wild.precision(0.0001).unwrap().repeats_needed, None);
    }

    /// The issue-29 case: two repeats, 6.0 tok/s on average, whose Student-t interval read
    /// [−7.0, 18.9] — a negative rate. On the log scale the bounds stay positive, the mean is
    /// the same, and the interval says how little two repeats tell.
    #[test]
    fn a_nonnegative_figure_never_gets_a_negative_bound() {
        let t = mean_interval(&[4.98, 7.02]).unwrap();
        assert!(
            t.low < 0.0,
            "the symmetric interval reaches below zero: {t:?}"
        );
        let m = mean_interval_nonnegative(&[4.98, 7.02]).unwrap();
        assert!((m.mean - 6.0).abs() < 1e-12);
        assert!(m.low > 0.0 && m.low < m.mean && m.high > m.mean, "{m:?}");
        // ln bounds symmetric about ln(mean): low · high = mean².
        assert!((m.low * m.high - 36.0).abs() < 1e-9, "{m:?}");
        assert!(m.too_few(), "{m:?}");
        // Narrow intervals agree with Student-t to first order.
        let s = mean_interval(&[990.0, 1000.0, 1010.0]).unwrap();
        let l = mean_interval_nonnegative(&[990.0, 1000.0, 1010.0]).unwrap();
        assert!(
            (s.low - l.low).abs() < 0.5 && (s.high - l.high).abs() < 0.5,
            "{s:?} {l:?}"
        );
        assert!((s.half_width() - l.half_width()).abs() < 1e-9);
        assert!(!l.too_few());
        // Zeros stay zero; a negative value is not this function's figure.
        let z = mean_interval_nonnegative(&[0.0, 0.0]).unwrap();
        assert_eq!((z.low, z.mean, z.high), (0.0, 0.0, 0.0));
        assert!(mean_interval_nonnegative(&[-1.0, 2.0]).is_none());
        // The relative width and the repeats needed read the same on either scale.
        let p = mean_interval_nonnegative(&[90.0, 100.0, 110.0])
            .unwrap()
            .precision(RELATIVE_HALF_WIDTH_GOAL)
            .unwrap();
        assert_eq!(p.repeats_needed, Some(18));
    }

    #[test]
    fn one_value_has_no_interval() {
        assert!(mean_interval(&[5.0]).is_none());
        assert!(mean_interval(&[5.0, f64::NAN]).is_none());
    }

    #[test]
    fn agreeing_repeats_are_not_heterogeneous() {
        let h = cochran_q(&[100.0, 101.0, 99.0], &[2.0, 2.0, 2.0]).unwrap();
        assert!(!h.disagree, "{h:?}");
    }

    #[test]
    fn repeats_far_apart_beyond_their_errors_disagree() {
        let h = cochran_q(&[100.0, 130.0, 99.0], &[2.0, 2.0, 2.0]).unwrap();
        assert!(h.disagree, "{h:?}");
        assert!(cochran_q(&[1.0, 2.0], &[0.0, 1.0]).is_none());
    }

    #[test]
    fn quantiles_past_the_tables_are_close() {
        assert!((t_975(60) - 2.000).abs() < 0.005);
        assert!((chi2_95(20) - 31.410).abs() < 0.1, "{}", chi2_95(20));
    }
}

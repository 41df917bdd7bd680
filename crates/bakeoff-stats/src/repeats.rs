//! Repeated measurements of one figure (`bench run --repeat N`): the mean with a 95 % Student-t
//! interval across repeats, and whether the repeats disagree beyond their own within-run
//! uncertainty (Cochran's Q heterogeneity test). Rules in docs/metrics.md ("Repeats").

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
    /// Half the interval's width.
    pub fn half_width(&self) -> f64 {
        (self.high - self.low) / 2.0
    }
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

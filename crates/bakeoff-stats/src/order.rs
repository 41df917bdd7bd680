//! Order statistics, written once: the median, the linear-interpolation quantile the bootstraps
//! read their intervals with, and the nearest-rank percentile of exact values.
//!
//! Two quantile rules live here on purpose. The bootstraps' intervals (`cluster`, `kl`) take
//! R's type 7 (linear between order statistics), the usual rule for a percentile interval. The
//! per-item percentiles a report computes from an artifact's records take the nearest rank
//! (the smallest value with at least `p` % of the values at or below it): the rule of
//! HdrHistogram's `value_at_quantile` behind [`crate::LatencySummary`], so a report's p99 from
//! exact values and a load step's p99 from its histogram say the same thing.

/// The `q` quantile of sorted, non-empty `v`, linear between order statistics (R's type 7).
pub(crate) fn quantile_sorted(v: &[f64], q: f64) -> f64 {
    let pos = q * (v.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = pos.ceil() as usize;
    v[lo] + (v[hi] - v[lo]) * (pos - lo as f64)
}

/// The median of sorted, non-empty `v`: the middle value, or the mean of the two middle ones.
pub(crate) fn median_sorted(v: &[f64]) -> f64 {
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// The median of `values` (in any order). Non-finite values are dropped first: a NaN or an
/// infinity is a missing reading, not an extreme one, and sorted in it would move the middle.
/// `None` when no finite value is left.
pub fn median(mut values: Vec<f64>) -> Option<f64> {
    values.retain(|x| x.is_finite());
    if values.is_empty() {
        return None;
    }
    values.sort_by(f64::total_cmp);
    Some(median_sorted(&values))
}

/// The nearest-rank `p`th percentile (`p` in 0–100) of sorted `values`: the smallest value with
/// at least `p` % of them at or below it. `None` when `values` is empty.
pub fn percentile_nearest_rank(sorted: &[f64], p: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted.get(rank.clamp(1, sorted.len()) - 1).copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_median_drops_non_finite_values() {
        assert_eq!(median(vec![3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(vec![4.0, 1.0, 3.0, 2.0]), Some(2.5));
        assert_eq!(median(vec![f64::NAN, 1.0, f64::INFINITY, 3.0]), Some(2.0));
        assert_eq!(median(vec![f64::NAN]), None);
        assert_eq!(median(Vec::new()), None);
    }

    #[test]
    fn type_7_interpolates_between_order_statistics() {
        let v = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(quantile_sorted(&v, 0.0), 1.0);
        assert_eq!(quantile_sorted(&v, 0.5), 2.5);
        assert_eq!(quantile_sorted(&v, 1.0), 4.0);
        assert!((quantile_sorted(&v, 0.25) - 1.75).abs() < 1e-12);
    }

    #[test]
    fn nearest_rank() {
        let v = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(percentile_nearest_rank(&v, 50.0), Some(2.0));
        assert_eq!(percentile_nearest_rank(&v, 99.0), Some(4.0));
        assert_eq!(percentile_nearest_rank(&v, 0.0), Some(1.0));
        assert_eq!(percentile_nearest_rank(&[], 50.0), None);
    }
}

//! Figures measured at many positions of a few replies: the positions of one reply are not
//! independent (damage that starts at token 5 stays), so intervals come from a cluster
//! bootstrap that resamples whole replies, never single positions (docs/statistics.md, "Damage
//! along the reply").

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::StatsError;
use crate::order::{median_sorted, quantile_sorted};

/// The mean and median of values pooled over clusters (replies), each with a 95 % interval
/// from a percentile bootstrap over clusters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ClusteredSummary {
    /// Clusters (replies) with at least one value.
    pub clusters: u64,
    /// Values over all clusters (positions).
    pub n: u64,
    pub mean: f64,
    /// 2.5th and 97.5th percentiles of the bootstrap distribution of the pooled mean.
    pub low: f64,
    pub high: f64,
    pub median: f64,
    pub median_low: f64,
    pub median_high: f64,
    pub max: f64,
    pub resamples: u32,
}

fn median_of(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    median_sorted(v)
}

/// Summarize `clusters` of values (non-finite values dropped, empty clusters ignored). `draw(n)`
/// returns a uniform index in `0..n` from the caller's seeded generator, so an artifact's
/// intervals replay exactly.
///
/// # Errors
/// [`StatsError::NoData`] when no cluster holds a finite value.
pub fn summarize_clustered(
    clusters: &[Vec<f64>],
    resamples: u32,
    draw: &mut dyn FnMut(usize) -> usize,
) -> Result<ClusteredSummary, StatsError> {
    let groups: Vec<Vec<f64>> = clusters
        .iter()
        .map(|g| {
            g.iter()
                .copied()
                .filter(|x| x.is_finite())
                .collect::<Vec<f64>>()
        })
        .filter(|g| !g.is_empty())
        .collect();
    if groups.is_empty() {
        return Err(StatsError::NoData {
            what: "values along the replies",
        });
    }
    let mut all: Vec<f64> = groups.iter().flatten().copied().collect();
    let n = all.len();
    let mean = all.iter().sum::<f64>() / n as f64;
    let median = median_of(&mut all);
    let max = all[n - 1];
    let k = groups.len();
    let resamples = resamples.max(1);
    let mut means = Vec::with_capacity(resamples as usize);
    let mut medians = Vec::with_capacity(resamples as usize);
    let mut pooled = Vec::with_capacity(n);
    for _ in 0..resamples {
        pooled.clear();
        for _ in 0..k {
            pooled.extend_from_slice(&groups[draw(k).min(k - 1)]);
        }
        means.push(pooled.iter().sum::<f64>() / pooled.len() as f64);
        medians.push(median_of(&mut pooled));
    }
    means.sort_by(f64::total_cmp);
    medians.sort_by(f64::total_cmp);
    Ok(ClusteredSummary {
        clusters: k as u64,
        n: n as u64,
        mean,
        low: quantile_sorted(&means, 0.025).min(mean),
        high: quantile_sorted(&means, 0.975).max(mean),
        median,
        median_low: quantile_sorted(&medians, 0.025).min(median),
        median_high: quantile_sorted(&medians, 0.975).max(median),
        max,
        resamples,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

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
    fn identical_replies_give_a_point_interval() {
        let s = summarize_clustered(&[vec![0.0; 5], vec![0.0; 3]], 500, &mut lcg(1)).unwrap();
        assert_eq!((s.clusters, s.n), (2, 8));
        assert_eq!((s.mean, s.low, s.high), (0.0, 0.0, 0.0));
        assert_eq!((s.median, s.median_low, s.median_high), (0.0, 0.0, 0.0));
    }

    #[test]
    fn one_damaged_reply_widens_the_interval_to_zero() {
        // Nine quiet replies and one whose every position differs: the positions are many,
        // but the evidence is one reply, and the lower bound says so.
        let mut c = vec![vec![0.0; 20]; 9];
        c.push(vec![0.5; 20]);
        let s = summarize_clustered(&c, 2000, &mut lcg(7)).unwrap();
        assert!((s.mean - 0.05).abs() < 1e-12);
        assert_eq!(s.low, 0.0, "{s:?}");
        assert!(s.high > s.mean);
        assert_eq!(s.median, 0.0);
    }

    #[test]
    fn nothing_finite_is_no_data() {
        assert!(summarize_clustered(&[vec![], vec![f64::NAN]], 10, &mut lcg(1)).is_err());
    }
}

//! B − A for one figure at one level, shared by the independent comparison (`compare.rs`) and
//! the paired one (`paired.rs`): each side's estimate, and the difference with Welch's 95 %
//! interval and its verdict.

use bakeoff_stats::repeats::t_975;
use serde::Serialize;

/// Degrees of freedom of a batch-means standard error over five slices.
pub(crate) const BATCH_DF: f64 = 4.0;

/// One side's estimate of one figure: mean, standard error and its degrees of freedom.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Estimate {
    pub mean: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub se: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub df: Option<f64>,
}

/// B − A for one figure at one level.
#[derive(Debug, Clone, Serialize)]
pub struct Difference {
    pub metric: &'static str,
    pub a: Estimate,
    pub b: Estimate,
    pub diff: f64,
    /// The 95 % interval of the difference, when both sides have a standard error.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub low: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub high: Option<f64>,
    /// `B higher`, `B lower`, `no difference detectable`, or `no interval (…)`.
    pub verdict: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct LevelComparison {
    pub label: String,
    pub differences: Vec<Difference>,
    /// Under a paired comparison (`bench run --versus`): how many repeats were paired.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pairs: Option<usize>,
    /// Figures that inform without a verdict: each side's speculative-decoding acceptance
    /// rate, when only one side speculates.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

pub(crate) fn difference(metric: &'static str, a: Estimate, b: Estimate) -> Difference {
    let diff = b.mean - a.mean;
    let interval = match (a.se, a.df, b.se, b.df) {
        (Some(sa), Some(da), Some(sb), Some(db)) if da > 0.0 && db > 0.0 => {
            let se = (sa * sa + sb * sb).sqrt();
            // Welch–Satterthwaite degrees of freedom.
            let num = (sa * sa + sb * sb).powi(2);
            let den = sa.powi(4) / da + sb.powi(4) / db;
            let df = if den > 0.0 { num / den } else { da + db };
            let t = t_975(df.floor().max(1.0) as usize);
            Some((diff - t * se, diff + t * se))
        }
        _ => None,
    };
    let verdict = match interval {
        Some((lo, _)) if lo > 0.0 => "B higher".to_string(),
        Some((_, hi)) if hi < 0.0 => "B lower".to_string(),
        Some(_) => "no difference detectable".to_string(),
        None => "no interval (a single run of a percentile has none: use --repeat)".to_string(),
    };
    Difference {
        metric,
        a,
        b,
        diff,
        low: interval.map(|i| i.0),
        high: interval.map(|i| i.1),
        verdict,
    }
}

//! The cheaper way to bring a repeated rate to its goal (docs/statistics.md, "The cheaper
//! fix"): more repeats at the current step length, or longer steps at the current number of
//! repeats, whichever costs less measuring time.
//!
//! The repeats' variance s² has two parts: the spread *within* a step, w² (the mean of the
//! steps' own squared standard errors, from their batch means), which a step k times longer
//! shrinks to w²/k; and the spread *between* steps, b² = max(0, s² − w²) (a drift, an order
//! effect, a neighbour), which no step length shrinks. With m repeats the mean's half-width is
//! t(0.975, m − 1)·s/√m; with n repeats of k-times-longer steps it is
//! t(0.975, n − 1)·√((w²/k + b²)/n).
//!
//! Time: a step costs its measured window W plus what it spends outside it, O (its warm-up,
//! the first request's wait after a busier step). m repeats cost m·(W + O); n repeats of
//! k-times-longer steps cost n·(k·W + O). At equal time the within-step noise averages the same
//! either way and t(0.975, m − 1) favours more repeats, so longer steps win when O is a large
//! share of a step, and never when the spread is between steps.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::repeats::{mean_interval, t_975};

/// The longest step length factor searched; past it longer steps are called hopeless.
pub const MAX_STEP_FACTOR: f64 = 1000.0;

/// Which fix costs less measuring time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum FixKind {
    /// More repeats at the current step length.
    MoreRepeats,
    /// Longer steps (more completed requests per step) at the current number of repeats.
    LongerSteps,
}

/// The two ways to a level's goal, each with its measuring time, and the cheaper one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CheaperFix {
    pub cheaper: FixKind,
    /// The goal: the 95 % interval's half-width as a share of the mean (0.05: ±5 %).
    pub target: f64,
    /// Repeats the goal needs at the current step length.
    pub repeats_needed: u64,
    /// Their measuring time for this level: repeats × (mean step length + mean time outside
    /// the window), s.
    pub repeats_seconds: f64,
    /// How many times longer each step must be for the goal at the current repeats; absent
    /// when the spread between steps alone is too wide for it (or past
    /// [`MAX_STEP_FACTOR`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step_length_factor: Option<f64>,
    /// Completed requests per step that factor means (the factor × the mean completed now).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step_requests: Option<u64>,
    /// The longer steps' measuring time for this level: repeats × (factor × mean step length +
    /// mean time outside the window), s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub longer_steps_seconds: Option<f64>,
    /// The share of the repeats' variance that lies within steps (what longer steps shrink).
    pub within_share: f64,
}

/// One repeat of a level as the arithmetic takes it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RepeatSample {
    /// The step's rate (output tokens/s).
    pub value: f64,
    /// Its standard error within the step.
    pub standard_error: f64,
    /// The step's measured window, s.
    pub seconds: f64,
    /// What the step spent outside its window (its warm-up), s.
    pub overhead_seconds: f64,
    /// Requests it completed.
    pub completed: u64,
}

/// `None` below two repeats, when a figure is missing or not finite, when the goal is already
/// met, or when no number of repeats up to [`crate::repeats::MAX_REPEATS_ESTIMATE`] would meet it.
pub fn cheaper_fix(samples: &[RepeatSample], target: f64) -> Option<CheaperFix> {
    let n = samples.len();
    let finite = |x: f64| x.is_finite() && x >= 0.0;
    if n < 2
        || !(target.is_finite() && target > 0.0)
        || samples.iter().any(|s| {
            !(finite(s.value)
                && finite(s.standard_error)
                && finite(s.seconds)
                && finite(s.overhead_seconds))
        })
    {
        return None;
    }
    let nf = n as f64;
    // The repeats' own interval and the repeats it needs, as the `±5 %` line reads them.
    let values: Vec<f64> = samples.iter().map(|s| s.value).collect();
    let interval = mean_interval(&values)?;
    let precision = interval.precision(target)?;
    if precision.relative_half_width <= target {
        return None;
    }
    let repeats_needed = precision.repeats_needed?;
    let mean = interval.mean;
    let s2 = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (nf - 1.0);
    let goal = target * mean;
    let w2 = samples
        .iter()
        .map(|s| s.standard_error.powi(2))
        .sum::<f64>()
        / nf;
    let b2 = (s2 - w2).max(0.0);
    let step_s = samples.iter().map(|s| s.seconds).sum::<f64>() / nf;
    let outside_s = samples.iter().map(|s| s.overhead_seconds).sum::<f64>() / nf;
    let completed = samples.iter().map(|s| s.completed as f64).sum::<f64>() / nf;

    let repeats_seconds = repeats_needed as f64 * (step_s + outside_s);

    // At n repeats: (w²/k + b²) ≤ L, L = (goal·√n / t(n−1))².
    let limit = (goal * nf.sqrt() / t_975(n - 1)).powi(2);
    let factor = (b2 < limit && w2 > 0.0)
        .then(|| (w2 / (limit - b2)).max(1.0))
        .filter(|k| *k <= MAX_STEP_FACTOR);
    let longer_steps_seconds = factor.map(|k| nf * (k * step_s + outside_s));
    let cheaper = match longer_steps_seconds {
        Some(l) if l < repeats_seconds => FixKind::LongerSteps,
        _ => FixKind::MoreRepeats,
    };
    Some(CheaperFix {
        cheaper,
        target,
        repeats_needed,
        repeats_seconds,
        step_length_factor: factor,
        step_requests: factor
            .filter(|_| completed > 0.0)
            .map(|k| (k * completed).ceil() as u64),
        longer_steps_seconds,
        within_share: if s2 > 0.0 { (w2 / s2).min(1.0) } else { 0.0 },
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn sample(value: f64, se: f64, seconds: f64, outside: f64) -> RepeatSample {
        RepeatSample {
            value,
            standard_error: se,
            seconds,
            overhead_seconds: outside,
            completed: 40,
        }
    }

    /// Values 90, 100, 110 (s = 10, s² = 100), 10 s steps, nothing outside them. Each step's own
    /// standard error 9.5 (w² = 90.25): more repeats need 18 (as the precision estimate) × 10 s
    /// = 180 s; longer steps at 3 repeats need w²/k + b² ≤ L = (5·√3 / 4.303)² = 4.050, but b² =
    /// 9.75 > L: hopeless. With se 9.9 (w² = 98.01, b² = 1.99): k = 98.01 / (4.050 − 1.99) =
    /// 47.6, 3 × 47.6 × 10 s = 1428 s: more repeats are cheaper (t(2) = 4.303 against t(17)).
    #[test]
    fn without_time_outside_the_window_repeats_are_cheaper() {
        let f = cheaper_fix(
            &[90.0, 100.0, 110.0].map(|v| sample(v, 9.5, 10.0, 0.0)),
            0.05,
        )
        .unwrap();
        assert_eq!(f.repeats_needed, 18);
        assert!((f.repeats_seconds - 180.0).abs() < 1e-9);
        assert_eq!(f.step_length_factor, None, "{f:?}");
        assert_eq!(f.cheaper, FixKind::MoreRepeats);
        let f = cheaper_fix(
            &[90.0, 100.0, 110.0].map(|v| sample(v, 9.9, 10.0, 0.0)),
            0.05,
        )
        .unwrap();
        let k = f.step_length_factor.unwrap();
        assert!((k - 98.01 / (4.0502 - 1.99)).abs() < 0.1, "{f:?}");
        assert!((f.longer_steps_seconds.unwrap() - 30.0 * k).abs() < 1e-6);
        assert_eq!(f.step_requests, Some((k * 40.0).ceil() as u64));
        assert_eq!(f.cheaper, FixKind::MoreRepeats);
        assert!((f.within_share - 0.9801).abs() < 1e-9);
    }

    /// Ten repeats (t(9) = 2.262) of mean 100 alternating 94.25 / 105.75 (s² = 36.74), each
    /// step's own standard error 6 (w² = 36, b² = 0.74); ±5 % is met (2.262 · 6.06 / √10 = 4.34).
    /// At ±2 %: L = (2·√10 / 2.262)² = 7.818, k = 36 / (7.818 − 0.736) = 5.08; more repeats: the
    /// fewest m with t(m−1)·6.06/√m ≤ 2 is 38. Steps of 2 s with 6 s outside each (a warm-up
    /// that waits): repeats 38 × 8 s = 304 s, longer steps 10 × (5.08 × 2 + 6) = 161.7 s.
    #[test]
    fn time_outside_each_window_makes_longer_steps_cheaper() {
        let v: Vec<RepeatSample> = (0..10)
            .map(|i| sample(if i % 2 == 0 { 94.25 } else { 105.75 }, 6.0, 2.0, 6.0))
            .collect();
        assert!(cheaper_fix(&v, 0.05).is_none(), "±5 % is met");
        let f = cheaper_fix(&v, 0.02).unwrap();
        let k = f.step_length_factor.unwrap();
        assert!((k - 5.083).abs() < 0.01, "{f:?}");
        assert_eq!(f.repeats_needed, 38);
        assert!((f.repeats_seconds - 304.0).abs() < 1e-9, "{f:?}");
        assert!((f.longer_steps_seconds.unwrap() - 10.0 * (k * 2.0 + 6.0)).abs() < 1e-9);
        assert_eq!(f.cheaper, FixKind::LongerSteps, "{f:?}");
        assert_eq!(f.step_requests, Some((k * 40.0).ceil() as u64));
        // The same steps with nothing outside them: repeats win (38 × 2 = 76 s < 101.7 s).
        let v: Vec<RepeatSample> = v
            .iter()
            .map(|s| RepeatSample {
                overhead_seconds: 0.0,
                ..*s
            })
            .collect();
        assert_eq!(cheaper_fix(&v, 0.02).unwrap().cheaper, FixKind::MoreRepeats);
    }

    /// A spread wholly between steps (each step's own error tiny): longer steps cannot help,
    /// however much a step spends outside its window.
    #[test]
    fn a_spread_between_steps_only_repeats_help() {
        let f = cheaper_fix(
            &[80.0, 100.0, 120.0].map(|v| sample(v, 0.1, 2.0, 60.0)),
            0.05,
        )
        .unwrap();
        assert_eq!(f.cheaper, FixKind::MoreRepeats);
        assert_eq!(f.step_length_factor, None);
        assert_eq!(f.step_requests, None);
        assert!(f.within_share < 0.001);
    }

    #[test]
    fn too_few_met_or_unreadable_gives_none() {
        let s = |v| sample(v, 1.0, 10.0, 1.0);
        assert!(cheaper_fix(&[s(100.0)], 0.05).is_none());
        assert!(cheaper_fix(&[s(100.0), s(100.1)], 0.05).is_none(), "met");
        assert!(cheaper_fix(&[s(f64::NAN), s(100.0)], 0.05).is_none());
        assert!(cheaper_fix(&[s(0.0), s(0.0)], 0.05).is_none());
        assert!(cheaper_fix(&[s(90.0), s(110.0)], f64::NAN).is_none());
    }
}

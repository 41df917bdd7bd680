//! `--repeat N`: each level's repeats as a mean with a 95 % interval, and whether they agree
//! (docs/metrics.md, "Repeats").

use bakeoff_artifact::{FlagCode, FlagSeverity, InstrumentFlag, LevelSummary, LoadStep};
use bakeoff_stats::{
    MeanInterval, RELATIVE_HALF_WIDTH_GOAL, cochran_q, mean_interval, mean_interval_nonnegative,
};

use crate::capacity::base_label;

/// One summary per level that was repeated (none when no step carries a repeat number).
pub fn summarize(steps: &[LoadStep]) -> Vec<LevelSummary> {
    let mut order: Vec<String> = Vec::new();
    for s in steps.iter().filter(|s| s.repeat.is_some()) {
        let l = base_label(s);
        if !order.contains(&l) {
            order.push(l);
        }
    }
    order
        .into_iter()
        .map(|label| {
            let reps: Vec<&LoadStep> = steps
                .iter()
                .filter(|s| s.repeat.is_some() && base_label(s) == label && s.ok > 0)
                .collect();
            level(label, &reps)
        })
        .collect()
}

/// Every figure a level summarizes is a rate, a latency, a power or tokens per joule: none can
/// be negative, so its interval is drawn on the log scale and never reaches below zero
/// (docs/statistics.md, "Intervals that stay in range"); Student-t only for a value that is
/// negative after all.
fn interval(v: &[f64]) -> Option<MeanInterval> {
    mean_interval_nonnegative(v).or_else(|| mean_interval(v))
}

fn level(label: String, reps: &[&LoadStep]) -> LevelSummary {
    let of = |f: &dyn Fn(&LoadStep) -> Option<f64>| {
        let v: Vec<f64> = reps.iter().filter_map(|s| f(s)).collect();
        interval(&v)
    };
    let tps: Vec<f64> = reps
        .iter()
        .filter_map(|s| s.output_tokens_per_second)
        .collect();
    let ses: Vec<f64> = reps
        .iter()
        .filter_map(|s| s.output_tokens_per_second_se)
        .collect();
    // Tested only when every repeat has both its figure and its own standard error.
    let heterogeneity = (tps.len() == reps.len() && ses.len() == reps.len())
        .then(|| cochran_q(&tps, &ses))
        .flatten();
    LevelSummary {
        label,
        repeats: reps.len() as u32,
        output_tokens_per_second: of(&|s| s.output_tokens_per_second),
        requests_per_second: of(&|s| s.requests_per_second),
        ttft_p50_ms: of(&|s| s.latency.ttft.p50_ms),
        tpot_p50_ms: of(&|s| s.latency.tpot.p50_ms),
        e2e_p50_ms: of(&|s| s.latency.e2e.p50_ms),
        power_w_mean: of(&|s| s.gpu_telemetry.as_ref().and_then(|t| t.power_w_mean)),
        output_tokens_per_joule: of(&|s| {
            s.gpu_telemetry
                .as_ref()
                .and_then(|t| t.output_tokens_per_joule)
        }),
        output_tokens_per_second_precision: interval(&tps)
            .and_then(|m| m.precision(RELATIVE_HALF_WIDTH_GOAL)),
        output_tokens_per_second_fix: cheaper_fix(reps),
        unstable: heterogeneity.as_ref().is_some_and(|h| h.disagree),
        heterogeneity,
    }
}

/// More repeats or longer steps for the ±5 % goal (docs/statistics.md, "The cheaper fix"): from
/// each repeat's rate, its within-step standard error, its window, and what it spent outside
/// the window (its warm-up and ramp-up). `None` unless every repeat has all of them.
fn cheaper_fix(reps: &[&LoadStep]) -> Option<bakeoff_stats::CheaperFix> {
    let samples = reps
        .iter()
        .map(|s| {
            Some(bakeoff_stats::RepeatSample {
                value: s.output_tokens_per_second?,
                standard_error: s.output_tokens_per_second_se?,
                seconds: s.wall_s,
                overhead_seconds: s.warmup.as_ref().map_or(0.0, |w| w.wall_s)
                    + s.ramp_up.as_ref().map_or(0.0, |r| r.seconds),
                completed: s.ok,
            })
        })
        .collect::<Option<Vec<_>>>()?;
    bakeoff_stats::cheaper_fix(&samples, RELATIVE_HALF_WIDTH_GOAL)
}

/// The `unstable` flag of a level whose repeats disagree.
pub fn unstable_flag(l: &LevelSummary) -> InstrumentFlag {
    let values = l
        .output_tokens_per_second
        .as_ref()
        .map(|m| {
            m.values
                .iter()
                .map(|v| format!("{v:.1}"))
                .collect::<Vec<_>>()
                .join(", ")
        })
        .unwrap_or_default();
    let q = l
        .heterogeneity
        .as_ref()
        .map(|h| format!(" (Cochran's Q {:.1} > {:.1} at 5 %)", h.q, h.critical))
        .unwrap_or_default();
    InstrumentFlag {
        code: FlagCode::Unstable,
        severity: FlagSeverity::Warning,
        message: format!(
            "{}: the repeats' output tok/s ({values}) disagree beyond their own within-step errors{q}; \
             something changed between repeats (a neighbour, thermals, a cache): read the mean with care",
            l.label
        ),
        suite: None,
        count: Some(u64::from(l.repeats)),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn lat() -> serde_json::Value {
        serde_json::json!({"count": 4, "clamped_high": 0, "mean_ms": 10.0, "min_ms": 10.0,
            "p50_ms": 10.0, "p90_ms": 10.0, "p95_ms": 10.0, "p99_ms": 10.0, "max_ms": 10.0})
    }

    fn step(repeat: u32, tps: f64, watts: f64, tok_per_j: f64) -> LoadStep {
        serde_json::from_value(serde_json::json!({
            "label": format!("c=8 #{repeat}"), "concurrency": 8, "repeat": repeat,
            "sent": 8, "ok": 8, "errors": {}, "wall_s": 2.0, "output_tokens": 1000,
            "output_tokens_per_second": tps, "output_tokens_per_second_se": 5.0,
            "token_source": "usage",
            "latency": {"ttft": lat(), "ttfot": lat(), "tpot": lat(), "itl": lat(),
                "e2e": lat(), "send_lateness": lat(), "ttft_corrected": lat(),
                "e2e_corrected": lat()},
            "histograms": {"ttft": [], "itl": [], "e2e": []},
            "gpu_telemetry": {"source": "nvml", "interval_ms": 250, "samples": 9,
                "power_w_mean": watts, "output_tokens_per_joule": tok_per_j}
        }))
        .unwrap()
    }

    /// docs/statistics.md "Relative width and repeats needed": power and tok/J get intervals
    /// like the other figures, and output tok/s its relative width with the repeats for ±5 %.
    #[test]
    fn a_level_carries_power_tokens_per_joule_and_its_precision() {
        let steps = [
            step(1, 900.0, 140.0, 6.4),
            step(2, 1000.0, 142.0, 7.0),
            step(3, 1100.0, 138.0, 7.9),
        ];
        let levels = summarize(&steps);
        assert_eq!(levels.len(), 1);
        let l = &levels[0];
        assert_eq!(l.label, "c=8");
        let power = l.power_w_mean.as_ref().unwrap();
        assert!((power.mean - 140.0).abs() < 1e-9, "{power:?}");
        let tpj = l.output_tokens_per_joule.as_ref().unwrap();
        assert_eq!(tpj.values, vec![6.4, 7.0, 7.9]);
        // sd 100 around 1000, n 3: ±24.8 %; ±5 % needs the fewest m with t(m−1)·100/√m ≤ 50.
        let p = l.output_tokens_per_second_precision.as_ref().unwrap();
        assert!((p.relative_half_width - 0.2484).abs() < 1e-3, "{p:?}");
        assert_eq!(p.repeats_needed, Some(18));
    }

    /// Two repeats far apart: every bound stays above zero ("6.0 [−7.0, 18.9] tok/s" read before).
    #[test]
    fn two_far_apart_repeats_keep_their_bounds_above_zero() {
        let levels = summarize(&[step(1, 4.98, 140.0, 0.01), step(2, 7.02, 150.0, 0.02)]);
        let l = &levels[0];
        for m in [
            &l.output_tokens_per_second,
            &l.ttft_p50_ms,
            &l.power_w_mean,
            &l.output_tokens_per_joule,
        ] {
            let m = m.as_ref().unwrap();
            assert!(m.low > 0.0 && m.low <= m.mean && m.mean <= m.high, "{m:?}");
        }
        assert!(l.output_tokens_per_second.as_ref().unwrap().too_few());
    }
}

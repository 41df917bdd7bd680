//! `--repeat N`: each level's repeats as a mean with a 95 % interval, and whether they agree
//! (docs/metrics.md, "Repeats").

use bakeoff_artifact::{FlagCode, FlagSeverity, InstrumentFlag, LevelSummary, LoadStep};
use bakeoff_stats::{cochran_q, mean_interval};

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

fn level(label: String, reps: &[&LoadStep]) -> LevelSummary {
    let of = |f: &dyn Fn(&LoadStep) -> Option<f64>| {
        let v: Vec<f64> = reps.iter().filter_map(|s| f(s)).collect();
        mean_interval(&v)
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
        unstable: heterogeneity.as_ref().is_some_and(|h| h.disagree),
        heterogeneity,
    }
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

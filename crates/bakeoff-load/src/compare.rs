//! `bakeoff bench compare A B`: two sweeps, level by level — the difference B − A of output
//! tok/s, TTFT p50 and TPOT p50 with a 95 % interval, and a verdict only where the interval
//! excludes zero (docs/metrics.md, "Paired comparison of two sweeps").
//!
//! The interval of a difference of means is Welch's: each side's standard error from its
//! repeats (`--repeat N`), or, for output tok/s of a single run, the step's own batch-means
//! standard error (four degrees of freedom: five slices). A latency percentile of a single run
//! has no standard error here, so it gets no verdict: the text says to repeat.
//!
//! A sweep with a step measured under contaminated conditions (a condition flag on the step:
//! `host-contended`, `gpu-shared`, …, docs/metrics.md "Conditions") is not silently compared
//! with a clean one: the comparison names the side and its steps, and withholds every verdict
//! unless the operator allows it (`--allow contaminated`).

use bakeoff_artifact::{CONDITION_CODES, LoadReport, LoadStep};
use bakeoff_stats::MeanInterval;
use serde::Serialize;

use crate::capacity::base_label;
use crate::difference::{BATCH_DF, difference};
pub use crate::difference::{Difference, Estimate, LevelComparison};

#[derive(Debug, Clone, Serialize)]
pub struct SweepComparison {
    /// `paired` when the two sweeps are the two sides of one `bench run --versus` (each
    /// repeat of A paired with the same repeat of B, measured beside it), else `independent`.
    pub design: &'static str,
    /// Why the sweeps cannot be compared, when they cannot: then no level is compared.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub not_comparable: Vec<String>,
    pub levels: Vec<LevelComparison>,
    /// Levels only one side measured.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unmatched: Vec<String>,
    /// Steps measured under contaminated conditions, each `A c4: host-contended (…)`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub contaminated: Vec<String>,
    /// Why every verdict is withheld (a contaminated side, not allowed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub no_verdict_reason: Option<String>,
}

/// The contaminated steps of one sweep, labelled with `side`.
fn contamination(side: &str, r: &LoadReport) -> Vec<String> {
    r.steps
        .iter()
        .flat_map(|s| {
            s.flags
                .iter()
                .filter(|f| CONDITION_CODES.contains(&f.code))
                .map(move |f| format!("{side} {}: {} ({})", s.label, f.code, f.message))
        })
        .collect()
}

/// The verdict a withheld difference carries.
pub const WITHHELD: &str = "no verdict (contaminated)";

fn from_repeats(m: &MeanInterval) -> Estimate {
    crate::paired::estimate(&m.values)
}

/// The figures of one level of one sweep.
struct Side {
    tps: Option<Estimate>,
    ttft: Option<Estimate>,
    tpot: Option<Estimate>,
}

fn side(report: &LoadReport, label: &str) -> Option<Side> {
    if let Some(l) = report.levels.iter().find(|l| l.label == label) {
        return Some(Side {
            tps: l.output_tokens_per_second.as_ref().map(from_repeats),
            ttft: l.ttft_p50_ms.as_ref().map(from_repeats),
            tpot: l.tpot_p50_ms.as_ref().map(from_repeats),
        });
    }
    let s: &LoadStep = report.steps.iter().find(|s| base_label(s) == label)?;
    let single = |v: Option<f64>| {
        v.map(|mean| Estimate {
            mean,
            se: None,
            df: None,
        })
    };
    Some(Side {
        tps: s.output_tokens_per_second.map(|mean| Estimate {
            mean,
            se: s.output_tokens_per_second_se,
            df: s.output_tokens_per_second_se.map(|_| BATCH_DF),
        }),
        ttft: single(s.latency.ttft.p50_ms),
        tpot: single(s.latency.tpot.p50_ms),
    })
}

/// What must match for two sweeps to be compared: the same workload (lengths, pinning, prefix
/// policy, mode). The endpoint, model and server flags are what is being compared.
const SAME_WORKLOAD: &[&str] = &[
    "prompt_tokens",
    "output_tokens",
    "ignore_eos",
    "min_tokens",
    "unique_prefixes",
    "temperature",
    // Load shapes (docs/metrics.md, "Load shapes"): recorded only when used.
    "ramp_up_s",
    "cancel_rate",
];

fn workload_differences(a: &LoadReport, b: &LoadReport) -> Vec<String> {
    let mut out = Vec::new();
    if a.mode != b.mode {
        out.push(format!("mode differs: {} against {}", a.mode, b.mode));
    }
    for k in SAME_WORKLOAD {
        let (x, y) = (a.plan.get(*k), b.plan.get(*k));
        if x != y {
            let show = |v: Option<&serde_json::Value>| v.map_or("absent".into(), |v| v.to_string());
            out.push(format!("{k} differs: {} against {}", show(x), show(y)));
        }
    }
    out
}

/// Whether `a` and `b` are the two sides of one alternating run (`bench run --versus`).
fn paired_run(a: &LoadReport, b: &LoadReport) -> bool {
    match (&a.versus, &b.versus) {
        (Some(x), Some(y)) => x.run_id == y.run_id && x.side != y.side,
        _ => false,
    }
}

/// Compare sweep B against sweep A; `allow_contaminated`: give verdicts even when a side was
/// measured under contaminated conditions.
pub fn compare(a: &LoadReport, b: &LoadReport, allow_contaminated: bool) -> SweepComparison {
    let not_comparable = workload_differences(a, b);
    let (ca, cb) = (contamination("A", a), contamination("B", b));
    let no_verdict_reason = ((!ca.is_empty() || !cb.is_empty()) && !allow_contaminated).then(|| {
        let side = |n: &str, v: &[String]| {
            if v.is_empty() {
                format!("{n} clean")
            } else {
                format!("{n} contaminated")
            }
        };
        format!(
            "no verdict: contaminated measurement: {}; {} (pass --allow contaminated to compare anyway)",
            side("A", &ca),
            side("B", &cb)
        )
    });
    let mut labels: Vec<String> = Vec::new();
    for s in a.steps.iter().chain(&b.steps) {
        let l = base_label(s);
        if !labels.contains(&l) {
            labels.push(l);
        }
    }
    let mut levels = Vec::new();
    let mut unmatched = Vec::new();
    let paired = paired_run(a, b);
    if not_comparable.is_empty() {
        for label in labels {
            if paired {
                match crate::paired::level(a, b, &label) {
                    Some(mut l) => {
                        if no_verdict_reason.is_some() {
                            for d in &mut l.differences {
                                d.verdict = WITHHELD.to_string();
                            }
                        }
                        levels.push(l);
                    }
                    None => unmatched.push(label),
                }
                continue;
            }
            let (Some(sa), Some(sb)) = (side(a, &label), side(b, &label)) else {
                unmatched.push(label);
                continue;
            };
            let mut differences = Vec::new();
            for (metric, x, y) in [
                ("output tok/s", sa.tps, sb.tps),
                ("TTFT p50 (ms)", sa.ttft, sb.ttft),
                ("TPOT p50 (ms)", sa.tpot, sb.tpot),
            ] {
                if let (Some(x), Some(y)) = (x, y) {
                    let mut d = difference(metric, x, y);
                    if no_verdict_reason.is_some() {
                        d.verdict = WITHHELD.to_string();
                    }
                    differences.push(d);
                }
            }
            let notes = crate::paired::acceptance_notes(a, b, &label);
            levels.push(LevelComparison {
                label,
                differences,
                pairs: None,
                notes,
            });
        }
    }
    SweepComparison {
        design: if paired { "paired" } else { "independent" },
        not_comparable,
        levels,
        unmatched,
        contaminated: ca.into_iter().chain(cb).collect(),
        no_verdict_reason,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn est(mean: f64, se: f64) -> Estimate {
        Estimate {
            mean,
            se: Some(se),
            df: Some(2.0),
        }
    }

    #[test]
    fn a_verdict_only_when_the_interval_excludes_zero() {
        assert_eq!(
            difference("x", est(100.0, 1.0), est(150.0, 1.0)).verdict,
            "B higher"
        );
        assert_eq!(
            difference("x", est(100.0, 1.0), est(50.0, 1.0)).verdict,
            "B lower"
        );
        assert_eq!(
            difference("x", est(100.0, 10.0), est(105.0, 10.0)).verdict,
            "no difference detectable"
        );
        let single = Estimate {
            mean: 1.0,
            se: None,
            df: None,
        };
        assert!(
            difference("x", single, single)
                .verdict
                .starts_with("no interval")
        );
    }
}

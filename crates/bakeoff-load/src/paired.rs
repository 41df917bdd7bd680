//! The paired comparison of the two sides of one `bench run --versus`: repeat r of A ran beside
//! repeat r of B (one right after the other, the order flipped every round), so their difference
//! d_r = B_r − A_r carries little of the drift between rounds. The interval is the paired t
//! interval of the mean difference, mean(d) ± t(0.975, n − 1) · sd(d) / √n, over the n repeats
//! both sides measured (docs/metrics.md, "Two endpoints alternately"). With a single repeat
//! there is nothing to pair: output tok/s falls back to the steps' batch-means standard errors
//! (Welch), latency percentiles get no verdict, as in the independent comparison.

use bakeoff_artifact::{LoadReport, LoadStep};
use bakeoff_stats::repeats::t_975;

use crate::capacity::base_label;
use crate::difference::{Difference, Estimate, LevelComparison, difference};

/// One figure of a step, by name.
type Figure = fn(&LoadStep) -> Option<f64>;

const FIGURES: [(&str, Figure); 4] = [
    ("output tok/s", |s| s.output_tokens_per_second),
    ("TTFT p50 (ms)", |s| s.latency.ttft.p50_ms),
    ("TPOT p50 (ms)", |s| s.latency.tpot.p50_ms),
    ("spec acceptance", acceptance),
];

/// Speculative-decoding acceptance rate of a step (accepted / drafted tokens), from `/metrics`
/// or llama.cpp `timings`.
fn acceptance(s: &LoadStep) -> Option<f64> {
    s.metrics
        .as_ref()?
        .spec_decode
        .as_ref()?
        .acceptance_rate
        .filter(|r| r.is_finite())
}

/// The measured steps of `label`, by repeat number.
fn by_repeat<'a>(r: &'a LoadReport, label: &str) -> Vec<(u32, &'a LoadStep)> {
    r.steps
        .iter()
        .filter(|s| s.ok > 0 && base_label(s) == label)
        .map(|s| (s.repeat.unwrap_or(1), s))
        .collect()
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

/// Mean and standard error of `v` (n − 1 degrees of freedom); no standard error below two.
pub(crate) fn estimate(v: &[f64]) -> Estimate {
    let m = mean(v);
    let n = v.len() as f64;
    let se = (v.len() > 1).then(|| {
        let var = v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (n - 1.0);
        (var / n).sqrt()
    });
    Estimate {
        mean: m,
        se,
        df: se.map(|_| n - 1.0),
    }
}

/// The paired difference of one figure over `pairs` of (A, B) values.
fn paired_difference(metric: &'static str, pairs: &[(f64, f64)]) -> Difference {
    let a: Vec<f64> = pairs.iter().map(|p| p.0).collect();
    let b: Vec<f64> = pairs.iter().map(|p| p.1).collect();
    let d: Vec<f64> = pairs.iter().map(|p| p.1 - p.0).collect();
    let de = estimate(&d);
    let interval = de.se.map(|se| {
        let t = t_975(d.len() - 1);
        (de.mean - t * se, de.mean + t * se)
    });
    let verdict = match interval {
        Some((lo, _)) if lo > 0.0 => "B higher",
        Some((_, hi)) if hi < 0.0 => "B lower",
        _ => "no difference detectable",
    };
    Difference {
        metric,
        a: estimate(&a),
        b: estimate(&b),
        diff: de.mean,
        low: interval.map(|i| i.0),
        high: interval.map(|i| i.1),
        verdict: verdict.into(),
    }
}

/// One level of a paired comparison; `None` when the two sides share no measured repeat.
pub fn level(a: &LoadReport, b: &LoadReport, label: &str) -> Option<LevelComparison> {
    let (sa, sb) = (by_repeat(a, label), by_repeat(b, label));
    let matched: Vec<(&LoadStep, &LoadStep)> = sa
        .iter()
        .filter_map(|(r, x)| sb.iter().find(|(q, _)| q == r).map(|(_, y)| (*x, *y)))
        .collect();
    if matched.is_empty() {
        return None;
    }
    let mut differences = Vec::new();
    for (metric, f) in FIGURES {
        let pairs: Vec<(f64, f64)> = matched
            .iter()
            .filter_map(|(x, y)| Some((f(x)?, f(y)?)))
            .collect();
        match pairs.len() {
            0 => {}
            1 => differences.push(single(metric, f, matched[0])),
            _ => differences.push(paired_difference(metric, &pairs)),
        }
    }
    Some(LevelComparison {
        label: label.to_string(),
        differences,
        pairs: Some(matched.len()),
        notes: acceptance_notes(a, b, label),
    })
}

/// The paired difference of the inter-token latency's median (ITL p50) at `label`, for a run
/// that reports it beside the standard figures (`bench run --schema`); `None` when the sides
/// share no measured repeat with it.
pub fn itl_difference(a: &LoadReport, b: &LoadReport, label: &str) -> Option<Difference> {
    let f: Figure = |s| s.latency.itl.p50_ms;
    let (sa, sb) = (by_repeat(a, label), by_repeat(b, label));
    let pairs: Vec<(f64, f64)> = sa
        .iter()
        .filter_map(|(r, x)| {
            let (_, y) = sb.iter().find(|(q, _)| q == r)?;
            Some((f(x)?, f(y)?))
        })
        .collect();
    match pairs.len() {
        0 => None,
        1 => {
            let e = |v: f64| Estimate {
                mean: v,
                se: None,
                df: None,
            };
            Some(difference("ITL p50 (ms)", e(pairs[0].0), e(pairs[0].1)))
        }
        _ => Some(paired_difference("ITL p50 (ms)", &pairs)),
    }
}

/// One pair only: output tok/s with the steps' own batch-means standard errors (Welch, as in
/// the independent comparison); other figures without an interval.
fn single(metric: &'static str, f: Figure, (x, y): (&LoadStep, &LoadStep)) -> Difference {
    let est = |s: &LoadStep| {
        let (se, df) = if metric == "output tok/s" {
            (
                s.output_tokens_per_second_se,
                s.output_tokens_per_second_se
                    .map(|_| crate::difference::BATCH_DF),
            )
        } else {
            (None, None)
        };
        Estimate {
            mean: f(s).unwrap_or(f64::NAN),
            se,
            df,
        }
    };
    difference(metric, est(x), est(y))
}

/// Each side's mean speculative-decoding acceptance at `label`, when either side speculated:
/// the MTP on/off question needs the rate beside the speed (docs/field-cases.md B7).
pub fn acceptance_notes(a: &LoadReport, b: &LoadReport, label: &str) -> Vec<String> {
    let rate = |r: &LoadReport| {
        let v: Vec<(f64, String)> = r
            .steps
            .iter()
            .filter(|s| base_label(s) == label)
            .filter_map(|s| {
                let sd = s.metrics.as_ref()?.spec_decode.as_ref()?;
                Some((sd.acceptance_rate?, sd.source.clone()))
            })
            .collect();
        (!v.is_empty()).then(|| {
            let m = v.iter().map(|x| x.0).sum::<f64>() / v.len() as f64;
            format!("acceptance {:.3} over {} step(s) ({})", m, v.len(), v[0].1)
        })
    };
    let (ra, rb) = (rate(a), rate(b));
    if ra.is_none() && rb.is_none() {
        return Vec::new();
    }
    let show = |side: &str, r: Option<String>| {
        format!(
            "{side}: speculative decoding {}",
            r.unwrap_or_else(|| "not seen (no draft tokens reported)".into())
        )
    };
    vec![show("A", ra), show("B", rb)]
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn pairing_removes_a_shared_drift() {
        // A drift of +50 per round hits both sides; B is always 10 above A.
        let pairs: Vec<(f64, f64)> = (0..4)
            .map(|r| {
                (
                    100.0 + 50.0 * r as f64,
                    110.0 + 50.0 * r as f64 + (r % 2) as f64,
                )
            })
            .collect();
        let d = paired_difference("output tok/s", &pairs);
        assert_eq!(d.verdict, "B higher");
        assert!(d.low.unwrap() > 8.0 && d.high.unwrap() < 13.0, "{d:?}");
        // Unpaired, the drift swamps the difference.
        let w = difference("output tok/s", d.a, d.b);
        assert_eq!(w.verdict, "no difference detectable");
    }

    #[test]
    fn equal_sides_give_no_verdict() {
        let pairs = [(100.0, 101.0), (100.0, 99.0), (100.0, 100.5)];
        assert_eq!(
            paired_difference("x", &pairs).verdict,
            "no difference detectable"
        );
    }
}

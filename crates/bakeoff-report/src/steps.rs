//! Load steps (concurrency → tok/s, TTFT percentiles) read from what an artifact carries: each
//! `bench run` sweep (`artifact.load`) and each load suite's details, a whole bakeoff-artifact
//! `LoadReport` (the throughput and longgen suites), read typed. Only what is there is shown:
//! no step data means "no throughput data", never an invented number.

use crate::read::{self, noted};
use bakeoff_artifact::{ItemRecord, SuiteResult};

/// One load step as the report shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    pub index: usize,
    pub concurrency: Option<f64>,
    /// Aggregate output tokens per second.
    pub tok_per_s: Option<f64>,
    pub ttft_p50_ms: Option<f64>,
    pub ttft_p90_ms: Option<f64>,
    pub ttft_p99_ms: Option<f64>,
    /// Items of the step that were measured (when known).
    pub requests: Option<f64>,
    /// The step's label as recorded (`c=8`, `poisson 20/s`), when it has one.
    pub label: Option<String>,
    /// Time per output token, inter-token latency and end-to-end latency percentiles, ms.
    pub tpot_p50_ms: Option<f64>,
    pub tpot_p99_ms: Option<f64>,
    pub itl_p50_ms: Option<f64>,
    pub itl_p99_ms: Option<f64>,
    pub e2e_p50_ms: Option<f64>,
    pub e2e_p99_ms: Option<f64>,
    /// Mean power of the GPUs under test, W, and output tokens per joule (bench steps with GPU
    /// telemetry only; docs/metrics.md "GPU telemetry and tokens per joule").
    pub power_w_mean: Option<f64>,
    pub tokens_per_joule: Option<f64>,
    /// Which round of its level this step is, under `bench run --repeat N` (1-based).
    pub repeat: Option<u32>,
    /// What contaminated the step (`host-contended: …`), when its conditions say it shared
    /// its machine (docs/metrics.md "Conditions"); `None` when clean or not recorded.
    pub contamination: Option<String>,
}

/// TTFT values (ms) of items, sorted.
pub fn ttfts<'a>(items: impl Iterator<Item = &'a ItemRecord>) -> Vec<f64> {
    let mut v: Vec<f64> = items
        .filter_map(|i| i.latency.ttft_ms)
        .filter(|x| x.is_finite())
        .collect();
    v.sort_by(f64::total_cmp);
    v
}

/// The steps of suite `name`: its sweep when it is a load suite (read in place: the details
/// of a throughput suite hold every request record), else none. Details that do not read are
/// [`read::of_artifact`]'s note.
pub fn steps_of(name: &str, suite: &SuiteResult) -> Vec<Step> {
    noted(read::load(name, suite))
        .map(|r| steps_of_load(&r))
        .unwrap_or_default()
}

/// Every sweep of an artifact: each suite's steps under the suite's name, then each `bench run`
/// sweep (`artifact.load`, no suite) as `bench NAME`.
pub fn sweeps_of(a: &bakeoff_artifact::Artifact) -> impl Iterator<Item = (String, Vec<Step>)> + '_ {
    a.suites
        .iter()
        .map(|(name, s)| (name.clone(), steps_of(name, s)))
        .chain(
            a.load
                .iter()
                .map(|(name, l)| (format!("bench {name}"), steps_of_load(l))),
        )
}

/// The load report behind a sweep [`sweeps_of`] named `name`: `bench NAME` is the artifact's
/// `load[NAME]`, a suite's is its details when they are one (the throughput suite's).
pub fn load_of(a: &bakeoff_artifact::Artifact, name: &str) -> Option<bakeoff_artifact::LoadReport> {
    match name.strip_prefix("bench ") {
        Some(n) if a.load.contains_key(n) => a.load.get(n).cloned(),
        _ => noted(read::load(name, a.suites.get(name)?)),
    }
}

/// The steps of a load report (`bench run`'s `artifact.load[name]`, or the throughput suite's
/// details), read from bakeoff-artifact's types: concurrency, output tokens per second, TTFT
/// percentiles, completed requests.
pub fn steps_of_load(report: &bakeoff_artifact::LoadReport) -> Vec<Step> {
    report
        .steps
        .iter()
        .enumerate()
        .map(|(index, st)| Step {
            index,
            concurrency: st.concurrency.map(f64::from),
            tok_per_s: st.output_tokens_per_second,
            ttft_p50_ms: st.latency.ttft.p50_ms,
            ttft_p90_ms: st.latency.ttft.p90_ms,
            ttft_p99_ms: st.latency.ttft.p99_ms,
            requests: Some(st.ok as f64),
            label: Some(st.label.clone()),
            tpot_p50_ms: st.latency.tpot.p50_ms,
            tpot_p99_ms: st.latency.tpot.p99_ms,
            itl_p50_ms: st.latency.itl.p50_ms,
            itl_p99_ms: st.latency.itl.p99_ms,
            e2e_p50_ms: st.latency.e2e.p50_ms,
            e2e_p99_ms: st.latency.e2e.p99_ms,
            power_w_mean: st.gpu_telemetry.as_ref().and_then(|t| t.power_w_mean),
            tokens_per_joule: st
                .gpu_telemetry
                .as_ref()
                .and_then(|t| t.output_tokens_per_joule),
            repeat: st.repeat,
            contamination: contamination(st),
        })
        .collect()
}

/// What contaminated a load step, `code: message; …`, or `None` when it ran clean.
pub fn contamination(st: &bakeoff_artifact::LoadStep) -> Option<String> {
    let c = st
        .conditions
        .as_ref()
        .filter(|c| bakeoff_artifact::Conditions::contaminated(c))?;
    let why: Vec<String> = c
        .findings
        .iter()
        .map(|f| format!("{}: {}", f.code, f.message))
        .collect();
    Some(if why.is_empty() {
        "contaminated".into()
    } else {
        why.join("; ")
    })
}

/// One level of a sweep: its steps' figures folded over the level's rounds (`--repeat N`), or
/// the single step's. Levels are in the order first run.
#[derive(Debug, Clone, PartialEq)]
pub struct Level {
    pub concurrency: Option<f64>,
    /// `c=4` (without the round).
    pub label: String,
    /// The rounds' steps, in run order.
    pub rounds: Vec<Step>,
}

impl Level {
    /// A figure over the level's rounds: each round's value, and their mean with its 95 %
    /// interval (on the log scale: every figure drawn is a rate or a latency, never negative —
    /// docs/statistics.md, "Intervals that stay in range"); `None` for the interval below two
    /// rounds with the figure.
    pub fn figure(&self, get: fn(&Step) -> Option<f64>) -> Option<Figure> {
        let values: Vec<f64> = self.rounds.iter().filter_map(get).collect();
        let first = *values.first()?;
        let interval = bakeoff_stats::mean_interval_nonnegative(&values)
            .or_else(|| bakeoff_stats::mean_interval(&values));
        Some(Figure {
            mean: interval.as_ref().map_or(first, |m| m.mean),
            interval: interval.map(|m| (m.low, m.high)),
            values,
        })
    }
}

/// A level's figure: the mean over its rounds, the interval, and each round's value.
#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    pub mean: f64,
    pub interval: Option<(f64, f64)>,
    pub values: Vec<f64>,
}

/// The label of a step without its round (`c=4 #2` → `c=4`).
fn base_label(st: &Step) -> String {
    let l = level_text(&Step {
        repeat: None,
        ..st.clone()
    });
    match (st.repeat, &st.label) {
        (Some(r), Some(label)) if st.concurrency.is_none() => label
            .strip_suffix(&format!(" #{r}"))
            .unwrap_or(label)
            .to_string(),
        _ => l,
    }
}

/// The steps grouped into their levels (rounds of one level together), in the order first run.
pub fn levels_of(steps: &[Step]) -> Vec<Level> {
    let mut out: Vec<Level> = Vec::new();
    for st in steps {
        let label = base_label(st);
        match out.iter_mut().find(|l| l.label == label) {
            Some(l) => l.rounds.push(st.clone()),
            None => out.push(Level {
                concurrency: st.concurrency,
                label,
                rounds: vec![st.clone()],
            }),
        }
    }
    out
}

/// `c=8`, or the step's label when it has no concurrency (`poisson 20/s`); under `--repeat` the
/// round too (`c=8 #2`), so two rounds of one level are never two rows of the same name.
pub fn level_text(st: &Step) -> String {
    match (st.concurrency, &st.label, st.repeat) {
        (Some(c), _, Some(r)) => format!("c={c} #{r}"),
        (Some(c), _, None) => format!("c={c}"),
        (None, Some(l), _) => l.clone(),
        (None, None, Some(r)) => format!("step {} #{r}", st.index),
        (None, None, None) => format!("step {}", st.index),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use bakeoff_artifact::{SuiteStatus, SuiteSummary};

    fn suite(details: serde_json::Value) -> SuiteResult {
        SuiteResult {
            status: SuiteStatus::Complete,
            summary: SuiteSummary {
                planned: 0,
                finished: 0,
                outcomes: Default::default(),
                passed: 0,
                scored: 0,
                score: None,
                flags: vec![],
                details,
                damage: None,
                conditions: None,
            },
            items: vec![],
        }
    }

    /// One step of a load report, its TTFT and TPOT percentiles as given.
    fn step(c: u32, tok_s: f64, ttft: [f64; 3], tpot: [f64; 2]) -> serde_json::Value {
        let lat = serde_json::json!({"count": 8, "clamped_high": 0});
        let ttft = serde_json::json!({"count": 8, "clamped_high": 0, "p50_ms": ttft[0],
                                      "p90_ms": ttft[1], "p99_ms": ttft[2]});
        let tpot = serde_json::json!({"count": 8, "clamped_high": 0, "p50_ms": tpot[0],
                                      "p99_ms": tpot[1]});
        serde_json::json!({
            "label": format!("c={c}"), "concurrency": c, "sent": 8, "ok": 8, "errors": {},
            "wall_s": 1.0, "output_tokens": 300, "output_tokens_per_second": tok_s,
            "token_source": "usage",
            "latency": {"ttft": ttft, "ttfot": lat, "tpot": tpot, "itl": lat, "e2e": lat,
                "send_lateness": lat, "ttft_corrected": lat, "e2e_corrected": lat},
            "histograms": {"ttft": [], "itl": [], "e2e": []}
        })
    }

    /// The shape the throughput suite writes (a bakeoff-artifact `LoadReport`), read typed.
    #[test]
    fn a_load_suite_reads_its_load_report() {
        let s = suite(serde_json::json!({
            "mode": "closed", "plan": {}, "warmup_requests": 0,
            "pinning": {"ignore_eos_sent": false, "min_tokens_sent": false, "finished": 16,
                        "exact_length": 16, "detail": "pinned"},
            "steps": [step(1, 499.8, [29.9, 31.0, 33.7], [5.0, 7.5]),
                      step(64, 591.0, [3196.9, 4000.0, 4374.5], [9.0, 12.0])]
        }));
        let st = steps_of("throughput", &s);
        assert_eq!(st.len(), 2, "{st:?}");
        assert_eq!(st[1].concurrency, Some(64.0));
        assert_eq!(st[1].tok_per_s, Some(591.0));
        assert_eq!(st[0].ttft_p50_ms, Some(29.9));
        assert_eq!(st[1].ttft_p99_ms, Some(4374.5));
        assert_eq!(
            (st[0].tpot_p50_ms, st[0].tpot_p99_ms),
            (Some(5.0), Some(7.5))
        );
        assert_eq!(st[0].requests, Some(8.0));
        // Another suite's details are never taken for a sweep.
        assert!(steps_of("smoke", &s).is_empty());
    }

    /// Details of another shape are no sweep (and the report's note, not steps guessed from
    /// field names); absent details are no sweep.
    #[test]
    fn details_of_another_shape_or_none_mean_no_steps() {
        let guessed = suite(serde_json::json!({"steps": [
            {"concurrency": 1, "output_tok_per_s": 88.5, "ttft": {"p50_ms": 40.0}}
        ]}));
        assert!(steps_of("throughput", &guessed).is_empty());
        assert!(read::load("throughput", &guessed).is_err());
        assert!(steps_of("throughput", &suite(serde_json::Value::Null)).is_empty());
    }
}

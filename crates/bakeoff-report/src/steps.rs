//! Load steps (concurrency → tok/s, TTFT percentiles) read from what an artifact carries.
//!
//! The throughput suite writes its steps under the suite's `summary.details` (an array named
//! `steps`; each step's figures under names such as `concurrency`, `output_tok_per_s` or an
//! `output_throughput {per_second}` object, `ttft {p50_ms, p90_ms, p99_ms}`), and its items may
//! carry `extra.concurrency`. The reader here is deliberately tolerant of the field names it
//! accepts (listed below and in docs/reports.md) and renders only what is there: no step data
//! means "no throughput data", never an invented number.

use bakeoff_artifact::{ItemRecord, SuiteResult};
use bakeoff_stats::percentile_nearest_rank;
use serde_json::Value;

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

const STEP_ARRAYS: &[&str] = &["steps", "step_results", "levels", "ladder", "sweep"];
const CONCURRENCY: &[&str] = &[
    "concurrency",
    "users",
    "clients",
    "parallel",
    "max_concurrency",
];
const TOK_PER_S: &[&str] = &[
    "output_tok_per_s",
    "output_tokens_per_s",
    "output_tokens_per_second",
    "tok_per_s",
    "tokens_per_s",
    "tokens_per_second",
    "tok_s",
    "output_tps",
    "aggregate_tok_per_s",
    "throughput_tok_per_s",
];
const TOK_OBJECTS: &[&str] = &[
    "output_throughput",
    "output_tokens_throughput",
    "token_throughput",
    "tokens",
    "throughput",
];
const TTFT_OBJECTS: &[&str] = &["ttft", "ttft_ms", "ttft_latency"];
const REQUESTS: &[&str] = &["requests", "completed", "n", "count", "measured"];

fn num(v: &Value) -> Option<f64> {
    v.as_f64().filter(|x| x.is_finite())
}

fn first_num(o: &serde_json::Map<String, Value>, keys: &[&str]) -> Option<f64> {
    keys.iter().find_map(|k| o.get(*k).and_then(num))
}

fn percentile_of(o: &serde_json::Map<String, Value>, p: &str) -> Option<f64> {
    // bakeoff-load steps nest their summaries: `latency.ttft.p50_ms`.
    if let Some(Value::Object(lat)) = o.get("latency")
        && let Some(x) = percentile_of(lat, p)
    {
        return Some(x);
    }
    // `{p50_ms}` (bakeoff-stats LatencySummary), `{p50}`, or flat `ttft_p50_ms`.
    for obj in TTFT_OBJECTS {
        if let Some(Value::Object(t)) = o.get(*obj)
            && let Some(x) = first_num(t, &[&format!("{p}_ms"), p])
        {
            return Some(x);
        }
    }
    first_num(
        o,
        &[
            &format!("ttft_{p}_ms"),
            &format!("ttft_ms_{p}"),
            &format!("ttft_{p}"),
        ],
    )
}

/// A percentile of another latency (`tpot`, `itl`, `e2e`): `latency.NAME.p50_ms`,
/// `NAME.p50_ms`, `NAME_ms.p50` or flat `NAME_p50_ms`.
fn latency_of(o: &serde_json::Map<String, Value>, name: &str, p: &str) -> Option<f64> {
    for src in [o.get("latency").and_then(Value::as_object), Some(o)]
        .into_iter()
        .flatten()
    {
        for obj in [name.to_string(), format!("{name}_ms")] {
            if let Some(Value::Object(t)) = src.get(&obj)
                && let Some(x) = first_num(t, &[&format!("{p}_ms"), p])
            {
                return Some(x);
            }
        }
    }
    first_num(o, &[&format!("{name}_{p}_ms"), &format!("{name}_{p}")])
}

fn tok_per_s(o: &serde_json::Map<String, Value>) -> Option<f64> {
    first_num(o, TOK_PER_S).or_else(|| {
        TOK_OBJECTS.iter().find_map(|k| match o.get(*k) {
            Some(Value::Object(t)) => first_num(t, &["per_second", "tok_per_s", "value"]),
            _ => None,
        })
    })
}

fn step_array(details: &Value) -> Option<&Vec<Value>> {
    match details {
        Value::Array(a) => Some(a),
        Value::Object(o) => STEP_ARRAYS
            .iter()
            .find_map(|k| o.get(*k).and_then(Value::as_array)),
        _ => None,
    }
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

fn item_concurrency(i: &ItemRecord) -> Option<f64> {
    i.extra.as_object().and_then(|o| first_num(o, CONCURRENCY))
}

/// The steps of a suite, from its `summary.details`. The throughput suite stores a whole
/// bakeoff-artifact `LoadReport` there, read typed; other shapes go through the tolerant
/// reader below, and a step without TTFT figures gets them from the suite's items that carry
/// the same `extra.concurrency`.
pub fn steps_of(suite: &SuiteResult) -> Vec<Step> {
    // Read in place: the details of a throughput suite hold every request record.
    if let Ok(report) = suite.summary.details_as::<bakeoff_artifact::LoadReport>() {
        return steps_of_load(&report);
    }
    steps_in(&suite.summary.details, &suite.items)
}

/// Every sweep of an artifact: each suite's steps under the suite's name, then each `bench run`
/// sweep (`artifact.load`, no suite) as `bench NAME`.
pub fn sweeps_of(a: &bakeoff_artifact::Artifact) -> impl Iterator<Item = (String, Vec<Step>)> + '_ {
    a.suites
        .iter()
        .map(|(name, s)| (name.clone(), steps_of(s)))
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
        _ => a.suites.get(name)?.summary.details_as().ok(),
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

fn steps_in(details: &Value, items: &[ItemRecord]) -> Vec<Step> {
    let Some(arr) = step_array(details) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (index, raw) in arr.iter().enumerate() {
        let Some(o) = raw.as_object() else { continue };
        let concurrency = first_num(o, CONCURRENCY);
        let mut s = Step {
            index,
            concurrency,
            tok_per_s: tok_per_s(o),
            ttft_p50_ms: percentile_of(o, "p50"),
            ttft_p90_ms: percentile_of(o, "p90"),
            ttft_p99_ms: percentile_of(o, "p99"),
            requests: first_num(o, REQUESTS),
            label: o.get("label").and_then(Value::as_str).map(str::to_string),
            tpot_p50_ms: latency_of(o, "tpot", "p50"),
            tpot_p99_ms: latency_of(o, "tpot", "p99"),
            itl_p50_ms: latency_of(o, "itl", "p50"),
            itl_p99_ms: latency_of(o, "itl", "p99"),
            e2e_p50_ms: latency_of(o, "e2e", "p50"),
            e2e_p99_ms: latency_of(o, "e2e", "p99"),
            power_w_mean: None,
            tokens_per_joule: None,
            repeat: o
                .get("repeat")
                .and_then(Value::as_u64)
                .and_then(|r| u32::try_from(r).ok()),
            contamination: None,
        };
        if s.ttft_p50_ms.is_none()
            && let Some(c) = concurrency
        {
            let v = ttfts(items.iter().filter(|i| item_concurrency(i) == Some(c)));
            s.ttft_p50_ms = percentile_nearest_rank(&v, 50.0);
            s.ttft_p90_ms = percentile_nearest_rank(&v, 90.0);
            s.ttft_p99_ms = percentile_nearest_rank(&v, 99.0);
        }
        if s.concurrency.is_some() || s.tok_per_s.is_some() || s.ttft_p50_ms.is_some() {
            out.push(s);
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

    fn suite(details: Value) -> SuiteResult {
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

    /// The shape `bakeoff bench run` writes (`load.throughput.steps[]`, bakeoff-artifact
    /// `LoadReport`), as seen in the H200 sweep artifact.
    #[test]
    fn reads_bench_load_steps() {
        let v = serde_json::json!({"mode": "closed", "steps": [
            {"label": "c=1", "concurrency": 1, "output_tokens_per_second": 499.8,
             "latency": {"ttft": {"count": 113, "p50_ms": 29.9, "p90_ms": 31.0, "p99_ms": 33.7}}},
            {"label": "c=64", "concurrency": 64, "output_tokens_per_second": 591.0,
             "latency": {"ttft": {"count": 118, "p50_ms": 3196.9, "p90_ms": 4000.0, "p99_ms": 4374.5}}}
        ]});
        let st = steps_in(&v, &[]);
        assert_eq!(st.len(), 2);
        assert_eq!(st[1].concurrency, Some(64.0));
        assert_eq!(st[1].tok_per_s, Some(591.0));
        assert_eq!(st[0].ttft_p50_ms, Some(29.9));
        assert_eq!(st[1].ttft_p99_ms, Some(4374.5));
    }

    #[test]
    fn reads_flat_and_nested_field_names() {
        let s = suite(serde_json::json!({"steps": [
            {"concurrency": 1, "output_tok_per_s": 88.5, "ttft": {"p50_ms": 40.0, "p90_ms": 55.0, "p99_ms": 61.0}},
            {"concurrency": 4, "output_throughput": {"completed": 900, "wall_seconds": 3.0, "per_second": 300.0},
             "ttft_p50_ms": 90.0, "ttft_p99_ms": 200.0},
            "not a step"
        ]}));
        let st = steps_of(&s);
        assert_eq!(st.len(), 2);
        assert_eq!(st[0].concurrency, Some(1.0));
        assert_eq!(st[0].tok_per_s, Some(88.5));
        assert_eq!(st[0].ttft_p90_ms, Some(55.0));
        assert_eq!(st[1].tok_per_s, Some(300.0));
        assert_eq!(st[1].ttft_p50_ms, Some(90.0));
        assert_eq!(st[1].ttft_p90_ms, None);
    }

    #[test]
    fn reads_tpot_itl_e2e_when_present() {
        let st = steps_in(
            &serde_json::json!({"steps": [
                {"concurrency": 2, "label": "c=2", "latency": {"tpot": {"p50_ms": 5.0, "p99_ms": 7.5},
                 "itl": {"p50_ms": 4.0}}, "e2e_ms": {"p99": 900.0}, "e2e_p50_ms": 400.0}
            ]}),
            &[],
        );
        assert_eq!(st[0].label.as_deref(), Some("c=2"));
        assert_eq!(
            (st[0].tpot_p50_ms, st[0].tpot_p99_ms),
            (Some(5.0), Some(7.5))
        );
        assert_eq!((st[0].itl_p50_ms, st[0].itl_p99_ms), (Some(4.0), None));
        assert_eq!(
            (st[0].e2e_p50_ms, st[0].e2e_p99_ms),
            (Some(400.0), Some(900.0))
        );
    }

    #[test]
    fn no_details_means_no_steps() {
        assert!(steps_of(&suite(Value::Null)).is_empty());
        assert!(steps_of(&suite(serde_json::json!({"other": 1}))).is_empty());
    }
}

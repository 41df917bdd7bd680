//! Prometheus text exposition (format 0.0.4), enough to difference counters across a step:
//! `# TYPE name kind` lines, then `name{labels} value [timestamp]`. Samples are summed over
//! labels by name; `_bucket` samples are skipped (a histogram's sum and count suffice here).
//!
//! Engine metric names (vLLM vllm/v1/metrics/loggers.py and vllm/v1/spec_decode/metrics.py,
//! SGLang python/sglang/srt/metrics/collector.py, llama.cpp tools/server/README.md):
//! - vLLM: `vllm:generation_tokens_total`, `vllm:prompt_tokens_total`,
//!   `vllm:spec_decode_num_drafts_total`, `…_num_draft_tokens_total`, `…_num_accepted_tokens_total`.
//! - SGLang (`--enable-metrics`): `sglang:generation_tokens_total`, `sglang:spec_accept_length`.
//! - llama.cpp (`--metrics`): `llamacpp:tokens_predicted_total`, `llamacpp:prompt_tokens_total`,
//!   `llamacpp:n_decode_total`, `llamacpp:spec_decode_num_{draft_tokens,accepted_tokens,drafts}_total`.
//! - Latency histograms (vLLM, SGLang): `…:time_to_first_token_seconds` and
//!   `…:e2e_request_latency_seconds`; their `_sum`/`_count` deltas give the server's mean over
//!   a step (vLLM docs "Metrics"; SGLang docs "Production Metrics"). llama.cpp has none: its
//!   per-request `timings` reconcile instead.

use std::collections::{BTreeMap, BTreeSet};

use bakeoff_artifact::{EngineKind, MetricsDelta, SpecDecode};

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Scrape {
    pub values: BTreeMap<String, f64>,
    pub gauges: BTreeSet<String>,
}

pub fn parse(text: &str) -> Scrape {
    let mut s = Scrape::default();
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        if let Some(rest) = line.strip_prefix('#') {
            let mut it = rest.split_whitespace();
            if it.next() == Some("TYPE")
                && let (Some(name), Some("gauge")) = (it.next(), it.next())
            {
                s.gauges.insert(name.to_string());
            }
            continue;
        }
        // The name ends at `{` or whitespace; the value follows the closing brace.
        let (name, rest) = match line.find(['{', ' ', '\t']) {
            Some(i) => (&line[..i], &line[i..]),
            None => continue,
        };
        let rest = if rest.starts_with('{') {
            match rest.rfind('}') {
                Some(j) => &rest[j + 1..],
                None => continue,
            }
        } else {
            rest
        };
        let Some(v) = rest
            .split_whitespace()
            .next()
            .and_then(|v| v.parse::<f64>().ok())
        else {
            continue;
        };
        if name.ends_with("_bucket") || !v.is_finite() {
            continue;
        }
        *s.values.entry(name.to_string()).or_insert(0.0) += v;
    }
    s
}

impl Scrape {
    /// The engine whose metric family ([`EngineKind::metrics_family`]) the scrape carries.
    pub fn family(&self) -> Option<EngineKind> {
        EngineKind::WITH_METRICS.into_iter().find(|e| {
            e.metrics_family().is_some_and(|f| {
                self.values
                    .keys()
                    .any(|k| k.strip_prefix(f).is_some_and(|r| r.starts_with(':')))
            })
        })
    }
}

/// Counters differenced, gauges at their end value. `None` when the server exposes no engine
/// metrics we know.
pub fn delta(before: &Scrape, after: &Scrape, client_output_tokens: u64) -> Option<MetricsDelta> {
    let engine = after.family()?;
    let family = engine.metrics_family()?;
    let mut deltas = BTreeMap::new();
    for (k, v) in &after.values {
        if !k.starts_with(&format!("{family}:")) {
            continue;
        }
        let is_gauge = after.gauges.contains(k);
        let d = if is_gauge {
            *v
        } else {
            v - before.values.get(k).copied().unwrap_or(0.0)
        };
        deltas.insert(k.clone(), d);
    }
    let get = |k: &str| deltas.get(k).copied();
    let generation_tokens = match engine {
        EngineKind::Vllm => get("vllm:generation_tokens_total"),
        EngineKind::Sglang => get("sglang:generation_tokens_total"),
        EngineKind::LlamaCpp | EngineKind::Generic => get("llamacpp:tokens_predicted_total"),
    };
    let spec_decode = match engine {
        EngineKind::Vllm | EngineKind::LlamaCpp => {
            let drafts = get(&format!("{family}:spec_decode_num_drafts_total"));
            let draft_tokens = get(&format!("{family}:spec_decode_num_draft_tokens_total"));
            let accepted = get(&format!("{family}:spec_decode_num_accepted_tokens_total"));
            match (draft_tokens, accepted) {
                (Some(d), Some(a)) if d > 0.0 => Some(SpecDecode {
                    source: format!("{family} /metrics"),
                    draft_tokens: Some(d),
                    accepted_tokens: Some(a),
                    acceptance_rate: Some(a / d),
                    mean_accept_length: drafts.filter(|n| *n > 0.0).map(|n| 1.0 + a / n),
                }),
                _ => None,
            }
        }
        EngineKind::Sglang | EngineKind::Generic => get("sglang:spec_accept_length")
            .filter(|v| *v > 0.0)
            .map(|len| SpecDecode {
                source: "sglang /metrics".into(),
                draft_tokens: None,
                accepted_tokens: None,
                acceptance_rate: None,
                mean_accept_length: Some(len),
            }),
    };
    let server_ttft_mean_ms = histogram_mean_ms(&deltas, family, "time_to_first_token_seconds");
    let server_e2e_mean_ms = histogram_mean_ms(&deltas, family, "e2e_request_latency_seconds");
    Some(MetricsDelta {
        family: family.to_string(),
        client_server_token_ratio: generation_tokens
            .filter(|g| *g > 0.0)
            .map(|g| client_output_tokens as f64 / g),
        generation_tokens,
        deltas,
        spec_decode,
        server_ttft_mean_ms,
        server_e2e_mean_ms,
        client_server_ttft_ratio: None,
        client_server_e2e_ratio: None,
    })
}

/// The mean of a server latency histogram over the step, ms: Δsum / Δcount (seconds). llama.cpp
/// exports no such histograms, so its lookup finds nothing.
fn histogram_mean_ms(deltas: &BTreeMap<String, f64>, family: &str, name: &str) -> Option<f64> {
    let sum = deltas.get(&format!("{family}:{name}_sum"))?;
    let count = deltas.get(&format!("{family}:{name}_count"))?;
    (*count > 0.0 && sum.is_finite()).then(|| sum / count * 1000.0)
}

/// Client means over server means, once the step's client latencies are known.
pub fn attach_client_ratios(
    m: &mut MetricsDelta,
    client_ttft_mean_ms: Option<f64>,
    client_e2e_mean_ms: Option<f64>,
) {
    let ratio = |c: Option<f64>, s: Option<f64>| Some(c? / s.filter(|s| *s > 0.0)?);
    m.client_server_ttft_ratio = ratio(client_ttft_mean_ms, m.server_ttft_mean_ms);
    m.client_server_e2e_ratio = ratio(client_e2e_mean_ms, m.server_e2e_mean_ms);
}

/// One engine's gauges of load, by the engine-neutral names of
/// [`bakeoff_artifact::GaugeSeries`]: each a list of metric names, the first present wins.
/// The one table: `bench run`'s gauge sampler (`bakeoff_load::gauges`), the seat monitor's
/// queue and a campaign's idle probe read it.
#[derive(Debug, Clone, Copy)]
pub struct EngineGauges {
    pub engine: EngineKind,
    /// Requests being decoded (slots or batch seats busy).
    pub running: &'static [&'static str],
    /// Requests queued for a slot or a batch seat.
    pub waiting: &'static [&'static str],
    /// KV-cache occupancy, 0–1.
    pub kv_cache_usage: &'static [&'static str],
    /// A counter of preempted (vLLM) or retracted (SGLang) requests.
    pub preemptions_total: &'static [&'static str],
}

/// The gauges by engine (checked against each engine's source):
/// - vLLM 0.32 (`vllm/v1/metrics/loggers.py`): `vllm:num_requests_running`,
///   `vllm:num_requests_waiting`, `vllm:kv_cache_usage_perc` (earlier
///   `vllm:gpu_cache_usage_perc`), the counter `vllm:num_preemptions_total`.
/// - SGLang (`--enable-metrics`, python/sglang/srt/metrics/collector.py at main, commit 00ae9c1,
///   read 2026-12-05): `sglang:num_running_reqs`, `sglang:num_queue_reqs`, `sglang:token_usage`
///   (gauges), the counter `sglang:num_retracted_requests_total` (its preemptions are
///   "retractions"; the older gauge `sglang:num_retracted_reqs` is a per-batch count, not read).
/// - llama.cpp b11434 (`--metrics`, tools/server/server-task.cpp): `llamacpp:requests_processing`
///   and `llamacpp:requests_deferred`; no KV-cache gauge any more (`llamacpp:kv_cache_usage_ratio`
///   was in older builds and is read when present), no preemptions (a slot keeps its context).
pub const ENGINE_GAUGES: &[EngineGauges] = &[
    EngineGauges {
        engine: EngineKind::Vllm,
        running: &["vllm:num_requests_running"],
        waiting: &["vllm:num_requests_waiting"],
        kv_cache_usage: &["vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc"],
        preemptions_total: &["vllm:num_preemptions_total"],
    },
    EngineGauges {
        engine: EngineKind::Sglang,
        running: &["sglang:num_running_reqs"],
        waiting: &["sglang:num_queue_reqs"],
        kv_cache_usage: &["sglang:token_usage"],
        preemptions_total: &["sglang:num_retracted_requests_total"],
    },
    EngineGauges {
        engine: EngineKind::LlamaCpp,
        running: &["llamacpp:requests_processing"],
        waiting: &["llamacpp:requests_deferred"],
        kv_cache_usage: &["llamacpp:kv_cache_usage_ratio"],
        preemptions_total: &[],
    },
];

/// The gauge table of an engine (none for a generic server).
pub fn engine_gauges(engine: EngineKind) -> Option<&'static EngineGauges> {
    ENGINE_GAUGES.iter().find(|g| g.engine == engine)
}

impl EngineGauges {
    /// `(neutral name, metric names)` of each gauge.
    pub fn each(&self) -> [(&'static str, &'static [&'static str]); 4] {
        [
            ("running", self.running),
            ("waiting", self.waiting),
            ("kv_cache_usage", self.kv_cache_usage),
            ("preemptions", self.preemptions_total),
        ]
    }
}

impl Scrape {
    /// The first of `names` this scrape carries, with its value.
    pub fn first_of(&self, names: &[&'static str]) -> Option<(&'static str, f64)> {
        names
            .iter()
            .find_map(|n| self.values.get(*n).map(|v| (*n, *v)))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    const VLLM_BEFORE: &str = "# HELP vllm:generation_tokens Number of generation tokens.\n\
# TYPE vllm:generation_tokens counter\n\
vllm:generation_tokens_total{engine=\"0\",model_name=\"m\"} 100.0\n\
# TYPE vllm:num_requests_running gauge\n\
vllm:num_requests_running{engine=\"0\",model_name=\"m\"} 0.0\n\
vllm:spec_decode_num_drafts_total{engine=\"0\",model_name=\"m\"} 10.0\n\
vllm:spec_decode_num_draft_tokens_total{engine=\"0\",model_name=\"m\"} 30.0\n\
vllm:spec_decode_num_accepted_tokens_total{engine=\"0\",model_name=\"m\"} 15.0\n\
vllm:e2e_request_latency_seconds_bucket{le=\"1.0\"} 4.0\n";

    const VLLM_AFTER: &str = "# TYPE vllm:num_requests_running gauge\n\
vllm:generation_tokens_total{engine=\"0\",model_name=\"m\"} 1100.0\n\
vllm:num_requests_running{engine=\"0\",model_name=\"m\"} 3.0\n\
vllm:spec_decode_num_drafts_total{engine=\"0\",model_name=\"m\"} 110.0\n\
vllm:spec_decode_num_draft_tokens_total{engine=\"0\",model_name=\"m\"} 330.0\n\
vllm:spec_decode_num_accepted_tokens_total{engine=\"0\",model_name=\"m\"} 215.0\n";

    #[test]
    fn vllm_counters_and_spec_decode() {
        let d = delta(&parse(VLLM_BEFORE), &parse(VLLM_AFTER), 990).unwrap();
        assert_eq!(d.family, "vllm");
        assert_eq!(d.generation_tokens, Some(1000.0));
        assert_eq!(d.deltas["vllm:num_requests_running"], 3.0);
        assert_eq!(d.client_server_token_ratio, Some(0.99));
        let s = d.spec_decode.unwrap();
        // 200 accepted of 300 drafted over 100 drafts: rate 2/3, 1 + 200/100 = 3 tokens a step.
        assert!((s.acceptance_rate.unwrap() - 200.0 / 300.0).abs() < 1e-12);
        assert_eq!(s.mean_accept_length, Some(3.0));
        assert!(
            !d.deltas
                .contains_key("vllm:e2e_request_latency_seconds_bucket")
        );
    }

    #[test]
    fn llamacpp_and_labels_summed() {
        let before = parse("llamacpp:tokens_predicted_total 10\nllamacpp:requests_processing 0\n");
        let after = parse(
            "# TYPE llamacpp:requests_processing gauge\nllamacpp:tokens_predicted_total 74\nllamacpp:requests_processing 2\n",
        );
        let d = delta(&before, &after, 64).unwrap();
        assert_eq!(d.generation_tokens, Some(64.0));
        assert_eq!(d.client_server_token_ratio, Some(1.0));
        assert!(d.spec_decode.is_none());
        let s = parse("x{a=\"1\"} 2\nx{a=\"2\"} 3 1700000000\n");
        assert_eq!(s.values["x"], 5.0);
        assert!(delta(&s, &s, 0).is_none());
    }

    #[test]
    fn server_latency_means_from_histogram_sums() {
        // vLLM's histogram lines (vLLM docs, "Metrics"): 4 requests, TTFT sum 0.4 s → 100 ms,
        // E2E sum 8 s → 2000 ms over the step.
        let before = parse(
            "vllm:generation_tokens_total 0\n\
vllm:time_to_first_token_seconds_sum{model_name=\"m\"} 1.0\n\
vllm:time_to_first_token_seconds_count{model_name=\"m\"} 10\n\
vllm:e2e_request_latency_seconds_sum{model_name=\"m\"} 20.0\n\
vllm:e2e_request_latency_seconds_count{model_name=\"m\"} 10\n",
        );
        let after = parse(
            "vllm:generation_tokens_total 400\n\
vllm:time_to_first_token_seconds_sum{model_name=\"m\"} 1.4\n\
vllm:time_to_first_token_seconds_count{model_name=\"m\"} 14\n\
vllm:e2e_request_latency_seconds_sum{model_name=\"m\"} 28.0\n\
vllm:e2e_request_latency_seconds_count{model_name=\"m\"} 14\n",
        );
        let mut d = delta(&before, &after, 400).unwrap();
        assert!((d.server_ttft_mean_ms.unwrap() - 100.0).abs() < 1e-9);
        assert!((d.server_e2e_mean_ms.unwrap() - 2000.0).abs() < 1e-9);
        attach_client_ratios(&mut d, Some(110.0), Some(2100.0));
        assert!((d.client_server_ttft_ratio.unwrap() - 1.1).abs() < 1e-9);
        assert!((d.client_server_e2e_ratio.unwrap() - 1.05).abs() < 1e-9);
        // No requests in the step: no mean, no ratio.
        let mut same = delta(&after, &after, 0).unwrap();
        attach_client_ratios(&mut same, Some(1.0), Some(1.0));
        assert_eq!(same.server_ttft_mean_ms, None);
        assert_eq!(same.client_server_e2e_ratio, None);
    }

    #[test]
    fn sglang_accept_length() {
        let a = parse(
            "# TYPE sglang:spec_accept_length gauge\nsglang:spec_accept_length{x=\"y\"} 2.5\n",
        );
        let d = delta(&Scrape::default(), &a, 0).unwrap();
        assert_eq!(d.spec_decode.unwrap().mean_accept_length, Some(2.5));
    }
}

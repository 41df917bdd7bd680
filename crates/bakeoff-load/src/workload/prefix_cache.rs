//! A step's prefix-cache hit rate: the share of prompt tokens the server took from its cache,
//! read from wherever the engine exposes it, with the source named (docs/metrics.md,
//! "Workloads"):
//!
//! - llama.cpp: every response's `timings.cache_n` (prompt tokens reused from the slot) and
//!   `timings.prompt_n` (prompt tokens evaluated): Σcache_n / Σ(cache_n + prompt_n).
//! - vLLM (V1 engine): the counters `vllm:prefix_cache_queries_total` and
//!   `vllm:prefix_cache_hits_total` (prompt tokens looked up / found; vLLM docs, "Metrics"),
//!   differenced over the step; older vLLM: the gauge `vllm:gpu_prefix_cache_hit_rate`.
//! - SGLang (`--enable-metrics`): the gauge `sglang:cache_hit_rate`.
//!
//! A gauge is the engine's own recent window at the step's end, not exactly this step: the
//! detail says so.

use bakeoff_artifact::{MetricsDelta, PrefixCacheReading};

use super::CacheTally;

pub const VLLM_QUERIES: &str = "vllm:prefix_cache_queries_total";
pub const VLLM_HITS: &str = "vllm:prefix_cache_hits_total";
pub const VLLM_GAUGE: &str = "vllm:gpu_prefix_cache_hit_rate";
pub const SGLANG_GAUGE: &str = "sglang:cache_hit_rate";

/// The step's reading. `metrics`: the step's `/metrics` delta, when scraped.
pub fn reading(timings: CacheTally, metrics: Option<&MetricsDelta>) -> PrefixCacheReading {
    if let Some(rate) = timings.hit_rate() {
        return PrefixCacheReading {
            source: "llama.cpp timings".into(),
            hit_rate: Some(rate),
            hit_tokens: Some(timings.cache_n as f64),
            queried_tokens: Some((timings.cache_n + timings.prompt_n) as f64),
            detail: format!(
                "Σtimings.cache_n / Σ(cache_n + prompt_n) over {} responses",
                timings.with_timings
            ),
        };
    }
    let unavailable = |detail: String| PrefixCacheReading {
        source: "unavailable".into(),
        hit_rate: None,
        hit_tokens: None,
        queried_tokens: None,
        detail,
    };
    let Some(m) = metrics.filter(|m| !m.deltas.is_empty()) else {
        return unavailable(
            "no response carried llama.cpp timings and /metrics was not read (--no-metrics, or the server exposes none)"
                .into(),
        );
    };
    let get = |k: &str| m.deltas.get(k).copied();
    if let (Some(q), Some(h)) = (get(VLLM_QUERIES), get(VLLM_HITS)) {
        return PrefixCacheReading {
            source: "vllm /metrics".into(),
            hit_rate: (q > 0.0).then(|| h / q),
            hit_tokens: Some(h),
            queried_tokens: Some(q),
            detail: if q > 0.0 {
                format!("Δ{VLLM_HITS} / Δ{VLLM_QUERIES} over the step")
            } else {
                format!("{VLLM_QUERIES} did not move during the step (prefix caching off?)")
            },
        };
    }
    for (name, source) in [
        (VLLM_GAUGE, "vllm /metrics gauge"),
        (SGLANG_GAUGE, "sglang /metrics gauge"),
    ] {
        if let Some(v) = get(name) {
            return PrefixCacheReading {
                source: source.into(),
                hit_rate: Some(v),
                hit_tokens: None,
                queried_tokens: None,
                detail: format!(
                    "{name} at the step's end: the engine's own recent window, not exactly this step"
                ),
            };
        }
    }
    unavailable(format!(
        "the server's {} /metrics has no prefix-cache metric and no response carried llama.cpp timings",
        m.family
    ))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::prometheus::{delta, parse};

    /// A scripted vLLM V1 `/metrics` pair with the real names and types (vLLM docs "Metrics":
    /// `vllm:prefix_cache_queries` and `vllm:prefix_cache_hits` are counters of prompt tokens,
    /// exposed with the `_total` suffix by prometheus_client).
    const VLLM_BEFORE: &str = "# HELP vllm:prefix_cache_queries_total Prefix cache queries, in terms of number of queried tokens.\n\
# TYPE vllm:prefix_cache_queries_total counter\n\
vllm:prefix_cache_queries_total{engine=\"0\",model_name=\"m\"} 1000.0\n\
# HELP vllm:prefix_cache_hits_total Prefix cache hits, in terms of number of cached tokens.\n\
# TYPE vllm:prefix_cache_hits_total counter\n\
vllm:prefix_cache_hits_total{engine=\"0\",model_name=\"m\"} 100.0\n\
vllm:generation_tokens_total{engine=\"0\",model_name=\"m\"} 0.0\n";

    const VLLM_AFTER: &str = "# TYPE vllm:prefix_cache_queries_total counter\n\
vllm:prefix_cache_queries_total{engine=\"0\",model_name=\"m\"} 5000.0\n\
# TYPE vllm:prefix_cache_hits_total counter\n\
vllm:prefix_cache_hits_total{engine=\"0\",model_name=\"m\"} 3100.0\n\
vllm:generation_tokens_total{engine=\"0\",model_name=\"m\"} 64.0\n";

    #[test]
    fn vllm_counters_give_the_step_hit_rate() {
        let d = delta(&parse(VLLM_BEFORE), &parse(VLLM_AFTER), 64).unwrap();
        let r = reading(CacheTally::default(), Some(&d));
        assert_eq!(r.source, "vllm /metrics");
        // 3000 of 4000 queried tokens hit during the step.
        assert_eq!(r.hit_rate, Some(0.75));
        assert_eq!(r.queried_tokens, Some(4000.0));
    }

    #[test]
    fn gauges_of_older_vllm_and_sglang() {
        // Older vLLM (V0 docs: `vllm:gpu_prefix_cache_hit_rate` (Gauge)).
        let a = parse(
            "# TYPE vllm:gpu_prefix_cache_hit_rate gauge\nvllm:gpu_prefix_cache_hit_rate{model_name=\"m\"} 0.4\n",
        );
        let r = reading(
            CacheTally::default(),
            delta(&Default::default(), &a, 0).as_ref(),
        );
        assert_eq!(
            (r.source.as_str(), r.hit_rate),
            ("vllm /metrics gauge", Some(0.4))
        );
        // SGLang's exposition (`# TYPE sglang:cache_hit_rate gauge`).
        let a = parse(
            "# HELP sglang:cache_hit_rate The cache hit rate\n# TYPE sglang:cache_hit_rate gauge\nsglang:cache_hit_rate{model_name=\"m\"} 0.93\n",
        );
        let r = reading(
            CacheTally::default(),
            delta(&Default::default(), &a, 0).as_ref(),
        );
        assert_eq!(r.source, "sglang /metrics gauge");
        assert_eq!(r.hit_rate, Some(0.93));
    }

    #[test]
    fn timings_first_and_unavailable_otherwise() {
        let t = CacheTally {
            with_timings: 2,
            cache_n: 30,
            prompt_n: 10,
        };
        let r = reading(t, None);
        assert_eq!(r.source, "llama.cpp timings");
        assert_eq!(r.hit_rate, Some(0.75));
        let r = reading(CacheTally::default(), None);
        assert_eq!(r.source, "unavailable");
        assert!(r.hit_rate.is_none() && r.detail.contains("--no-metrics"));
        let a = parse("llamacpp:tokens_predicted_total 4\n");
        let r = reading(
            CacheTally::default(),
            delta(&Default::default(), &a, 0).as_ref(),
        );
        assert_eq!(r.source, "unavailable");
        assert!(r.detail.contains("llamacpp"), "{}", r.detail);
    }
}

use bakeoff_artifact::{
    ArtifactKind, Candidate, EndpointRecord, EngineKind, SuiteResult, SuiteStatus, SuiteSummary,
};
use serde_json::json;

use super::*;

fn lat(p50: f64) -> serde_json::Value {
    json!({"count": 4, "clamped_high": 0, "mean_ms": p50, "min_ms": p50, "p50_ms": p50,
        "p90_ms": p50, "p95_ms": p50, "p99_ms": p50, "max_ms": p50})
}

/// A sweep of two steps of a conversation workload: the turn split on both, a prefix-cache
/// reading on one and the reason there is none on the other.
fn conversations() -> LoadReport {
    let step = |i: usize| {
        json!({
            "label": format!("c={i}"), "concurrency": i, "sent": 4, "ok": 4,
            "errors": {}, "wall_s": 2.0, "output_tokens": 1000,
            "output_tokens_per_second": 500.0, "token_source": "usage",
            "latency": {"ttft": lat(10.0), "ttfot": lat(10.0), "tpot": lat(10.0),
                "itl": lat(10.0), "e2e": lat(10.0), "send_lateness": lat(10.0),
                "ttft_corrected": lat(10.0), "e2e_corrected": lat(10.0)},
            "histograms": {"ttft": [], "itl": [], "e2e": []},
            "turns": {"conversations": 2 * i,
                "first_turn": {"sent": 2, "ok": 2, "ttft": lat(120.0), "e2e": lat(900.0)},
                "later_turns": {"sent": 2, "ok": 1, "ttft": lat(35.25), "e2e": lat(700.0)}},
        })
    };
    let mut steps = vec![step(1), step(4)];
    steps[0]["prefix_cache"] = json!({"source": "vllm /metrics", "hit_rate": 0.8125,
        "detail": ""});
    steps[1]["prefix_cache"] = json!({"source": "unavailable",
        "detail": "the engine exports no prefix-cache counter"});
    serde_json::from_value(json!({
        "mode": "closed", "plan": {}, "warmup_requests": 0, "steps": steps,
        "pinning": {"ignore_eos_sent": false, "min_tokens_sent": false, "finished": 8,
                    "exact_length": 8, "detail": "pinned"}
    }))
    .unwrap()
}

#[test]
fn workload_lines_per_step() {
    insta::assert_snapshot!(workload_lines(&conversations()).join("\n"));
}

/// An artifact of a generic endpoint with nothing measured yet.
fn artifact() -> Artifact {
    Artifact::new(
        ArtifactKind::Bakeoff,
        Candidate::new("m-generic", "m", EngineKind::Generic),
        EndpointRecord {
            url: "http://127.0.0.1:1".into(),
            facts: None,
        },
    )
}

/// An `eval run` artifact whose longgen suite carries probes but no sweep: the probe lines only.
#[test]
fn suite_sweeps_prints_longgen_probes() {
    let mut a = artifact();
    a.suites.insert(
        "longgen".into(),
        SuiteResult {
            status: SuiteStatus::Complete,
            summary: SuiteSummary {
                planned: 1,
                finished: 1,
                outcomes: Default::default(),
                passed: 1,
                scored: 1,
                score: None,
                flags: Vec::new(),
                // As the longgen suite writes them: `probe` is the request's index.
                details: json!({"probes": [{"probe": 0, "output_tokens": 4096,
                    "decode_tokens_per_second": 41.26, "server_decode_tokens_per_second": 42.0}]}),
                damage: None,
                conditions: None,
            },
            items: vec![],
        },
    );
    insta::assert_snapshot!(suite_sweeps(&a));
}

/// `bench run`'s summary: the sweep, its workload lines, the artifact's path and the conditions
/// line, in that order; a failure artifact (no sweep) prints nothing here.
#[test]
fn bench_run_summary_in_order() {
    let mut a = artifact();
    let path = std::path::Path::new("results/m-bench.bakeoff.json");
    assert_eq!(bench_run(&a, path), "");
    a.load.insert("throughput".into(), conversations());
    let text = bench_run(&a, path);
    let sweep = crate::bench::sweep(&conversations());
    assert!(text.starts_with(&format!("{sweep}\n")), "{text}");
    let rest: Vec<&str> = text[sweep.len() + 1..].lines().collect();
    let workload = workload_lines(&conversations());
    assert_eq!(rest[..workload.len()], workload);
    assert_eq!(
        rest[workload.len()..],
        [
            "artifact: results/m-bench.bakeoff.json".to_string(),
            conditions_line(&a)
        ]
    );
}

#[test]
fn ceiling_says_what_it_is_for() {
    let c = HarnessCeiling {
        requests_per_second: 5210.4,
        streamed_tokens_per_second: 181_000.6,
        concurrent_streams: 512,
        peak_rss_mib: Some(88.2),
        source: "bakeoff bench calibrate".into(),
    };
    assert_eq!(
        ceiling(&c),
        "harness ceiling on this machine: 5210 req/s (1-token requests), 181001 streamed tokens/s, \
         512 concurrent streams, peak RSS 88 MiB\nsweep steps above half of these are flagged \
         client-bound\n"
    );
}

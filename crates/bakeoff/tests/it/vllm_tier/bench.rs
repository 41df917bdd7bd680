//! `bench run` against the real vLLM: token counts reconciled with vLLM's own `/metrics`
//! counters, TTFT below E2E for every request, the prefix-cache hit rate of a multi-turn
//! workload read from the real `vllm:prefix_cache_*` counters, and a short sweep ending with a
//! capacity finding.

use bakeoff_testkit::vllm;

use crate::util::valid_artifact;

use super::run;

#[tokio::test]
async fn a_sweep_reconciles_with_vllms_counters_and_ends_with_a_capacity_finding() {
    let s = vllm::shared().await;
    let dir = bakeoff_testkit::tempdir();
    let out = dir.path().join("out");
    let (code, text, err) = run(&[
        "bench",
        "run",
        "--endpoint",
        &s.url(),
        "--concurrency",
        "1,4",
        "--requests",
        "6",
        "--prompt-tokens",
        "48",
        "--output-tokens",
        "24",
        "--warmup",
        "1",
        "--no-calibrate",
        "--out",
        out.to_str().unwrap(),
    ])
    .await;
    assert_eq!(code, 0, "{text}{err}");
    assert!(text.starts_with("capacity: "), "{text}");
    let v = valid_artifact(&out, "-bench.bakeoff.json");
    let r = &v["load"]["throughput"];
    assert_eq!(v["candidate"]["engine"], "vllm");
    assert!(["knee", "still-rising", "flat"].contains(&r["capacity"]["verdict"].as_str().unwrap()));
    for st in r["steps"].as_array().unwrap() {
        assert_eq!(st["ok"], 6, "{st}");
        // The client's token counts against vLLM's own generation-token counter.
        assert_eq!(st["metrics"]["client_server_token_ratio"], 1.0, "{st}");
        for q in st["requests"].as_array().unwrap() {
            let (ttft, e2e) = (
                q["ttft_ms"].as_f64().unwrap(),
                q["e2e_ms"].as_f64().unwrap(),
            );
            assert!(ttft > 0.0 && ttft <= e2e, "{q}");
        }
    }
}

#[tokio::test]
async fn multi_turn_reads_the_prefix_cache_hit_rate_from_vllms_counters() {
    let s = vllm::shared().await;
    let dir = bakeoff_testkit::tempdir();
    let out = dir.path().join("out");
    let (code, text, err) = run(&[
        "bench",
        "run",
        "--endpoint",
        &s.url(),
        "--multi-turn",
        "3",
        "--system-prompt-tokens",
        "48",
        "--concurrency",
        "1",
        "--requests",
        "6",
        "--prompt-tokens",
        "32",
        "--output-tokens",
        "16",
        "--warmup",
        "0",
        "--no-calibrate",
        "--out",
        out.to_str().unwrap(),
    ])
    .await;
    assert_eq!(code, 0, "{text}{err}");
    let v = valid_artifact(&out, "-bench.bakeoff.json");
    let st = &v["load"]["throughput"]["steps"][0];
    assert_eq!(st["prefix_cache"]["source"], "vllm /metrics", "{st}");
    let rate = st["prefix_cache"]["hit_rate"].as_f64().unwrap();
    // Later turns resend the conversation and the system prompt is shared: vLLM's automatic
    // prefix caching (on by default in V1) must hit.
    assert!(rate > 0.1 && rate <= 1.0, "{st}");
    assert!(
        st["prefix_cache"]["hit_tokens"].as_f64().unwrap() > 0.0,
        "{st}"
    );
}

/// Agent sessions against the real vLLM, offered its tool (the shared server parses SmolLM2's
/// tool calls): the turns deepen, the step's prefix-cache hits come from vLLM's own counters,
/// each turn's from `usage.prompt_tokens_details`, and the tokens reconcile.
#[tokio::test]
async fn sessions_read_prefix_cache_hits_from_vllms_counters() {
    let s = vllm::shared().await;
    let dir = bakeoff_testkit::tempdir();
    let out = dir.path().join("out");
    let (code, text, err) = run(&[
        "bench",
        "run",
        "--endpoint",
        &s.url(),
        "--sessions",
        "3",
        "--tools",
        "--system-prompt-tokens",
        "48",
        "--concurrency",
        "2",
        "--requests",
        "6",
        "--prompt-tokens",
        "32",
        "--output-tokens",
        "16",
        "--tool-result-tokens",
        "24",
        "--tool-wait",
        "0.1",
        "--warmup",
        "0",
        "--no-calibrate",
        "--out",
        out.to_str().unwrap(),
    ])
    .await;
    assert_eq!(code, 0, "{text}{err}");
    let v = valid_artifact(&out, "-bench.bakeoff.json");
    let st = &v["load"]["throughput"]["steps"][0];
    assert_eq!(st["ok"], 6, "{st}");
    assert_eq!(st["metrics"]["client_server_token_ratio"], 1.0, "{st}");
    assert_eq!(st["prefix_cache"]["source"], "vllm /metrics", "{st}");
    assert!(
        st["prefix_cache"]["hit_rate"].as_f64().unwrap() > 0.1,
        "{st}"
    );
    let sess = &st["sessions"];
    assert_eq!(sess["completed"], 2, "{sess}");
    assert_eq!(
        sess["cache_source"], "usage.prompt_tokens_details",
        "{sess}"
    );
    let turns = sess["turns"].as_array().unwrap();
    assert_eq!(turns.len(), 3);
    for w in turns.windows(2) {
        let depth = |t: &serde_json::Value| t["mean_prompt_tokens"].as_f64().unwrap();
        assert!(depth(&w[1]) > depth(&w[0]), "{sess}");
    }
    // Two sessions, each resending its own history: vLLM's cache holds both, in whole blocks
    // (128 tokens on its CPU backend), so the third turn finds most of its prompt cached and
    // both later turns are judged.
    let last = &turns[2];
    assert!(last["cache_hit_rate"].as_f64().unwrap() > 0.5, "{sess}");
    assert_eq!(last["cache_checked"], 2, "{sess}");
}

/// The engine's gauges through every step, from the real vLLM's `/metrics`: running, waiting,
/// KV-cache usage (`vllm:kv_cache_usage_perc`) and preemptions (`vllm:num_preemptions_total`),
/// a series with timestamps per step, each gauge's peak and mean, and a capacity finding that
/// ends with what the gauges show.
#[tokio::test]
async fn vllm_gauges_are_sampled_through_every_step() {
    let s = vllm::shared().await;
    let dir = bakeoff_testkit::tempdir();
    let out = dir.path().join("out");
    let (code, text, err) = run(&[
        "bench",
        "run",
        "--endpoint",
        &s.url(),
        "--concurrency",
        "1,4",
        "--requests",
        "6",
        "--prompt-tokens",
        "48",
        "--output-tokens",
        "32",
        "--warmup",
        "1",
        "--gauge-interval",
        "0.25",
        "--no-calibrate",
        "--out",
        out.to_str().unwrap(),
    ])
    .await;
    assert_eq!(code, 0, "{text}{err}");
    let v = valid_artifact(&out, "-bench.bakeoff.json");
    let r = &v["load"]["throughput"];
    for st in r["steps"].as_array().unwrap() {
        let g = &st["gauges"];
        assert_eq!(g["source"], "vllm /metrics", "{g}");
        assert_eq!(g["names"]["running"], "vllm:num_requests_running", "{g}");
        assert_eq!(g["names"]["waiting"], "vllm:num_requests_waiting", "{g}");
        assert_eq!(
            g["names"]["kv_cache_usage"], "vllm:kv_cache_usage_perc",
            "{g}"
        );
        assert_eq!(
            g["names"]["preemptions"], "vllm:num_preemptions_total",
            "{g}"
        );
        assert!(g["samples"].as_array().unwrap().len() >= 2, "{g}");
        let kv = g["summary"]["kv_cache_usage"]["peak"].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&kv), "{g}");
        assert!(
            g["summary"]["running"]["peak"].as_f64().unwrap() >= 1.0,
            "{g}"
        );
        eprintln!("{}: {}", st["label"], g["summary"]);
    }
    let limit = &r["capacity"]["limit"];
    assert!(
        ["kv-cache", "queue", "none-seen"].contains(&limit["kind"].as_str().unwrap()),
        "{limit}"
    );
    eprintln!("capacity: {}", r["capacity"]["statement"]);
}

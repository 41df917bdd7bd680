//! Speculative decoding on the real vLLM: the CPU build serves n-gram (prompt-lookup)
//! speculation (`--speculative-config '{"method": "ngram", …}'`). The long-generation probes read
//! the acceptance from vLLM's own `vllm:spec_decode_*` counters, and `bench run --versus` puts
//! speculation on against off at c = 1 with long outputs, alternately, on one machine.

use bakeoff_testkit::vllm::{self, VllmServer};

use crate::util::{only_file, read_json};

use super::run;

const NGRAM: &str = r#"{"method": "ngram", "num_speculative_tokens": 3, "prompt_lookup_max": 4, "prompt_lookup_min": 2}"#;

#[tokio::test]
async fn ngram_speculation_is_read_from_vllms_counters_and_compared_against_off() {
    let off = vllm::shared().await;
    let dir = bakeoff_testkit::tempdir();
    // `off` holds the engine lock: the second server starts under it.
    let on = VllmServer::start(
        &["--speculative-config", NGRAM],
        &dir.path().join("vllm-ngram.log"),
    )
    .await;
    let out = dir.path().join("longgen");
    let (code, text, err) = run(&[
        "eval",
        "run",
        "--endpoint",
        &on.url(),
        "--suite",
        "longgen",
        "--longgen-probes",
        "2",
        "--longgen-tokens",
        "96",
        "--no-calibrate",
        "--out",
        out.to_str().unwrap(),
    ])
    .await;
    assert_eq!(code, 0, "{text}{err}");
    let a = read_json(&only_file(&out, ".bakeoff.json"));
    let steps = a["suites"]["longgen"]["summary"]["details"]["steps"]
        .as_array()
        .unwrap_or_else(|| panic!("no longgen steps: {a}"));
    let spec = &steps[0]["metrics"]["spec_decode"];
    assert_eq!(spec["source"], "vllm /metrics", "{spec}");
    assert!(spec["draft_tokens"].as_f64().unwrap() > 0.0, "{spec}");
    let rate = spec["acceptance_rate"].as_f64().unwrap();
    assert!((0.0..=1.0).contains(&rate), "{spec}");

    // On against off, alternately, at c = 1 with long outputs.
    let out = dir.path().join("versus");
    let (code, text, err) = run(&[
        "bench",
        "run",
        "--endpoint",
        &on.url(),
        "--versus",
        &off.url(),
        "--concurrency",
        "1",
        "--requests",
        "3",
        "--prompt-tokens",
        "32",
        "--output-tokens",
        "64",
        "--warmup",
        "0",
        "--no-calibrate",
        "--out",
        out.to_str().unwrap(),
    ])
    .await;
    // Exit 1 is a comparison withheld on a busy machine; the instrument is what is checked.
    assert!(code == 0 || code == 1, "{text}{err}");
    let cmp = read_json(&only_file(&out, ".compare.json")).to_string();
    assert!(
        cmp.contains("accept"),
        "the comparison speaks of acceptance: {cmp}"
    );
    let a = read_json(&only_file(&out, "-a-bench.bakeoff.json"));
    let spec = &a["load"]["throughput"]["steps"][0]["metrics"]["spec_decode"];
    assert_eq!(spec["source"], "vllm /metrics", "{spec}");
}

//! `bakeoff bench run` workloads (docs/metrics.md, "Workloads") through the real binary against
//! the real llama-server (CPU, the test model): multi-turn conversations whose later turns the
//! server serves partly from its prompt cache (`timings.cache_n`), a trace replayed open-loop
//! with its lateness recorded and its shared `hash_ids` blocks reused, and a ShareGPT file as
//! the prompt source. (A bad workload file's refusal is `bakeoff-flags`' test.)

use bakeoff_testkit::real_llama;
use serde_json::Value;

use crate::util::{bench_quick, serial_tempdir, text, valid_artifact};

fn requests(step: &Value) -> &Vec<Value> {
    step["requests"].as_array().unwrap()
}

#[tokio::test]
async fn multi_turn_later_turns_reuse_the_prompt_cache() {
    let (_g, dir) = serial_tempdir().await;
    // llama-server keeps each slot's prompt cache by default (`cache_prompt` defaults to true),
    // so a later turn re-evaluates only what follows the conversation so far.
    let server = real_llama(8192, 2, &["--metrics"], dir.path()).await;
    let out = dir.path().join("out");
    let o = bench_quick(
        &server.url(),
        &out,
        &[
            "--multi-turn",
            "3",
            "--system-prompt-tokens",
            "48",
            "--concurrency",
            "1",
            "--requests",
            "6",
            "--prompt-tokens",
            "24",
            "--output-tokens",
            "8",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let v = valid_artifact(&out, "-bench.bakeoff.json");
    let r = &v["load"]["throughput"];
    assert_eq!(r["plan"]["workload"]["kind"], "multi-turn");
    assert_eq!(r["plan"]["workload"]["turns"], 3);
    let s = &r["steps"][0];
    assert_eq!(s["ok"], 6, "{s}");
    assert_eq!(s["turns"]["conversations"], 2);
    assert_eq!(s["turns"]["first_turn"]["ok"], 2);
    assert_eq!(s["turns"]["later_turns"]["ok"], 4);
    // Each later turn resends the conversation: more prompt tokens, most from the cache.
    let first_p = s["turns"]["first_turn"]["mean_prompt_tokens"]
        .as_f64()
        .unwrap();
    let later_p = s["turns"]["later_turns"]["mean_prompt_tokens"]
        .as_f64()
        .unwrap();
    assert!(later_p > first_p, "{first_p} {later_p}");
    let later_hit = s["turns"]["later_turns"]["cache_hit_rate"]
        .as_f64()
        .unwrap();
    assert!(later_hit > 0.5, "later turns hit rate {later_hit}");
    assert_eq!(s["prefix_cache"]["source"], "llama.cpp timings");
    let table = String::from_utf8_lossy(&o.stdout);
    assert!(
        table.contains("c=1: 2 conversations") && table.contains("prefix-cache hit rate"),
        "{table}"
    );
    assert!(s["prefix_cache"]["hit_rate"].as_f64().unwrap() > 0.0);
    for q in requests(s) {
        let turn = q["turn"].as_u64().unwrap();
        assert!(q["conversation"].as_u64().unwrap() < 2);
        if turn > 1 {
            let cached = q["server_cache_n"].as_u64().unwrap();
            let evaluated = q["server_prompt_n"].as_u64().unwrap();
            assert!(cached > evaluated, "turn {turn}: {q}");
        }
    }
}

#[tokio::test]
async fn trace_replay_keeps_offsets_lateness_and_shared_blocks() {
    let (_g, dir) = serial_tempdir().await;
    let server = real_llama(8192, 1, &["--metrics"], dir.path()).await;
    let trace = dir.path().join("trace.jsonl");
    // Two Mooncake lines sharing their first 512-token block, then two explicit lines of one
    // session; offsets within 2.4 s, replayed twice as fast.
    std::fs::write(
        &trace,
        "{\"timestamp\": 0, \"input_length\": 600, \"output_length\": 8, \"hash_ids\": [11, 12]}\n\
         {\"timestamp\": 800, \"input_length\": 600, \"output_length\": 8, \"hash_ids\": [11, 13]}\n\
         {\"offset_s\": 1.6, \"prompt_tokens\": 32, \"output_tokens\": 8, \"session_id\": \"chat-a\"}\n\
         {\"offset_s\": 2.4, \"prompt_tokens\": 48, \"output_tokens\": 8, \"session_id\": \"chat-a\"}\n",
    )
    .unwrap();
    let out = dir.path().join("out");
    let o = bench_quick(
        &server.url(),
        &out,
        &["--trace", trace.to_str().unwrap(), "--trace-speedup", "2"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let v = valid_artifact(&out, "-bench.bakeoff.json");
    let r = &v["load"]["throughput"];
    assert_eq!(r["mode"], "trace");
    assert_eq!(r["plan"]["workload"]["requests"], 4);
    assert_eq!(r["plan"]["workload"]["speedup"], 2.0);
    let s = &r["steps"][0];
    assert_eq!(s["label"], "trace");
    assert_eq!(
        (s["sent"].as_u64(), s["ok"].as_u64()),
        (Some(4), Some(4)),
        "{s}"
    );
    assert_eq!(s["latency"]["send_lateness"]["count"], 4);
    let q = requests(s);
    let intended: Vec<f64> = q
        .iter()
        .map(|q| q["intended_ms"].as_f64().unwrap())
        .collect();
    let mut sorted = intended.clone();
    sorted.sort_by(f64::total_cmp);
    for (got, want) in sorted.iter().zip([0.0, 400.0, 800.0, 1200.0]) {
        assert!((got - want).abs() < 1e-6, "{intended:?}");
    }
    let by_i = |i: u64| q.iter().find(|q| q["i"] == i).unwrap();
    // The second line's first block equals the first line's: served from the cache.
    assert!(
        by_i(1)["server_cache_n"].as_u64().unwrap() >= 256,
        "{}",
        by_i(1)
    );
    assert_eq!(by_i(2)["conversation"], 0);
    assert_eq!(by_i(3)["conversation"], 0);
    assert!(s["prefix_cache"]["hit_rate"].as_f64().unwrap() > 0.0);
    // The trace's own session ids never reach the report.
    assert!(!v.to_string().contains("chat-a"));
}

#[tokio::test]
async fn sharegpt_file_is_the_prompt_source() {
    let (_g, dir) = serial_tempdir().await;
    let server = real_llama(8192, 2, &["--metrics"], dir.path()).await;
    let file = dir.path().join("sharegpt.json");
    std::fs::write(
        &file,
        r#"[
  {"id": "a", "conversations": [
    {"from": "human", "value": "Name three colours. \u001b[31mMARKER-ONE"},
    {"from": "gpt", "value": "Red, green and blue."},
    {"from": "human", "value": "And three animals, with one sentence about each of them please?"}]},
  {"id": "b", "conversations": [{"from": "gpt", "value": "no human turn: skipped"}]},
  {"id": "c", "conversations": [
    {"from": "system", "value": "not sent"},
    {"from": "human", "value": "Write a long list of twenty fruits, one per line, in alphabetical order, with their colours."}]}
]"#,
    )
    .unwrap();
    let out = dir.path().join("out");
    let o = bench_quick(
        &server.url(),
        &out,
        &[
            "--prompts-sharegpt",
            file.to_str().unwrap(),
            "--concurrency",
            "1",
            "--requests",
            "2",
            "--output-tokens",
            "8",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(!text(&o).contains("MARKER-ONE"), "{}", text(&o));
    let v = valid_artifact(&out, "-bench.bakeoff.json");
    let r = &v["load"]["throughput"];
    assert_eq!(r["plan"]["workload"]["kind"], "sharegpt");
    assert_eq!(r["plan"]["workload"]["sharegpt"]["conversations"], 2);
    assert_eq!(
        r["plan"]["workload"]["sharegpt"]["skipped_without_human_turn"],
        1
    );
    let s = &r["steps"][0];
    assert_eq!(s["ok"], 2, "{s}");
    // Two different conversations' first human turns: two different prompt lengths, and the
    // output length still --output-tokens.
    let q = requests(s);
    let p: Vec<u64> = q
        .iter()
        .map(|q| q["prompt_tokens"].as_u64().unwrap())
        .collect();
    assert_ne!(p[0], p[1], "{p:?}");
    assert!(q.iter().all(|q| q["max_tokens"] == 8));
    assert!(s["prefix_cache"].is_object());

    // Its human turns drive a multi-turn conversation.
    let out2 = dir.path().join("out2");
    let o = bench_quick(
        &server.url(),
        &out2,
        &[
            "--prompts-sharegpt",
            file.to_str().unwrap(),
            "--multi-turn",
            "2",
            "--concurrency",
            "1",
            "--requests",
            "2",
            "--output-tokens",
            "8",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let v = valid_artifact(&out2, "-bench.bakeoff.json");
    let s = &v["load"]["throughput"]["steps"][0];
    // Conversation "a" has two human turns: both sent, the second after the real reply.
    assert_eq!(s["turns"]["first_turn"]["ok"], 1, "{s}");
    assert_eq!(s["turns"]["later_turns"]["ok"], 1, "{s}");
}

//! Agent sessions (docs/metrics.md, "Sessions") through the real binary against the real
//! llama-server (CPU, the test model): sessions whose later turns the server serves from its
//! prompt cache while every session keeps a slot, and lose it when sessions share one slot; a
//! session file recorded through the real LiteLLM proxy, converted and replayed token-for-token.
//! (A bad session file's refusal is `bakeoff-flags`' test.)

use std::path::Path;

use bakeoff_testkit::real_llama;
use serde_json::Value;

use crate::util::{self, bakeoff, bench_quick, serial_tempdir, text, valid_artifact};

fn sessions_run(url: &str, out: &Path, extra: &[&str]) -> Value {
    let mut args = vec![
        "--prompt-tokens",
        "24",
        "--output-tokens",
        "8",
        "--tool-result-tokens",
        "16",
        "--system-prompt-tokens",
        "32",
    ];
    args.extend(extra);
    let o = bench_quick(url, out, &args);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let table = String::from_utf8_lossy(&o.stdout);
    assert!(
        table.contains("sessions started") && table.contains("cache kept"),
        "{table}"
    );
    valid_artifact(out, "-bench.bakeoff.json")
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

#[tokio::test]
async fn sessions_grow_their_context_keep_the_cache_and_reconcile() {
    let (_g, dir) = serial_tempdir().await;
    // Four slots for four sessions: each session's slot keeps its history between turns.
    let server = real_llama(8192, 4, &["--metrics", "--cache-ram", "0"], dir.path()).await;
    let out = dir.path().join("out");
    let v = sessions_run(
        &server.url(),
        &out,
        &[
            "--sessions",
            "5",
            "--concurrency",
            "4",
            "--requests",
            "20",
            "--tool-wait",
            "0.2",
        ],
    );
    let r = &v["load"]["throughput"];
    assert_eq!(r["plan"]["workload"]["kind"], "sessions");
    let s = &r["steps"][0];
    assert_eq!(s["ok"], 20, "{s}");
    // The server's own token counters agree with the replies' usage, turn for turn.
    assert_eq!(s["metrics"]["client_server_token_ratio"], 1.0, "{s}");
    let sess = &s["sessions"];
    assert_eq!(
        (sess["started"].as_u64(), sess["completed"].as_u64()),
        (Some(4), Some(4))
    );
    assert_eq!(sess["cache_source"], "llama.cpp timings");
    let turns = sess["turns"].as_array().unwrap();
    assert_eq!(turns.len(), 5);
    // Depth and cache hits rise turn by turn; every later turn found its history cached.
    for w in turns.windows(2) {
        assert!(
            f(&w[1]["mean_prompt_tokens"]) > f(&w[0]["mean_prompt_tokens"]),
            "{w:?}"
        );
        assert!(
            f(&w[1]["cache_hit_rate"]) >= f(&w[0]["cache_hit_rate"]),
            "{w:?}"
        );
    }
    for t in &turns[1..] {
        assert_eq!(t["cache_checked"], 4, "{t}");
        assert_eq!(t["cache_kept"], 4, "{t}");
        assert!(f(&t["mean_tool_wait_ms"]) >= 199.0, "{t}");
    }
    // A waited turn is intended at the reply's end plus its wait; lateness is measured from it.
    for q in s["requests"].as_array().unwrap() {
        let late = f(&q["sent_ms"]) - f(&q["intended_ms"]);
        assert!(late >= 0.0, "{q}");
        if q["turn"] == 1 {
            assert!(q.get("tool_wait_ms").is_none(), "{q}");
        } else {
            assert!(f(&q["tool_wait_ms"]) >= 199.0, "{q}");
        }
    }

    // One slot for two sessions, no host-memory prompt cache: each turn finds the other
    // session's history in the slot, and the cache does not survive the wait.
    let one = real_llama(8192, 1, &["--metrics", "--cache-ram", "0"], dir.path()).await;
    let out2 = dir.path().join("out2");
    let v = sessions_run(
        &one.url(),
        &out2,
        &[
            "--sessions",
            "3",
            "--concurrency",
            "2",
            "--requests",
            "6",
            "--tool-wait",
            "0",
        ],
    );
    let sess = &v["load"]["throughput"]["steps"][0]["sessions"];
    let (mut checked, mut kept) = (0, 0);
    for t in &sess["turns"].as_array().unwrap()[1..] {
        checked += t["cache_checked"].as_u64().unwrap();
        kept += t["cache_kept"].as_u64().unwrap();
    }
    assert_eq!(checked, 4, "{sess}");
    assert!(
        kept < checked,
        "the cache survived every turn on one shared slot: {sess}"
    );
}

#[tokio::test]
async fn sessions_give_a_capacity_in_sessions_under_an_slo() {
    let (_g, dir) = serial_tempdir().await;
    let server = real_llama(8192, 2, &["--metrics"], dir.path()).await;
    let out = dir.path().join("out");
    let v = sessions_run(
        &server.url(),
        &out,
        &[
            "--sessions",
            "2",
            "--concurrency",
            "1,2",
            "--requests",
            "4",
            "--tool-wait",
            "0",
            "--repeat",
            "2",
            // Generous: every level passes on any machine, so the finding is the top level.
            "--slo",
            "ttft=60s",
        ],
    );
    let c = &v["load"]["throughput"]["capacity"]["sessions"];
    assert_eq!(c["sessions"], 2, "{c}");
    assert_eq!(c["per_repeat"], serde_json::json!([2, 2]), "{c}");
    assert_eq!(f(&c["interval"]["mean"]), 2.0, "{c}");
}

/// Sessions sent through the real LiteLLM proxy with the shipped logging callback; its log
/// converted to a session file and replayed against the real llama-server directly: the replay
/// sends exactly the recorded tokens (the server counts every turn's prompt as the recording's
/// server did) and asks for the recorded output lengths.
#[tokio::test]
async fn a_litellm_log_converts_and_replays_token_for_token() {
    let (_g, dir) = serial_tempdir().await;
    let server = real_llama(8192, 2, &["--metrics"], dir.path()).await;
    let conf_dir = dir.path().join("proxy");
    std::fs::create_dir_all(&conf_dir).unwrap();
    let callback =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/litellm/session_log.py");
    std::fs::copy(&callback, conf_dir.join("session_log.py")).unwrap();
    let config = conf_dir.join("config.yaml");
    bakeoff_testkit::litellm::write_config(&config, &[("gemma", &server.url())]);
    let mut yaml = std::fs::read_to_string(&config).unwrap();
    yaml.push_str("litellm_settings:\n  callbacks: session_log.proxy_handler_instance\n");
    std::fs::write(&config, yaml).unwrap();
    let proxy = bakeoff_testkit::litellm::Proxy::start(&config, dir.path()).await;

    let recorded = dir.path().join("recorded");
    let o = util::bakeoff_cmd()
        .env("BAKEOFF_TEST_PROXY_KEY", &proxy.key)
        .args([
            "bench",
            "run",
            "--endpoint",
            &proxy.url,
            "--api-key-env",
            "BAKEOFF_TEST_PROXY_KEY",
            "--model",
            "gemma",
            "--sessions",
            "3",
            "--concurrency",
            "2",
            "--requests",
            "6",
            "--prompt-tokens",
            "24",
            "--output-tokens",
            "8",
            "--tool-result-tokens",
            "16",
            "--tool-wait",
            "0.1",
            "--warmup",
            "0",
            "--step-warmup",
            "0",
            "--no-calibrate",
            "--no-metrics",
            "--out",
            recorded.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let payloads = conf_dir.join("session-log.jsonl");
    // The callback writes after the reply: wait (bounded) for all six calls.
    let t0 = std::time::Instant::now();
    while std::fs::read_to_string(&payloads).map_or(0, |t| t.lines().count()) < 6 {
        assert!(
            t0.elapsed().as_secs() < 60,
            "the proxy logged too few calls:\n{}",
            proxy.log_tail()
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }

    let sessions = dir.path().join("sessions.jsonl");
    let o = bakeoff(&[
        "bench",
        "convert-log",
        "--from",
        "litellm",
        payloads.to_str().unwrap(),
        "--out",
        sessions.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    // The two sessions of three turns, joined by their histories (the proxy named no session);
    // bench run's own preflight call through the proxy is a session of one turn.
    let file = std::fs::read_to_string(&sessions).unwrap();
    let mut turns: std::collections::BTreeMap<String, usize> = Default::default();
    for l in file.lines() {
        let v: Value = serde_json::from_str(l).unwrap();
        *turns.entry(v["session"].to_string()).or_default() += 1;
    }
    let three = turns.values().filter(|n| **n == 3).count();
    assert_eq!(three, 2, "{turns:?}\n{file}");
    let all: usize = turns.values().sum();
    // Never over an existing file.
    let again = bakeoff(&[
        "bench",
        "convert-log",
        "--from",
        "litellm",
        payloads.to_str().unwrap(),
        "--out",
        sessions.to_str().unwrap(),
    ]);
    assert_ne!(again.status.code(), Some(0), "{}", text(&again));

    let out = dir.path().join("replay");
    let o = bench_quick(
        &server.url(),
        &out,
        &[
            "--sessions-file",
            sessions.to_str().unwrap(),
            "--speedup",
            "4",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let v = valid_artifact(&out, "-bench.bakeoff.json");
    let r = &v["load"]["throughput"];
    assert_eq!(r["mode"], "replay");
    assert_eq!(r["plan"]["workload"]["speedup"], 4.0);
    let s = &r["steps"][0];
    assert_eq!(s["ok"].as_u64(), Some(all as u64), "{s}");
    let rt = &s["sessions"]["replay_tokens"];
    let n = Some(all as u64);
    assert_eq!(
        (rt["compared"].as_u64(), rt["equal"].as_u64()),
        (n, n),
        "{rt}"
    );
    assert!(
        text(&o).contains(&format!("{all} of {all} turns counted exactly as recorded")),
        "{}",
        text(&o)
    );
    // The recorded output length, asked and honoured.
    let recorded: Vec<u64> = file
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["usage"]["completion_tokens"]
                .as_u64()
                .unwrap()
        })
        .collect();
    for q in s["requests"].as_array().unwrap() {
        assert!(recorded.contains(&q["max_tokens"].as_u64().unwrap()), "{q}");
        assert_eq!(q["output_tokens"], q["max_tokens"], "{q}");
    }
}

//! (docs/architecture.md) end to end through the real binary: the real llama-server with the real test
//! model, and scripted servers only for what that model cannot show.

use crate::util::Bounded;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bakeoff_testkit::{real_llama, scripted, tempdir};
use serde_json::Value;
use tempfile::TempDir;

use crate::util::{
    assert_valid, bakeoff, bakeoff_async, bakeoff_cmd, code, dead_port_url, eval_run,
    eval_run_async, journal_started, only_file, read_json, serial_tempdir, spawn_eval_run, text,
    wait_output,
};

/// `eval run` against a dead port into `out`: one failure artifact there.
pub(crate) fn failed_run_into(out: &Path) {
    let o = eval_run(&dead_port_url(), out, &[]);
    assert_eq!(code(&o), 1, "{}", text(&o));
}

/// `eval run` into DIR/results against a scripted server that answers `answers` requests and
/// holds every later one open; `seen` counts the requests it got.
struct HeldRun {
    seen: tokio::sync::watch::Receiver<u64>,
    out: PathBuf,
    child: Child,
    _server: scripted::Scripted,
    _dir: TempDir,
}

async fn held_run(answers: u64) -> HeldRun {
    let (count, seen) = tokio::sync::watch::channel(0);
    let server = scripted::serve(scripted::answers_then_holds(answers, Arc::new(count))).await;
    let dir = tempdir();
    let out = dir.path().join("results");
    let child = spawn_eval_run(&server.url(), &out, &[]);
    HeldRun {
        seen,
        out,
        child,
        _server: server,
        _dir: dir,
    }
}

/// Wait until the scripted server has seen `n` requests (the bound only ends a hang).
async fn until_seen(seen: &mut tokio::sync::watch::Receiver<u64>, n: u64) {
    tokio::time::timeout(Duration::from_secs(120), seen.wait_for(|s| *s >= n))
        .await
        .unwrap_or_else(|_| panic!("the server never saw {n} requests"))
        .unwrap();
}

/// Ctrl-C (SIGINT) to the run, then its output.
async fn interrupt(child: Child) -> Output {
    sigint(child.id());
    wait_output(child).await
}

fn sigint(pid: u32) {
    assert!(
        Command::new("kill")
            .args(["-INT", &pid.to_string()])
            .status()
            .unwrap()
            .success()
    );
}

/// The one artifact in `out`, checked against the schema.
fn the_valid_artifact(out: &Path) -> Value {
    let a = read_json(&only_file(out, ".bakeoff.json"));
    assert_valid(&a);
    a
}

#[tokio::test(flavor = "multi_thread")]
async fn real_llama_server_per_slot_window_preflight_and_smoke_artifact() {
    let (_g, dir) = serial_tempdir().await;
    // -c 8192 -np 2: each slot gets 4096 tokens; n_ctx_train is 32768 and must not be used.
    let server = real_llama(8192, 2, &[], dir.path()).await;
    let url = server.url();

    let o = bakeoff(&["eval", "preflight", "--endpoint", &url, "--json"]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["facts"]["engine"], "llama.cpp");
    assert_eq!(v["facts"]["context_window"]["tokens"], 4096);
    assert_eq!(v["facts"]["context_window"]["source"], "llamacpp-slots");
    assert_eq!(v["facts"]["trained_context"], 32768);
    assert_eq!(v["facts"]["total_slots"], 2);
    assert_eq!(v["facts"]["tokenize"]["works"], true);
    assert!(
        v["facts"]["engine_version"]
            .as_str()
            .unwrap()
            .starts_with("b11434")
    );
    assert_eq!(
        v["facts"]["chat_template"]["sha256"]
            .as_str()
            .unwrap()
            .len(),
        64
    );
    assert_eq!(v["preflight"]["fit"], true);
    assert_eq!(v["preflight"]["ready"]["ready"], true);

    // The human form names window and source, engine, tokenizer route, template hash.
    let o = bakeoff(&["eval", "preflight", "--endpoint", &url]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    let human = String::from_utf8_lossy(&o.stdout);
    for needle in [
        "FIT",
        "4096 tokens (source: llama.cpp /slots n_ctx)",
        "llama.cpp b11434",
        "llama.cpp POST /tokenize",
        "sha256",
    ] {
        assert!(human.contains(needle), "missing {needle:?} in\n{human}");
    }

    let out = dir.path().join("results");
    let o = eval_run(&url, &out, &["--note", "ci"]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    let path = only_file(&out, ".bakeoff.json");
    assert_eq!(
        path.file_name().unwrap(),
        "gemma-3-270m-llamacpp-q4km-4k.bakeoff.json"
    );
    let a = read_json(&path);
    assert_valid(&a);
    assert_eq!(a["schema_version"], 1);
    assert_eq!(a["kind"], "bakeoff");
    assert_eq!(a["status"], "complete");
    assert_eq!(a["candidate"]["quantization"], "q4_k_m");
    assert_eq!(a["candidate"]["context_window"]["tokens"], 4096);
    let smoke = &a["suites"]["smoke"];
    assert_eq!(smoke["status"], "complete");
    let items = smoke["items"].as_array().unwrap();
    assert_eq!(
        items.len() as u64,
        smoke["summary"]["planned"].as_u64().unwrap()
    );
    for it in items {
        // Every record carries the request, the raw reply, a class, latency and server usage.
        assert!(it["request"]["messages"].is_array());
        assert!(
            it["response"]["usage"]["completion_tokens"]
                .as_u64()
                .unwrap()
                > 0
        );
        assert!(it["response"]["timings"]["predicted_n"].is_u64());
        assert!(it["latency"]["e2e_ms"].as_f64().unwrap() > 0.0);
        assert!(
            it["latency"]["ttft_ms"].as_f64().unwrap() <= it["latency"]["e2e_ms"].as_f64().unwrap()
        );
        let outcome = it["outcome"].as_str().unwrap();
        assert!(
            ["ok", "wrong", "truncated", "empty"].contains(&outcome),
            "{outcome}"
        );
    }
    // The base model does not follow instructions: the instrument must say so truthfully.
    let score = &smoke["summary"]["score"];
    assert_eq!(score["n"], items.len());
    assert!(score["low"].as_f64().unwrap() <= score["estimate"].as_f64().unwrap());
    // Journal holds every finished item, one JSON line each.
    let journal = std::fs::read_to_string(only_file(&out, ".journal.jsonl")).unwrap();
    assert_eq!(journal.lines().count(), items.len());
    // The table was printed.
    assert!(String::from_utf8_lossy(&o.stdout).contains("smoke"));
    drop(server);
}

#[tokio::test(flavor = "multi_thread")]
async fn dead_port_writes_a_failure_artifact_and_exits_1() {
    let dir = tempdir();
    let url = dead_port_url();
    let o = eval_run(&url, dir.path(), &[]);
    assert_eq!(code(&o), 1, "{}", text(&o));
    let a = read_json(&only_file(dir.path(), ".failure.json"));
    assert_valid(&a);
    assert_eq!(a["kind"], "failure");
    assert_eq!(a["failure"]["class"], "unreachable");
    assert!(!a["failure"]["evidence"].as_array().unwrap().is_empty());
    let o = bakeoff(&["eval", "preflight", "--endpoint", &url]);
    assert_eq!(code(&o), 1, "{}", text(&o));
}

#[tokio::test(flavor = "multi_thread")]
async fn vllm_models_give_the_window_with_its_source() {
    let s = scripted::serve(scripted::vllm_like(32768)).await;
    let url = s.url();
    let o = bakeoff_async(&["eval", "preflight", "--endpoint", &url, "--json"]).await;
    assert_eq!(code(&o), 0, "{}", text(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["facts"]["engine"], "vllm");
    assert_eq!(v["facts"]["engine_version"], "0.11.0");
    assert_eq!(v["facts"]["context_window"]["tokens"], 32768);
    assert_eq!(v["facts"]["context_window"]["source"], "vllm-models");
    assert_eq!(v["facts"]["tokenize"]["route"], "vLLM POST /tokenize");
    // A hint wins and is recorded as such.
    let url = s.url();
    let o = bakeoff_async(&[
        "eval",
        "preflight",
        "--endpoint",
        &url,
        "--json",
        "--max-model-len",
        "8192",
    ])
    .await;
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["facts"]["context_window"]["tokens"], 8192);
    assert_eq!(v["facts"]["context_window"]["source"], "hint");
}

#[tokio::test(flavor = "multi_thread")]
async fn reasoning_only_reply_is_flagged_with_the_fix_and_classified() {
    let s = scripted::serve(scripted::reasoning_only()).await;
    let url = s.url();
    let dir = tempdir();
    let o = eval_run_async(&url, dir.path(), &[]).await;
    assert_eq!(code(&o), 0, "{}", text(&o));
    let a = read_json(&only_file(dir.path(), ".bakeoff.json"));
    assert_valid(&a);
    let flags = a["instrument_flags"].as_array().unwrap();
    let f = flags
        .iter()
        .find(|f| f["code"] == "thinking-default-reasoning-only")
        .expect("flag");
    assert!(f["message"].as_str().unwrap().contains("enable_thinking"));
    assert_eq!(a["preflight"]["thinking"]["reasoning_only"], true);
    for it in a["suites"]["smoke"]["items"].as_array().unwrap() {
        assert_eq!(it["outcome"], "empty-content-reasoning-only");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn models_answering_while_completions_drop_is_inference_failing() {
    let s = scripted::serve(scripted::models_up_completions_dropped()).await;
    let url = s.url();
    let dir = tempdir();
    let start = Instant::now();
    let o = eval_run_async(&url, dir.path(), &["--ready-timeout", "2"]).await;
    assert_eq!(code(&o), 1, "{}", text(&o));
    assert!(start.elapsed() < Duration::from_secs(30));
    let a = read_json(&only_file(dir.path(), ".failure.json"));
    assert_valid(&a);
    assert_eq!(a["failure"]["class"], "inference-failing");
    assert_eq!(a["preflight"]["ready"]["ready"], false);
    assert!(a["preflight"]["ready"]["attempts"].as_u64().unwrap() >= 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn api_key_reaches_the_header_and_never_the_artifact() {
    use axum::Router;
    use axum::http::HeaderMap;
    use axum::routing::{get, post};
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let seen2 = seen.clone();
    let app = Router::new()
        .route(
            "/v1/models",
            get(|| async { axum::Json(serde_json::json!({"data":[{"id":"m"}]})) }),
        )
        .route(
            "/v1/chat/completions",
            post(move |h: HeaderMap| {
                let seen = seen2.clone();
                async move {
                    seen.lock().unwrap().push(
                        h.get("authorization")
                            .and_then(|v| v.to_str().ok())
                            .unwrap_or("")
                            .to_string(),
                    );
                    scripted::chat_stream(&["hi"], &[], "stop", 1)
                }
            }),
        );
    let s = scripted::serve(app).await;
    let url = s.url();
    let dir = tempdir();
    let out = dir.path().to_str().unwrap().to_string();
    let o = tokio::task::spawn_blocking(move || {
        bakeoff_cmd()
            .args([
                "eval",
                "run",
                "--endpoint",
                &url,
                "--out",
                &out,
                "--api-key-env",
                "MY_GATEWAY_KEY",
            ])
            .env("MY_GATEWAY_KEY", "sk-super-secret-123")
            .output_bounded()
            .unwrap()
    })
    .await
    .unwrap();
    assert_eq!(code(&o), 0, "{}", text(&o));
    assert!(
        seen.lock()
            .unwrap()
            .iter()
            .all(|h| h == "Bearer sk-super-secret-123")
    );
    for e in std::fs::read_dir(dir.path()).unwrap() {
        let body = std::fs::read_to_string(e.unwrap().path()).unwrap();
        assert!(
            !body.contains("sk-super-secret"),
            "key leaked into an output file"
        );
    }
    assert!(!text(&o).contains("sk-super-secret"));
}

#[tokio::test(flavor = "multi_thread")]
async fn server_killed_mid_run_leaves_an_incomplete_artifact_with_finished_items() {
    let (_g, dir) = serial_tempdir().await;
    let mut server = real_llama(8192, 1, &[], dir.path()).await;
    let out = dir.path().join("results");
    let child = spawn_eval_run(&server.url(), &out, &[]);
    journal_started(&out, Duration::from_secs(120)).await;
    server.kill_now();
    let o = wait_output(child).await;
    assert_eq!(code(&o), 1, "{}", text(&o));
    let a = the_valid_artifact(&out);
    assert_eq!(a["status"], "incomplete");
    assert!(
        a["incomplete_reason"]
            .as_str()
            .unwrap()
            .contains("unreachable")
    );
    let items = a["suites"]["smoke"]["items"].as_array().unwrap();
    let finished_ok = items
        .iter()
        .filter(|i| i["outcome"] != "connection-error")
        .count();
    assert!(finished_ok >= 1);
    assert!(items.len() < 6 || items.iter().any(|i| i["outcome"] == "connection-error"));
}

#[tokio::test(flavor = "multi_thread")]
async fn ctrl_c_mid_run_leaves_an_incomplete_artifact() {
    // Three requests answer (preflight's ready probe, the thinking probe, the first smoke
    // item); the second smoke item is held open, so the signal always lands mid-request.
    let mut run = held_run(3).await;
    journal_started(&run.out, Duration::from_secs(60)).await;
    until_seen(&mut run.seen, 4).await;
    let o = interrupt(run.child).await;
    let a = the_valid_artifact(&run.out);
    assert_eq!(a["status"], "incomplete", "{}", text(&o));
    assert_eq!(code(&o), 1, "{}", text(&o));
    assert!(
        a["incomplete_reason"]
            .as_str()
            .unwrap()
            .contains("interrupted")
    );
    // The finished item is kept; the interrupted one is not invented.
    assert_eq!(a["suites"]["smoke"]["items"].as_array().unwrap().len(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn ctrl_c_during_preflight_stops_at_once_with_a_one_line_error() {
    let mut run = held_run(0).await;
    // The ready probe is in flight (held by the server): preflight is running.
    until_seen(&mut run.seen, 1).await;
    let o = interrupt(run.child).await;
    assert_eq!(code(&o), 1, "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("interrupted") && err.contains("preflight"),
        "{err}"
    );
}

/// Regression: llama.cpp closes keep-alive connections after a few requests; a client that
/// reuses a pooled connection the server just closed loses the request instantly ("connection
/// closed before message completed", seen on ~10 % of requests in the H200 sweep). Many short
/// sequential requests must all succeed.
#[tokio::test(flavor = "multi_thread")]
async fn sequential_requests_never_hit_a_closed_keepalive_connection() {
    use bakeoff_client::{Client, ClientOptions, EndpointUrl};
    use bakeoff_wire::{ChatRequest, Message};
    let (_g, dir) = serial_tempdir().await;
    let server = real_llama(4096, 1, &[], dir.path()).await;
    let client = Client::new(
        EndpointUrl::parse(&server.url()).unwrap(),
        ClientOptions::default(),
    );
    let mut failures = Vec::new();
    for i in 0..40 {
        let req = ChatRequest::new("m", vec![Message::user(format!("Count to {i}."))], 2, true);
        let ex = client.chat_stream(&req).await;
        if let Some(e) = ex.error {
            failures.push(format!("request {i}: {e}"));
        }
        // Pauses around cpp-httplib's keep-alive handling, where the race lives.
        if i % 10 == 9 {
            tokio::time::sleep(Duration::from_millis(300)).await;
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
    drop(server);
}

//! Issue 2, end to end through the real binary: the real llama-server with the real test
//! model, and scripted servers only for what that model cannot show.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use bakeoff_testkit::{real_llama, scripted, serial, tempdir};
use serde_json::Value;

fn bakeoff(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_bakeoff"))
        .args(args)
        .env_remove("BAKEOFF_API_KEY")
        .output()
        .expect("run bakeoff")
}

fn code(o: &Output) -> i32 {
    o.status.code().unwrap_or(-1)
}

fn text(o: &Output) -> String {
    format!(
        "stdout:\n{}\nstderr:\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn only_file(dir: &Path, suffix: &str) -> std::path::PathBuf {
    let found: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(suffix))
        .collect();
    assert_eq!(
        found.len(),
        1,
        "expected one *{suffix} in {}: {found:?}",
        dir.display()
    );
    found[0].clone()
}

/// An address where nothing listens: a port the OS just handed out, closed again.
fn dead_port_url() -> String {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    format!("http://127.0.0.1:{}", l.local_addr().unwrap().port())
}

/// `eval run` against a dead port into `out`: one failure artifact there.
fn failed_run_into(out: &Path) {
    let o = bakeoff(&[
        "eval",
        "run",
        "--endpoint",
        &dead_port_url(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code(&o), 1, "{}", text(&o));
}

fn read_json(p: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

/// Validate against the checked-in schema, the public contract.
fn assert_valid(v: &Value) {
    let schema_path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../schemas/artifact.v1.schema.json");
    let schema: Value =
        serde_json::from_str(&std::fs::read_to_string(schema_path).unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(v)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "artifact does not validate: {errors:#?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn real_llama_server_per_slot_window_preflight_and_smoke_artifact() {
    let _g = serial().await;
    let dir = tempdir();
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
    let o = bakeoff(&[
        "eval",
        "run",
        "--endpoint",
        &url,
        "--out",
        out.to_str().unwrap(),
        "--note",
        "ci",
    ]);
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
    let o = bakeoff(&[
        "eval",
        "run",
        "--endpoint",
        &url,
        "--out",
        dir.path().to_str().unwrap(),
    ]);
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
    let o = tokio::task::spawn_blocking(move || {
        bakeoff(&["eval", "preflight", "--endpoint", &url, "--json"])
    })
    .await
    .unwrap();
    assert_eq!(code(&o), 0, "{}", text(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["facts"]["engine"], "vllm");
    assert_eq!(v["facts"]["engine_version"], "0.11.0");
    assert_eq!(v["facts"]["context_window"]["tokens"], 32768);
    assert_eq!(v["facts"]["context_window"]["source"], "vllm-models");
    assert_eq!(v["facts"]["tokenize"]["route"], "vLLM POST /tokenize");
    // A hint wins and is recorded as such.
    let url = s.url();
    let o = tokio::task::spawn_blocking(move || {
        bakeoff(&[
            "eval",
            "preflight",
            "--endpoint",
            &url,
            "--json",
            "--max-model-len",
            "8192",
        ])
    })
    .await
    .unwrap();
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["facts"]["context_window"]["tokens"], 8192);
    assert_eq!(v["facts"]["context_window"]["source"], "hint");
}

#[tokio::test(flavor = "multi_thread")]
async fn reasoning_only_reply_is_flagged_with_the_fix_and_classified() {
    let s = scripted::serve(scripted::reasoning_only()).await;
    let url = s.url();
    let dir = tempdir();
    let out = dir.path().to_str().unwrap().to_string();
    let o = tokio::task::spawn_blocking(move || {
        bakeoff(&["eval", "run", "--endpoint", &url, "--out", &out])
    })
    .await
    .unwrap();
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
    let out = dir.path().to_str().unwrap().to_string();
    let start = Instant::now();
    let o = tokio::task::spawn_blocking(move || {
        bakeoff(&[
            "eval",
            "run",
            "--endpoint",
            &url,
            "--out",
            &out,
            "--ready-timeout",
            "2",
        ])
    })
    .await
    .unwrap();
    assert_eq!(code(&o), 1, "{}", text(&o));
    assert!(start.elapsed() < Duration::from_secs(30));
    let a = read_json(&only_file(dir.path(), ".failure.json"));
    assert_valid(&a);
    assert_eq!(a["failure"]["class"], "inference-failing");
    assert_eq!(a["preflight"]["ready"]["ready"], false);
    assert!(a["preflight"]["ready"]["attempts"].as_u64().unwrap() >= 2);
}

#[test]
fn bad_input_is_a_one_line_usage_error() {
    for args in [
        vec!["eval", "preflight", "--endpoint", "not a url"],
        vec!["eval", "preflight", "--endpoint", "localhost:8080"],
        vec![
            "eval",
            "run",
            "--endpoint",
            "http://127.0.0.1:1",
            "--suite",
            "nonsense",
        ],
        vec![
            "eval",
            "run",
            "--endpoint",
            "http://127.0.0.1:1",
            "--slug",
            "../evil",
        ],
        vec![
            "eval",
            "preflight",
            "--endpoint",
            "http://127.0.0.1:1",
            "--api-key-env",
            "BAKEOFF_TEST_UNSET_VAR",
        ],
        vec!["eval", "preflight"],
    ] {
        let o = bakeoff(&args);
        assert_eq!(code(&o), 2, "{args:?}: {}", text(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
        assert!(err.starts_with("error: "), "{err}");
    }
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
        Command::new(env!("CARGO_BIN_EXE_bakeoff"))
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
            .output()
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

/// Wait until the journal has at least `n` lines.
fn wait_for_journal(dir: &Path, n: usize, limit: Duration) {
    let start = Instant::now();
    loop {
        let journal = std::fs::read_dir(dir).ok().and_then(|rd| {
            rd.filter_map(|e| e.ok().map(|e| e.path()))
                .find(|p| p.to_string_lossy().ends_with(".journal.jsonl"))
        });
        if journal.is_some_and(|p| {
            std::fs::read_to_string(&p)
                .unwrap_or_default()
                .lines()
                .count()
                >= n
        }) {
            return;
        }
        assert!(start.elapsed() < limit, "journal never reached {n} lines");
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn server_killed_mid_run_leaves_an_incomplete_artifact_with_finished_items() {
    let _g = serial().await;
    let dir = tempdir();
    let mut server = real_llama(8192, 1, &[], dir.path()).await;
    let out = dir.path().join("results");
    let child = Command::new(env!("CARGO_BIN_EXE_bakeoff"))
        .args([
            "eval",
            "run",
            "--endpoint",
            &server.url(),
            "--out",
            out.to_str().unwrap(),
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out2 = out.clone();
    tokio::task::spawn_blocking(move || wait_for_journal(&out2, 1, Duration::from_secs(120)))
        .await
        .unwrap();
    server.kill_now();
    let o = tokio::task::spawn_blocking(move || child.wait_with_output().unwrap())
        .await
        .unwrap();
    assert_eq!(code(&o), 1, "{}", text(&o));
    let a = read_json(&only_file(&out, ".bakeoff.json"));
    assert_valid(&a);
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
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU64, Ordering};
    // Three requests answer (preflight's ready probe, the thinking probe, the first smoke
    // item); the second smoke item is held open, so the signal always lands mid-request.
    let seen = Arc::new(AtomicU64::new(0));
    let s = scripted::serve(scripted::answers_then_holds(3, seen.clone())).await;
    let dir = tempdir();
    let out = dir.path().join("results");
    let child = Command::new(env!("CARGO_BIN_EXE_bakeoff"))
        .args([
            "eval",
            "run",
            "--endpoint",
            &s.url(),
            "--out",
            out.to_str().unwrap(),
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out2 = out.clone();
    tokio::task::spawn_blocking(move || wait_for_journal(&out2, 1, Duration::from_secs(60)))
        .await
        .unwrap();
    while seen.load(Ordering::SeqCst) < 4 {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    sigint(child.id());
    let o = tokio::task::spawn_blocking(move || child.wait_with_output().unwrap())
        .await
        .unwrap();
    let a = read_json(&only_file(&out, ".bakeoff.json"));
    assert_valid(&a);
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
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU64, Ordering};
    let seen = Arc::new(AtomicU64::new(0));
    let s = scripted::serve(scripted::answers_then_holds(0, seen.clone())).await;
    let dir = tempdir();
    let out = dir.path().join("results");
    let child = Command::new(env!("CARGO_BIN_EXE_bakeoff"))
        .args([
            "eval",
            "run",
            "--endpoint",
            &s.url(),
            "--out",
            out.to_str().unwrap(),
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The ready probe is in flight (held by the server): preflight is running.
    while seen.load(Ordering::SeqCst) < 1 {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    sigint(child.id());
    let o = tokio::task::spawn_blocking(move || child.wait_with_output().unwrap())
        .await
        .unwrap();
    assert_eq!(code(&o), 1, "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("interrupted") && err.contains("preflight"),
        "{err}"
    );
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

/// Regression: llama.cpp closes keep-alive connections after a few requests; a client that
/// reuses a pooled connection the server just closed loses the request instantly ("connection
/// closed before message completed", seen on ~10 % of requests in the H200 sweep). Many short
/// sequential requests must all succeed.
#[tokio::test(flavor = "multi_thread")]
async fn sequential_requests_never_hit_a_closed_keepalive_connection() {
    use bakeoff_client::{Client, ClientOptions, EndpointUrl};
    use bakeoff_wire::{ChatRequest, Message};
    let _g = serial().await;
    let dir = tempdir();
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

// ---- Issue 11: what held-out probing found ---------------------------------------------

fn preflight_json(url: &str, extra: &[&str]) -> (i32, Value, f64, String) {
    let t = Instant::now();
    let mut args = vec!["eval", "preflight", "--endpoint", url, "--json"];
    args.extend_from_slice(extra);
    let o = bakeoff(&args);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap_or(Value::Null);
    (code(&o), v, t.elapsed().as_secs_f64(), text(&o))
}

/// §1: a second run into the same slug never replaces the first — not the artifact, not the
/// journal — and `--replace` is the only way over, recorded in the new artifact.
#[tokio::test]
async fn a_second_run_of_a_slug_keeps_the_first() {
    let _g = serial().await;
    let dir = tempdir();
    let server = real_llama(2048, 1, &[], dir.path()).await;
    let url = server.url();
    let out = dir.path().join("results");
    let run = |note: &str, extra: &[&str]| {
        let mut args = vec![
            "eval",
            "run",
            "--endpoint",
            &url,
            "--suite",
            "smoke",
            "--out",
            out.to_str().unwrap(),
            "--slug",
            "same",
            "--note",
            note,
            "--json",
        ];
        args.extend_from_slice(extra);
        let o = bakeoff(&args);
        assert_eq!(code(&o), 0, "{}", text(&o));
        serde_json::from_slice::<Value>(&o.stdout).unwrap()
    };
    let first = run("first", &[]);
    let second = run("second", &[]);
    let names = |d: &Path| {
        let mut v: Vec<String> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    };
    let rid = second["run_id"].as_str().unwrap().to_string();
    assert_eq!(
        names(&out),
        [
            format!("same.{rid}.bakeoff.json"),
            format!("same.{rid}.journal.jsonl"),
            "same.bakeoff.json".to_string(),
            "same.journal.jsonl".to_string(),
        ]
    );
    let kept = read_json(&out.join("same.bakeoff.json"));
    assert_eq!(kept["candidate"]["notes"][0], "first");
    assert_eq!(kept["run_id"], first["run_id"]);
    assert_valid(&kept);
    assert!(
        std::fs::read_to_string(out.join("same.journal.jsonl"))
            .unwrap()
            .lines()
            .count()
            >= 1
    );

    // Artifacts are as readable as the operator's other files (issue 11 §20: not 0600).
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(out.join("same.bakeoff.json"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o044, 0o044, "mode {mode:o}");
    }

    // --replace: explicit, and on record.
    let third = run("third", &["--replace"]);
    let replaced: Vec<&str> = third["replaces"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["file"].as_str().unwrap())
        .collect();
    assert_eq!(replaced, ["same.bakeoff.json", "same.journal.jsonl"]);
    assert_eq!(third["replaces"][0]["run_id"], first["run_id"]);
    assert_eq!(
        read_json(&out.join("same.bakeoff.json"))["candidate"]["notes"][0],
        "third"
    );
    assert_eq!(names(&out).len(), 4, "{:?}", names(&out));
}

/// §1: two endpoints that derive the same slug (the probing's two fixture servers) keep both
/// failures.
// Multi-threaded: the scripted server runs while this thread waits on the binary.
#[tokio::test(flavor = "multi_thread")]
async fn two_endpoints_with_one_slug_keep_both_failures() {
    let dir = tempdir();
    let a = scripted::serve(scripted::completions_hang()).await;
    let b = scripted::serve(scripted::completions_hang()).await;
    for s in [&a, &b] {
        let o = bakeoff(&[
            "eval",
            "run",
            "--endpoint",
            &s.url(),
            "--ready-timeout",
            "2",
            "--out",
            dir.path().to_str().unwrap(),
        ]);
        assert_eq!(code(&o), 1, "{}", text(&o));
    }
    let failures: Vec<Value> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".failure.json"))
        .map(|p| read_json(&p))
        .collect();
    assert_eq!(failures.len(), 2);
    assert_eq!(
        failures[0]["candidate"]["slug"],
        failures[1]["candidate"]["slug"]
    );
    assert_ne!(
        failures[0]["endpoint"]["url"],
        failures[1]["endpoint"]["url"]
    );
}

/// §6: `/v1/models` answering while every completion hangs is the seeds' wedge, named as such,
/// and `--ready-timeout` is the whole preflight's budget (the hanging `/tokenize` no longer adds
/// its own 10 s).
// Multi-threaded: the scripted server runs while this thread waits on the binary.
#[tokio::test(flavor = "multi_thread")]
async fn completions_that_hang_are_inference_hanging_within_one_budget() {
    let s = scripted::serve(scripted::completions_hang()).await;
    let (c, v, secs, t) = preflight_json(&s.url(), &["--ready-timeout", "4"]);
    assert_eq!(c, 1, "{t}");
    assert_eq!(v["failure_class"], "inference-hanging", "{t}");
    let remedy = v["remediation"].as_str().unwrap();
    assert!(remedy.contains("GET /v1/models"), "{remedy}");
    assert!(secs < 8.0, "--ready-timeout 4 took {secs:.1} s");
}

/// §7: classified on what was seen — a server that is not HTTP, one answering 500 everywhere.
// Multi-threaded: the scripted server runs while this thread waits on the binary.
#[tokio::test(flavor = "multi_thread")]
async fn garbage_and_all_500_are_classified_by_what_was_seen() {
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    let garbage = tokio::spawn(async move {
        use tokio::io::AsyncWriteExt;
        while let Ok((mut s, _)) = l.accept().await {
            let _ = s.write_all(b"SSH-2.0-OpenSSH_9.2p1 Debian-2\r\n").await;
        }
    });
    let (c, v, _, t) = preflight_json(&format!("http://{addr}"), &["--ready-timeout", "3"]);
    assert_eq!(c, 1, "{t}");
    assert_eq!(v["failure_class"], "not-http", "{t}");
    garbage.abort();

    let s = scripted::serve(scripted::all_500()).await;
    let (c, v, _, t) = preflight_json(&s.url(), &["--ready-timeout", "3"]);
    assert_eq!(c, 1, "{t}");
    assert_eq!(v["failure_class"], "server-error", "{t}");
    assert!(
        !v["remediation"]
            .as_str()
            .unwrap()
            .contains("control endpoints answer"),
        "{t}"
    );
}

/// §9: a 401 is final at once and names the key's variable.
// Multi-threaded: the scripted server runs while this thread waits on the binary.
#[tokio::test(flavor = "multi_thread")]
async fn a_401_is_final_at_once_and_names_the_key() {
    let s = scripted::serve(scripted::unauthorized()).await;
    let (c, v, secs, t) = preflight_json(&s.url(), &["--ready-timeout", "20"]);
    assert_eq!(c, 1, "{t}");
    assert_eq!(v["failure_class"], "auth-failed", "{t}");
    assert_eq!(v["preflight"]["ready"]["attempts"], 1, "{t}");
    assert!(secs < 5.0, "retried for {secs:.1} s");
    let remedy = v["remediation"].as_str().unwrap();
    assert!(
        remedy.contains("BAKEOFF_API_KEY") && remedy.contains("--api-key-env"),
        "{remedy}"
    );
}

/// §8: a stream cut inside an event is a connection error, not `http-error` with status 200;
/// a 2xx body that is not an event stream quotes its first bytes.
// Multi-threaded: the scripted server runs while this thread waits on the binary.
#[tokio::test(flavor = "multi_thread")]
async fn cut_streams_and_html_replies_are_recorded_as_seen() {
    let dir = tempdir();
    for (bad, expect) in [
        (
            scripted::cut_mid_event as fn() -> _,
            "the stream ended in the middle of an event",
        ),
        (scripted::html_200, "<!DOCTYPE html>"),
    ] {
        let s = scripted::serve(scripted::breaks_after_ready(bad)).await;
        let out = dir.path().join(expect.len().to_string());
        let o = bakeoff(&[
            "eval",
            "run",
            "--endpoint",
            &s.url(),
            "--suite",
            "smoke",
            "--out",
            out.to_str().unwrap(),
            "--json",
        ]);
        assert_eq!(code(&o), 1, "{}", text(&o));
        let a: Value = serde_json::from_slice(&o.stdout).unwrap();
        let items = a["suites"]["smoke"]["items"].as_array().unwrap();
        assert!(!items.is_empty());
        for it in items {
            assert_eq!(it["outcome"], "connection-error", "{it}");
            let msg = it["error"]["message"].as_str().unwrap();
            assert!(msg.contains(expect), "{msg}");
            assert!(!msg.contains("starts \"\""), "{msg}");
        }
    }
}

/// §10: a port out of range says so.
#[test]
fn a_port_out_of_range_is_named() {
    let o = bakeoff(&["eval", "preflight", "--endpoint", "http://127.0.0.1:99999"]);
    assert_eq!(code(&o), 2, "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("port out of range"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
}

/// §12: credentials in the URL and a key together: the key wins for every request — the GET
/// probes too — so a keyed llama-server is discovered as llama.cpp with its window.
#[tokio::test]
async fn one_authorization_for_every_request_the_key_wins() {
    let _g = serial().await;
    let dir = tempdir();
    let server = real_llama(2048, 1, &["--api-key", "k-probe-test"], dir.path()).await;
    let url = server.url().replace("http://", "http://ops:pw@");
    let o = Command::new(env!("CARGO_BIN_EXE_bakeoff"))
        .args(["eval", "preflight", "--endpoint", &url, "--json"])
        .env("BAKEOFF_API_KEY", "k-probe-test")
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", text(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["facts"]["engine"], "llama.cpp", "{v}");
    assert_eq!(v["facts"]["context_window"]["source"], "llamacpp-slots");
    let all = String::from_utf8_lossy(&o.stdout);
    assert!(
        !all.contains("k-probe-test") && !all.contains("pw@"),
        "{all}"
    );
}

/// §11: an intelligence run whose only suite is entirely `instrument-failure` measured nothing
/// valid: exit 1, a failure that says so.
// Multi-threaded: the scripted server runs while this thread waits on the binary.
#[tokio::test(flavor = "multi_thread")]
async fn a_run_whose_every_suite_measured_nothing_valid_exits_1() {
    let dir = tempdir();
    // The scripted vLLM answers "Hello there" to everything: no option letter, so none of the
    // 20 four-option items can pass, and 0 of 20 is below the 25 % chance floor beyond doubt.
    // (The real test model cannot be made to miss every item on purpose.)
    let s = scripted::serve(scripted::vllm_like(4096)).await;
    let battery = dir.path().join("never-right.jsonl");
    let lines: Vec<String> = (0..20)
        .map(|i| {
            format!(
                r#"{{"id":"k-{i:03}","family":"keys","prompt":"Which is {i}? Reply with only the letter of the option.","options":["w","x","y","z"],"answers":["A"],"scoring":"choice"}}"#
            )
        })
        .collect();
    std::fs::write(&battery, lines.join("\n")).unwrap();
    let out = dir.path().join("r");
    let o = bakeoff(&[
        "eval",
        "run",
        "--endpoint",
        &s.url(),
        "--suite",
        "intelligence",
        "--battery",
        battery.to_str().unwrap(),
        "--thinking",
        "off",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code(&o), 1, "{}", text(&o));
    let a = read_json(&only_file(&out, ".failure.json"));
    assert_eq!(a["suites"]["intelligence"]["status"], "failed");
    assert_eq!(a["failure"]["class"], "not-measurable");
    assert!(
        a["failure"]["message"]
            .as_str()
            .unwrap()
            .contains("measured nothing valid"),
        "{a}"
    );
}

/// §15: `eval compare --json` always prints JSON, with the refusal reason.
#[test]
fn compare_json_prints_json_when_it_refuses() {
    let dir = tempdir();
    let o = bakeoff(&[
        "eval",
        "compare",
        "--json",
        dir.path().join("a.json").to_str().unwrap(),
        dir.path().join("b.json").to_str().unwrap(),
    ]);
    assert_eq!(code(&o), 2, "{}", text(&o));
    let v: Value = serde_json::from_slice(&o.stdout).expect("JSON on stdout");
    assert!(
        v["refused"].as_str().unwrap().contains("cannot read"),
        "{v}"
    );

    // Two runs that share no item (two failures: no suite ran): the comparison, as JSON, with
    // the reason it gives no verdict.
    let out = dir.path().join("runs");
    for _ in 0..2 {
        failed_run_into(&out);
    }
    let mut files: Vec<_> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".failure.json"))
        .collect();
    files.sort();
    assert_eq!(files.len(), 2);
    let o = bakeoff(&[
        "eval",
        "compare",
        "--json",
        files[0].to_str().unwrap(),
        files[1].to_str().unwrap(),
    ]);
    assert_eq!(code(&o), 1, "{}", text(&o));
    let v: Value = serde_json::from_slice(&o.stdout).expect("JSON on stdout");
    assert!(
        v["no_verdict_reason"]
            .as_str()
            .unwrap()
            .contains("share no scored item"),
        "{v}"
    );
}

/// §1 for `report`: its views are regenerated from the artifacts (a second `report` replaces
/// its own report.html), but a file it did not write is never overwritten.
#[test]
fn report_never_overwrites_a_file_it_did_not_write() {
    let dir = tempdir();
    let out = dir.path().join("results");
    failed_run_into(&out);
    for _ in 0..2 {
        let o = bakeoff(&["report", out.to_str().unwrap()]);
        assert_eq!(code(&o), 0, "{}", text(&o));
    }
    let mine = dir.path().join("notes.html");
    std::fs::write(&mine, "my own notes").unwrap();
    let o = bakeoff(&[
        "report",
        out.to_str().unwrap(),
        "--html",
        mine.to_str().unwrap(),
    ]);
    assert_ne!(code(&o), 0, "{}", text(&o));
    assert!(text(&o).contains("never overwritten"), "{}", text(&o));
    assert_eq!(std::fs::read_to_string(&mine).unwrap(), "my own notes");
}

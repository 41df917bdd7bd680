//! (docs/suites.md "Context") end to end: the context suite against the real llama-server with the real model.
//! CPU prompt processing runs at a few hundred tokens/s, so: few depths, and one full 32k
//! request in all.

use std::path::Path;
use std::process::Output;

use bakeoff_testkit::{real_llama, scripted, tempdir};
use serde_json::Value;

use crate::util::{artifact, bakeoff_async, serial_tempdir, text, valid_artifact};

/// `bakeoff eval run --endpoint URL --suite context --out OUT` plus `extra`, off the async
/// runtime (scripted servers live in this process).
async fn context_run(url: &str, out: &Path, extra: &[&str]) -> Output {
    let out = out.to_str().unwrap();
    let mut args = vec![
        "eval",
        "run",
        "--endpoint",
        url,
        "--suite",
        "context",
        "--out",
        out,
    ];
    args.extend(extra);
    bakeoff_async(&args).await
}

fn tolerance(target: u64) -> u64 {
    ((target as f64) * 0.005).ceil().max(16.0) as u64
}

/// Every sent row: planned == target, and the server's count within tolerance.
fn assert_rows_on_target(a: &Value) -> usize {
    let mut sent = 0;
    for it in a["suites"]["context"]["items"].as_array().unwrap() {
        if it["outcome"] == "skipped" {
            continue;
        }
        sent += 1;
        let x = &it["extra"];
        let target = x["target_tokens"].as_u64().unwrap();
        let actual = x["actual_prompt_tokens"].as_u64().unwrap();
        assert_eq!(x["planned_tokens"].as_u64().unwrap(), target, "{it}");
        assert!(
            actual.abs_diff(target) <= tolerance(target),
            "{}: target {target}, server counted {actual}",
            it["id"]
        );
        assert_ne!(it["outcome"], "instrument-miss");
        // Scored by containment of the needle in the visible answer.
        let needle = x["needle"].as_str().unwrap().to_ascii_lowercase();
        let found = it["response"]["content"]
            .as_str()
            .unwrap()
            .to_ascii_lowercase()
            .contains(&needle);
        assert_eq!(found, it["outcome"] == "ok", "{it}");
    }
    sent
}

#[tokio::test(flavor = "multi_thread")]
async fn targets_hit_exactly_at_32k_with_needles_at_several_depths_and_the_edge_probed() {
    let (_g, dir) = serial_tempdir().await;
    let server = real_llama(32768, 1, &[], dir.path()).await;
    let url = server.url();

    // Five depths at a small target.
    let out1 = dir.path().join("depths");
    let o = context_run(
        &url,
        &out1,
        &[
            "--context-targets",
            "2k",
            "--context-depths",
            "0,25,50,75,100",
            "--no-overflow-probe",
        ],
    )
    .await;
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let a = valid_artifact(&out1, ".bakeoff.json");
    assert_eq!(a["suites"]["context"]["status"], "complete");
    assert_eq!(assert_rows_on_target(&a), 5);
    let depths: Vec<f64> = a["suites"]["context"]["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["extra"]["depth_used"].as_f64().unwrap())
        .collect();
    assert!(
        depths.first().unwrap() < &0.05 && depths.last().unwrap() > &0.95,
        "{depths:?}"
    );
    // Every row is in the summary with target / planned / actual.
    let rows = a["suites"]["context"]["summary"]["details"]["rows"]
        .as_array()
        .unwrap();
    assert_eq!(rows.len(), 5);
    for r in rows {
        assert!(
            r["target_tokens"].is_u64() && r["planned"].is_u64() && r["actual"].is_u64(),
            "{r}"
        );
    }

    // The one full-window request, and the probe just past the window.
    let out2 = dir.path().join("window");
    let o = context_run(
        &url,
        &out2,
        &["--context-targets", "window", "--context-depths", "50"],
    )
    .await;
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let a = valid_artifact(&out2, ".bakeoff.json");
    assert_eq!(a["candidate"]["context_window"]["tokens"], 32768);
    assert_eq!(assert_rows_on_target(&a), 1);
    let it = &a["suites"]["context"]["items"][0];
    assert_eq!(it["extra"]["target_tokens"], 32768 - 48);
    let overflow = &a["endpoint"]["facts"]["overflow"];
    assert_eq!(
        overflow["behaviour"], "rejected-exceed-context-size",
        "{overflow}"
    );
    assert_eq!(overflow["http_status"], 400);
    assert!(overflow["prompt_tokens_sent"].as_u64().unwrap() > 32768);
    // The probe is never scored.
    assert_eq!(a["suites"]["context"]["summary"]["scored"], 1);
    drop(server);
}

#[tokio::test(flavor = "multi_thread")]
async fn per_slot_window_is_found_and_respected_without_a_hint() {
    let (_g, dir) = serial_tempdir().await;
    // -c 16384 -np 2: each slot holds 8192.
    let server = real_llama(16384, 2, &[], dir.path()).await;
    let out = dir.path().join("r");
    let o = context_run(
        &server.url(),
        &out,
        &["--context-targets", "16k,window", "--context-depths", "50"],
    )
    .await;
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let a = valid_artifact(&out, ".bakeoff.json");
    assert_eq!(a["candidate"]["context_window"]["tokens"], 8192);
    assert_eq!(a["candidate"]["context_window"]["source"], "llamacpp-slots");
    let items = a["suites"]["context"]["items"].as_array().unwrap();
    let skipped: Vec<_> = items.iter().filter(|i| i["outcome"] == "skipped").collect();
    assert_eq!(skipped.len(), 1, "16k cannot fit an 8k slot");
    assert!(skipped[0]["check"].as_str().unwrap().contains("8192"));
    assert!(
        skipped[0]["response"]["usage"].is_null(),
        "a skipped target is never sent"
    );
    assert_eq!(assert_rows_on_target(&a), 1);
    assert_eq!(
        a["endpoint"]["facts"]["overflow"]["behaviour"],
        "rejected-exceed-context-size"
    );
    drop(server);
}

#[tokio::test(flavor = "multi_thread")]
async fn unknown_window_is_refused_not_guessed() {
    // A gateway-like server: /v1/models without max_model_len, no /props or /version
    // (LiteLLM's proxy lists model_name ids only).
    use axum::Router;
    use axum::routing::{get, post};
    let app = Router::new()
        .route(
            "/v1/models",
            get(|| async { axum::Json(serde_json::json!({"data":[{"id":"gw-model"}]})) }),
        )
        .route(
            "/v1/chat/completions",
            post(|| async { scripted::chat_stream(&["hi"], &[], "stop", 1) }),
        );
    let s = scripted::serve(app).await;
    let dir = tempdir();
    let o = context_run(&s.url(), dir.path(), &[]).await;
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let a = artifact(dir.path(), ".failure.json");
    assert_eq!(a["failure"]["class"], "not-measurable");
    assert!(
        a["failure"]["message"]
            .as_str()
            .unwrap()
            .contains("--max-model-len")
    );
    assert_eq!(a["suites"]["context"]["status"], "failed");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_request_the_server_counts_off_target_is_an_instrument_miss_excluded_from_the_score() {
    // llama.cpp-shaped server whose usage.prompt_tokens runs 200 tokens over for prompts
    // above 1500 tokens: the 1k row is on target, the 2k row is not (tolerance 16).
    let s = scripted::serve(scripted::llamacpp_like(8192, 200, 1500)).await;
    let dir = tempdir();
    let o = context_run(
        &s.url(),
        dir.path(),
        &[
            "--context-targets",
            "1k,2k",
            "--context-depths",
            "50",
            "--seed",
            "7",
        ],
    )
    .await;
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let a = valid_artifact(dir.path(), ".bakeoff.json");
    let c = &a["suites"]["context"];
    let items = c["items"].as_array().unwrap();
    assert_eq!(items.len(), 2);
    assert_eq!(items[0]["outcome"], "ok", "{}", items[0]);
    assert_eq!(items[1]["outcome"], "instrument-miss", "{}", items[1]);
    let x = &items[1]["extra"];
    assert_eq!(x["planned_tokens"], x["target_tokens"]);
    assert_eq!(
        x["actual_prompt_tokens"].as_u64().unwrap(),
        x["target_tokens"].as_u64().unwrap() + 200
    );
    // The model found the needle, but the request was not the size it claims: not scored.
    assert_eq!(c["summary"]["scored"], 1, "{}", c["summary"]);
    let flag = a["instrument_flags"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["code"] == "instrument-miss")
        .expect("instrument-miss flag");
    assert_eq!(flag["count"], 1);
    assert_eq!(c["summary"]["details"]["instrument_misses"], 1);
    // The edge probe on this server: llama.cpp's 400 exceed_context_size_error.
    assert_eq!(
        a["endpoint"]["facts"]["overflow"]["behaviour"],
        "rejected-exceed-context-size"
    );
    assert_eq!(a["run"]["seed"], 7);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_local_tokenizer_and_one_calibration_request_size_a_gateway_exactly() {
    // A gateway with no /tokenize: the filler is cut with --tokenizer, the chat-template
    // overhead comes from one max_tokens:1 request, and every row is verified by the server.
    let dir = tempdir();
    let tok = dir.path().join("tokenizer.json");
    std::fs::write(
        &tok,
        bakeoff_text::byte_level_tokenizer_json(&[
            ("Ġ", "t"),
            ("h", "e"),
            ("Ġt", "he"),
            ("e", "r"),
            ("i", "n"),
            ("Ġ", "a"),
        ]),
    )
    .unwrap();
    let calibrations = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let s = scripted::serve(scripted::gateway_with_tokenizer(
        tok.clone(),
        8192,
        calibrations.clone(),
    ))
    .await;
    let out = dir.path().join("r");
    let o = context_run(
        &s.url(),
        &out,
        &[
            "--context-targets",
            "1k,3000",
            "--context-depths",
            "0,100",
            "--tokenizer",
            tok.to_str().unwrap(),
        ],
    )
    .await;
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let a = valid_artifact(&out, ".bakeoff.json");
    assert_eq!(assert_rows_on_target(&a), 4);
    let d = &a["suites"]["context"]["summary"]["details"];
    assert!(
        d["tokenizer_route"]
            .as_str()
            .unwrap()
            .starts_with("local tokenizer.json"),
        "{d}"
    );
    assert_eq!(d["prompt_counting"]["route"], "calibration", "{d}");
    // The overflow probe is one more request past the window; it is no calibration.
    assert_eq!(calibrations.load(std::sync::atomic::Ordering::SeqCst), 2);
    assert!(a["run"]["seed"].is_u64());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_gateway_without_tokenizer_is_refused_with_the_flag_to_give() {
    let dir = tempdir();
    let tok = dir.path().join("tokenizer.json");
    std::fs::write(&tok, bakeoff_text::byte_level_tokenizer_json(&[])).unwrap();
    let s = scripted::serve(scripted::gateway_with_tokenizer(
        tok,
        8192,
        Default::default(),
    ))
    .await;
    let out = dir.path().join("r");
    let o = context_run(
        &s.url(),
        &out,
        &["--context-targets", "1k", "--context-depths", "50"],
    )
    .await;
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let a = valid_artifact(&out, ".failure.json");
    assert!(
        a["failure"]["message"]
            .as_str()
            .unwrap()
            .contains("--tokenizer"),
        "{}",
        a["failure"]
    );
    // A tokenizer file that is not one: usage error (2), one line naming the file.
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, "{}").unwrap();
    let o = context_run(
        "http://127.0.0.1:9",
        &out,
        &["--tokenizer", bad.to_str().unwrap()],
    )
    .await;
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("bad.json") && err.trim().lines().count() == 1,
        "{err}"
    );
}

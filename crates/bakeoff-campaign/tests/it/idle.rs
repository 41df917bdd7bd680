//! `idle`: reading a seat's load from each engine's own endpoints, and waiting for a seat to be
//! idle for a stretch. Scripted servers copy what each engine serves (sources cited per
//! fixture); the last test reads a real llama-server.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::http::StatusCode;
use axum::routing::get;
use bakeoff_artifact::EngineKind;
use bakeoff_campaign::idle::{IdleWait, Load, Reading, read_load, wait_idle};
use bakeoff_testkit::scripted::{self, json};
use serde_json::json;

const VLLM_SOURCE: &str = "/metrics (vllm:num_requests_running, vllm:num_requests_waiting)";
const SGLANG_SOURCE: &str = "/metrics (sglang:num_running_reqs, sglang:num_queue_reqs)";
const LLAMACPP_SOURCE: &str = "/metrics (llamacpp:requests_processing, llamacpp:requests_deferred)";
const SLOTS_AND_DEFERRED: &str = "/slots + /metrics (llamacpp:requests_deferred)";
const T: Duration = Duration::from_secs(5);

/// vLLM V1 `/metrics` (names and help from vllm/v1/metrics/loggers.py; labels `engine` and
/// `model_name`, one sample per engine; layout as in the docs' "Production Metrics" curl
/// example, docs.vllm.ai/en/latest/usage/metrics.html), here with data parallelism 2.
fn vllm_metrics(running: [u32; 2], waiting: [u32; 2]) -> String {
    let m = "Qwen/Qwen3-8B";
    format!(
        "# HELP vllm:num_requests_running Number of requests in model execution batches.\n\
# TYPE vllm:num_requests_running gauge\n\
vllm:num_requests_running{{engine=\"0\",model_name=\"{m}\"}} {}.0\n\
vllm:num_requests_running{{engine=\"1\",model_name=\"{m}\"}} {}.0\n\
# HELP vllm:num_requests_waiting Number of requests waiting to be processed.\n\
# TYPE vllm:num_requests_waiting gauge\n\
vllm:num_requests_waiting{{engine=\"0\",model_name=\"{m}\"}} {}.0\n\
vllm:num_requests_waiting{{engine=\"1\",model_name=\"{m}\"}} {}.0\n\
# HELP vllm:kv_cache_usage_perc KV-cache usage. 1 means 100 percent usage.\n\
# TYPE vllm:kv_cache_usage_perc gauge\n\
vllm:kv_cache_usage_perc{{engine=\"0\",model_name=\"{m}\"}} 0.31\n\
# HELP vllm:prompt_tokens_total Number of prefill tokens processed.\n\
# TYPE vllm:prompt_tokens_total counter\n\
vllm:prompt_tokens_total{{engine=\"0\",model_name=\"{m}\"}} 8.128902e+06\n\
vllm:e2e_request_latency_seconds_bucket{{engine=\"0\",le=\"1.0\",model_name=\"{m}\"}} 3.0\n",
        running[0], running[1], waiting[0], waiting[1]
    )
}

/// SGLang `/metrics` with `--enable-metrics` (docs.sglang.io "Production Metrics" example;
/// gauges from python/sglang/srt/metrics/collector.py).
fn sglang_metrics(running: u32, queued: u32) -> String {
    let m = "meta-llama/Llama-3.1-8B-Instruct";
    format!(
        "# HELP sglang:prompt_tokens_total Number of prefill tokens processed.\n\
# TYPE sglang:prompt_tokens_total counter\n\
sglang:prompt_tokens_total{{model_name=\"{m}\"}} 8.128902e+06\n\
# HELP sglang:num_running_reqs The number of running requests.\n\
# TYPE sglang:num_running_reqs gauge\n\
sglang:num_running_reqs{{model_name=\"{m}\"}} {running}.0\n\
# HELP sglang:token_usage The token usage.\n\
# TYPE sglang:token_usage gauge\n\
sglang:token_usage{{model_name=\"{m}\"}} 0.28\n\
# HELP sglang:num_queue_reqs The number of requests in the waiting queue.\n\
# TYPE sglang:num_queue_reqs gauge\n\
sglang:num_queue_reqs{{model_name=\"{m}\"}} {queued}.0\n"
    )
}

/// llama-server `--metrics` (tools/server/server-context.cpp metrics handler, README
/// "GET /metrics").
fn llamacpp_metrics(processing: u32, deferred: u32) -> String {
    format!(
        "# HELP llamacpp:prompt_tokens_total Number of prompt tokens processed.\n\
# TYPE llamacpp:prompt_tokens_total counter\n\
llamacpp:prompt_tokens_total 1024\n\
# HELP llamacpp:requests_processing Number of requests processing.\n\
# TYPE llamacpp:requests_processing gauge\n\
llamacpp:requests_processing {processing}\n\
# HELP llamacpp:requests_deferred Number of requests deferred.\n\
# TYPE llamacpp:requests_deferred gauge\n\
llamacpp:requests_deferred {deferred}\n"
    )
}

/// llama-server `GET /slots` (tools/server README "GET /slots", trimmed): slot 1 processing.
fn llamacpp_slots() -> serde_json::Value {
    json!([
        {"id": 0, "id_task": -1, "n_ctx": 4096, "speculative": false, "is_processing": false,
         "params": {"n_predict": -1, "temperature": 0.8},
         "next_token": {"has_next_token": true, "has_new_line": false, "n_remain": -1,
                        "n_decoded": 0, "stopping_word": ""}},
        {"id": 1, "id_task": 135, "n_ctx": 4096, "speculative": false, "is_processing": true,
         "params": {"n_predict": -1, "temperature": 0.8},
         "next_token": {"has_next_token": true, "has_new_line": false, "n_remain": -1,
                        "n_decoded": 112, "stopping_word": ""}}
    ])
}

/// llama-server started with `--no-slots`: 501 not_supported_error (server-context.cpp).
fn slots_off() -> axum::response::Response {
    json(
        StatusCode::NOT_IMPLEMENTED,
        json!({"error": {"code": 501, "type": "not_supported_error",
            "message": "This server does not support slots endpoint. Start it with `--slots`"}}),
    )
}

/// llama-server without `--metrics`: 501 not_supported_error.
fn metrics_off() -> axum::response::Response {
    json(
        StatusCode::NOT_IMPLEMENTED,
        json!({"error": {"code": 501, "type": "not_supported_error",
            "message": "This server does not support metrics endpoint. Start it with `--metrics`"}}),
    )
}

fn text(body: String) -> axum::response::Response {
    axum::response::Response::builder()
        .header("content-type", "text/plain; version=0.0.4; charset=utf-8")
        .body(axum::body::Body::from(body))
        .unwrap()
}

fn metrics_route(body: String) -> Router {
    Router::new().route("/metrics", get(move || async move { text(body) }))
}

#[tokio::test]
async fn vllm_idle_and_busy_summed_over_engines() {
    let idle = scripted::serve(metrics_route(vllm_metrics([0, 0], [0, 0]))).await;
    let r = read_load(&idle.url(), EngineKind::Vllm, T).await.unwrap();
    assert_eq!(
        r.load,
        Load {
            running: 0,
            waiting: 0
        }
    );
    assert!(r.load.is_idle());
    assert_eq!(r.source, VLLM_SOURCE);

    let busy = scripted::serve(metrics_route(vllm_metrics([1, 2], [4, 0]))).await;
    let r = read_load(&busy.url(), EngineKind::Vllm, T).await.unwrap();
    assert_eq!(
        r.load,
        Load {
            running: 3,
            waiting: 4
        }
    );
    assert!(!r.load.is_idle());
    // Only waiting requests: still busy.
    let queued = scripted::serve(metrics_route(vllm_metrics([0, 0], [0, 1]))).await;
    let r = read_load(&queued.url(), EngineKind::Vllm, T).await.unwrap();
    assert!(!r.load.is_idle(), "{r:?}");
    // Generic finds vLLM's gauges too.
    let r = read_load(&busy.url(), EngineKind::Generic, T)
        .await
        .unwrap();
    assert_eq!((r.load.running, r.source.as_str()), (3, VLLM_SOURCE));
}

#[tokio::test]
async fn vllm_without_engine_gauges_names_the_flag() {
    // `--disable-log-stats`: /metrics answers, but only the HTTP and process families.
    let s = scripted::serve(metrics_route(
        "# TYPE http_requests_total counter\nhttp_requests_total{handler=\"/v1/models\",method=\"GET\",status=\"2xx\"} 3.0\n\
# TYPE process_resident_memory_bytes gauge\nprocess_resident_memory_bytes 1.2e+09\n"
            .into(),
    ))
    .await;
    let e = read_load(&s.url(), EngineKind::Vllm, T)
        .await
        .unwrap_err()
        .to_string();
    assert!(e.contains("vllm:num_requests_running"), "{e}");
    assert!(e.contains("--disable-log-stats"), "{e}");
    assert!(!e.contains('\n'), "{e}");
}

#[tokio::test]
async fn sglang_idle_busy_and_metrics_off() {
    let idle = scripted::serve(metrics_route(sglang_metrics(0, 0))).await;
    let r = read_load(&idle.url(), EngineKind::Sglang, T).await.unwrap();
    assert_eq!(
        r,
        Reading {
            load: Load {
                running: 0,
                waiting: 0
            },
            source: SGLANG_SOURCE.into()
        }
    );
    let busy = scripted::serve(metrics_route(sglang_metrics(5, 2))).await;
    let r = read_load(&busy.url(), EngineKind::Sglang, T).await.unwrap();
    assert_eq!(
        r.load,
        Load {
            running: 5,
            waiting: 2
        }
    );

    // Without --enable-metrics SGLang has no /metrics route: FastAPI's 404.
    let off = scripted::serve(Router::new()).await;
    let e = read_load(&off.url(), EngineKind::Sglang, T)
        .await
        .unwrap_err()
        .to_string();
    assert!(e.starts_with(&format!("SGLang at {}", off.url())), "{e}");
    assert!(
        e.contains("/metrics answered 404 (add --enable-metrics)"),
        "{e}"
    );
}

#[tokio::test]
async fn llamacpp_slots_one_processing() {
    // Default llama-server: /slots on, /metrics off.
    let s = scripted::serve(
        Router::new()
            .route(
                "/slots",
                get(|| async { json(StatusCode::OK, llamacpp_slots()) }),
            )
            .route("/metrics", get(|| async { metrics_off() })),
    )
    .await;
    let r = read_load(&s.url(), EngineKind::LlamaCpp, T).await.unwrap();
    assert_eq!(
        r,
        Reading {
            load: Load {
                running: 1,
                waiting: 0
            },
            source: "/slots".into()
        }
    );
    // Generic: no /metrics, so /slots.
    let r = read_load(&s.url(), EngineKind::Generic, T).await.unwrap();
    assert_eq!((r.load.running, r.source.as_str()), (1, "/slots"));
}

#[tokio::test]
async fn llamacpp_deferred_from_metrics_and_metrics_alone() {
    // Both on: running from /slots, waiting from requests_deferred.
    let both = scripted::serve(
        Router::new()
            .route(
                "/slots",
                get(|| async { json(StatusCode::OK, llamacpp_slots()) }),
            )
            .route("/metrics", get(|| async { text(llamacpp_metrics(1, 2)) })),
    )
    .await;
    let r = read_load(&both.url(), EngineKind::LlamaCpp, T)
        .await
        .unwrap();
    assert_eq!(
        r.load,
        Load {
            running: 1,
            waiting: 2
        }
    );
    assert_eq!(r.source, SLOTS_AND_DEFERRED);

    // --no-slots --metrics: the gauges alone.
    let metrics_only = scripted::serve(
        Router::new()
            .route("/slots", get(|| async { slots_off() }))
            .route("/metrics", get(|| async { text(llamacpp_metrics(0, 0)) })),
    )
    .await;
    let r = read_load(&metrics_only.url(), EngineKind::LlamaCpp, T)
        .await
        .unwrap();
    assert_eq!(
        r,
        Reading {
            load: Load {
                running: 0,
                waiting: 0
            },
            source: LLAMACPP_SOURCE.into()
        }
    );
}

#[tokio::test]
async fn both_endpoints_501_names_the_fix() {
    let s = scripted::serve(
        Router::new()
            .route("/slots", get(|| async { slots_off() }))
            .route("/metrics", get(|| async { metrics_off() })),
    )
    .await;
    let e = read_load(&s.url(), EngineKind::LlamaCpp, T)
        .await
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        format!(
            "llama.cpp at {}: /slots answered 501 (started with --no-slots?) and /metrics \
             answered 501 (add --metrics): cannot tell whether it is idle",
            s.url()
        )
    );
    let e = read_load(&s.url(), EngineKind::Generic, T)
        .await
        .unwrap_err()
        .to_string();
    assert!(e.starts_with(&format!("the server at {}", s.url())), "{e}");
    assert!(
        e.contains("--metrics") && e.contains("--enable-metrics"),
        "{e}"
    );
    assert!(!e.contains('\n'), "{e}");
}

#[tokio::test]
async fn slot_lists_that_tell_nothing_are_errors() {
    for (body, why) in [
        (json!([]), "empty"),
        (json!({"error": "x"}), "not a list"),
        (json!([{"id": 0}]), "neither is_processing nor state"),
    ] {
        let s = scripted::serve(
            Router::new()
                .route(
                    "/slots",
                    get(move || async move { json(StatusCode::OK, body) }),
                )
                .route("/metrics", get(|| async { metrics_off() })),
        )
        .await;
        let e = read_load(&s.url(), EngineKind::LlamaCpp, T)
            .await
            .unwrap_err()
            .to_string();
        assert!(e.contains(why), "{e}");
    }
    // Older builds: `state`, 0 idle.
    let s = scripted::serve(Router::new().route(
        "/slots",
        get(|| async {
            json(
                StatusCode::OK,
                json!([{"id": 0, "state": 0}, {"id": 1, "state": 1}]),
            )
        }),
    ))
    .await;
    let r = read_load(&s.url(), EngineKind::LlamaCpp, T).await.unwrap();
    assert_eq!(
        r.load,
        Load {
            running: 1,
            waiting: 0
        }
    );
}

#[tokio::test]
async fn a_server_that_never_answers_times_out() {
    let hang = || async {
        tokio::time::sleep(Duration::from_secs(600)).await;
        text(String::new())
    };
    let s = scripted::serve(
        Router::new()
            .route("/metrics", get(hang))
            .route("/slots", get(hang)),
    )
    .await;
    for engine in [EngineKind::LlamaCpp, EngineKind::Vllm, EngineKind::Generic] {
        let t0 = Instant::now();
        let r = tokio::time::timeout(
            Duration::from_secs(10),
            read_load(&s.url(), engine, Duration::from_millis(300)),
        )
        .await
        .expect("read_load must respect its timeout");
        let e = r.unwrap_err().to_string();
        assert!(t0.elapsed() < Duration::from_secs(3), "{:?}", t0.elapsed());
        assert!(e.contains("timeout"), "{e}");
        assert!(e.contains("cannot tell whether it is idle"), "{e}");
    }
}

#[tokio::test]
async fn nothing_listening_is_an_error() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let e = read_load(&format!("http://127.0.0.1:{port}"), EngineKind::Vllm, T)
        .await
        .unwrap_err()
        .to_string();
    assert!(e.contains("cannot connect"), "{e}");
    let e = read_load("ftp://x", EngineKind::Vllm, T)
        .await
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("vLLM: "), "{e}");
}

/// vLLM's /metrics whose answer follows the time since the server started: `busy` says whether
/// it is busy at that instant; `None` answers 500 (a failed reading).
fn timed_vllm(busy: fn(Duration) -> Option<bool>) -> Router {
    logged_vllm(move |_, t| busy(t)).0
}

/// What a scripted server answered, in order: when each answer was served (before the client
/// could see it) and what it said (`None`: a 500).
type Served = Arc<Mutex<Vec<(Instant, Option<bool>)>>>;

/// vLLM's /metrics answering by the request's number (from 0) and the time since the server
/// started, as `timed_vllm` does, logging each answer.
fn logged_vllm(
    busy: impl Fn(usize, Duration) -> Option<bool> + Send + Sync + 'static,
) -> (Router, Served) {
    let t0 = Instant::now();
    let served: Served = Arc::default();
    let log = served.clone();
    let busy = Arc::new(busy);
    let app = Router::new().route(
        "/metrics",
        get(move || {
            let (log, busy) = (log.clone(), busy.clone());
            async move {
                let answer = {
                    let mut log = log.lock().unwrap();
                    let answer = busy(log.len(), t0.elapsed());
                    log.push((Instant::now(), answer));
                    answer
                };
                match answer {
                    Some(true) => text(vllm_metrics([1, 0], [0, 0])),
                    Some(false) => text(vllm_metrics([0, 0], [0, 0])),
                    None => json(StatusCode::INTERNAL_SERVER_ERROR, json!({"error": "x"})),
                }
            }
        }),
    );
    (app, served)
}

fn never_stopped() -> (
    tokio::sync::watch::Sender<bool>,
    tokio::sync::watch::Receiver<bool>,
) {
    tokio::sync::watch::channel(false)
}

#[tokio::test]
async fn busy_for_a_second_then_idle() {
    // The first three readings are busy whatever the machine's speed; then busy until 1 s.
    let (app, served) = logged_vllm(|n, t| Some(n < 3 || t < Duration::from_secs(1)));
    let s = scripted::serve(app).await;
    let (_tx, mut rx) = never_stopped();
    let idle_for = Duration::from_millis(300);
    let w = wait_idle(
        &s.url(),
        None,
        EngineKind::Vllm,
        idle_for,
        Duration::from_secs(20),
        Duration::from_millis(50),
        &mut rx,
    )
    .await;
    let end = Instant::now();
    match w {
        IdleWait::Idle { source, .. } => assert_eq!(source, VLLM_SOURCE),
        other => panic!("{other:?}"),
    }
    // Measured against when the server answered, not against the wait's own start (which may
    // come after the server's first second on a busy machine): the stretch began at the first
    // idle answer, after every busy one, and the wait ended `idle_for` after it or later.
    let served = served.lock().unwrap().clone();
    let first_idle = served
        .iter()
        .position(|(_, a)| *a == Some(false))
        .expect("an idle answer");
    assert!(first_idle >= 3, "{served:?}");
    assert!(
        served[first_idle..].iter().all(|(_, a)| *a == Some(false)),
        "{served:?}"
    );
    assert!(
        end.duration_since(served[first_idle].0) >= idle_for,
        "{served:?}"
    );
}

#[tokio::test]
async fn a_busy_or_failed_reading_restarts_the_stretch() {
    // The readings are scripted by number, not by time, so a slow machine sees the same ones:
    // idle, then a busy (or failed) one, then idle for good.
    let idle_for = Duration::from_millis(600);
    for (gap, (app, served)) in [
        (Some(true), logged_vllm(|n, _| Some(n == 1))),
        (
            None,
            logged_vllm(|n, _| if n == 1 { None } else { Some(false) }),
        ),
    ] {
        let s = scripted::serve(app).await;
        let (_tx, mut rx) = never_stopped();
        let w = wait_idle(
            &s.url(),
            None,
            EngineKind::Vllm,
            idle_for,
            Duration::from_secs(20),
            Duration::from_millis(150),
            &mut rx,
        )
        .await;
        let end = Instant::now();
        let IdleWait::Idle { .. } = w else {
            panic!("{w:?}")
        };
        let served = served.lock().unwrap().clone();
        let said: Vec<Option<bool>> = served.iter().map(|(_, a)| *a).collect();
        // The first reading only began a stretch (0 s long), so the wait read the gap.
        assert_eq!(said[..2], [Some(false), gap], "{said:?}");
        // The gap broke the stretch: it began again at the next idle reading (2), and only a
        // later one could end it.
        assert!(said.len() >= 4, "{said:?}");
        // It ended `idle_for` after that reading or later (the reading was served before the
        // client saw it). A stretch counted on from the first reading, through the gap, would
        // end about `idle_for` after the first, two polls (300 ms) before this.
        assert!(
            end.duration_since(served[2].0) >= idle_for,
            "{:?} after reading 2: {said:?}",
            end.duration_since(served[2].0)
        );
    }
}

#[tokio::test]
async fn always_busy_is_busy_at_the_deadline() {
    let s = scripted::serve(timed_vllm(|_| Some(true))).await;
    let (_tx, mut rx) = never_stopped();
    let t0 = Instant::now();
    let w = wait_idle(
        &s.url(),
        None,
        EngineKind::Vllm,
        Duration::from_millis(100),
        Duration::from_millis(700),
        Duration::from_millis(50),
        &mut rx,
    )
    .await;
    let IdleWait::Busy { waited, last } = w else {
        panic!("{w:?}")
    };
    assert!(waited >= Duration::from_millis(700), "{waited:?}");
    assert!(t0.elapsed() < Duration::from_secs(5), "{:?}", t0.elapsed());
    assert_eq!(last, format!("1 running, 0 waiting (from {VLLM_SOURCE})"));
}

#[tokio::test]
async fn never_readable_is_unreadable() {
    let s = scripted::serve(Router::new()).await;
    let (_tx, mut rx) = never_stopped();
    let w = wait_idle(
        &s.url(),
        None,
        EngineKind::Sglang,
        Duration::from_millis(100),
        Duration::from_millis(400),
        Duration::from_millis(50),
        &mut rx,
    )
    .await;
    let IdleWait::Unreadable { waited, error } = w else {
        panic!("{w:?}")
    };
    assert!(waited >= Duration::from_millis(400), "{waited:?}");
    assert!(error.contains("add --enable-metrics"), "{error}");
}

#[tokio::test]
async fn stop_ends_the_wait() {
    let s = scripted::serve(timed_vllm(|_| Some(true))).await;
    let (tx, mut rx) = tokio::sync::watch::channel(false);
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        tx.send(true).unwrap();
        // Keep the sender until the waiter has seen it.
        tokio::time::sleep(Duration::from_secs(5)).await;
    });
    let t0 = Instant::now();
    let w = wait_idle(
        &s.url(),
        None,
        EngineKind::Vllm,
        Duration::from_millis(100),
        Duration::from_secs(60),
        Duration::from_millis(50),
        &mut rx,
    )
    .await;
    assert_eq!(w, IdleWait::Stopped);
    assert!(t0.elapsed() < Duration::from_secs(5), "{:?}", t0.elapsed());

    // Already stopped: no reading at all, even of a server that never answers.
    let hang = scripted::serve(Router::new().route(
        "/metrics",
        get(|| async {
            tokio::time::sleep(Duration::from_secs(600)).await;
            text(String::new())
        }),
    ))
    .await;
    let (_tx, mut rx) = tokio::sync::watch::channel(true);
    let w = wait_idle(
        &hang.url(),
        None,
        EngineKind::Vllm,
        Duration::from_millis(100),
        Duration::from_secs(60),
        Duration::from_millis(50),
        &mut rx,
    )
    .await;
    assert_eq!(w, IdleWait::Stopped);
}

/// A streamed completion of many tokens against the real llama-server, read chunk by chunk
/// until aborted; `started` counts the chunks.
fn stream_completion(url: &str, started: Arc<AtomicU64>) -> tokio::task::JoinHandle<()> {
    let url = format!("{url}/v1/completions");
    tokio::spawn(async move {
        bakeoff_client::tls::install_process_provider();
        let http = reqwest::Client::builder()
            .no_proxy()
            .timeout(Duration::from_secs(300))
            .build()
            .unwrap();
        let mut resp = http
            .post(url)
            .json(&json!({
                "model": "gemma-3-270m-q4_k_m",
                "prompt": "Tell me a very long story about a lighthouse keeper.",
                "max_tokens": 6000,
                "ignore_eos": true,
                "stream": true
            }))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 200);
        while let Ok(Some(_)) = resp.chunk().await {
            started.fetch_add(1, Ordering::SeqCst);
        }
    })
}

#[tokio::test]
async fn real_llama_server_idle_then_busy_then_idle() {
    let _g = bakeoff_testkit::serial().await;
    let dir = bakeoff_testkit::tempdir();
    // One slot, so a second request waits (llamacpp:requests_deferred).
    let server = bakeoff_testkit::real_llama(8192, 1, &["--metrics"], dir.path()).await;
    let url = server.url();

    let r = read_load(&url, EngineKind::LlamaCpp, T).await.unwrap();
    assert_eq!(
        r.load,
        Load {
            running: 0,
            waiting: 0
        },
        "{r:?}"
    );
    assert_eq!(r.source, SLOTS_AND_DEFERRED);
    let (_tx, mut rx) = never_stopped();
    let w = wait_idle(
        &url,
        None,
        EngineKind::LlamaCpp,
        Duration::from_millis(300),
        Duration::from_secs(10),
        Duration::from_millis(100),
        &mut rx,
    )
    .await;
    assert!(matches!(w, IdleWait::Idle { .. }), "{w:?}");

    let first = Arc::new(AtomicU64::new(0));
    let second = Arc::new(AtomicU64::new(0));
    let a = stream_completion(&url, first.clone());
    let t0 = Instant::now();
    while first.load(Ordering::SeqCst) < 2 {
        assert!(t0.elapsed() < Duration::from_secs(60), "no tokens streamed");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let b = stream_completion(&url, second.clone());
    // The busy slot shows in /slots; the second request waits for it.
    let t0 = Instant::now();
    let busy = loop {
        let r = read_load(&url, EngineKind::LlamaCpp, T).await.unwrap();
        assert!(r.load.running >= 1, "{r:?}");
        if r.load.waiting >= 1 || t0.elapsed() > Duration::from_secs(10) {
            break r;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(
        busy.load,
        Load {
            running: 1,
            waiting: 1
        },
        "{busy:?}"
    );
    assert_eq!(
        second.load(Ordering::SeqCst),
        0,
        "one slot serves one request"
    );
    let w = wait_idle(
        &url,
        None,
        EngineKind::LlamaCpp,
        Duration::from_millis(300),
        Duration::from_millis(800),
        Duration::from_millis(100),
        &mut rx,
    )
    .await;
    assert!(matches!(w, IdleWait::Busy { .. }), "{w:?}");

    // Both clients go away: llama-server cancels them at their next token and is idle again.
    a.abort();
    b.abort();
    let w = wait_idle(
        &url,
        None,
        EngineKind::LlamaCpp,
        Duration::from_millis(500),
        Duration::from_secs(60),
        Duration::from_millis(100),
        &mut rx,
    )
    .await;
    assert!(matches!(w, IdleWait::Idle { .. }), "{w:?}");
    let r = read_load(&url, EngineKind::LlamaCpp, T).await.unwrap();
    assert!(r.load.is_idle(), "{r:?}");
    // Generic reads the same server through its /metrics.
    let r = read_load(&url, EngineKind::Generic, T).await.unwrap();
    assert_eq!(
        (r.load, r.source.as_str()),
        (
            Load {
                running: 0,
                waiting: 0
            },
            LLAMACPP_SOURCE
        )
    );
}

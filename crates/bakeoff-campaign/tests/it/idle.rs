//! `idle`: reading a seat's load from each engine's own endpoints, and waiting for a seat to be
//! idle for a stretch. Scripted servers copy what each engine serves (sources cited per
//! fixture); the wait itself runs over scripted readings on tokio's paused clock, so its
//! figures are exact and no test waits for them; the last test reads a real llama-server.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use axum::Router;
use axum::http::StatusCode;
use axum::routing::get;
use bakeoff_artifact::EngineKind;
use bakeoff_campaign::idle::{IdleWait, Load, Reading, read_load, wait_idle, wait_idle_on};
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

// The runtime's clock is paused: the server's hang and the reading's limit are both on it, so
// the test shows which ends first without waiting for either.
#[tokio::test(start_paused = true)]
async fn a_server_that_never_answers_times_out() {
    let hang = || async {
        tokio::time::sleep(HANG).await;
        text(String::new())
    };
    let s = scripted::serve(
        Router::new()
            .route("/metrics", get(hang))
            .route("/slots", get(hang)),
    )
    .await;
    for engine in [EngineKind::LlamaCpp, EngineKind::Vllm, EngineKind::Generic] {
        let t0 = tokio::time::Instant::now();
        let r = tokio::time::timeout(
            Duration::from_secs(10),
            read_load(&s.url(), engine, Duration::from_millis(300)),
        )
        .await
        .expect("read_load must respect its timeout");
        let e = r.unwrap_err().to_string();
        assert!(t0.elapsed() < HANG, "{:?}", t0.elapsed());
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

/// How long a scripted server that never answers holds a request.
const HANG: Duration = Duration::from_secs(600);

/// What one scripted reading says.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Says {
    Idle,
    Busy,
    Fails,
}

/// One reading the wait took: when (from the wait's start, on the runtime's clock), the limit
/// it was given, and what it said.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Taken {
    at: Duration,
    limit: Duration,
    says: Says,
}

/// The parameters of one wait.
struct Wait {
    idle_for: Duration,
    timeout: Duration,
    poll: Duration,
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// `wait_idle_on` over readings scripted by their number (from 0) and their time since the
/// wait began; `stop` is handed to each reading too. Returns the outcome and every reading
/// taken. Run under a paused clock, the naps between readings take no time and the times are
/// exact.
async fn scripted_wait(
    w: Wait,
    stop: (
        tokio::sync::watch::Sender<bool>,
        tokio::sync::watch::Receiver<bool>,
    ),
    says: impl Fn(usize, Duration, &tokio::sync::watch::Sender<bool>) -> Says,
) -> (IdleWait, Vec<Taken>) {
    let (tx, mut rx) = stop;
    let taken = std::cell::RefCell::new(Vec::new());
    let t0 = tokio::time::Instant::now();
    let (taken_ref, says, tx) = (&taken, &says, &tx);
    let outcome = wait_idle_on(
        // A reading is taken when the wait polls it, as a real one is sent then.
        |limit| async move {
            let at = t0.elapsed();
            let n = taken_ref.borrow().len();
            let said = says(n, at, tx);
            taken_ref.borrow_mut().push(Taken {
                at,
                limit,
                says: said,
            });
            let load = |running| Load {
                running,
                waiting: 0,
            };
            match said {
                Says::Idle => Ok(Reading {
                    load: load(0),
                    source: "scripted".into(),
                }),
                Says::Busy => Ok(Reading {
                    load: load(1),
                    source: "scripted".into(),
                }),
                Says::Fails => Err("scripted failure"),
            }
        },
        w.idle_for,
        w.timeout,
        w.poll,
        &mut rx,
    )
    .await;
    (outcome, taken.into_inner())
}

fn never_stopped() -> (
    tokio::sync::watch::Sender<bool>,
    tokio::sync::watch::Receiver<bool>,
) {
    tokio::sync::watch::channel(false)
}

#[tokio::test(start_paused = true)]
async fn busy_for_a_second_then_idle_ends_idle_for_after_the_first_idle_reading() {
    let w = Wait {
        idle_for: ms(300),
        timeout: Duration::from_secs(20),
        poll: ms(50),
    };
    let (outcome, taken) = scripted_wait(w, never_stopped(), |_, at, _| {
        if at < Duration::from_secs(1) {
            Says::Busy
        } else {
            Says::Idle
        }
    })
    .await;
    // A reading every 50 ms: busy through 950 ms, idle from 1 s; the stretch began at the
    // first idle reading and the wait ended at the first reading 300 ms into it.
    let first_idle = taken.iter().position(|t| t.says == Says::Idle).unwrap();
    assert_eq!(taken[first_idle].at, Duration::from_secs(1), "{taken:?}");
    assert!(taken[first_idle..].iter().all(|t| t.says == Says::Idle));
    let last = taken.last().unwrap().at;
    assert_eq!(last, ms(1300), "{taken:?}");
    assert_eq!(
        outcome,
        IdleWait::Idle {
            waited: ms(1300),
            source: "scripted".into()
        }
    );
}

#[tokio::test(start_paused = true)]
async fn a_busy_or_failed_reading_restarts_the_stretch() {
    // Idle, then a busy (or failed) reading, then idle for good.
    for gap in [Says::Busy, Says::Fails] {
        let w = Wait {
            idle_for: ms(600),
            timeout: Duration::from_secs(20),
            poll: ms(150),
        };
        let (outcome, taken) =
            scripted_wait(
                w,
                never_stopped(),
                |n, _, _| if n == 1 { gap } else { Says::Idle },
            )
            .await;
        let said: Vec<Says> = taken.iter().map(|t| t.says).collect();
        // A stretch counted on from reading 0, through the gap, would have ended at 600 ms
        // (reading 4); it began again at reading 2 (300 ms) and ended 600 ms after it.
        assert_eq!(
            said,
            [
                Says::Idle,
                gap,
                Says::Idle,
                Says::Idle,
                Says::Idle,
                Says::Idle,
                Says::Idle
            ]
        );
        assert_eq!(taken[2].at, ms(300));
        let IdleWait::Idle { waited, .. } = outcome else {
            panic!("{outcome:?}")
        };
        assert_eq!(waited, ms(900), "{gap:?}");
    }
}

#[tokio::test(start_paused = true)]
async fn always_busy_is_busy_at_the_deadline_after_a_reading_there() {
    let w = Wait {
        idle_for: ms(100),
        timeout: ms(700),
        poll: ms(50),
    };
    let (outcome, taken) = scripted_wait(w, never_stopped(), |_, _, _| Says::Busy).await;
    // Readings at 0, 50, …, 700 ms: the last nap is cut to the deadline and the reading due
    // there is still taken.
    let at: Vec<Duration> = taken.iter().map(|t| t.at).collect();
    assert_eq!(at, (0..=14).map(|k| ms(50 * k)).collect::<Vec<_>>());
    assert_eq!(
        outcome,
        IdleWait::Busy {
            waited: ms(700),
            last: "1 running, 0 waiting (from scripted)".into()
        }
    );
}

#[tokio::test(start_paused = true)]
async fn never_readable_is_unreadable_with_the_last_error() {
    let w = Wait {
        idle_for: ms(100),
        timeout: ms(400),
        poll: ms(50),
    };
    let (outcome, taken) = scripted_wait(w, never_stopped(), |_, _, _| Says::Fails).await;
    assert_eq!(taken.len(), 9, "{taken:?}");
    assert_eq!(
        outcome,
        IdleWait::Unreadable {
            waited: ms(400),
            error: "scripted failure".into()
        }
    );
}

#[tokio::test(start_paused = true)]
async fn each_reading_is_bounded_by_the_time_left_and_never_below_half_a_second() {
    let w = Wait {
        idle_for: ms(100),
        timeout: Duration::from_secs(7),
        poll: Duration::from_secs(1),
    };
    let (_, taken) = scripted_wait(w, never_stopped(), |_, _, _| Says::Busy).await;
    let limits: Vec<Duration> = taken.iter().map(|t| t.limit).collect();
    let s = Duration::from_secs;
    assert_eq!(
        limits,
        [s(5), s(5), s(5), s(4), s(3), s(2), s(1), ms(500)],
        "{taken:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn stop_ends_the_wait_before_another_reading() {
    let w = Wait {
        idle_for: ms(100),
        timeout: Duration::from_secs(60),
        poll: ms(50),
    };
    // Ctrl-C arrives during the third reading: no reading after it.
    let (outcome, taken) = scripted_wait(w, never_stopped(), |n, _, stop| {
        if n == 2 {
            stop.send(true).unwrap();
        }
        Says::Busy
    })
    .await;
    assert_eq!(outcome, IdleWait::Stopped);
    assert_eq!(taken.len(), 3, "{taken:?}");

    // Already stopped: no reading at all.
    let w = Wait {
        idle_for: ms(100),
        timeout: Duration::from_secs(60),
        poll: ms(50),
    };
    let (outcome, taken) =
        scripted_wait(w, tokio::sync::watch::channel(true), |_, _, _| Says::Busy).await;
    assert_eq!(outcome, IdleWait::Stopped);
    assert!(taken.is_empty(), "{taken:?}");
}

/// vLLM's /metrics answering by the request's number (from 0): busy while `busy(n)`, else
/// idle; `seen` counts the requests.
fn numbered_vllm(busy: fn(u64) -> bool, seen: Arc<AtomicU64>) -> Router {
    Router::new().route(
        "/metrics",
        get(move || {
            let n = seen.fetch_add(1, Ordering::SeqCst);
            async move {
                if busy(n) {
                    text(vllm_metrics([1, 0], [0, 0]))
                } else {
                    text(vllm_metrics([0, 0], [0, 0]))
                }
            }
        }),
    )
}

/// `wait_idle` reads the seat through its endpoint: busy twice, then idle for the stretch.
#[tokio::test]
async fn wait_idle_reads_a_served_seat_until_it_is_idle() {
    let seen = Arc::new(AtomicU64::new(0));
    let s = scripted::serve(numbered_vllm(|n| n < 2, seen.clone())).await;
    let (_tx, mut rx) = never_stopped();
    let w = wait_idle(
        &s.url(),
        None,
        EngineKind::Vllm,
        ms(100),
        Duration::from_secs(60),
        ms(20),
        &mut rx,
    )
    .await;
    let IdleWait::Idle { source, .. } = w else {
        panic!("{w:?}")
    };
    assert_eq!(source, VLLM_SOURCE);
    // Two busy readings, then the idle ones that made up the stretch.
    assert!(seen.load(Ordering::SeqCst) >= 4, "{seen:?}");
}

/// A seat whose load cannot be read is unreadable at the deadline, with the engine's fix.
#[tokio::test]
async fn an_unreadable_seat_names_the_fix() {
    let s = scripted::serve(Router::new()).await;
    let (_tx, mut rx) = never_stopped();
    let w = wait_idle(
        &s.url(),
        None,
        EngineKind::Sglang,
        ms(100),
        ms(400),
        ms(50),
        &mut rx,
    )
    .await;
    let IdleWait::Unreadable { error, .. } = w else {
        panic!("{w:?}")
    };
    assert!(error.contains("add --enable-metrics"), "{error}");
}

/// A streamed completion of many tokens against the real llama-server, read chunk by chunk
/// until aborted; `chunks` counts them.
fn stream_completion(
    url: &str,
    chunks: tokio::sync::watch::Sender<u64>,
) -> tokio::task::JoinHandle<()> {
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
            chunks.send_modify(|n| *n += 1);
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

    let (first, mut first_chunks) = tokio::sync::watch::channel(0u64);
    let (second, second_chunks) = tokio::sync::watch::channel(0u64);
    let a = stream_completion(&url, first);
    // Two chunks of the first completion: its slot is processing (the bound only ends a hang).
    tokio::time::timeout(Duration::from_secs(60), first_chunks.wait_for(|n| *n >= 2))
        .await
        .expect("no tokens streamed")
        .unwrap();
    let b = stream_completion(&url, second);
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
    assert_eq!(*second_chunks.borrow(), 0, "one slot serves one request");
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

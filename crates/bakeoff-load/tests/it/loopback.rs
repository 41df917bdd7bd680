//! The calibration target round-trip, and failures mid-stream recorded per request while the
//! sweep goes on.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::http::Response;
use axum::routing::post;
use bakeoff_client::Client;
use bakeoff_load::calibrate::{CalibrationOptions, CalibrationTarget, measure_ceiling};
use bakeoff_load::{Arrival, LoadPlan, Mode, NoProgress};

use crate::util;
use bakeoff_testkit::scripted;

/// 10 s to the first byte, `idle` between chunks, 30 s in all.
fn client(url: &str, idle: Duration) -> Client {
    util::client(url, Duration::from_secs(10), idle, Duration::from_secs(30))
}

fn small_plan(levels: Vec<u32>, requests: u64, tokens: u32) -> LoadPlan {
    let mut p = util::closed_plan("m", levels, requests, 8, tokens);
    p.scrape_metrics = true;
    p
}

#[tokio::test]
async fn calibration_target_round_trip() {
    let t = CalibrationTarget::start().await.unwrap();
    let c = client(&t.url(), Duration::from_secs(5));
    let (_tx, rx) = tokio::sync::watch::channel(false);
    let r = bakeoff_load::run(
        &c,
        &small_plan(vec![1, 4], 12, 100),
        Arc::new(NoProgress),
        rx,
    )
    .await
    .unwrap();
    assert_eq!(r.warmup_requests, 1);
    assert_eq!(r.steps.len(), 2);
    for s in &r.steps {
        assert_eq!((s.sent, s.ok), (12, 12), "{:?}", s.errors);
        assert_eq!(s.output_tokens, 1200);
        assert_eq!(s.token_source, "usage");
        assert_eq!(s.requests.len(), 12);
        assert!(
            s.requests
                .iter()
                .all(|q| q.output_tokens == Some(100) && q.chunks == 100)
        );
        assert_eq!(s.latency.itl.count, 12 * 99);
        // No /metrics on the target: nothing invented.
        assert!(s.metrics.is_none());
        assert!(s.reconciliation.is_none());
    }
    // Unpinned run: pinning is recorded as not sent.
    assert_eq!(r.pinning.honoured, None);
    assert_eq!(r.pinning.exact_length, 24);

    // The ceiling measurement itself, small.
    let o = CalibrationOptions {
        rps_concurrency: 4,
        tokens_concurrency: 2,
        tokens_per_request: 64,
        streams: 50,
        phase: Duration::from_millis(300),
    };
    let ceil = measure_ceiling(&t.url(), o).await.unwrap();
    assert!(ceil.requests_per_second > 0.0 && ceil.streamed_tokens_per_second > 0.0);
    assert_eq!(ceil.concurrent_streams, 50);
}

#[tokio::test]
async fn open_loop_against_target_records_schedule() {
    let t = CalibrationTarget::start().await.unwrap();
    let c = client(&t.url(), Duration::from_secs(5));
    let mut p = small_plan(vec![1], 20, 4);
    p.mode = Mode::Open {
        rates: vec![200.0],
        arrival: Arrival::Poisson,
        max_in_flight: None,
    };
    p.warmup_requests = 0;
    let (_tx, rx) = tokio::sync::watch::channel(false);
    let r = bakeoff_load::run(&c, &p, Arc::new(NoProgress), rx)
        .await
        .unwrap();
    let s = &r.steps[0];
    assert_eq!(s.requested_rate, Some(200.0));
    assert_eq!(s.arrival.as_deref(), Some("poisson"));
    assert_eq!(s.sent, 20);
    // Intended times are the seeded schedule, in order; nobody is sent early.
    let want = bakeoff_load::schedule::offsets(Arrival::Poisson, 200.0, Some(20), None, p.seed ^ 1);
    let mut reqs = s.requests.clone();
    reqs.sort_by_key(|q| q.i);
    for (q, w) in reqs.iter().zip(&want) {
        assert!((q.intended_ms - w.as_secs_f64() * 1000.0).abs() < 1e-6);
        assert!(q.sent_ms >= q.intended_ms);
    }
    assert_eq!(s.latency.send_lateness.count, 20);
    assert_eq!(s.latency.e2e_corrected.count, 20);
}

/// llama.cpp streams one token per event (measured on llama-server b11434); a server that dies
/// mid-generation closes the connection after some tokens (vLLM's "engine core died",
/// docs/field-cases.md B1), and a wedged one stops sending while the socket stays open.
fn flaky() -> Router {
    use std::sync::atomic::{AtomicU64, Ordering};
    let n = Arc::new(AtomicU64::new(0));
    Router::new().route(
        "/v1/chat/completions",
        post(move || {
            let k = n.fetch_add(1, Ordering::Relaxed);
            async move {
                let head = vec![
                    Ok::<_, std::io::Error>(axum::body::Bytes::from(
                        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\n",
                    )),
                    Ok(axum::body::Bytes::from(
                        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"b\"}}]}\n\n",
                    )),
                ];
                let body = match k % 3 {
                    // Drops: the body errors after two tokens, hyper aborts the connection.
                    0 => Body::from_stream(futures_util::stream::iter(
                        head.into_iter()
                            .chain([Err(std::io::Error::other("engine died"))]),
                    )),
                    // Stalls: two tokens, then silence past the idle timeout.
                    1 => Body::from_stream(futures_util::StreamExt::chain(
                        futures_util::stream::iter(head),
                        futures_util::stream::once(async {
                            tokio::time::sleep(Duration::from_secs(30)).await;
                            Ok(axum::body::Bytes::new())
                        }),
                    )),
                    _ => return scripted::chat_stream(&["a", "b", "c"], &[], "length", 3),
                };
                Response::builder()
                    .header("content-type", "text/event-stream")
                    .body(body)
                    .unwrap()
            }
        }),
    )
}

#[tokio::test]
async fn stalls_and_drops_are_classified_per_request_and_the_sweep_goes_on() {
    let s = scripted::serve(flaky()).await;
    let c = client(&s.url(), Duration::from_millis(300));
    let mut p = small_plan(vec![1, 2], 6, 3);
    p.warmup_requests = 0;
    p.scrape_metrics = false;
    let (_tx, rx) = tokio::sync::watch::channel(false);
    let r = bakeoff_load::run(&c, &p, Arc::new(NoProgress), rx)
        .await
        .unwrap();
    assert_eq!(r.steps.len(), 2, "the sweep went on after failures");
    let mut kinds = std::collections::BTreeMap::new();
    for st in &r.steps {
        assert_eq!(st.sent, 6);
        for (k, v) in &st.errors {
            *kinds.entry(k.clone()).or_insert(0) += v;
        }
        for q in st.requests.iter().filter(|q| q.error.is_some()) {
            assert!(q.error_message.is_some());
            // A stall keeps the tokens that came before it; a drop may lose the last buffered
            // bytes with the connection (hyper surfaces the reset first), never invent any.
            if q.error.as_deref() == Some("timeout-idle") {
                assert_eq!(q.chunks, 2, "the tokens before the stall are kept");
            } else {
                assert!(q.chunks <= 2);
            }
        }
        assert!(st.ok >= 1);
    }
    assert_eq!(kinds.get("stream"), Some(&4), "{kinds:?}");
    assert_eq!(kinds.get("timeout-idle"), Some(&4), "{kinds:?}");
}

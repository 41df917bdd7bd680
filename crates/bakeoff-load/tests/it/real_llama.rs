//! A small sweep against the real llama-server (CPU) with the real test model, reconciled with
//! its own `timings` and `/metrics`. Asserts the instrument, never a speed.

use std::sync::Arc;
use std::time::Duration;

use bakeoff_artifact::EngineKind;
use bakeoff_load::{NoProgress, PinPolicy};

use crate::util;

#[tokio::test]
async fn small_sweep_reconciles_with_llama_server_timings_and_metrics() {
    let _g = bakeoff_testkit::serial().await;
    let dir = bakeoff_testkit::tempdir();
    let server = bakeoff_testkit::real_llama(8192, 4, &["--metrics"], dir.path()).await;
    let client = util::client(
        &server.url(),
        Duration::from_secs(120),
        Duration::from_secs(60),
        Duration::from_secs(300),
    );
    let mut p = util::closed_plan("gemma-3-270m-q4_k_m", vec![1, 2], 4, 32, 16);
    p.pin = PinPolicy::for_engine(EngineKind::LlamaCpp);
    let (_tx, rx) = tokio::sync::watch::channel(false);
    let r = bakeoff_load::run(&client, &p, Arc::new(NoProgress), rx)
        .await
        .unwrap();

    assert_eq!(r.steps.len(), 2);
    // ignore_eos is honoured by llama.cpp: every request made exactly 16 tokens.
    assert_eq!(r.pinning.honoured, Some(true), "{:?}", r.pinning);
    assert_eq!((r.pinning.finished, r.pinning.exact_length), (8, 8));
    for s in &r.steps {
        assert_eq!((s.sent, s.ok), (4, 4), "{:?}", s.errors);
        assert_eq!(s.token_source, "usage");
        assert_eq!(s.output_tokens, 64);
        // One token per event on llama.cpp.
        assert_eq!(s.tokens_per_chunk, Some(1.0));
        let rec = s.reconciliation.as_ref().expect("llama.cpp sends timings");
        assert_eq!(rec.requests_with_timings, 4);
        let ratio = rec.decode_ratio_p50.unwrap();
        assert!(ratio > 0.0 && ratio.is_finite());
        assert!(rec.ttft_ratio_p50.unwrap() > 0.0);
        // Unique prefixes: the server reused at most its chat-template preamble from cache.
        for q in &s.requests {
            assert!(q.server_prompt_ms.is_some() && q.server_decode_tps.is_some());
            assert!(q.prompt_tokens.unwrap() >= 20, "{q:?}");
            assert!(
                q.server_cache_n.unwrap() < q.prompt_tokens.unwrap() / 2,
                "{q:?}"
            );
        }
        // /metrics: the server counted exactly the tokens the client counted.
        let m = s.metrics.as_ref().expect("--metrics is on");
        assert_eq!(m.family, "llamacpp");
        assert_eq!(m.generation_tokens, Some(64.0));
        assert_eq!(m.client_server_token_ratio, Some(1.0));
        assert!(s.latency.ttft.p99_ms.is_some() && s.latency.tpot.count == 4);
    }
}

//! The `throughput` and `longgen` suites against the real llama-server (CPU, the test model):
//! one journaled item per step, the load report in the summary, reconciliation with the
//! server's timings, pinned lengths honoured, per-probe decode rates and the MTP note.
#![allow(clippy::unwrap_used)]

use bakeoff_artifact::{EngineKind, SuiteStatus};
use bakeoff_client::discovery::{DiscoveryOptions, discover};
use bakeoff_client::{Client, ClientOptions, EndpointUrl};
use bakeoff_suites::longgen::LonggenOptions;
use bakeoff_suites::throughput::ThroughputOptions;
use bakeoff_suites::{SuiteContext, SuiteName, SuiteOptions, run_suites};

#[tokio::test]
async fn throughput_and_longgen_against_the_real_llama_server() {
    let _g = bakeoff_testkit::serial().await;
    let dir = bakeoff_testkit::tempdir();
    let server = bakeoff_testkit::real_llama(8192, 2, &[], dir.path()).await;
    let client = Client::new(
        EndpointUrl::parse(&server.url()).unwrap(),
        ClientOptions::default(),
    );
    let facts = discover(&client, &DiscoveryOptions::default()).await.facts;
    assert_eq!(facts.engine, EngineKind::LlamaCpp);
    let options = SuiteOptions {
        throughput: ThroughputOptions {
            concurrency: vec![1, 2],
            requests_per_step: 2,
            prompt_tokens: 32,
            output_tokens: 16,
            warmup_requests: 1,
            harness_ceiling: None,
        },
        longgen: LonggenOptions {
            probes: 2,
            output_tokens: 32,
            prompt_tokens: 16,
        },
        ..SuiteOptions::default()
    };
    let ctx = SuiteContext {
        client: &client,
        model: "gemma-3-270m-q4_k_m".into(),
        facts: &facts,
        options: &options,
    };
    let (_tx, mut rx) = tokio::sync::watch::channel(false);
    let mut journaled = Vec::new();
    let mut on_item = |suite: &str, it: &bakeoff_artifact::ItemRecord| {
        journaled.push((suite.to_string(), it.id.clone()))
    };
    let out = run_suites(
        &ctx,
        &[SuiteName::Throughput, SuiteName::Longgen],
        &mut rx,
        &mut on_item,
    )
    .await;
    assert!(out.interrupted.is_none());
    assert_eq!(
        journaled,
        vec![
            ("throughput".into(), "c=1".into()),
            ("throughput".into(), "c=2".into()),
            ("longgen".into(), "c=1".into())
        ]
    );

    let t = &out.suites["throughput"];
    assert_eq!(t.status, SuiteStatus::Complete);
    let d = &t.summary.details;
    assert_eq!(d["steps"].as_array().unwrap().len(), 2);
    assert_eq!(d["pinning"]["honoured"], true, "{}", d["pinning"]);
    for s in d["steps"].as_array().unwrap() {
        assert_eq!(s["ok"], 2);
        assert_eq!(s["reconciliation"]["requests_with_timings"], 2);
    }

    let l = &out.suites["longgen"];
    assert_eq!(l.status, SuiteStatus::Complete);
    let probes = l.summary.details["probes"].as_array().unwrap();
    assert_eq!(probes.len(), 2);
    for p in probes {
        assert_eq!(p["output_tokens"], 32);
        assert!(p["decode_tokens_per_second"].as_f64().unwrap() > 0.0);
        assert!(p["server_decode_tokens_per_second"].as_f64().unwrap() > 0.0);
    }
    assert!(
        l.summary.details["note"]
            .as_str()
            .unwrap()
            .contains("speculative decoding")
    );
    assert!(
        l.summary
            .flags
            .iter()
            .any(|f| f.code == "short-completions-cannot-measure-spec-decoding")
    );
}

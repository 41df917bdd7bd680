//! The `throughput` and `longgen` suites against the real llama-server (CPU, the test model):
//! one journaled item per step, the load report in the summary, reconciliation with the
//! server's timings, pinned lengths honoured, per-probe decode rates and the MTP note.

use bakeoff_artifact::{EngineKind, SuiteStatus};
use bakeoff_suites::longgen::LonggenOptions;
use bakeoff_suites::throughput::ThroughputOptions;
use bakeoff_suites::{SuiteName, SuiteOptions};

use crate::util::{REAL_MODEL, connect, context, run_to_end, serial_tempdir};

#[tokio::test]
async fn throughput_and_longgen_against_the_real_llama_server() {
    let (_g, dir) = serial_tempdir().await;
    let server = bakeoff_testkit::real_llama(8192, 2, &[], dir.path()).await;
    let (client, facts) = connect(&server.url()).await;
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
            repeats: 1,
        },
        ..SuiteOptions::default()
    };
    let ctx = context(&client, REAL_MODEL, &facts, &options);
    let mut journaled = Vec::new();
    let mut on_item = |suite: &str, it: &bakeoff_artifact::ItemRecord| {
        journaled.push((suite.to_string(), it.id.clone()))
    };
    let out = run_to_end(
        &ctx,
        &[SuiteName::Throughput, SuiteName::Longgen],
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

//! `bakeoff bench run` and `bakeoff bench calibrate` through the real binary: against the real
//! llama-server (CPU, the test model) with the reconciliation ratios per step in the artifact,
//! and against the built-in loopback target.

use bakeoff_testkit::{real_llama, tempdir};
use serde_json::Value;

use crate::util::{
    SMALL_SWEEP, bakeoff, bakeoff_async, eval_run, serial_tempdir, text, valid_artifact,
};

#[tokio::test]
async fn bench_run_against_real_llama_server_records_reconciliation_per_step() {
    let (_g, dir) = serial_tempdir().await;
    let server = real_llama(8192, 4, &["--metrics"], dir.path()).await;
    let out = dir.path().join("out");
    let o = bakeoff(&[
        "bench",
        "run",
        "--endpoint",
        &server.url(),
        "--concurrency",
        "1,2",
        "--requests",
        "3",
        "--prompt-tokens",
        "32",
        "--output-tokens",
        "16",
        "--warmup",
        "1",
        "--no-calibrate",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let table = String::from_utf8_lossy(&o.stdout);
    assert!(
        table.contains("c=1") && table.contains("c=2") && table.contains("decode c/s"),
        "{table}"
    );
    let v = valid_artifact(&out, "-bench.bakeoff.json");
    let r = &v["load"]["throughput"];
    assert_eq!(r["steps"].as_array().unwrap().len(), 2);
    assert_eq!(r["pinning"]["honoured"], Value::Bool(true));
    for s in r["steps"].as_array().unwrap() {
        assert_eq!(s["ok"], 3);
        assert!(s["reconciliation"]["decode_ratio_p50"].as_f64().unwrap() > 0.0);
        assert_eq!(s["metrics"]["client_server_token_ratio"], 1.0);
        assert_eq!(s["requests"].as_array().unwrap().len(), 3);
    }
}

#[tokio::test]
async fn bench_run_and_calibrate_against_the_loopback_target() {
    let target = bakeoff_load::CalibrationTarget::start().await.unwrap();
    let dir = tempdir();
    let out = dir.path().join("out");
    let url = target.url();
    let o = bakeoff_async(&[
        "bench",
        "run",
        "--endpoint",
        &url,
        "--rate",
        "50",
        "--arrival",
        "constant",
        "--requests",
        "10",
        "--output-tokens",
        "8",
        "--slo",
        "ttft=5s",
        "--no-calibrate",
        "--json",
        "--out",
        out.to_str().unwrap(),
    ])
    .await;
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    // --json: stdout is the artifact, and no progress bar reached stderr.
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let s = &v["load"]["throughput"]["steps"][0];
    assert_eq!(s["requested_rate"], 50.0);
    assert_eq!(s["sent"], 10);
    assert_eq!(s["goodput"]["of"], 10);
    assert!(s["achieved_rate"].as_f64().is_some());
    assert!(!String::from_utf8_lossy(&o.stderr).contains("[="));
    valid_artifact(&dir.path().join("out"), "-bench.bakeoff.json");

    let o = bakeoff_async(&[
        "bench",
        "calibrate",
        "--streams",
        "20",
        "--seconds",
        "0.3",
        "--json",
    ])
    .await;
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let c: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(c["concurrent_streams"], 20);
    assert!(c["streamed_tokens_per_second"].as_f64().unwrap() > 0.0);

    let o = bakeoff_async(&[
        "bench",
        "run",
        "--endpoint",
        "http://127.0.0.1:1",
        "--concurrency",
        "1,0",
    ])
    .await;
    assert_eq!(
        o.status.code(),
        Some(2),
        "a bad level is a usage error: {}",
        text(&o)
    );
}

#[tokio::test]
async fn eval_run_load_suites_through_the_binary_record_the_ceiling_and_probes() {
    let (_g, dir) = serial_tempdir().await;
    let server = real_llama(8192, 2, &["--metrics"], dir.path()).await;
    let out = dir.path().join("out");
    let o = eval_run(
        &server.url(),
        &out,
        &[
            &["--suite", "throughput,longgen"][..],
            &SMALL_SWEEP,
            &["--longgen-probes", "2", "--longgen-tokens", "48"],
        ]
        .concat(),
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("c=1") && stdout.contains("c=2"), "{stdout}");
    let v = valid_artifact(&out, ".bakeoff.json");
    assert_eq!(v["status"], "complete");

    // The sweep: two steps, each measured, with the harness ceiling measured before it.
    let t = &v["suites"]["throughput"]["summary"]["details"];
    assert_eq!(t["steps"].as_array().unwrap().len(), 2);
    assert!(t["ceiling"]["streamed_tokens_per_second"].as_f64().unwrap() > 0.0);
    for s in t["steps"].as_array().unwrap() {
        assert_eq!(s["ok"], 2, "{s}");
        assert_eq!(s["metrics"]["client_server_token_ratio"], 1.0);
    }
    // Longgen: one record per probe with its decode rate, pinned to the asked length.
    let probes = v["suites"]["longgen"]["summary"]["details"]["probes"]
        .as_array()
        .unwrap();
    assert_eq!(probes.len(), 2);
    for p in probes {
        assert_eq!(p["output_tokens"], 48);
        assert!(p["decode_tokens_per_second"].as_f64().unwrap() > 0.0);
    }

    // A level of zero is a usage error, named, before anything starts.
    let o = bakeoff(&[
        "eval",
        "run",
        "--endpoint",
        &server.url(),
        "--suite",
        "throughput",
        "--load-concurrency",
        "0",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("--load-concurrency"), "{}", text(&o));
}

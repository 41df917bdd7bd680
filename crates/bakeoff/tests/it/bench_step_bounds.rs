//! A fair start and a length in completed requests for every step of a `bench run` sweep
//! (docs/metrics.md, "Warm-up before each step" and "Steps of completed requests"): against the
//! real llama-server, each step's warm-up is recorded apart from its figures and each step holds
//! at least the completed requests asked for. (Bad values are refused by `bakeoff-flags`; its
//! tests hold those refusals.)

use crate::util::{bakeoff, serial_tempdir, text, valid_artifact};
use bakeoff_testkit::real_llama;

#[tokio::test]
async fn a_sweep_with_step_warmups_and_step_requests_keeps_the_warmups_apart() {
    let (_g, dir) = serial_tempdir().await;
    let server = real_llama(8192, 4, &["--metrics"], dir.path()).await;
    let out = dir.path().join("out");
    // c = 4 before c = 1 in each of two rounds: the order whose c = 1 step used to start on a
    // server still busy with the round before.
    let o = bakeoff(&[
        "bench",
        "run",
        "--endpoint",
        &server.url(),
        "--concurrency",
        "4,1",
        "--repeat",
        "2",
        "--step-warmup",
        "2",
        "--step-requests",
        "6",
        "--duration",
        "300",
        "--warmup",
        "0",
        "--prompt-tokens",
        "16",
        "--output-tokens",
        "8",
        "--no-calibrate",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let v = valid_artifact(&out, "-bench.bakeoff.json");
    let r = &v["load"]["throughput"];
    assert_eq!(r["plan"]["step_warmup_requests"], 2, "{}", r["plan"]);
    assert_eq!(r["plan"]["completed_per_step"], 6, "{}", r["plan"]);
    let steps = r["steps"].as_array().unwrap();
    let labels: Vec<&str> = steps.iter().map(|s| s["label"].as_str().unwrap()).collect();
    assert_eq!(labels, ["c=4 #1", "c=1 #1", "c=4 #2", "c=1 #2"]);
    for s in steps {
        let w = &s["warmup"];
        assert_eq!(w["sent"], 2, "{w}");
        assert_eq!(w["ok"], 2, "{w}");
        assert!(w["wall_s"].as_f64().unwrap() > 0.0, "{w}");
        assert!(w["ttft_max_ms"].as_f64().unwrap() > 0.0, "{w}");
        let b = &s["bound"];
        assert_eq!(b["requests"], 6, "{b}");
        assert_eq!(b["duration_cap_s"], 300.0, "{b}");
        assert_eq!(b["ended_by"], "requests", "{b}");
        let completed = b["completed"].as_u64().unwrap();
        assert!(completed >= 6, "{b}");
        assert_eq!(s["ok"].as_u64(), Some(completed), "{s}");
        // The step's figures hold its own requests only: its records, and the server's
        // counters read around its window (the warm-ups' tokens would break the 1.0 ratio).
        let records = s["requests"].as_array().unwrap();
        assert_eq!(records.len() as u64, s["sent"].as_u64().unwrap());
        assert_eq!(s["latency"]["e2e"]["count"].as_u64(), Some(completed));
        assert_eq!(s["output_tokens"].as_u64(), Some(8 * completed), "{s}");
        assert_eq!(
            s["metrics"]["client_server_token_ratio"], 1.0,
            "{}",
            s["metrics"]
        );
    }
    // Two repeats per level: both levels summarized.
    let levels: Vec<&str> = r["levels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["label"].as_str().unwrap())
        .collect();
    assert_eq!(levels, ["c=4", "c=1"]);
}

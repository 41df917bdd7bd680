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

/// `bench run` of the capacity workload (c = 1,2,4,8 × 2 repeats) against `url`, into `out`.
async fn capacity_sweep(url: &str, out: &std::path::Path) -> std::process::Output {
    bakeoff_async(&[
        "bench",
        "run",
        "--endpoint",
        url,
        "--concurrency",
        "1,2,4,8",
        "--requests",
        "8",
        "--prompt-tokens",
        "32",
        "--output-tokens",
        "12",
        "--warmup",
        "1",
        "--repeat",
        "2",
        "--slo",
        "ttft=60s",
        "--no-calibrate",
        "--out",
        out.to_str().unwrap(),
    ])
    .await
}

/// A sweep past the server's slots on the real llama-server (`-np 2`): the summary leads with
/// the capacity finding, every level is repeated with an interval, and the finding agrees with
/// the steps it was drawn from (no fixed number: a 2-core machine saturates where it does).
/// Then the same workload against `-np 1`, and `bench compare` of the two.
#[tokio::test]
async fn bench_sweep_on_real_llama_server_ends_with_a_capacity_finding_and_repeat_intervals() {
    let (_g, dir) = serial_tempdir().await;
    let server = real_llama(4096, 2, &["--metrics"], dir.path()).await;
    let out = dir.path().join("out");
    let o = capacity_sweep(&server.url(), &out).await;
    drop(server);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let table = String::from_utf8_lossy(&o.stdout);
    assert!(table.starts_with("capacity: "), "{table}");
    assert!(
        table.contains("over 2 repeats (mean [95 % interval])"),
        "{table}"
    );
    let v = valid_artifact(&out, "-bench.bakeoff.json");
    let r = &v["load"]["throughput"];
    assert_eq!(
        r["steps"].as_array().unwrap().len(),
        8,
        "4 levels × 2 repeats"
    );
    let levels = r["levels"].as_array().unwrap();
    assert_eq!(levels.len(), 4);
    for l in levels {
        assert_eq!(l["repeats"], 2);
        let t = &l["output_tokens_per_second"];
        let (lo, mean, hi) = (
            t["low"].as_f64().unwrap(),
            t["mean"].as_f64().unwrap(),
            t["high"].as_f64().unwrap(),
        );
        assert!(lo <= mean && mean <= hi && mean > 0.0, "{l}");
        assert_eq!(t["values"].as_array().unwrap().len(), 2);
        // Unstable exactly when the heterogeneity test said the repeats disagree.
        assert_eq!(l["unstable"], l["heterogeneity"]["disagree"], "{l}");
    }
    let cap = &r["capacity"];
    let verdict = cap["verdict"].as_str().unwrap();
    assert!(["knee", "still-rising", "flat"].contains(&verdict), "{cap}");
    let knee = cap["knee"].as_f64().unwrap();
    let knee_label = cap["knee_label"].as_str().unwrap();
    let at_knee = levels
        .iter()
        .find(|l| l["label"] == knee_label)
        .unwrap_or_else(|| panic!("knee {knee_label} is one of the levels: {cap}"));
    assert_eq!(
        cap["throughput_at_knee"], at_knee["output_tokens_per_second"]["mean"],
        "the knee's throughput is its level's mean"
    );
    match verdict {
        "knee" => {
            assert!(knee < 8.0, "{cap}");
            assert!(
                cap["ttft_p50_at_top_ms"].as_f64().unwrap()
                    > 1.25 * cap["ttft_p50_at_knee_ms"].as_f64().unwrap(),
                "only queueing past the knee means TTFT grew: {cap}"
            );
            let statement = cap["statement"].as_str().unwrap();
            assert!(
                statement.starts_with(&format!("past c = {knee} only queueing")),
                "{statement}"
            );
        }
        "still-rising" => assert_eq!(knee, 8.0, "{cap}"),
        _ => {}
    }
    // The SLO capacity is the highest level whose repeats together met the SLO for ≥ 95 % of
    // requests (a loaded machine can push even a 60 s TTFT out at c = 8: no fixed level).
    let steps = r["steps"].as_array().unwrap();
    let passing = ["c=1", "c=2", "c=4", "c=8"].into_iter().rfind(|level| {
        let (met, of) = steps
            .iter()
            .filter(|s| {
                s["label"]
                    .as_str()
                    .unwrap()
                    .starts_with(&format!("{level} #"))
            })
            .fold((0.0, 0.0), |(m, o), s| {
                (
                    m + s["goodput"]["met"].as_f64().unwrap(),
                    o + s["goodput"]["of"].as_f64().unwrap(),
                )
            });
        of > 0.0 && met >= 0.95 * of
    });
    assert_eq!(cap["slo"]["label"].as_str(), passing, "{cap}");

    compare_against_one_slot(dir.path(), &out).await;
}

/// The capacity workload against `-np 1`, then `bench compare` (A: two slots, B: one): every
/// level compared with a verdict or an honest "no difference detectable"; a sweep of another
/// workload is refused.
async fn compare_against_one_slot(dir: &std::path::Path, a_dir: &std::path::Path) {
    let server = real_llama(4096, 1, &["--metrics"], dir).await;
    let b_dir = dir.join("one-slot");
    let o = capacity_sweep(&server.url(), &b_dir).await;
    drop(server);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let file = |d: &std::path::Path| {
        std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.to_string_lossy().ends_with("-bench.bakeoff.json"))
            .unwrap()
    };
    let (a, b) = (file(a_dir), file(&b_dir));
    // `--allow contaminated`: the real sweeps on this shared machine may be host-contended
    // (docs/metrics.md "Conditions"); the withheld verdict is tested below on edited copies.
    let o = bakeoff(&[
        "bench",
        "compare",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--json",
        "--allow",
        "contaminated",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let levels = v["levels"].as_array().unwrap();
    assert_eq!(levels.len(), 4, "{v}");
    for l in levels {
        for d in l["differences"].as_array().unwrap() {
            let verdict = d["verdict"].as_str().unwrap();
            assert!(
                ["B higher", "B lower", "no difference detectable"].contains(&verdict),
                "two repeats give every figure an interval: {d}"
            );
            let (lo, hi) = (d["low"].as_f64().unwrap(), d["high"].as_f64().unwrap());
            assert_eq!(
                verdict == "no difference detectable",
                lo <= 0.0 && hi >= 0.0,
                "{d}"
            );
        }
    }
    let o = bakeoff(&["bench", "compare", a.to_str().unwrap(), b.to_str().unwrap()]);
    assert!(text(&o).contains("B − A"), "{}", text(&o));

    // Another workload (a longer output) is not comparable: exit 1, no level compared.
    let mut other: Value = serde_json::from_slice(&std::fs::read(&b).unwrap()).unwrap();
    other["load"]["throughput"]["plan"]["output_tokens"] = Value::from("64");
    let other_path = dir.join("other-workload.bakeoff.json");
    std::fs::write(&other_path, serde_json::to_vec(&other).unwrap()).unwrap();
    let o = bakeoff(&[
        "bench",
        "compare",
        a.to_str().unwrap(),
        other_path.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("output_tokens differs"), "{}", text(&o));

    // A contaminated side (docs/metrics.md "Conditions"): B's copy with a `host-contended` flag added to its first
    // step, as the conditions sampler writes it (edited, so the test does not depend on how busy
    // this shared machine is; any condition flag the real runs raised is removed from both
    // copies first). Every verdict is withheld and the side named, until --allow contaminated.
    let strip = |v: &mut Value| {
        for s in v["load"]["throughput"]["steps"].as_array_mut().unwrap() {
            // `get_mut`: indexing a missing key would insert a null.
            if let Some(f) = s.get_mut("flags").and_then(|f| f.as_array_mut()) {
                f.retain(|f| {
                    ![
                        "host-contended",
                        "gpu-shared",
                        "page-cache-dropped",
                        "thermal-throttled",
                        "power-capped",
                    ]
                    .contains(&f["code"].as_str().unwrap_or(""))
                });
            }
        }
    };
    let mut clean: Value = serde_json::from_slice(&std::fs::read(&a).unwrap()).unwrap();
    strip(&mut clean);
    let clean_path = dir.join("clean.bakeoff.json");
    std::fs::write(&clean_path, serde_json::to_vec(&clean).unwrap()).unwrap();
    let mut dirty: Value = serde_json::from_slice(&std::fs::read(&b).unwrap()).unwrap();
    strip(&mut dirty);
    let step = &mut dirty["load"]["throughput"]["steps"][0];
    if step["flags"].is_null() {
        step["flags"] = serde_json::json!([]);
    }
    step["flags"]
        .as_array_mut()
        .unwrap()
        .push(serde_json::json!({
            "code": "host-contended",
            "severity": "warning",
            "message": "other processes used 1.9 of 2 cores (pid 4242 yes)"
        }));
    let dirty_path = dir.join("contaminated.bakeoff.json");
    std::fs::write(&dirty_path, serde_json::to_vec(&dirty).unwrap()).unwrap();
    let (ca, cb) = (clean_path.to_str().unwrap(), dirty_path.to_str().unwrap());
    let o = bakeoff(&["bench", "compare", ca, cb, "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        v["no_verdict_reason"],
        "no verdict: contaminated measurement: A clean; B contaminated (pass --allow contaminated to compare anyway)",
        "{v}"
    );
    assert!(
        v["contaminated"][0]
            .as_str()
            .unwrap()
            .contains(": host-contended (other processes used 1.9 of 2 cores (pid 4242 yes))"),
        "{v}"
    );
    for l in v["levels"].as_array().unwrap() {
        for d in l["differences"].as_array().unwrap() {
            assert_eq!(d["verdict"], "no verdict (contaminated)", "{d}");
        }
    }
    let o = bakeoff(&["bench", "compare", ca, cb]);
    assert!(
        text(&o).contains("contaminated: B ") && text(&o).contains("--allow contaminated"),
        "{}",
        text(&o)
    );
    let o = bakeoff(&[
        "bench",
        "compare",
        ca,
        cb,
        "--allow",
        "contaminated",
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(v["no_verdict_reason"].is_null(), "{v}");
    assert!(
        v["levels"][0]["differences"]
            .as_array()
            .unwrap()
            .iter()
            .all(|d| d["verdict"] != "no verdict (contaminated)"),
        "{v}"
    );
}

/// `--find-capacity` on the real llama-server: a bounded rate search under an SLO, every step
/// it chose in the artifact, and a finding consistent with them: the reported rate is the
/// highest that met the SLO, and no search runs past its step bound.
#[tokio::test]
async fn find_capacity_searches_rates_under_an_slo_on_the_real_llama_server() {
    let (_g, dir) = serial_tempdir().await;
    let server = real_llama(4096, 2, &["--metrics"], dir.path()).await;
    let out = dir.path().join("out");
    let o = bakeoff_async(&[
        "bench",
        "run",
        "--endpoint",
        &server.url(),
        "--rate",
        "1",
        "--arrival",
        "constant",
        "--find-capacity",
        "--slo",
        "ttft=2s",
        "--requests",
        "6",
        "--prompt-tokens",
        "32",
        "--output-tokens",
        "16",
        "--warmup",
        "1",
        "--no-calibrate",
        "--out",
        out.to_str().unwrap(),
    ])
    .await;
    drop(server);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(text(&o).contains("capacity under SLO: "), "{}", text(&o));
    let v = valid_artifact(&out, "-bench.bakeoff.json");
    let r = &v["load"]["throughput"];
    let steps = r["steps"].as_array().unwrap();
    assert!(!steps.is_empty() && steps.len() <= 8, "{}", steps.len());
    assert_eq!(steps[0]["requested_rate"], 1.0);
    let slo = &r["capacity"]["slo"];
    assert!(
        slo["searched"]
            .as_str()
            .unwrap()
            .starts_with("a bounded rate search from 1/s"),
        "{slo}"
    );
    let meets = |s: &Value| {
        let (met, of) = (
            s["goodput"]["met"].as_f64().unwrap(),
            s["goodput"]["of"].as_f64().unwrap(),
        );
        of > 0.0 && met >= 0.95 * of
    };
    let highest_passing = steps
        .iter()
        .filter(|s| meets(s))
        .map(|s| s["requested_rate"].as_f64().unwrap())
        .fold(None, |m: Option<f64>, r| Some(m.map_or(r, |m| m.max(r))));
    assert_eq!(slo["level"].as_f64(), highest_passing, "{slo}");
    // Doubling, halving or bisecting: every rate after the first is one of those moves.
    for w in steps.windows(2) {
        let (a, b) = (
            w[0]["requested_rate"].as_f64().unwrap(),
            w[1]["requested_rate"].as_f64().unwrap(),
        );
        assert!(a != b, "a rate is never measured twice in a row: {a}");
    }
}

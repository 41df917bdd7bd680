//! `bench run --endpoint A --versus B` (two endpoints alternately, one artifact per side, the
//! paired comparison) and the longgen suite's repeats compared with `bench compare --suite
//! longgen`, against two real llama-servers (CPU, the test model).

use bakeoff_testkit::real_llama;
use serde_json::Value;

use crate::util::{bakeoff_async, eval_run_async, only_file, read_json, serial_tempdir, text};

/// `-np 1` against `-np 4` at c = 1 and 2, three rounds: each side's artifact holds its six
/// steps with the shared run id, the order flips between rounds, and the comparison is paired
/// (three pairs per level) with a verdict or an honest "no difference detectable" — never a
/// verdict without an interval.
#[tokio::test]
async fn versus_alternates_two_real_servers_and_pairs_their_repeats() {
    let (_g, dir) = serial_tempdir().await;
    let a = real_llama(4096, 1, &["--metrics"], dir.path()).await;
    let b = real_llama(4096, 4, &["--metrics"], dir.path()).await;
    let out = dir.path().join("out");
    let o = bakeoff_async(&[
        "bench",
        "run",
        "--endpoint",
        &a.url(),
        "--versus",
        &b.url(),
        "--concurrency",
        "1,2",
        "--repeat",
        "3",
        "--requests",
        "4",
        "--prompt-tokens",
        "24",
        "--output-tokens",
        "12",
        "--warmup",
        "1",
        "--no-calibrate",
        "--allow",
        "contaminated",
        "--out",
        out.to_str().unwrap(),
    ])
    .await;
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("paired: the two sides"), "{stdout}");
    assert!(stdout.contains("c=2 (3 pairs)"), "{stdout}");

    let ra = read_json(&only_file(&out, "-a-bench.bakeoff.json"));
    let rb = read_json(&only_file(&out, "-b-bench.bakeoff.json"));
    let (sa, sb) = (&ra["load"]["throughput"], &rb["load"]["throughput"]);
    assert_eq!(sa["versus"]["run_id"], sb["versus"]["run_id"]);
    assert_eq!(sa["versus"]["side"], "A");
    assert_eq!(sb["versus"]["other_endpoint"], Value::String(a.url()));
    for s in [sa, sb] {
        let steps = s["steps"].as_array().unwrap();
        assert_eq!(steps.len(), 6);
        assert!(steps.iter().all(|st| st["ok"] == 4));
        assert_eq!(s["levels"].as_array().unwrap().len(), 2);
    }

    let cmp = read_json(&only_file(&out, ".compare.json"));
    assert_eq!(cmp["design"], "paired");
    let levels = cmp["levels"].as_array().unwrap();
    assert_eq!(levels.len(), 2);
    for l in levels {
        assert_eq!(l["pairs"], 3);
        for d in l["differences"].as_array().unwrap() {
            let verdict = d["verdict"].as_str().unwrap();
            let (lo, hi) = (d["low"].as_f64(), d["high"].as_f64());
            match verdict {
                "B higher" => assert!(lo.unwrap() > 0.0, "{d}"),
                "B lower" => assert!(hi.unwrap() < 0.0, "{d}"),
                "no difference detectable" => {
                    assert!(lo.unwrap() <= 0.0 && hi.unwrap() >= 0.0, "{d}")
                }
                other => panic!("unexpected verdict {other}: {d}"),
            }
        }
    }

    // The two artifacts compare the same way afterwards: `bench compare` sees the run id.
    let again = bakeoff_async(&[
        "bench",
        "compare",
        only_file(&out, "-a-bench.bakeoff.json").to_str().unwrap(),
        only_file(&out, "-b-bench.bakeoff.json").to_str().unwrap(),
        "--allow",
        "contaminated",
        "--json",
    ])
    .await;
    assert_eq!(again.status.code(), Some(0), "{}", text(&again));
    let v: Value = serde_json::from_slice(&again.stdout).unwrap();
    assert_eq!(v["design"], "paired");
}

/// The longgen suite with `--longgen-repeats 2` on the same server twice: each run's longgen
/// sweep has a level summary over its two rounds, and `bench compare --sweep longgen` compares
/// the two eval artifacts (independent runs: no pairing claimed).
#[tokio::test]
async fn longgen_repeats_compare_between_two_eval_runs() {
    let (_g, dir) = serial_tempdir().await;
    let server = real_llama(4096, 1, &["--metrics"], dir.path()).await;
    let mut files = Vec::new();
    for k in 0..2 {
        let out = dir.path().join(format!("out{k}"));
        let o = eval_run_async(
            &server.url(),
            &out,
            &[
                "--suite",
                "longgen",
                "--longgen-probes",
                "1",
                "--longgen-tokens",
                "48",
                "--longgen-repeats",
                "2",
                "--no-calibrate",
            ],
        )
        .await;
        assert_eq!(o.status.code(), Some(0), "{}", text(&o));
        let p = only_file(&out, ".bakeoff.json");
        let v = read_json(&p);
        let d = &v["suites"]["longgen"]["summary"]["details"];
        assert_eq!(d["steps"].as_array().unwrap().len(), 2, "{d}");
        assert_eq!(d["levels"][0]["repeats"], 2, "{d}");
        files.push(p);
    }
    let o = bakeoff_async(&[
        "bench",
        "compare",
        files[0].to_str().unwrap(),
        files[1].to_str().unwrap(),
        "--sweep",
        "longgen",
        "--allow",
        "contaminated",
        "--json",
    ])
    .await;
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["design"], "independent");
    let tpot = v["levels"][0]["differences"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["metric"] == "TPOT p50 (ms)")
        .cloned()
        .unwrap();
    assert!(tpot["low"].as_f64().is_some(), "{tpot}");
    let bad = bakeoff_async(&[
        "bench",
        "compare",
        files[0].to_str().unwrap(),
        files[1].to_str().unwrap(),
        "--sweep",
        "smoke",
    ])
    .await;
    assert_eq!(bad.status.code(), Some(2), "{}", text(&bad));
}

//! Progress of `eval run` and `bench run` on stderr (docs/reports.md): with stderr not a terminal, as
//! here, one plain line per step — the preflight's phases, each suite's items with the time so
//! far, an ETA and the outcomes so far, each suite's end; bench's steps "k/N" and the harness
//! ceiling as soon as it is measured. Snapshots redact the seconds and rates that change from
//! run to run.

use bakeoff_testkit::{scripted, tempdir};
use serde_json::Value;

use crate::util::{bakeoff_async, code, eval_run_async, text};

/// Seconds, rates and counts of the machine, never of the instrument's plan.
fn snapshot(name: &str, value: &str) {
    insta::with_settings!({filters => vec![
        (r"\d+ min \d+ s\b", "[T]"),
        (r"\b\d+ s\b", "[T]"),
        (r"\d+(\.\d+)? (req/s|streamed tokens/s|tok/s)", "[N] $2"),
        (r"\d+ concurrent streams", "[N] concurrent streams"),
    ]}, {
        insta::assert_snapshot!(name, value);
    });
}

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[tokio::test]
async fn eval_run_draws_preflight_items_and_suite_ends_as_plain_lines() {
    let dir = tempdir();
    let s = scripted::serve(scripted::vllm_like(8192)).await;
    let out = dir.path().join("out");
    let o = eval_run_async(&s.url(), &out, &["--suite", "smoke", "--limit", "1"]).await;
    assert_eq!(code(&o), 0, "{}", text(&o));
    snapshot("eval_run_smoke_progress", &stderr(&o));

    // --json: stdout is the artifact alone; the progress still went to stderr.
    let o = eval_run_async(
        &s.url(),
        &dir.path().join("json"),
        &["--suite", "smoke", "--limit", "1", "--json"],
    )
    .await;
    assert_eq!(code(&o), 0, "{}", text(&o));
    let a: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(a["suites"]["smoke"]["status"], "complete", "{a}");
    let err = stderr(&o);
    assert!(
        err.contains("[preflight] ready") && err.contains("[smoke] complete"),
        "{err}"
    );
}

#[tokio::test]
async fn bench_run_draws_steps_and_the_harness_ceiling_as_plain_lines() {
    let target = bakeoff_load::CalibrationTarget::start().await.unwrap();
    let dir = tempdir();
    let out = dir.path().join("out");
    let o = bakeoff_async(&[
        "bench",
        "run",
        "--endpoint",
        &target.url(),
        "--concurrency",
        "1,2",
        "--requests",
        "3",
        "--output-tokens",
        "8",
        "--warmup",
        "1",
        "--out",
        out.to_str().unwrap(),
    ])
    .await;
    assert_eq!(code(&o), 0, "{}", text(&o));
    snapshot("bench_run_progress", &stderr(&o));
}

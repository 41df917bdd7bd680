//! A campaign over a real vLLM production seat: while a streaming client keeps it busy the idle
//! wait reads vLLM's own `vllm:num_requests_running/waiting` and skips the candidate
//! (`skipped:not-idle`, nothing stopped); once quiet, the seat is displaced for a vLLM candidate
//! (`--max-model-len 999999`, classed `context-too-long` from vLLM's own validation error) and
//! restored, serving again. One variant: every vLLM start costs 30–80 s on 2 cores, and a
//! variant measured through a campaign is the llama.cpp ladder's (campaign/ladder.rs) and a
//! vLLM measured by `eval run` the rest of the tier's.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use bakeoff_testkit::vllm::{self, SERVED};

use crate::campaign::window::keep_busy;
use crate::campaign::{Files, alive, rows_of, wait_until};
use crate::util::{code, text};

use super::seats::vllm_seat;

/// `campaign run` with a vLLM's start budget: it loads for 30–80 s on 2 cores and is quiet
/// while it profiles.
fn run_campaign(f: &Files, extra: &[&str]) -> std::process::Output {
    let mut args = vec![
        "campaign",
        "run",
        f.campaign.to_str().unwrap(),
        "--silence-timeout",
        "120",
        "--ready-timeout",
        "300",
    ];
    args.extend(extra);
    crate::util::bakeoff(&args)
}

/// vLLM's own gauge says a request is running.
fn running(port: u16) -> bool {
    crate::campaign::http(port, "GET", "/metrics", None).is_ok_and(|(status, body)| {
        status == 200
            && body.lines().any(|l| {
                l.starts_with("vllm:num_requests_running{")
                    && l.rsplit(' ')
                        .next()
                        .and_then(|v| v.parse::<f64>().ok())
                        .is_some_and(|v| v > 0.0)
            })
    })
}

#[tokio::test]
async fn a_vllm_production_seat_is_waited_for_displaced_and_restored() {
    let _g = vllm::serial().await;
    let t = vllm::tier();
    let dir = bakeoff_testkit::tempdir();
    let port = vllm::free_port();
    let fleet = [
        vllm_seat("prod", port, &t.model_dir, &[])
            .replace("role = \"bench\"", "role = \"production\""),
        vllm_seat("trial", port, &t.model_dir, &[]),
    ]
    .concat();
    let campaign = r#"[campaign]
name = "vllm-window"
fleet = "fleet.toml"
suites = ["smoke"]
limit = 1
out = "out"

[[candidate]]
name = "smol"
seat = "trial"
[candidate.window]
displaces = ["prod"]
idle_for_s = 2
idle_timeout_s = 8
[candidate.ladder]
"--max-model-len" = ["999999"]
"#;
    let f = Files::write(dir.path(), &fleet, campaign);
    let _cleanup = f.guard();
    let o = f.seat(&["up", "prod", "--confirm", "--ready-timeout", "300"]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    let pid = f.pid("prod").unwrap();

    // Busy: vLLM's gauges say so, the candidate is skipped and prod never stopped.
    let stop = Arc::new(AtomicBool::new(false));
    let client = keep_busy(port, SERVED, stop.clone());
    wait_until(
        "vLLM to report a running request",
        Duration::from_secs(120),
        || running(port),
    );
    let o = run_campaign(&f, &["--confirm"]);
    stop.store(true, Ordering::SeqCst);
    client.join().unwrap();
    assert_eq!(code(&o), 0, "{}", text(&o));
    let rec = f.record();
    for r in rows_of(&rec, "smol") {
        assert_eq!(r["outcome_label"], "skipped:not-idle", "{r:#}");
    }
    assert_eq!(f.pid("prod"), Some(pid), "prod was stopped while busy");
    assert!(alive(pid));

    // Quiet: displaced, the candidate classed by vLLM's own words, prod restored.
    wait_until("vLLM to go idle", Duration::from_secs(120), || {
        !running(port)
    });
    let o = run_campaign(&f, &["--confirm", "--fresh"]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    let rec = f.record();
    let rows = rows_of(&rec, "smol");
    assert_eq!(rows.len(), 1, "{rec:#}");
    let labels: Vec<&str> = rows
        .iter()
        .filter_map(|r| r["outcome_label"].as_str())
        .collect();
    assert_eq!(labels, ["failed:context-too-long"], "{rec:#}");
    for r in &rows {
        let d = &r["displaced"][0];
        assert_eq!(d["seat"], "prod", "{r:#}");
    }
    let last = rows
        .iter()
        .rev()
        .find(|r| r["displaced"][0]["restored"].is_boolean());
    assert!(
        last.is_some_and(|r| r["displaced"][0]["restored"] == true),
        "{rows:#?}"
    );
    let restored = f.pid("prod").expect("prod is up again");
    assert_ne!(restored, pid);
    assert!(alive(restored));
    let (code, st, _) = super::run(&["seat", "status", "--fleet", f.fleet_arg(), "--probe"]).await;
    assert_eq!(code, 0, "{st}");
    assert!(st.contains("serving"), "{st}");
    f.seat_down("prod");
}

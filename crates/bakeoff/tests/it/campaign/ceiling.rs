//! A campaign's throughput steps are checked against the harness ceiling as `eval run`'s are:
//! a candidate measured near the ceiling is flagged `client-bound` in its artifact. The
//! ceiling is given (a figure this test chooses, far below what the loopback harness drives),
//! so that a real llama-server on 2 cores is above half of it; a measured one would be thousands of
//! times its rate.

use std::time::Duration;

use bakeoff_artifact::{FlagCode, HarnessCeiling};
use bakeoff_campaign::run::{Reporter, RunOptions, run};
use bakeoff_measure::ceiling::Ceilings;

use super::*;
use crate::util::{free_port, serial_tempdir};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_campaign_step_near_the_harness_ceiling_is_flagged_client_bound() {
    let (_serial, dir) = serial_tempdir().await;
    let fleet = process_seat("cand", "bench", free_port());
    let campaign = campaign_header("near")
        .replace("suites = [\"smoke\"]", "suites = [\"throughput\"]")
        + "[[candidate]]\nname = \"base\"\nseat = \"cand\"\n";
    let f = Files::write(dir.path(), &fleet, &campaign);
    let _cleanup = f.guard();
    let c = bakeoff_campaign::Campaign::load(&f.campaign).unwrap();
    // A ceiling of 1 streamed token a second: any step that streamed is above half of it
    // (the test model streams a few tokens a second here at one request in flight).
    let ceiling = HarnessCeiling {
        requests_per_second: 1e6,
        streamed_tokens_per_second: 1.0,
        concurrent_streams: 1_000_000,
        peak_rss_mib: None,
        source: "given by the test".into(),
    };
    let mut suite_options = bakeoff_suites::SuiteOptions::default();
    suite_options.throughput.concurrency = vec![1];
    suite_options.throughput.requests_per_step = 2;
    suite_options.throughput.warmup_requests = 0;
    suite_options.throughput.output_tokens = 8;
    let opts = RunOptions {
        confirm: false,
        fresh: false,
        only: vec![],
        watch: bakeoff_seats::WatchOptions {
            silence_timeout: Duration::from_secs(SILENCE.parse().unwrap()),
            ready_timeout: Duration::from_secs(60),
            ..Default::default()
        },
        suite_options,
        nvidia_smi: "/nonexistent/nvidia-smi".into(),
        allow_contaminated: true,
        ceilings: Ceilings::known(Some(ceiling), None),
    };
    let (_tx, rx) = tokio::sync::watch::channel(false);
    let s = run(&c, &opts, rx, &Reporter::silent()).await.unwrap();
    let row = &s.record.variants[0];
    let artifact = row.artifacts.first().unwrap_or_else(|| panic!("{row:?}"));
    let art: bakeoff_artifact::Artifact =
        serde_json::from_value(read_json(&f.out.join(artifact))).unwrap();
    let load: bakeoff_artifact::LoadReport = art.suites["throughput"].summary.details_as().unwrap();
    assert_eq!(
        load.ceiling.as_ref().map(|c| c.source.as_str()),
        Some("given by the test"),
        "the campaign's one ceiling is the one its steps were checked against"
    );
    let flagged: Vec<_> = load
        .steps
        .iter()
        .flat_map(|s| &s.flags)
        .filter(|f| f.code == FlagCode::ClientBound && f.message.contains("tok/s"))
        .collect();
    assert!(
        !flagged.is_empty(),
        "steps: {:?}",
        load.steps
            .iter()
            .map(|s| (&s.label, s.output_tokens_per_second))
            .collect::<Vec<_>>()
    );
}

//! The harness ceiling inside `evaluate`: asked for only when a load suite runs, taken from the
//! run's `Ceilings` (a known one is never measured again), and the load steps above half of it
//! flagged `client-bound`.

use bakeoff_artifact::{FlagCode, HarnessCeiling, LoadReport};
use bakeoff_suites::{EvalEvent, SuiteName, SuiteOptions};

use super::*;

fn given(tokens_per_second: f64) -> HarnessCeiling {
    HarnessCeiling {
        requests_per_second: 1e9,
        streamed_tokens_per_second: tokens_per_second,
        concurrent_streams: 1_000_000,
        peak_rss_mib: None,
        source: "given by the test".into(),
    }
}

fn small_sweep() -> SuiteOptions {
    let mut o = SuiteOptions::default();
    o.throughput.concurrency = vec![1];
    o.throughput.requests_per_step = 2;
    o.throughput.warmup_requests = 0;
    o.throughput.output_tokens = 2;
    o
}

fn ceiling_events(events: &[EvalEvent]) -> usize {
    events
        .iter()
        .filter(|e| matches!(e, EvalEvent::Ceiling(_)))
        .count()
}

#[tokio::test]
async fn a_load_step_above_half_a_known_ceiling_is_flagged_and_nothing_is_measured_again() {
    let server = bakeoff_testkit::scripted::serve(bakeoff_testkit::scripted::vllm_like(4096)).await;
    let dir = bakeoff_testkit::tempdir();
    let known = Ceilings::known(Some(given(1e-3)), None);
    let (e, events) = measure(
        &server.url(),
        &[SuiteName::Throughput],
        &small_sweep(),
        Some(&known),
        output(dir.path(), "near", false),
    )
    .await;
    assert_eq!(
        ceiling_events(&events),
        0,
        "a known ceiling is not measured"
    );
    let load: LoadReport = e.artifact.suites["throughput"]
        .summary
        .details_as()
        .unwrap();
    assert_eq!(load.ceiling.as_ref().unwrap().source, "given by the test");
    assert!(
        load.steps
            .iter()
            .flat_map(|s| &s.flags)
            .any(|f| f.code == FlagCode::ClientBound),
        "{:?}",
        load.steps
    );

    // Far below the ceiling: checked, not flagged.
    let far = Ceilings::known(Some(given(1e12)), None);
    let (e, _) = measure(
        &server.url(),
        &[SuiteName::Throughput],
        &small_sweep(),
        Some(&far),
        output(dir.path(), "far", false),
    )
    .await;
    let load: LoadReport = e.artifact.suites["throughput"]
        .summary
        .details_as()
        .unwrap();
    assert!(load.ceiling.is_some());
    assert!(
        !load
            .steps
            .iter()
            .flat_map(|s| &s.flags)
            .any(|f| f.code == FlagCode::ClientBound),
        "{:?}",
        load.steps
    );
}

#[tokio::test]
async fn without_a_load_suite_the_ceiling_is_never_asked_for() {
    let server = bakeoff_testkit::scripted::serve(bakeoff_testkit::scripted::vllm_like(4096)).await;
    let dir = bakeoff_testkit::tempdir();
    // An unmeasured, unknown ceiling: asking for it would measure (and say so).
    let ceilings = Ceilings::default();
    let (e, events) = measure(
        &server.url(),
        &[SuiteName::Smoke],
        &SuiteOptions::default(),
        Some(&ceilings),
        output(dir.path(), "smoke", false),
    )
    .await;
    assert_eq!(ceiling_events(&events), 0, "{events:?}");
    assert!(e.artifact.suites.contains_key("smoke"));
}

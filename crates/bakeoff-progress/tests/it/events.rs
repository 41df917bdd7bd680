//! The engines' events drawn: a sweep's steps, a suite's items, the harness ceiling.

use std::sync::Arc;
use std::time::Duration;

use bakeoff_artifact::{LoadStep, Outcome, SuiteStatus};
use bakeoff_load::Progress as _;
use bakeoff_measure::ceiling::{CeilingEvent, Ceilings};
use bakeoff_progress::Progress;
use bakeoff_progress::eval::eval_hook;
use bakeoff_progress::steps::{StepProgress, suite_progress};
use bakeoff_suites::{EvalEvent, ItemProgress, Outcomes, PreflightPhase};

/// A measured step of four requests, all ok, at 250 tok/s.
fn step(label: &str) -> LoadStep {
    let lat = serde_json::json!({"count": 4, "clamped_high": 0, "mean_ms": 10.0, "min_ms": 10.0,
        "p50_ms": 10.0, "p90_ms": 10.0, "p95_ms": 10.0, "p99_ms": 10.0, "max_ms": 10.0});
    serde_json::from_value(serde_json::json!({
        "label": label, "concurrency": 1, "sent": 4, "ok": 4, "errors": {}, "wall_s": 2.0,
        "output_tokens": 500, "output_tokens_per_second": 250.0, "token_source": "usage",
        "latency": {"ttft": lat, "ttfot": lat, "tpot": lat, "itl": lat, "e2e": lat,
            "send_lateness": lat, "ttft_corrected": lat, "e2e_corrected": lat},
        "histograms": {"ttft": [], "itl": [], "e2e": []},
    }))
    .unwrap()
}

/// `bench run` over three levels: each step's start and its result, numbered of three; an ETA
/// once a step is done and while one is left; the requests never (a log gets one line a step).
#[test]
fn a_sweep_draws_each_step_numbered_with_its_result() {
    let (display, lines) = Progress::capture();
    let p = StepProgress::new(Arc::new(display), "bench", Some(3));
    p.step_started("warm-up", Some(2), None);
    p.request_finished(true);
    p.request_finished(true);
    for (k, label) in ["c=1", "c=2", "c=4"].iter().enumerate() {
        p.step_started(label, None, Some(Duration::from_secs(10)));
        for ok in [true, true, false, true] {
            p.request_finished(ok);
        }
        p.step_finished(&step(label));
        assert_eq!(
            lines.lock().unwrap().len(),
            3 + 2 * k,
            "{:?}",
            lines.lock().unwrap()
        );
    }
    let lines = lines.lock().unwrap().clone();
    assert_eq!(lines[0], "[bench warm-up] 2 requests, not measured");
    for (k, label) in ["c=1", "c=2", "c=4"].iter().enumerate() {
        let head = format!("[bench step {}/3] {label}: ", k + 1);
        assert!(lines[1 + 2 * k].starts_with(&head), "{lines:?}");
        assert!(
            lines[2 + 2 * k].starts_with(&format!("{head}4/4 ok, 250.0 tok/s, ")),
            "{lines:?}"
        );
    }
    // The first step has no ETA; the second and third do; none once all are done.
    assert!(!lines[1].contains(" left"), "{lines:?}");
    assert!(
        lines[3].ends_with(" left") && lines[5].ends_with(" left"),
        "{lines:?}"
    );
}

/// Inside `eval run` (no step count) the suite's own events number the steps: the load
/// progress draws only on a terminal, so a log gets nothing from it.
#[test]
fn inside_eval_run_the_load_steps_give_a_log_nothing() {
    let (display, lines) = Progress::capture();
    let (_load, steps) = suite_progress(Arc::new(display));
    steps.set_prefix("throughput");
    steps.step_started("c=1", Some(8), None);
    steps.request_finished(true);
    steps.step_finished(&step("c=1"));
    assert!(lines.lock().unwrap().is_empty());
}

/// `eval run`: the preflight's probe and a suite's items as the suites word them; the load
/// suites' per-request progress draws on a terminal only.
#[test]
fn a_suite_draws_its_start_items_and_end() {
    let (display, lines) = Progress::capture();
    let display = Arc::new(display);
    let (_load, steps) = suite_progress(display.clone());
    let hook = eval_hook(display, steps.clone());
    let s = Duration::from_secs;
    let tally = |pairs: &[(Outcome, usize)]| pairs.iter().copied().collect::<Outcomes>();
    hook(EvalEvent::Preflight(PreflightPhase::Probing {
        ready_timeout: s(30),
    }));
    hook(EvalEvent::SuiteStarted {
        suite: "throughput",
        planned: Some(2),
    });
    steps.step_started("c=1", Some(8), None);
    steps.request_finished(true);
    steps.step_finished(&step("c=1"));
    hook(EvalEvent::ItemFinished(ItemProgress {
        suite: "throughput",
        done: 1,
        planned: Some(2),
        outcome: Outcome::Ok,
        elapsed: s(5),
        eta: Some(s(5)),
        outcomes: tally(&[(Outcome::Ok, 1)]),
    }));
    hook(EvalEvent::SuiteFinished {
        suite: "throughput",
        status: SuiteStatus::Complete,
        done: 2,
        planned: Some(2),
        elapsed: s(10),
        outcomes: tally(&[(Outcome::Ok, 2)]),
    });
    assert_eq!(
        *lines.lock().unwrap(),
        [
            "[preflight] discovering the endpoint, then probing readiness with a real \
             completion (up to 30 s) …",
            "[throughput] starting: 2 items",
            "[throughput 1/2] 5 s elapsed, ~5 s left — ok 1",
            "[throughput] complete: 2/2 items in 10 s — ok 2",
        ]
    );
}

/// The harness ceiling, measured for real against the loopback target once per run (a second
/// ask is answered from the first): its events drawn as `eval run` draws them, announced, then
/// its figures printed as one lasting line — the figures the measurement returned.
#[tokio::test]
async fn the_harness_ceiling_is_announced_then_printed_with_its_figures() {
    let (display, lines) = Progress::capture();
    let display = Arc::new(display);
    let (_, steps) = suite_progress(display.clone());
    let hook = eval_hook(display, steps);
    let on = |e: CeilingEvent| hook(EvalEvent::Ceiling(e));
    let ceilings = Ceilings::default();
    let c = ceilings.get(false, &on).await.unwrap();
    let again = ceilings.get(false, &on).await.unwrap();
    assert_eq!(again, c, "measured once per run");
    let lines = lines.lock().unwrap().clone();
    assert_eq!(
        lines,
        [
            "[harness] measuring the harness ceiling against the loopback target …".to_string(),
            format!(
                "[harness] ceiling: {:.0} req/s, {:.0} streamed tokens/s, {} concurrent streams; \
                 steps above half of these are flagged client-bound",
                c.requests_per_second, c.streamed_tokens_per_second, c.concurrent_streams
            ),
        ]
    );
    assert!(
        c.requests_per_second > 0.0 && c.concurrent_streams > 0,
        "{c:?}"
    );
}

/// A ceiling that could not be measured is a lasting line saying the steps go unchecked, its
/// error made inert first.
#[test]
fn an_unmeasured_ceiling_says_the_steps_go_unchecked() {
    let (display, lines) = Progress::capture();
    let display = Arc::new(display);
    let (_, steps) = suite_progress(display.clone());
    let hook = eval_hook(display, steps);
    hook(EvalEvent::Ceiling(CeilingEvent::Unmeasured {
        https: true,
        error: "no port\u{1b}[2J".into(),
    }));
    let lines = lines.lock().unwrap().clone();
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(
        lines[0]
            .starts_with("[harness] the harness ceiling over TLS could not be measured (no port")
            && lines[0].ends_with("): the load steps are not checked against it")
            && !lines[0].contains('\u{1b}'),
        "{lines:?}"
    );
}

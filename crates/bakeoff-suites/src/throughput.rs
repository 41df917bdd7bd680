//! Throughput suite: a short closed-loop concurrency sweep through the load engine
//! (`bakeoff_load`), one journaled item per step. The full instrument — open loop, SLOs,
//! calibration — is `bakeoff bench run`; this suite is the sweep every qualification carries.
//!
//! Each step's item holds the step summary (`extra`, a `LoadStep`); the suite summary's
//! `details` holds the whole `LoadReport` (docs/metrics.md defines every number).

use bakeoff_artifact::{
    ErrorRecord, FlagCode, FlagSeverity, InstrumentFlag, ItemRecord, LatencyRecord, LoadReport,
    LoadStep, Outcome, ResponseRecord, SuiteResult,
};
use bakeoff_load::{LengthSpec, LoadPlan, Mode, PinPolicy, StepBound};

use crate::item_extra::ItemWrites;
pub use crate::load_options::{LoadProgress, ThroughputOptions};
use crate::suite_run::{Recorder, SuiteContext};

/// The step as a journal item: outcome `ok` when any request in it succeeded; its `extra` is
/// the step itself, written through `writes` (a step that cannot be written is flagged on the
/// suite, never a silent `null`).
pub fn step_item(
    step: &LoadStep,
    request: serde_json::Value,
    writes: &mut ItemWrites,
) -> ItemRecord {
    let outcome = if step.ok > 0 {
        Outcome::Ok
    } else if step.errors.keys().any(|k| k.starts_with("timeout")) {
        Outcome::Timeout
    } else if step
        .errors
        .keys()
        .any(|k| k == "http" || k == "decode" || k == "server-error-event")
    {
        Outcome::HttpError
    } else {
        Outcome::ConnectionError
    };
    let first_error = step.requests.iter().find(|r| r.error.is_some());
    let mut item = ItemRecord {
        id: step.label.clone(),
        outcome,
        request,
        response: ResponseRecord::default(),
        expected: serde_json::Value::Null,
        check: Some(format!("{} of {} requests succeeded", step.ok, step.sent)),
        latency: LatencyRecord {
            first_byte_ms: None,
            ttft_ms: step.latency.ttft.p50_ms,
            ttfot_ms: step.latency.ttfot.p50_ms,
            e2e_ms: step.latency.e2e.p50_ms.unwrap_or(0.0),
            text_chunks: 0,
        },
        error: (step.ok == 0).then(|| ErrorRecord {
            kind: first_error
                .and_then(|r| r.error.clone())
                .unwrap_or_else(|| "none-sent".into()),
            message: first_error
                .and_then(|r| r.error_message.clone())
                .unwrap_or_else(|| "no request in this step succeeded".into()),
            body: None,
        }),
        extra: serde_json::Value::Null,
    };
    writes.extra(&mut item, step);
    item
}

/// Run `plan` one step at a time (each step journaled as it finishes) and assemble one report.
pub async fn run_steps(
    ctx: &SuiteContext<'_>,
    rec: &mut Recorder<'_>,
    plan: LoadPlan,
    suite: &str,
) -> SuiteResult {
    let (mut result, report) = measure_steps(ctx, rec, plan, suite).await;
    if let Some(r) = report {
        crate::summary::write_details(&mut result.summary, suite, &r);
    }
    result
}

/// [`run_steps`] without the details: the result, and the whole sweep's report when any step
/// ran, for the suite to write (alone, or with figures of its own beside it).
pub async fn measure_steps(
    ctx: &SuiteContext<'_>,
    rec: &mut Recorder<'_>,
    plan: LoadPlan,
    suite: &str,
) -> (SuiteResult, Option<LoadReport>) {
    let levels: Vec<Mode> = plan.mode.map_steps(
        |c| Mode::Closed {
            concurrency: vec![c],
        },
        |r, arrival, max_in_flight| Mode::Open {
            rates: vec![r],
            arrival,
            max_in_flight,
        },
    );

    let planned = levels.len();
    let mut report: Option<LoadReport> = None;
    let mut items = Vec::new();
    for (k, mode) in levels.into_iter().enumerate() {
        let mut p = plan.clone();
        p.mode = mode;
        if k > 0 {
            p.warmup_requests = 0;
        }
        let (_tx, rx) = tokio::sync::watch::channel(false);
        let Some(result) = rec
            .guard(bakeoff_load::run(
                ctx.client,
                &p,
                ctx.options.load_progress.get(),
                rx,
            ))
            .await
        else {
            break;
        };
        let r = match result {
            Ok(r) => r,
            Err(_) => break,
        };
        let mut go_on = true;
        for step in &r.steps {
            let item = step_item(step, p.to_json(), rec.writes());
            go_on = rec.record(&item).await && go_on;
            items.push(item);
        }
        match &mut report {
            None => report = Some(r),
            Some(all) => {
                all.steps.extend(r.steps);
                all.flags.extend(r.flags);
                all.pinning.finished += r.pinning.finished;
                all.pinning.exact_length += r.pinning.exact_length;
            }
        }
        if !go_on {
            break;
        }
    }
    let mut result = rec.result(planned, items);
    result.summary.score = None;
    if let Some(r) = &mut report {
        r.plan = plan.to_json();
        // Re-derive sweep-level conclusions over all steps together.
        r.flags
            .retain(|f| f.code != FlagCode::ClientOverheadGrowing);
        r.flags
            .extend(bakeoff_load::reconcile::flag_overhead_growth(&mut r.steps));
        if r.pinning.ignore_eos_sent || r.pinning.min_tokens_sent {
            let ok = r.pinning.finished > 0 && r.pinning.exact_length == r.pinning.finished;
            r.pinning.honoured = (r.pinning.finished > 0).then_some(ok);
        }
        result.summary.flags = r
            .flags
            .iter()
            .cloned()
            .map(|mut f| {
                f.suite = Some(suite.to_string());
                f
            })
            .collect();
        if r.pinning.honoured == Some(false) {
            result.summary.flags.push(InstrumentFlag {
                code: FlagCode::PinningNotHonoured,
                severity: FlagSeverity::Warning,
                message: r.pinning.detail.clone(),
                suite: Some(suite.to_string()),
                count: Some(r.pinning.finished - r.pinning.exact_length),
            });
        }
    }
    (result, report)
}

/// The plan this suite runs against `ctx`.
pub fn plan(ctx: &SuiteContext<'_>, o: &ThroughputOptions) -> LoadPlan {
    let mut p = LoadPlan::new(&ctx.model);
    p.mode = Mode::Closed {
        concurrency: o.concurrency.clone(),
    };
    p.bound = StepBound {
        requests: Some(o.requests_per_step),
        duration: None,
        completed: None,
    };
    p.warmup_requests = o.warmup_requests;
    // A short ascending smoke sweep: each level already follows a quieter one, and the
    // warm-up before it would cost a CPU server more than the step itself.
    p.step_warmup = 0;
    p.prompt_tokens = LengthSpec::Fixed(o.prompt_tokens);
    p.output_tokens = LengthSpec::Fixed(o.output_tokens);
    p.pin = PinPolicy::for_engine(ctx.facts.engine);
    load_controls(ctx, &mut p);
    p
}

/// What every load suite's plan carries from the run: `--thinking` (the same controls every
/// other suite sends) and the harness ceiling.
pub fn load_controls(ctx: &SuiteContext<'_>, p: &mut LoadPlan) {
    p.extra
        .extend(ctx.options.thinking.controls(ctx.facts.engine));
    p.ceiling = ctx.options.throughput.harness_ceiling.clone();
}

pub async fn run(ctx: &SuiteContext<'_>, rec: &mut Recorder<'_>) -> SuiteResult {
    let p = plan(ctx, &ctx.options.throughput);
    run_steps(ctx, rec, p, "throughput").await
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn lat() -> serde_json::Value {
        serde_json::json!({"count": 4, "clamped_high": 0, "mean_ms": 10.0, "min_ms": 10.0,
            "p50_ms": 10.0, "p90_ms": 10.0, "p95_ms": 10.0, "p99_ms": 10.0, "max_ms": 10.0})
    }

    fn step(ok: u64) -> LoadStep {
        serde_json::from_value(serde_json::json!({
            "label": "c=2", "concurrency": 2,
            "sent": 4, "ok": ok, "errors": if ok == 0 { serde_json::json!({"timeout-total": 4}) } else { serde_json::json!({}) },
            "wall_s": 2.0, "output_tokens": 400,
            "output_tokens_per_second": 200.0, "output_tokens_per_second_se": 5.0,
            "token_source": "usage",
            "latency": {"ttft": lat(), "ttfot": lat(), "tpot": lat(), "itl": lat(),
                "e2e": lat(), "send_lateness": lat(), "ttft_corrected": lat(),
                "e2e_corrected": lat()},
            "histograms": {"ttft": [], "itl": [], "e2e": []}
        }))
        .unwrap()
    }

    /// The step item's `extra` is the step as the former `to_value` wrote it, byte for byte,
    /// and nothing is flagged.
    #[test]
    fn the_step_is_the_items_extra() {
        for ok in [4, 0] {
            let s = step(ok);
            let mut writes = ItemWrites::new();
            let item = step_item(&s, serde_json::json!({"plan": 1}), &mut writes);
            assert!(writes.failures().is_empty());
            assert_eq!(
                serde_json::to_string(&item.extra).unwrap(),
                serde_json::to_string(&serde_json::to_value(&s).unwrap()).unwrap()
            );
            let want = if ok > 0 {
                Outcome::Ok
            } else {
                Outcome::Timeout
            };
            assert_eq!(item.outcome, want);
            let back: LoadStep = serde_json::from_value(item.extra).unwrap();
            assert_eq!(back, s);
        }
    }
}

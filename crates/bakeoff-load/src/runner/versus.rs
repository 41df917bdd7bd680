//! `bench run --endpoint A --versus B`: two endpoints measured alternately in one run, step by
//! step — A's c=1 then B's c=1, A's c=2 then B's c=2 … — with the order flipped every round of
//! repeats (A B, then B A), so a drift of the machine (a neighbour, clocks, a warming cache)
//! reaches both sides alike instead of landing on whichever ran second. `bench compare` pairs
//! the two sides' steps repeat by repeat (docs/metrics.md, "Two endpoints alternately").

use std::sync::Arc;

use bakeoff_artifact::{LoadReport, VersusRecord};
use bakeoff_client::Client;
use tokio::sync::watch;

use super::{Progress, StepContext, empty_report, finish_report, run_nonce, step_specs};
use crate::LoadError;
use crate::plan::LoadPlan;

pub use crate::invalid::VERSUS_NO_SEARCH;

/// One side: its client and its plan (the plans differ only in what belongs to the endpoint:
/// the model name and the engine's pinning fields).
pub struct Side<'a> {
    pub client: &'a Client,
    pub plan: &'a LoadPlan,
}

/// Prefixes the side's name to every step label the display shows (`A c=2 #1`).
struct Labelled {
    side: &'static str,
    inner: Arc<dyn Progress>,
}

impl Progress for Labelled {
    fn step_started(
        &self,
        label: &str,
        planned: Option<u64>,
        duration: Option<std::time::Duration>,
    ) {
        // The warm-up keeps its own name: the display counts it apart from measured steps.
        if label == "warm-up" {
            self.inner.step_started(label, planned, duration);
        } else {
            self.inner
                .step_started(&format!("{} {label}", self.side), planned, duration);
        }
    }
    fn request_finished(&self, ok: bool) {
        self.inner.request_finished(ok);
    }
    fn step_finished(&self, step: &bakeoff_artifact::LoadStep) {
        self.inner.step_finished(step);
    }
}

/// Both sides' sweeps, A's first. The two plans must describe the same workload (levels,
/// bounds, lengths, repeats): the caller builds B's from A's.
pub async fn run_versus(
    a: Side<'_>,
    b: Side<'_>,
    progress: Arc<dyn Progress>,
    cancel: watch::Receiver<bool>,
) -> Result<(LoadReport, LoadReport), LoadError> {
    for p in [a.plan, b.plan] {
        p.validate()?;
        if p.find_capacity.is_some() {
            return Err(crate::invalid::Conflict::VersusWithCapacity.into());
        }
    }
    let specs = step_specs(a.plan);
    if specs.len() != step_specs(b.plan).len() {
        return Err(LoadError::Internal(
            "the two sides of --versus planned different steps".into(),
        ));
    }
    let nonce = run_nonce(a.plan);
    let run_id = format!("{nonce:016x}");
    // Each side gets its own nonce: the same prompts on both would let one endpoint's cache
    // (when the two share a server behind a gateway) serve the other's.
    let sides = [
        StepContext::new(
            a.client,
            a.plan,
            nonce,
            Arc::new(Labelled {
                side: "A",
                inner: progress.clone(),
            }),
            cancel.clone(),
        ),
        StepContext::new(
            b.client,
            b.plan,
            nonce ^ 0xB,
            Arc::new(Labelled {
                side: "B",
                inner: progress,
            }),
            cancel.clone(),
        ),
    ];
    let mut reports = [empty_report(a.plan), empty_report(b.plan)];
    let urls = [a.client.url().redacted(), b.client.url().redacted()];
    for (k, (r, name)) in reports.iter_mut().zip(["A", "B"]).enumerate() {
        r.versus = Some(VersusRecord {
            run_id: run_id.clone(),
            side: name.into(),
            other_endpoint: urls[1 - k].clone(),
            order: "A B in odd rounds, B A in even rounds, level by level".into(),
        });
    }
    for (ctx, r) in sides.iter().zip(reports.iter_mut()) {
        if ctx.plan.warmup_requests > 0 {
            r.warmup_requests = ctx.warm_up(&specs).await?;
        }
    }
    let mut metrics_ok = [a.plan.scrape_metrics, b.plan.scrape_metrics];
    'steps: for spec in &specs {
        let round = spec.repeat.unwrap_or(1);
        let order = if round % 2 == 1 { [0, 1] } else { [1, 0] };
        for k in order {
            if *sides[k].cancel.borrow() {
                for r in reports.iter_mut() {
                    r.interrupted = Some("interrupted by the operator".into());
                }
                break 'steps;
            }
            let step = sides[k].measure_step(spec, &mut metrics_ok[k]).await?;
            sides[k].progress.step_finished(&step);
            reports[k].steps.push(step);
        }
    }
    let [mut ra, mut rb] = reports;
    finish_report(a.plan, &mut ra, None);
    finish_report(b.plan, &mut rb, None);
    Ok((ra, rb))
}

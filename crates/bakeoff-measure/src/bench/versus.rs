//! `bench run --endpoint A --versus B`: both endpoints measured alternately in one run
//! (`bakeoff_load::run_versus`), one artifact per side, and their paired comparison written
//! beside them (`versus-<run id>.compare.json`).

use std::sync::Arc;

use bakeoff_artifact::LoadReport;
use bakeoff_client::Client;
use bakeoff_load::compare::compare;
use bakeoff_load::{LoadPlan, PinPolicy, Progress};
use tokio::sync::watch;

use super::request::{BenchError, BenchRequest, Benched, Versus, VersusBenched};
use super::sweep_artifact::artifact;
use crate::evaluate::{Evaluated, write_run_artifact};
use crate::output::candidate;
use bakeoff_suites::preflight::{PreflightOutcome, run_preflight};

pub(super) async fn measure(
    req: &BenchRequest<'_>,
    vs: &Versus<'_>,
    pre_a: &PreflightOutcome,
    plan_a: LoadPlan,
    progress: Arc<dyn Progress>,
    cancel: watch::Receiver<bool>,
) -> Result<Benched, BenchError> {
    let (client_a, client_b) = (req.client, vs.client);
    let pre_b = run_preflight(client_b, vs.preflight).await;
    if let Some(unfit) = &pre_b.unfit {
        return Err(BenchError::VersusUnfit {
            class: unfit.class,
            message: unfit.message.clone(),
            url: client_b.url().redacted(),
        });
    }
    // B's plan is A's workload with B's own model and its engine's pinning fields.
    let mut plan_b = plan_a.clone();
    plan_b.model = pre_b
        .report
        .model
        .clone()
        .unwrap_or_else(|| "default".into());
    if req.pin {
        plan_b.pin = PinPolicy::for_engine(pre_b.discovered.facts.engine);
    }
    let (ra, rb) = bakeoff_load::run_versus(
        bakeoff_load::Side {
            client: client_a,
            plan: &plan_a,
        },
        bakeoff_load::Side {
            client: client_b,
            plan: &plan_b,
        },
        progress,
        cancel,
    )
    .await?;
    let comparison = compare(&ra, &rb, vs.allow_contaminated);
    let run_id = ra
        .versus
        .as_ref()
        .map(|v| v.run_id.clone())
        .unwrap_or_default();

    let a = write_side(req, "a", client_a, pre_a, ra)?;
    let b = write_side(req, "b", client_b, &pre_b, rb)?;
    let comparison_path = req.output.out.join(format!("versus-{run_id}.compare.json"));
    bakeoff_artifact::write_new(&comparison_path, &comparison)?;
    Ok(Benched::Versus(Box::new(VersusBenched {
        a,
        b,
        comparison,
        comparison_path,
        schema: None,
    })))
}

/// One side's artifact, `<slug>-<side>` (`--slug`) or the default slug with `-<side>-bench`
/// (`--versus`'s sides, and `--schema`'s).
pub(super) fn write_side(
    req: &BenchRequest<'_>,
    side: &str,
    client: &Client,
    pre: &PreflightOutcome,
    report: LoadReport,
) -> Result<Evaluated, BenchError> {
    let mut cand = candidate(&req.output.naming, &format!("-{side}-bench"), client, pre);
    if let Some(s) = &req.output.naming.slug {
        cand.slug = format!("{s}-{side}");
    }
    let mut art = artifact(cand, client, pre, &req.output.run_record, report);
    let mut files = req.output.claim(&art.candidate.slug)?;
    let path = write_run_artifact(&mut files, &mut art)?;
    Ok(Evaluated {
        artifact: art,
        path,
    })
}

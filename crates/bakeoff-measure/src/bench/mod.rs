//! `bakeoff bench run` as a library function: preflight, the harness ceiling, the sweep (or
//! two sweeps alternately with `--versus`, [`versus`]), the artifacts. The binary wires the
//! signals, the embedded default and the terminal around [`run`]; the load engine is
//! `bakeoff_load`'s.

mod request;
pub mod schema;
mod sweep_artifact;
mod versus;

use bakeoff_load::PinPolicy;
use tokio::sync::watch;

pub use request::{
    BenchError, BenchProgress, BenchRequest, Benched, Versus, VersusBenched, measured_all,
};
use sweep_artifact::artifact;

use crate::ceiling::is_https;
use crate::evaluate::{Evaluated, unfit_artifact, write_run_artifact};
use bakeoff_suites::preflight::run_preflight;

/// Preflight, ceiling, sweep, artifact — `bench run` without the terminal. `arm_stop` is called
/// once the sweep starts (not before: preflight and the ceiling are not interruptible): its
/// flag turns true on Ctrl-C/SIGTERM, which ends the step in flight and keeps the steps
/// measured (an `incomplete` artifact); its guard is dropped when the sweep ends.
pub async fn run<G>(
    req: BenchRequest<'_>,
    arm_stop: impl FnOnce() -> (watch::Receiver<bool>, G),
) -> Result<Benched, BenchError> {
    let client = req.client;
    let pre = run_preflight(client, req.preflight).await;
    if let Some(unfit) = &pre.unfit {
        // `--out` promises a failure artifact: the class, the evidence and the fix, as
        // `eval run` writes one (docs/artifacts.md).
        let cand = req.output.candidate(client, &pre);
        let mut art = unfit_artifact(cand, client, &pre, unfit, pre.report.elapsed_ms);
        art.run = req.output.run_record.clone();
        let mut files = req.output.claim(&art.candidate.slug)?;
        let path = write_run_artifact(&mut files, &mut art)?;
        return Err(BenchError::Unfit {
            class: unfit.class,
            message: unfit.message.clone(),
            remediation: unfit
                .remediation
                .clone()
                .unwrap_or_else(|| "run `bakeoff eval preflight` for the evidence".into()),
            path,
        });
    }
    let mut plan = req.plan.clone();
    plan.model = pre.report.model.clone().unwrap_or_else(|| "default".into());
    if req.pin {
        plan.pin = PinPolicy::for_engine(pre.discovered.facts.engine);
    }
    if let Some(ceilings) = req.ceilings {
        let on = |e| req.progress.ceiling(e);
        plan.ceiling = Some(ceilings.get(is_https(client), &on).await?);
    }
    // A rate search decides its steps as it goes: no count to show.
    let steps = plan
        .find_capacity
        .is_none()
        .then(|| plan.levels() * plan.repeat.max(1) as usize);
    let (stop, guard) = arm_stop();
    if let Some(sb) = &req.schema {
        // Both sides alternate on the one endpoint: twice the steps.
        let progress = req.progress.sweep(steps.map(|n| n * 2));
        let r = schema::measure(&req, sb, &pre, plan, progress, stop).await;
        drop(guard);
        return r;
    }
    if let Some(vs) = &req.versus {
        // Both sides alternate: twice the steps.
        let progress = req.progress.sweep(steps.map(|n| n * 2));
        let r = versus::measure(&req, vs, &pre, plan, progress, stop).await;
        drop(guard);
        return r;
    }
    let report = bakeoff_load::run(client, &plan, req.progress.sweep(steps), stop).await;
    drop(guard);
    let report = report?;
    let cand = req.output.candidate(client, &pre);
    let mut art = artifact(cand, client, &pre, &req.output.run_record, report);
    let mut files = req.output.claim(&art.candidate.slug)?;
    let path = write_run_artifact(&mut files, &mut art)?;
    Ok(Benched::One(Box::new(Evaluated {
        artifact: art,
        path,
    })))
}

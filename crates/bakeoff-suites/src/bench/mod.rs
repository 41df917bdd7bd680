//! `bakeoff bench run` as a library function: preflight, the harness ceiling, the sweep (or
//! two sweeps alternately with `--versus`, [`versus`]), the artifacts. The binary wires the
//! signals, the embedded default and the terminal around [`run`]; the load engine is
//! `bakeoff_load`'s.

mod versus;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use bakeoff_artifact::{
    Artifact, ArtifactKind, Candidate, FailureClass, HarnessCeiling, LoadReport, RunStatus,
    StoreError,
};
use bakeoff_client::Client;
use bakeoff_load::calibrate::{CalibrationOptions, CalibrationTarget, measure_ceiling};
use bakeoff_load::compare::SweepComparison;
use bakeoff_load::{LoadError, LoadPlan, PinPolicy, Progress};
use tokio::sync::watch;

use crate::evaluate::{
    Evaluated, Naming, candidate, preflighted, run_files, unfit_artifact, write_run_artifact,
};
use crate::preflight::{PreflightOptions, PreflightOutcome, run_preflight};

/// What to measure and where to write it.
pub struct BenchRequest<'a> {
    pub client: &'a Client,
    pub preflight: &'a PreflightOptions,
    /// The sweep, checked; its model is set, and its pin policy chosen for the engine (unless
    /// `pin` is false), once preflight has seen the endpoint.
    pub plan: &'a LoadPlan,
    /// Not `--no-pin`: send the engine's ignore_eos / min_tokens.
    pub pin: bool,
    /// Measure the harness ceiling first (not `--no-calibrate`).
    pub calibrate: bool,
    pub naming: &'a Naming,
    pub out: &'a Path,
    pub replace: bool,
    /// The endpoint is the embedded default (recorded in `artifact.run`).
    pub embedded_default: bool,
    /// `--versus`: the second endpoint, measured alternately with the first.
    pub versus: Option<Versus<'a>>,
    pub progress: &'a dyn BenchProgress,
}

/// The second endpoint of `bench run --versus`.
pub struct Versus<'a> {
    pub client: &'a Client,
    pub preflight: &'a PreflightOptions,
    /// `--allow contaminated`.
    pub allow_contaminated: bool,
}

/// Where a bench run's progress goes.
pub trait BenchProgress: Sync {
    /// The harness ceiling is being measured (over TLS when `https`).
    fn ceiling_started(&self, https: bool);
    fn ceiling_measured(&self, ceiling: &HarnessCeiling);
    /// The sweep starts: `steps` measured steps (`None`: a rate search decides as it goes);
    /// the load engine's progress for it.
    fn sweep(&self, steps: Option<usize>) -> Arc<dyn Progress>;
}

/// The written artifacts and where they are.
pub enum Benched {
    One(Box<Evaluated>),
    /// Both sides of `--versus`, and their paired comparison.
    Versus(Box<VersusBenched>),
}

/// What `bench run --versus` wrote.
pub struct VersusBenched {
    pub a: Evaluated,
    pub b: Evaluated,
    pub comparison: SweepComparison,
    pub comparison_path: PathBuf,
}

impl Benched {
    /// Every sweep measured every step (and the two sides are comparable): `bench run`'s exit 0.
    pub fn ok(&self) -> bool {
        match self {
            Benched::One(e) => measured_all(&e.artifact),
            Benched::Versus(v) => {
                measured_all(&v.a.artifact)
                    && measured_all(&v.b.artifact)
                    && v.comparison.not_comparable.is_empty()
            }
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// The failure artifact is written at `path`.
    #[error(
        "endpoint is not fit to be measured ({class}): {message}: {remediation}; failure \
         artifact {}",
        path.display()
    )]
    Unfit {
        class: FailureClass,
        message: String,
        remediation: String,
        path: PathBuf,
    },
    #[error(
        "--versus endpoint is not fit to be measured ({class}): {message}; run `bakeoff eval \
         preflight --endpoint {url}` for the evidence"
    )]
    VersusUnfit {
        class: FailureClass,
        message: String,
        url: String,
    },
    #[error("cannot start the loopback calibration target: {0}")]
    CalibrationTarget(std::io::Error),
    #[error("cannot start the TLS loopback calibration target: {0}")]
    TlsCalibrationTarget(std::io::Error),
    #[error(transparent)]
    Load(#[from] LoadError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

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
        let cand = candidate(req.naming, "-bench", client, &pre);
        let mut art = unfit_artifact(cand, client, &pre, unfit, pre.report.elapsed_ms);
        art.run = bakeoff_artifact::RunRecord::bench_run(req.embedded_default);
        let mut files = run_files(req.out, &art.candidate.slug, req.replace)?;
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
    if req.calibrate {
        let https = is_https(client);
        req.progress.ceiling_started(https);
        let c = ceiling(CalibrationOptions::default(), https).await?;
        req.progress.ceiling_measured(&c);
        plan.ceiling = Some(c);
    }
    // A rate search decides its steps as it goes: no count to show.
    let steps = plan
        .find_capacity
        .is_none()
        .then(|| plan.levels() * plan.repeat.max(1) as usize);
    let (stop, guard) = arm_stop();
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
    let cand = candidate(req.naming, "-bench", client, &pre);
    let mut art = artifact(cand, client, &pre, req.embedded_default, report);
    let mut files = run_files(req.out, &art.candidate.slug, req.replace)?;
    let path = write_run_artifact(&mut files, &mut art)?;
    Ok(Benched::One(Box::new(Evaluated {
        artifact: art,
        path,
    })))
}

/// A complete run whose every sweep has steps and every step a success: a step that measured
/// nothing is a failure, never a pass.
pub fn measured_all(art: &Artifact) -> bool {
    art.status == RunStatus::Complete
        && art
            .load
            .values()
            .all(|r| !r.steps.is_empty() && r.steps.iter().all(|s| s.ok > 0))
}

/// Whether the endpoint is `https://`: its ceiling is then measured over TLS (a TLS handshake
/// per request costs the client ×4 the CPU of a plain one: docs/performance.md "TLS").
pub fn is_https(client: &Client) -> bool {
    client.url().root_path("").scheme() == "https"
}

/// The harness ceiling against a fresh loopback target (`bench calibrate`, and what `bench
/// run` and `eval run`'s load suites measure first); over TLS, against a TLS target with a
/// throwaway CA made in memory.
pub async fn ceiling(o: CalibrationOptions, https: bool) -> Result<HarnessCeiling, BenchError> {
    if https {
        let (target, url, tls) = CalibrationTarget::start_tls()
            .await
            .map_err(BenchError::TlsCalibrationTarget)?;
        let c = bakeoff_load::calibrate::measure_ceiling_with(&url, o, tls).await?;
        drop(target);
        Ok(c)
    } else {
        let target = CalibrationTarget::start()
            .await
            .map_err(BenchError::CalibrationTarget)?;
        Ok(measure_ceiling(&target.url(), o).await?)
    }
}

/// The artifact of one measured sweep.
fn artifact(
    candidate: Candidate,
    client: &Client,
    pre: &PreflightOutcome,
    embedded_default: bool,
    report: LoadReport,
) -> Artifact {
    let mut art = preflighted(ArtifactKind::Bakeoff, candidate, client, pre);
    art.instrument_flags
        .extend(report.flags.iter().cloned().map(|mut f| {
            f.suite = Some("throughput".into());
            f
        }));
    art.run = bakeoff_artifact::RunRecord::bench_run(embedded_default);
    if let Some(i) = &report.interrupted {
        art.status = RunStatus::Incomplete;
        art.incomplete_reason = Some(i.clone());
    }
    art.load.insert("throughput".into(), report);
    art
}

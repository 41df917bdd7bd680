//! What `bench run` is asked ([`BenchRequest`]) and what it answers ([`Benched`],
//! [`BenchError`]): shared by the single sweep and `--versus`.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use bakeoff_artifact::{Artifact, FailureClass, HarnessCeiling, RunStatus, StoreError};
use bakeoff_client::Client;
use bakeoff_load::compare::SweepComparison;
use bakeoff_load::{LoadError, LoadPlan, Progress};

use crate::evaluate::{Evaluated, Naming};
use crate::preflight::PreflightOptions;

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
    /// `--schema FILE`: the same workload constrained and unconstrained, alternately.
    pub schema: Option<super::schema::SchemaBench>,
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
    /// `bench run --schema`: A unconstrained, B constrained, and the compile cost.
    pub schema: Option<super::schema::SchemaComparison>,
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
    #[error(
        "the endpoint refused --schema {file} sent as {form}: {words}; check the schema \
         against the engine's supported features, or try another --schema-form"
    )]
    SchemaRefused {
        file: String,
        form: String,
        words: String,
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

/// A complete run whose every sweep has steps and every step a success: a step that measured
/// nothing is a failure, never a pass.
pub fn measured_all(art: &Artifact) -> bool {
    art.status == RunStatus::Complete
        && art
            .load
            .values()
            .all(|r| !r.steps.is_empty() && r.steps.iter().all(|s| s.ok > 0))
}

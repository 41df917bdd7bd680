//! What `bench run` is asked ([`BenchRequest`]) and what it answers ([`Benched`],
//! [`BenchError`]): shared by the single sweep and `--versus`.

use std::path::PathBuf;
use std::sync::Arc;

use bakeoff_artifact::{Artifact, FailureClass, RunStatus, StoreError};
use bakeoff_client::Client;
use bakeoff_load::compare::SweepComparison;
use bakeoff_load::{LoadError, LoadPlan, Progress};

use crate::Output;
use crate::ceiling::{CeilingError, CeilingEvent, Ceilings};
use crate::evaluate::Evaluated;
use bakeoff_suites::preflight::PreflightOptions;

/// What to measure and where to write it.
pub struct BenchRequest<'a> {
    pub client: &'a Client,
    pub preflight: &'a PreflightOptions,
    /// The sweep, checked; its model is set, and its pin policy chosen for the engine (unless
    /// `pin` is false), once preflight has seen the endpoint.
    pub plan: &'a LoadPlan,
    /// Not `--no-pin`: send the engine's ignore_eos / min_tokens.
    pub pin: bool,
    /// The harness ceiling the steps are checked against, measured before the sweep unless
    /// known; `None` (`--no-calibrate`): they go unchecked.
    pub ceilings: Option<&'a Ceilings>,
    /// Where the artifacts go (`artifact.run` says whether the endpoint is the embedded default).
    pub output: Output<'a>,
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
    /// The harness ceiling as it is measured.
    fn ceiling(&self, event: CeilingEvent);
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
    #[error(transparent)]
    Ceiling(#[from] CeilingError),
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

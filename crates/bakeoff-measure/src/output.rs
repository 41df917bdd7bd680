//! Where a measurement's artifacts go and what they are called: the one output description
//! every driver takes (`eval run`, `bench run`, damage, an adapter's check), so a new driver
//! cannot name or place its files another way.

use std::path::Path;

use bakeoff_artifact::{Candidate, RunFiles, RunRecord, StoreError};
use bakeoff_client::Client;
use bakeoff_suites::preflight::PreflightOutcome;

/// How a run is named: `--slug`, `--hardware`, `--note` and the embedded default's additions.
#[derive(Debug, Clone, Default)]
pub struct Naming {
    pub slug: Option<String>,
    pub hardware: Option<String>,
    pub notes: Vec<String>,
}

/// A measurement's output.
#[derive(Debug, Clone)]
pub struct Output<'a> {
    pub naming: Naming,
    /// Appended to the default slug (`-bench`, `-adapter`); ignored when `naming.slug` is set.
    pub slug_suffix: &'a str,
    /// `--out`: the directory the artifacts are written in.
    pub out: &'a Path,
    /// `--replace`: a new run of the slug takes `<slug>.*` and records what it replaces.
    pub replace: bool,
    /// What the operator asked for, recorded as `artifact.run` (a driver adds its own facts).
    pub run_record: RunRecord,
}

impl Output<'_> {
    /// The candidate this output names for the endpoint preflight found
    /// ([`crate::evaluate::candidate`]).
    pub fn candidate(&self, client: &Client, pre: &PreflightOutcome) -> Candidate {
        crate::evaluate::candidate(&self.naming, self.slug_suffix, client, pre)
    }

    /// The files of this run of `slug`, claimed now: a later run of the slug never overwrites
    /// them ([`crate::evaluate::run_files`]).
    pub fn claim(&self, slug: &str) -> Result<RunFiles, StoreError> {
        crate::evaluate::run_files(self.out, slug, self.replace)
    }
}

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
    /// ([`candidate`]).
    pub fn candidate(&self, client: &Client, pre: &PreflightOutcome) -> Candidate {
        candidate(&self.naming, self.slug_suffix, client, pre)
    }

    /// The files of this run of `slug`, claimed now: a later run of the slug never overwrites
    /// them ([`run_files`]).
    pub fn claim(&self, slug: &str) -> Result<RunFiles, StoreError> {
        run_files(self.out, slug, self.replace)
    }
}

/// The candidate a run measured — ONE builder for `eval run` and `bench run`: the slug is
/// `naming.slug`, else the default plus `slug_suffix`. An endpoint that lists no model is named
/// after its address (`endpoint-<host>-<port>`), never a shared placeholder that would give
/// unrelated endpoints one slug. Hardware and notes are `naming`'s, as given (the caller adds
/// the embedded default's).
pub fn candidate(
    naming: &Naming,
    slug_suffix: &str,
    client: &Client,
    pre: &PreflightOutcome,
) -> Candidate {
    use bakeoff_artifact::slug;
    let facts = &pre.discovered.facts;
    let model = pre
        .report
        .model
        .clone()
        .unwrap_or_else(|| format!("endpoint-{}", slug::sanitize(&client.url().host_port())));
    let quantization = pre
        .discovered
        .quantization
        .clone()
        .or_else(|| bakeoff_client::dialect::quantization_from_name(&model));
    let slug = naming.slug.clone().unwrap_or_else(|| {
        let base = slug::default_slug(
            &model,
            facts.engine,
            quantization.as_deref(),
            facts.context_window,
        );
        format!("{base}{slug_suffix}")
    });
    Candidate {
        slug,
        model,
        engine: facts.engine,
        engine_version: facts.engine_version.clone(),
        quantization,
        context_window: facts.context_window,
        hardware: naming.hardware.clone(),
        notes: naming.notes.clone(),
    }
}

/// The files of a new run of `slug` in `out`: `<slug>.*` for the slug's first run there, else
/// `<slug>.<run_id>.*`; `replace` (`--replace`) takes `<slug>.*` and records what it replaces.
pub fn run_files(out: &Path, slug: &str, replace: bool) -> Result<RunFiles, StoreError> {
    let run_id = bakeoff_artifact::run_id_now();
    if replace {
        RunFiles::replacing(out, slug, &run_id)
    } else {
        RunFiles::claim(out, slug, &run_id)
    }
}

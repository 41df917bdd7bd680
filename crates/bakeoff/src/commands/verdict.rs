//! `bakeoff verdict SLUG VERDICT --reason …`: the operator's verdict, scoped to the tested
//! configuration, stored beside the artifacts as DIR/<slug>.verdict.json.

use bakeoff_report::evidence::{Scope, VerdictEntry, set_verdict};
use bakeoff_report::{evidence_text, registry};

use crate::exit::{Error, Exit};
use bakeoff_flags::config::VerdictConfig;

pub fn run(a: VerdictConfig) -> Result<Exit, Error> {
    let reg = registry::load(&a.dir)?;
    let (newest, counted) = reg.verdict_basis(&a.slug)?;
    let entry = VerdictEntry {
        verdict: a.verdict,
        reason: a.reason.clone(),
        date: chrono::Utc::now(),
        scope: Scope::of(&newest.artifact, counted),
        not_attempted: a.not_attempted.clone(),
        production_impact: a.impact.clone(),
    };
    let (path, record) = set_verdict(&a.dir, &a.slug, entry)?;
    for l in evidence_text::verdict(&a.slug, &record, &path) {
        stdoutln!("{l}");
    }
    Ok(Exit::Ok)
}

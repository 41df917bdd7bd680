//! The artifact of one measured sweep, for `bench run` and each side of `--versus`.

use bakeoff_artifact::{Artifact, ArtifactKind, Candidate, LoadReport, RunStatus};
use bakeoff_client::Client;

use crate::evaluate::preflighted;
use bakeoff_suites::preflight::PreflightOutcome;

/// The artifact of one measured sweep.
pub(super) fn artifact(
    candidate: Candidate,
    client: &Client,
    pre: &PreflightOutcome,
    run: &bakeoff_artifact::RunRecord,
    report: LoadReport,
) -> Artifact {
    let mut art = preflighted(ArtifactKind::Bakeoff, candidate, client, pre);
    art.instrument_flags
        .extend(report.flags.iter().cloned().map(|mut f| {
            f.suite = Some("throughput".into());
            f
        }));
    art.run = run.clone();
    if let Some(i) = &report.interrupted {
        art.status = RunStatus::Incomplete;
        art.incomplete_reason = Some(i.clone());
    }
    art.load.insert("throughput".into(), report);
    art
}

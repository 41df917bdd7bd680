//! The artifact of one measured sweep, for `bench run` and each side of `--versus`.

use bakeoff_artifact::{Artifact, ArtifactKind, Candidate, LoadReport, RunStatus};
use bakeoff_client::Client;

use crate::evaluate::preflighted;
use crate::preflight::PreflightOutcome;

/// The artifact of one measured sweep.
pub(super) fn artifact(
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

//! `bakeoff retract ARTIFACT --reason …`: mark a result superseded. The artifact is never
//! modified; a dated DIR/<artifact-file>.retraction.json beside it says why, and reports stop
//! counting it.

use bakeoff_report::evidence::{EvidenceError, retract};

use crate::cli::RetractArgs;
use crate::exit::{CliError, Exit, failed, usage};

pub fn run(a: RetractArgs) -> Result<Exit, CliError> {
    let (path, r) = retract(&a.artifact, &a.reason, chrono::Utc::now()).map_err(|e| match e {
        EvidenceError::Store(_) | EvidenceError::NoReason | EvidenceError::AlreadyRetracted(_) => {
            usage(e)
        }
        other => failed(other),
    })?;
    println!(
        "retracted {} ({}) on {}: {}",
        r.artifact,
        r.slug,
        r.date.format("%Y-%m-%d"),
        r.reason
    );
    for c in &r.claims {
        println!("  withdrawn: {}: {}", c.suite, c.claimed);
    }
    println!(
        "the artifact is unchanged (sha256 {}); wrote {}",
        &r.artifact_sha256[..r.artifact_sha256.len().min(16)],
        path.display()
    );
    Ok(Exit::Ok)
}

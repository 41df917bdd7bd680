//! `bakeoff retract ARTIFACT --reason …`: mark a result superseded. The artifact is never
//! modified; a dated DIR/<artifact-file>.retraction.json beside it says why, and reports stop
//! counting it.

use bakeoff_report::escape::for_terminal;
use bakeoff_report::evidence::retract;

use crate::config::RetractConfig;
use crate::exit::{Error, Exit};

pub fn run(a: RetractConfig) -> Result<Exit, Error> {
    let (path, r) = retract(&a.artifact, &a.reason, chrono::Utc::now())?;
    // The artifact's name, slug and claims come from its file; the reason from the operator.
    let t = |s: &str| for_terminal(s, 500);
    println!(
        "retracted {} ({}) on {}: {}",
        t(&r.artifact),
        t(&r.slug),
        r.date.format("%Y-%m-%d"),
        t(&r.reason)
    );
    for c in &r.claims {
        println!("  withdrawn: {}: {}", t(&c.suite), t(&c.claimed));
    }
    println!(
        "the artifact is unchanged (sha256 {}); wrote {}",
        &r.artifact_sha256[..r.artifact_sha256.len().min(16)],
        t(&path.display().to_string())
    );
    Ok(Exit::Ok)
}

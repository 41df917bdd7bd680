//! `bakeoff retract ARTIFACT --reason …`: mark a result superseded. The artifact is never
//! modified; a dated DIR/<artifact-file>.retraction.json beside it says why, and reports stop
//! counting it.

use bakeoff_report::evidence::retract;
use bakeoff_report::evidence_text;

use crate::exit::{Error, Exit};
use bakeoff_flags::config::RetractConfig;

pub fn run(a: RetractConfig) -> Result<Exit, Error> {
    let (path, r) = retract(&a.artifact, &a.reason, chrono::Utc::now())?;
    for l in evidence_text::retraction(&r, &path) {
        stdoutln!("{l}");
    }
    Ok(Exit::Ok)
}

//! The sweeps `bench compare` reads: a `bench run` artifact's `load.<suite>`, else the load
//! suite of that name among an `eval run` artifact's suites.

use std::path::{Path, PathBuf};

use bakeoff_artifact::{LoadReport, StoreError, read_artifact};

#[derive(Debug, thiserror::Error)]
pub enum SweepInputError {
    /// The file could not be read, or is not an artifact this build reads.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// An artifact without the sweep asked for: the operator named the wrong file or sweep.
    #[error(
        "{} holds no `{suite}` sweep: give two `bakeoff bench run` artifacts, or two \
         `bakeoff eval run` artifacts that ran the {suite} suite",
        path.display()
    )]
    NoSweep { path: PathBuf, suite: String },
}

/// The sweep `suite` of the artifact at `path`.
pub fn read_sweep(path: &Path, suite: &str) -> Result<LoadReport, SweepInputError> {
    let art = read_artifact(path)?;
    if let Some(r) = art.load.get(suite) {
        return Ok(r.clone());
    }
    art.suites
        .get(suite)
        .and_then(|s| s.summary.details_as::<LoadReport>().ok())
        .ok_or_else(|| SweepInputError::NoSweep {
            path: path.to_path_buf(),
            suite: suite.to_string(),
        })
}

//! The sweeps `bench compare` reads: a `bench run` artifact's `load.<suite>`, else the load
//! suite of that name among an `eval run` artifact's suites.

use std::path::{Path, PathBuf};

use bakeoff_artifact::{Artifact, DetailsError, LoadReport, StoreError, read_artifact};
use bakeoff_term::escape::for_terminal;

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
    /// The suite is there, but its details do not read as a sweep: an artifact edited by hand
    /// or written by another build. Never taken for "no sweep". serde's message quotes the
    /// file: escaped.
    #[error(
        "{}: the {suite} suite's sweep cannot be read ({}); compare artifacts this bakeoff wrote",
        path.display(),
        for_terminal(&source.to_string(), 400)
    )]
    Unreadable {
        path: PathBuf,
        suite: String,
        #[source]
        source: DetailsError,
    },
}

/// The sweep `suite` of the artifact at `path`.
pub fn read_sweep(path: &Path, suite: &str) -> Result<LoadReport, SweepInputError> {
    sweep_of(&read_artifact(path)?, path, suite)
}

/// The sweep `suite` of `art`, read from `path` (which the errors name).
pub fn sweep_of(art: &Artifact, path: &Path, suite: &str) -> Result<LoadReport, SweepInputError> {
    if let Some(r) = art.load.get(suite) {
        return Ok(r.clone());
    }
    let no_sweep = || SweepInputError::NoSweep {
        path: path.to_path_buf(),
        suite: suite.to_string(),
    };
    let s = art.suites.get(suite).ok_or_else(no_sweep)?;
    // A suite that measured nothing wrote no details: no sweep, not an unreadable one.
    if s.summary.details.is_null() {
        return Err(no_sweep());
    }
    s.summary
        .details_as::<LoadReport>()
        .map_err(|source| SweepInputError::Unreadable {
            path: path.to_path_buf(),
            suite: suite.to_string(),
            source,
        })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use bakeoff_artifact::{ArtifactKind, Candidate, EndpointRecord, EngineKind, SuiteResult};
    use serde_json::json;

    fn with_throughput(details: serde_json::Value) -> Artifact {
        let mut a = Artifact::new(
            ArtifactKind::Bakeoff,
            Candidate::new("c", "m", EngineKind::LlamaCpp),
            EndpointRecord {
                url: "http://127.0.0.1:1".into(),
                facts: None,
            },
        );
        let s: SuiteResult = serde_json::from_value(json!({
            "status": "complete",
            "summary": {"planned": 1, "finished": 1, "outcomes": {}, "passed": 0, "scored": 0,
                        "details": details},
            "items": []
        }))
        .unwrap();
        a.suites.insert("throughput".into(), s);
        a
    }

    /// A throughput suite whose details are not a sweep is an error that says so, with serde's
    /// message escaped; never "no sweep", never an empty sweep.
    #[test]
    fn details_that_do_not_read_are_an_error_not_no_sweep() {
        let path = Path::new("a.bakeoff.json");
        let a = with_throughput(json!({"mode": "closed\u{1b}[2J", "steps": "\u{1b}[2J"}));
        let e = sweep_of(&a, path, "throughput").unwrap_err();
        assert!(matches!(e, SweepInputError::Unreadable { .. }), "{e:?}");
        let text = e.to_string();
        assert!(
            text.starts_with("a.bakeoff.json: the throughput suite's sweep cannot be read (summary.details do not read as LoadReport: "),
            "{text}"
        );
        assert!(!text.contains('\u{1b}'), "{text}");
        let none = sweep_of(
            &with_throughput(serde_json::Value::Null),
            path,
            "throughput",
        );
        assert!(
            matches!(none, Err(SweepInputError::NoSweep { .. })),
            "{none:?}"
        );
        let other = sweep_of(&a, path, "longgen");
        assert!(
            matches!(other, Err(SweepInputError::NoSweep { .. })),
            "{other:?}"
        );
    }
}

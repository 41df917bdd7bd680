//! Giving a verdict and retracting a result: the operations over the records of
//! `bakeoff_artifact::evidence` (re-exported here), written through the artifact crate's one
//! versioned reader and writer.

use std::path::{Path, PathBuf};

pub use bakeoff_artifact::evidence::*;
use bakeoff_artifact::versioned::read_versioned;
use bakeoff_artifact::{Artifact, StoreError, write_atomic};
use chrono::{DateTime, Utc};
use sha2::{Digest, Sha256};

#[derive(Debug, thiserror::Error)]
pub enum EvidenceError {
    /// Reading or writing a record or an artifact: a file that cannot be read or written, or
    /// one that is not the record it should be (`StoreError::Parse`, `StoreError::Version`).
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("{0} is already retracted (see its .retraction.json); a retraction is not edited")]
    AlreadyRetracted(PathBuf),
    #[error("--reason is empty: say why, it is the record")]
    NoReason,
    /// The slug names the verdict file: one from a hostile artifact (`../x`) must not choose
    /// where it is written.
    #[error("{0}; fix: give the verdict to an artifact whose slug is safe (re-run it with --slug)")]
    BadSlug(#[from] bakeoff_artifact::slug::BadSlug),
}

pub fn sha256_file(path: &Path) -> Result<String, EvidenceError> {
    let bytes = std::fs::read(path).map_err(|source| StoreError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    Ok(hex::encode(Sha256::digest(&bytes)))
}

pub fn read_verdict(path: &Path) -> Result<VerdictRecord, EvidenceError> {
    Ok(read_versioned(path)?)
}

pub fn read_retraction(path: &Path) -> Result<RetractionRecord, EvidenceError> {
    Ok(read_versioned(path)?)
}

/// Record a verdict for `slug` in `dir`, keeping any earlier verdict in the history.
pub fn set_verdict(
    dir: &Path,
    slug: &str,
    entry: VerdictEntry,
) -> Result<(PathBuf, VerdictRecord), EvidenceError> {
    if entry.reason.trim().is_empty() {
        return Err(EvidenceError::NoReason);
    }
    bakeoff_artifact::slug::validate_slug(slug)?;
    let path = verdict_path(dir, slug);
    let record = if path.exists() {
        let mut old = read_verdict(&path)?;
        let mut entry = entry;
        // What was not attempted stays not attempted, and a noted impact stays noted, until a
        // new verdict says otherwise.
        if entry.not_attempted.is_empty() {
            entry.not_attempted = old.current.not_attempted.clone();
        }
        if entry.production_impact.is_none() {
            entry.production_impact = old.current.production_impact.clone();
        }
        let previous = std::mem::replace(&mut old.current, entry);
        old.history.push(previous);
        old
    } else {
        VerdictRecord {
            schema_version: EVIDENCE_VERSION,
            slug: slug.to_string(),
            current: entry,
            history: Vec::new(),
        }
    };
    write_atomic(&path, &record)?;
    Ok((path, record))
}

/// What an artifact claims, suite by suite, in the words of the reports.
pub fn claims_of(a: &Artifact) -> Vec<Claim> {
    let mut out: Vec<Claim> = a
        .suites
        .iter()
        .map(|(name, s)| Claim {
            suite: name.clone(),
            claimed: crate::score::score_text(&s.summary.score),
        })
        .collect();
    if let Some(f) = &a.failure {
        out.push(Claim {
            suite: "(run)".into(),
            claimed: format!("failure: {}", f.class),
        });
    }
    out
}

/// Mark the artifact at `path` superseded. The artifact is read (to refuse non-artifacts and
/// record its claims) and hashed, never written.
pub fn retract(
    path: &Path,
    reason: &str,
    date: DateTime<Utc>,
) -> Result<(PathBuf, RetractionRecord), EvidenceError> {
    if reason.trim().is_empty() {
        return Err(EvidenceError::NoReason);
    }
    let artifact = bakeoff_artifact::read_artifact(path)?;
    let out = retraction_path(path);
    if out.exists() {
        return Err(EvidenceError::AlreadyRetracted(path.to_path_buf()));
    }
    let record = RetractionRecord {
        schema_version: EVIDENCE_VERSION,
        artifact: path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
        slug: artifact.candidate.slug.clone(),
        reason: reason.trim().to_string(),
        date,
        artifact_sha256: sha256_file(path)?,
        claims: claims_of(&artifact),
    };
    write_atomic(&out, &record)?;
    Ok((out, record))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use bakeoff_artifact::EngineKind;

    use super::*;

    fn entry(v: VerdictKind, reason: &str) -> VerdictEntry {
        VerdictEntry {
            verdict: v,
            reason: reason.into(),
            date: Utc::now(),
            scope: Scope {
                model: "m".into(),
                engine: EngineKind::LlamaCpp,
                engine_version: None,
                quantization: None,
                window_tokens: Some(8192),
                hardware: None,
                artifacts: vec!["m.bakeoff.json".into()],
            },
            not_attempted: vec![],
            production_impact: None,
        }
    }

    #[test]
    fn a_new_verdict_keeps_the_old_one_in_history() {
        let dir = tempfile::tempdir().unwrap();
        set_verdict(dir.path(), "m", entry(VerdictKind::Watch, "first look")).unwrap();
        let (p, r) =
            set_verdict(dir.path(), "m", entry(VerdictKind::Accept, "passed again")).unwrap();
        assert_eq!(r.current.verdict, VerdictKind::Accept);
        assert_eq!(r.history.len(), 1);
        assert_eq!(r.history[0].reason, "first look");
        assert_eq!(read_verdict(&p).unwrap(), r);
        assert!(matches!(
            set_verdict(dir.path(), "m", entry(VerdictKind::Accept, "  ")),
            Err(EvidenceError::NoReason)
        ));
    }

    #[test]
    fn a_slug_that_would_leave_the_directory_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let e = set_verdict(dir.path(), "../escape", entry(VerdictKind::Watch, "x")).unwrap_err();
        assert!(matches!(e, EvidenceError::BadSlug(_)), "{e}");
        assert!(e.to_string().contains("fix:"), "{e}");
        assert!(!dir.path().join("../escape.verdict.json").exists());
    }

    #[test]
    fn unknown_record_versions_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x.verdict.json");
        std::fs::write(&p, r#"{"schema_version": 7}"#).unwrap();
        let e = read_verdict(&p).unwrap_err().to_string();
        assert!(e.contains("schema_version 7"), "{e}");
    }
}

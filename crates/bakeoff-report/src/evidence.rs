//! Verdicts and retractions: the operator's judgments, stored as small versioned JSON files
//! beside the artifacts they judge (format in docs/reports.md).
//!
//! - `DIR/<slug>.verdict.json` — the verdict on one candidate, scoped to the configuration
//!   it was tested in. A new verdict keeps the previous ones in `history`: a changed mind is
//!   recorded, never a silent edit.
//! - `DIR/<artifact-file>.retraction.json` — a result marked superseded, with its date and
//!   reason, the claim it made and the artifact's sha256 at retraction time. The artifact
//!   itself is never touched; reports stop counting it and list it as a superseded claim.

use std::path::{Path, PathBuf};

use bakeoff_artifact::{Artifact, StoreError, write_atomic};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// Version of the verdict and retraction formats. Readers refuse versions they do not know.
pub const EVIDENCE_VERSION: u32 = 1;

#[derive(Debug, thiserror::Error)]
pub enum EvidenceError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path} is not a bakeoff {what} record: {source}")]
    Parse {
        path: PathBuf,
        what: &'static str,
        source: serde_json::Error,
    },
    #[error(
        "{path} has schema_version {found}; this bakeoff reads {what} records of version {EVIDENCE_VERSION} (upgrade bakeoff)"
    )]
    Version {
        path: PathBuf,
        what: &'static str,
        found: u64,
    },
    #[error("{0} is already retracted (see its .retraction.json); a retraction is not edited")]
    AlreadyRetracted(PathBuf),
    #[error("--reason is empty: say why, it is the record")]
    NoReason,
    /// The slug names the verdict file: one from a hostile artifact (`../x`) must not choose
    /// where it is written.
    #[error("{0}; fix: give the verdict to an artifact whose slug is safe (re-run it with --slug)")]
    BadSlug(String),
}

/// A verdict, always scoped to the tested configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum VerdictKind {
    Accept,
    RejectUnderTestedConfiguration,
    NotEnoughEvidence,
    Watch,
}

impl VerdictKind {
    pub const ALL: [VerdictKind; 4] = [
        VerdictKind::Accept,
        VerdictKind::RejectUnderTestedConfiguration,
        VerdictKind::NotEnoughEvidence,
        VerdictKind::Watch,
    ];

    /// The words reports print.
    pub fn as_words(self) -> &'static str {
        match self {
            VerdictKind::Accept => "accept",
            VerdictKind::RejectUnderTestedConfiguration => "reject under tested configuration",
            VerdictKind::NotEnoughEvidence => "not enough evidence",
            VerdictKind::Watch => "watch",
        }
    }

    /// `accept`, `reject` / `reject-under-tested-configuration`, `not-enough-evidence`,
    /// `watch` (spaces or dashes, any case).
    pub fn parse(s: &str) -> Result<Self, String> {
        let norm = s.trim().to_ascii_lowercase().replace([' ', '_'], "-");
        match norm.as_str() {
            "accept" => Ok(VerdictKind::Accept),
            "reject" | "reject-under-tested-configuration" => {
                Ok(VerdictKind::RejectUnderTestedConfiguration)
            }
            "not-enough-evidence" => Ok(VerdictKind::NotEnoughEvidence),
            "watch" => Ok(VerdictKind::Watch),
            _ => Err(format!(
                "unknown verdict {s:?}; use one of: accept, reject (under tested configuration), not-enough-evidence, watch"
            )),
        }
    }
}

impl std::fmt::Display for VerdictKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_words())
    }
}

/// The configuration a verdict is scoped to, copied from the candidate's newest artifact.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Scope {
    pub model: String,
    pub engine: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine_version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quantization: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hardware: Option<String>,
    /// The artifact files the verdict was given over.
    pub artifacts: Vec<String>,
}

impl Scope {
    /// The configuration fields that differ from this scope in `now`, each as
    /// `"field before → after"` (the artifact lists are not compared).
    pub fn changes_to(&self, now: &Scope) -> Vec<String> {
        let opt = |o: &Option<String>| o.clone().unwrap_or_else(|| "unknown".into());
        let mut differs = Vec::new();
        if now.model != self.model {
            differs.push(format!("model {} → {}", self.model, now.model));
        }
        if now.engine != self.engine || now.engine_version != self.engine_version {
            differs.push(format!(
                "engine {} {} → {} {}",
                self.engine,
                opt(&self.engine_version),
                now.engine,
                opt(&now.engine_version)
            ));
        }
        if now.quantization != self.quantization {
            differs.push(format!(
                "quantization {} → {}",
                opt(&self.quantization),
                opt(&now.quantization)
            ));
        }
        if now.hardware != self.hardware {
            differs.push(format!(
                "hardware {} → {}",
                opt(&self.hardware),
                opt(&now.hardware)
            ));
        }
        if now.window_tokens != self.window_tokens {
            let w = |t: Option<u64>| t.map(|t| t.to_string()).unwrap_or_else(|| "unknown".into());
            differs.push(format!(
                "window {} → {}",
                w(self.window_tokens),
                w(now.window_tokens)
            ));
        }
        differs
    }

    pub fn of(a: &Artifact, artifacts: Vec<String>) -> Self {
        let c = &a.candidate;
        Scope {
            model: c.model.clone(),
            engine: c.engine.to_string(),
            engine_version: c.engine_version.clone(),
            quantization: c.quantization.clone(),
            window_tokens: c.context_window.tokens,
            hardware: c.hardware.clone(),
            artifacts,
        }
    }
}

/// One verdict as given.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VerdictEntry {
    pub verdict: VerdictKind,
    pub reason: String,
    pub date: DateTime<Utc>,
    pub scope: Scope,
    /// What was not attempted (other images, engines, checkpoints, …).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_attempted: Vec<String>,
    /// Production impact, when there was one worth noting.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub production_impact: Option<String>,
}

/// `DIR/<slug>.verdict.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VerdictRecord {
    pub schema_version: u32,
    pub slug: String,
    #[serde(flatten)]
    pub current: VerdictEntry,
    /// Earlier verdicts on the same slug, oldest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub history: Vec<VerdictEntry>,
}

/// The numbers a retracted artifact claimed, kept so the superseded-claims table can say
/// what was withdrawn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Claim {
    pub suite: String,
    /// e.g. `3/6 = 50% [19–81%]`, or the failure class for a failure artifact.
    pub claimed: String,
}

/// `DIR/<artifact-file>.retraction.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RetractionRecord {
    pub schema_version: u32,
    /// File name of the retracted artifact (it sits beside this record).
    pub artifact: String,
    pub slug: String,
    pub reason: String,
    pub date: DateTime<Utc>,
    /// sha256 of the artifact's bytes at retraction: it is kept unchanged.
    pub artifact_sha256: String,
    pub claims: Vec<Claim>,
}

pub fn verdict_path(dir: &Path, slug: &str) -> PathBuf {
    dir.join(format!("{slug}.verdict.json"))
}

pub fn retraction_path(artifact: &Path) -> PathBuf {
    let mut s = artifact.as_os_str().to_os_string();
    s.push(".retraction.json");
    PathBuf::from(s)
}

pub fn sha256_file(path: &Path) -> Result<String, EvidenceError> {
    let bytes = std::fs::read(path).map_err(|source| EvidenceError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    Ok(hex::encode(Sha256::digest(&bytes)))
}

fn read_versioned<T: serde::de::DeserializeOwned>(
    path: &Path,
    what: &'static str,
) -> Result<T, EvidenceError> {
    let text = std::fs::read_to_string(path).map_err(|source| EvidenceError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let raw: serde_json::Value =
        serde_json::from_str(&text).map_err(|source| EvidenceError::Parse {
            path: path.to_path_buf(),
            what,
            source,
        })?;
    let found = raw
        .get("schema_version")
        .and_then(|v| v.as_u64())
        .unwrap_or(0);
    if found != u64::from(EVIDENCE_VERSION) {
        return Err(EvidenceError::Version {
            path: path.to_path_buf(),
            what,
            found,
        });
    }
    serde_json::from_value(raw).map_err(|source| EvidenceError::Parse {
        path: path.to_path_buf(),
        what,
        source,
    })
}

pub fn read_verdict(path: &Path) -> Result<VerdictRecord, EvidenceError> {
    read_versioned(path, "verdict")
}

pub fn read_retraction(path: &Path) -> Result<RetractionRecord, EvidenceError> {
    read_versioned(path, "retraction")
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
    bakeoff_artifact::slug::validate_slug(slug).map_err(EvidenceError::BadSlug)?;
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
            claimed: crate::terminal::score_text(&s.summary.score),
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
    use super::*;

    #[test]
    fn verdict_words_parse_both_ways() {
        for v in VerdictKind::ALL {
            assert_eq!(VerdictKind::parse(v.as_words()).unwrap(), v);
        }
        assert_eq!(
            VerdictKind::parse("reject").unwrap(),
            VerdictKind::RejectUnderTestedConfiguration
        );
        assert!(VerdictKind::parse("maybe").unwrap_err().contains("watch"));
    }

    fn entry(v: VerdictKind, reason: &str) -> VerdictEntry {
        VerdictEntry {
            verdict: v,
            reason: reason.into(),
            date: Utc::now(),
            scope: Scope {
                model: "m".into(),
                engine: "llama.cpp".into(),
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

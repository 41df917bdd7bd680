//! Verdicts and retractions: the operator's judgments, stored as small versioned JSON files
//! beside the artifacts they judge (format in docs/reports.md; schemas in
//! `schemas/verdict.v1.schema.json` and `schemas/retraction.v1.schema.json`).
//!
//! - `DIR/<slug>.verdict.json` — the verdict on one candidate, scoped to the configuration
//!   it was tested in. A new verdict keeps the previous ones in `history`: a changed mind is
//!   recorded, never a silent edit.
//! - `DIR/<artifact-file>.retraction.json` — a result marked superseded, with its date and
//!   reason, the claim it made and the artifact's sha256 at retraction time. The artifact
//!   itself is never touched; reports stop counting it and list it as a superseded claim.
//!
//! The records live here, with the artifact, so that every reader sees one format; the
//! operations that write them (`set_verdict`, `retract`) are `bakeoff-report`'s.

use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::versioned::Versioned;
use crate::{Artifact, EngineKind};

/// Version of the verdict and retraction formats. Readers refuse versions they do not know.
pub const EVIDENCE_VERSION: u32 = 1;

/// A verdict, always scoped to the tested configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
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
    pub fn parse(s: &str) -> Result<Self, UnknownVerdict> {
        let norm = s.trim().to_ascii_lowercase().replace([' ', '_'], "-");
        match norm.as_str() {
            "accept" => Ok(VerdictKind::Accept),
            "reject" | "reject-under-tested-configuration" => {
                Ok(VerdictKind::RejectUnderTestedConfiguration)
            }
            "not-enough-evidence" => Ok(VerdictKind::NotEnoughEvidence),
            "watch" => Ok(VerdictKind::Watch),
            _ => Err(UnknownVerdict(s.to_string())),
        }
    }
}

/// A verdict word [`VerdictKind::parse`] does not know.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown verdict {0:?}; use one of: accept, reject (under tested configuration), not-enough-evidence, watch"
)]
pub struct UnknownVerdict(pub String);

impl std::fmt::Display for VerdictKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_words())
    }
}

/// The configuration a verdict is scoped to, copied from the candidate's newest artifact.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Scope {
    pub model: String,
    pub engine: EngineKind,
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
            engine: c.engine,
            engine_version: c.engine_version.clone(),
            quantization: c.quantization.clone(),
            window_tokens: c.context_window.tokens,
            hardware: c.hardware.clone(),
            artifacts,
        }
    }
}

/// One verdict as given.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Claim {
    pub suite: String,
    /// e.g. `3/6 = 50% [19–81%]`, or the failure class for a failure artifact.
    pub claimed: String,
}

/// `DIR/<artifact-file>.retraction.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
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

impl Versioned for VerdictRecord {
    const WHAT: &'static str = "verdict record";
    const VERSION: u32 = EVIDENCE_VERSION;
}

impl Versioned for RetractionRecord {
    const WHAT: &'static str = "retraction record";
    const VERSION: u32 = EVIDENCE_VERSION;
}

/// The JSON Schemas of the two records, as checked in under `schemas/`.
pub fn json_schemas() -> [(&'static str, serde_json::Value); 2] {
    let v = |s| serde_json::to_value(s).unwrap_or(serde_json::Value::Null);
    [
        (
            "verdict.v1.schema.json",
            v(schemars::schema_for!(VerdictRecord)),
        ),
        (
            "retraction.v1.schema.json",
            v(schemars::schema_for!(RetractionRecord)),
        ),
    ]
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
        assert!(
            VerdictKind::parse("maybe")
                .unwrap_err()
                .to_string()
                .contains("watch")
        );
    }

    /// Verdicts written while `scope.engine` was a string hold the engine's display name, which
    /// is also its JSON name: they read, and write back unchanged.
    #[test]
    fn a_scope_engine_reads_and_writes_as_the_string_did() {
        for name in ["llama.cpp", "vllm", "sglang", "generic"] {
            let json = serde_json::json!({"model": "m", "engine": name, "artifacts": []});
            let scope: Scope = serde_json::from_value(json.clone()).unwrap();
            assert_eq!(scope.engine.to_string(), name);
            assert_eq!(serde_json::to_value(&scope).unwrap(), json);
        }
    }

    /// The checked-in schemas match the types; `BAKEOFF_UPDATE_SCHEMA=1` regenerates them.
    #[test]
    fn checked_in_schemas_match_the_types() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../schemas");
        for (name, schema) in json_schemas() {
            let generated = serde_json::to_string_pretty(&schema).unwrap() + "\n";
            let path = dir.join(name);
            if std::env::var_os("BAKEOFF_UPDATE_SCHEMA").is_some() {
                std::fs::write(&path, &generated).unwrap();
            }
            let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
            assert!(
                on_disk == generated,
                "schemas/{name} is out of date; regenerate with BAKEOFF_UPDATE_SCHEMA=1 cargo test -p bakeoff-artifact --lib"
            );
        }
    }
}

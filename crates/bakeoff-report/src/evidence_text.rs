//! What `bakeoff verdict` and `bakeoff retract` print. The scope and the claims are copied
//! from an artifact's file and the slug and reason are the operator's: every one is escaped.

use std::path::Path;

use bakeoff_artifact::evidence::{RetractionRecord, VerdictRecord};

use crate::escape::for_terminal;

/// The verdict as recorded, what it replaced and where it was written (one line each).
pub fn verdict(slug: &str, record: &VerdictRecord, path: &Path) -> Vec<String> {
    let t = |s: &str| for_terminal(s, 300);
    let s = &record.current.scope;
    let mut lines = vec![format!(
        "verdict on {}: {} ({}) — scoped to {} on {} {}, quantization {}, window {}, hardware {}",
        t(slug),
        record.current.verdict,
        record.current.date.format("%Y-%m-%d"),
        t(&s.model),
        s.engine,
        t(s.engine_version.as_deref().unwrap_or("(version unknown)")),
        t(s.quantization.as_deref().unwrap_or("unknown")),
        s.window_tokens
            .map(|t| t.to_string())
            .unwrap_or_else(|| "unknown".into()),
        t(s.hardware.as_deref().unwrap_or("not recorded")),
    )];
    if let Some(prev) = record.history.last() {
        lines.push(format!(
            "replaces {} ({}); the earlier verdict is kept in the record's history",
            prev.verdict,
            prev.date.format("%Y-%m-%d")
        ));
    }
    lines.push(format!("wrote {}", t(&path.display().to_string())));
    lines
}

/// The retraction as recorded: what was retracted and why, the claims withdrawn, and that the
/// artifact itself is unchanged (one line each).
pub fn retraction(r: &RetractionRecord, path: &Path) -> Vec<String> {
    let t = |s: &str| for_terminal(s, 500);
    let mut lines = vec![format!(
        "retracted {} ({}) on {}: {}",
        t(&r.artifact),
        t(&r.slug),
        r.date.format("%Y-%m-%d"),
        t(&r.reason)
    )];
    for c in &r.claims {
        lines.push(format!("  withdrawn: {}: {}", t(&c.suite), t(&c.claimed)));
    }
    lines.push(format!(
        "the artifact is unchanged (sha256 {}); wrote {}",
        r.artifact_sha256.get(..16).unwrap_or(&r.artifact_sha256),
        t(&path.display().to_string())
    ));
    lines
}

//! A candidate's isolation in words: the line under its ladder (`campaign status`, `report
//! DIR`), and its part of `negative-results.md` — the probes with their hypotheses, and the
//! separating factor with the probe that started and the one that failed, or "not isolated"
//! with what the budget cut. Never a guess: a factor is named only when the record names one.

use std::fmt::Write as _;

use bakeoff_artifact::campaign::{IsolationRecord, IsolationStatus, VariantRow};

/// `isolation (3 of 6 starts, 41 s): isolated: graph capture — started: V1; failed: V2`.
pub fn line(iso: &IsolationRecord) -> String {
    let mut s = format!(
        "isolation of {} ({}; {} of {} starts, {} of {} s): ",
        iso.parent, iso.class, iso.starts, iso.max_starts, iso.seconds, iso.budget_s
    );
    match (&iso.status, &iso.factor) {
        (IsolationStatus::Isolated | IsolationStatus::ProvenUnfit, Some(f)) => {
            let _ = write!(s, "{}: {f}", iso.status.as_str());
            if let Some(p) = &iso.passed {
                let _ = write!(s, "; started: {p}");
            }
            if let Some(p) = &iso.failed {
                let _ = write!(s, "; failed: {p}");
            }
            let _ = write!(s, " ({})", iso.summary);
        }
        (IsolationStatus::InProgress, _) => {
            let _ = write!(s, "in progress: {}", iso.summary);
        }
        _ => s.push_str(&iso.summary),
    }
    if !iso.alternatives.is_empty() {
        let asked: Vec<String> = iso
            .alternatives
            .iter()
            .map(|a| format!("{} {}", a.build, a.verdict.as_str()))
            .collect();
        let _ = write!(s, "; asked without a start: {}", asked.join(", "));
    }
    if !iso.not_attempted.is_empty() {
        let _ = write!(s, "; not attempted: {}", iso.not_attempted.join("; "));
    }
    s
}

/// The separating factor for the believed cause: `None` unless the record names one.
pub fn factor(iso: &IsolationRecord) -> Option<String> {
    let f = iso.factor.as_ref()?;
    let mut s = f.clone();
    match (&iso.passed, &iso.failed) {
        (Some(p), Some(q)) => {
            let _ = write!(s, " (probe `{p}` started, `{q}` failed)");
        }
        (None, Some(q)) => {
            let _ = write!(s, " (`{q}` failed)");
        }
        _ => {}
    }
    Some(s)
}

/// The probes of `rows` in step order: `(step, hypothesis, probe, outcome, variant)`.
pub fn probes<'a>(rows: &[&'a VariantRow]) -> Vec<&'a VariantRow> {
    let mut out: Vec<&VariantRow> = rows.iter().copied().filter(|r| r.probe.is_some()).collect();
    out.sort_by_key(|r| r.probe.as_ref().map_or(0, |p| p.step));
    out
}

//! The comparison: candidates × suites, built from the counted (non-retracted) artifacts, with
//! each candidate's verdict scoped to its tested configuration. Every renderer (terminal,
//! markdown, HTML) draws this one model, so they cannot disagree.

use std::collections::BTreeMap;

use bakeoff_artifact::{ArtifactKind, SuiteStatus, slug::window_label};

use crate::evidence::{VerdictKind, VerdictRecord};
use crate::registry::{Entry, Registry};
use crate::steps::steps_of;
use crate::terminal::score_text;

/// The order suites appear in; suites this list does not know follow alphabetically.
const SUITE_ORDER: &[&str] = &[
    "smoke",
    "tool",
    "session",
    "context",
    "intelligence",
    "throughput",
    "longgen",
];

#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    /// Score with its Wilson interval, or what stands in for it.
    pub text: String,
    pub status: SuiteStatus,
    /// Instrument flag codes of the suite.
    pub flags: Vec<String>,
    /// The artifact the cell comes from.
    pub artifact: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub slug: String,
    pub model: String,
    /// Engine and version, e.g. `llama.cpp b11434`.
    pub engine: String,
    pub quantization: String,
    pub window: String,
    pub hardware: String,
    /// Suite name → newest counted result.
    pub cells: BTreeMap<String, Cell>,
    /// Counted runs, counted failure artifacts, retracted artifacts.
    pub runs: usize,
    pub failures: usize,
    pub retracted: usize,
    /// The newest counted failure, when the candidate has one: `class: message`.
    pub failure: Option<String>,
    pub verdict: Option<VerdictKind>,
    pub verdict_reason: Option<String>,
    pub verdict_date: Option<String>,
    /// Why the verdict may no longer describe the evidence: newer counted runs it did not
    /// see, a configuration that changed since, a result it rested on now retracted.
    pub verdict_caveats: Vec<String>,
}

impl Row {
    pub fn verdict_text(&self) -> String {
        match self.verdict {
            Some(v) => v.as_words().to_string(),
            None => "none recorded".into(),
        }
    }

    /// The verdict with its date and any caveat, as the terminal and markdown tables show it:
    /// `accept (2026-08-24; ⚠ predates 2 newer runs)`.
    pub fn verdict_with_date(&self) -> String {
        let mut extra: Vec<String> = self.verdict_date.iter().cloned().collect();
        extra.extend(self.verdict_caveats.iter().map(|c| format!("⚠ {c}")));
        if extra.is_empty() {
            self.verdict_text()
        } else {
            format!("{} ({})", self.verdict_text(), extra.join("; "))
        }
    }

    /// `runs: 2 (1 failure, 1 retracted)`.
    pub fn evidence_text(&self) -> String {
        let mut s = format!("{} counted", self.runs);
        if self.failures > 0 {
            s.push_str(&format!(", {} failed", self.failures));
        }
        if self.retracted > 0 {
            s.push_str(&format!(", {} retracted", self.retracted));
        }
        s
    }
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct CandidateTable {
    pub suites: Vec<String>,
    pub rows: Vec<Row>,
}

fn suite_rank(s: &str) -> (usize, String) {
    (
        SUITE_ORDER
            .iter()
            .position(|x| *x == s)
            .unwrap_or(SUITE_ORDER.len()),
        s.to_string(),
    )
}

/// Score text, or for an unscored load suite its peak rate, or its status.
fn cell_text(s: &bakeoff_artifact::SuiteResult) -> String {
    match s.status {
        SuiteStatus::Failed => return "FAILED (measured nothing)".into(),
        SuiteStatus::Incomplete | SuiteStatus::Complete => {}
    }
    let mut t = if s.summary.score.is_some() {
        score_text(&s.summary.score)
    } else {
        let peak = steps_of(s)
            .into_iter()
            .filter_map(|st| st.tok_per_s.map(|r| (r, st.concurrency)))
            .max_by(|a, b| a.0.total_cmp(&b.0));
        match peak {
            Some((r, Some(c))) => format!("peak {r:.0} tok/s @ c={c}"),
            Some((r, None)) => format!("peak {r:.0} tok/s"),
            None => score_text(&None),
        }
    };
    if s.status == SuiteStatus::Incomplete {
        t.push_str(" (INCOMPLETE)");
    }
    t
}

fn row_for(slug: &str, entries: &[&Entry], verdict: Option<&VerdictRecord>) -> Row {
    let counted: Vec<&&Entry> = entries.iter().filter(|e| !e.is_retracted()).collect();
    // Describe the candidate by its newest counted artifact (newest of any when all are
    // retracted): entries are sorted by creation time.
    let newest = counted
        .last()
        .map(|e| **e)
        .or_else(|| entries.last().copied());
    let mut cells = BTreeMap::new();
    for e in &counted {
        for (name, s) in &e.artifact.suites {
            cells.insert(
                name.clone(),
                Cell {
                    text: cell_text(s),
                    status: s.status,
                    flags: s.summary.flags.iter().map(|f| f.code.to_string()).collect(),
                    artifact: e.name.clone(),
                },
            );
        }
    }
    let failure = counted
        .iter()
        .rev()
        .find_map(|e| e.artifact.failure.as_ref())
        .map(|f| format!("{}: {}", f.class, f.message));
    let (model, engine, quantization, window, hardware) = match newest {
        Some(e) => {
            let c = &e.artifact.candidate;
            (
                c.model.clone(),
                format!(
                    "{} {}",
                    c.engine,
                    c.engine_version.as_deref().unwrap_or("(version unknown)")
                ),
                c.quantization.clone().unwrap_or_else(|| "-".into()),
                c.context_window
                    .tokens
                    .map(window_label)
                    .unwrap_or_else(|| "unknown".into()),
                c.hardware.clone().unwrap_or_else(|| "-".into()),
            )
        }
        None => Default::default(),
    };
    Row {
        slug: slug.to_string(),
        model,
        engine,
        quantization,
        window,
        hardware,
        cells,
        runs: counted.len(),
        failures: counted
            .iter()
            .filter(|e| e.artifact.kind == ArtifactKind::Failure)
            .count(),
        retracted: entries.len() - counted.len(),
        failure,
        verdict_caveats: verdict
            .map(|v| verdict_caveats(&v.current.scope, entries, newest))
            .unwrap_or_default(),
        verdict: verdict.map(|v| v.current.verdict),
        verdict_reason: verdict.map(|v| v.current.reason.clone()),
        verdict_date: verdict.map(|v| v.current.date.format("%Y-%m-%d").to_string()),
    }
}

/// What changed since a verdict was given over `scope`: counted runs it did not see, a
/// configuration that differs from the newest counted artifact's, results it rested on that
/// are now retracted. A verdict is scoped to what was tested; these say when that is stale.
fn verdict_caveats(
    scope: &crate::evidence::Scope,
    entries: &[&Entry],
    newest: Option<&Entry>,
) -> Vec<String> {
    let mut out = Vec::new();
    let newer = entries
        .iter()
        .filter(|e| !e.is_retracted() && !scope.artifacts.contains(&e.name))
        .count();
    if newer > 0 {
        out.push(format!(
            "predates {newer} newer run{}",
            if newer == 1 { "" } else { "s" }
        ));
    }
    let retracted = entries
        .iter()
        .filter(|e| e.is_retracted() && scope.artifacts.contains(&e.name))
        .count();
    if retracted > 0 {
        out.push(format!(
            "based on {retracted} retracted result{}",
            if retracted == 1 { "" } else { "s" }
        ));
    }
    if let Some(e) = newest.filter(|e| !e.is_retracted()) {
        let differs = scope.changes_to(&crate::evidence::Scope::of(&e.artifact, Vec::new()));
        if !differs.is_empty() {
            out.push(format!("scope differs: {}", differs.join(", ")));
        }
    }
    out
}

pub fn build(reg: &Registry) -> CandidateTable {
    // Suites that ran, and suites a failed run asked for (so its failure has a column).
    let mut suites: Vec<String> = reg
        .counted()
        .flat_map(|e| {
            let requested = e
                .artifact
                .run
                .get("suites")
                .and_then(|v| v.as_array())
                .map(|a| {
                    a.iter()
                        .filter_map(|x| x.as_str().map(str::to_string))
                        .collect::<Vec<_>>()
                })
                .unwrap_or_default();
            e.artifact.suites.keys().cloned().chain(requested)
        })
        .collect();
    suites.sort_by_key(|s| suite_rank(s));
    suites.dedup();
    let rows = reg
        .slugs()
        .iter()
        .map(|slug| {
            let entries: Vec<&Entry> = reg.entries_of(slug).collect();
            row_for(slug, &entries, reg.verdicts.get(slug))
        })
        .collect();
    CandidateTable { suites, rows }
}

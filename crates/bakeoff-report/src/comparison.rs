//! The comparison: candidates × suites, built from the counted (non-retracted) artifacts, with
//! each candidate's verdict scoped to its tested configuration. Every renderer (terminal,
//! markdown, HTML) draws this one model, so they cannot disagree.
//!
//! A `bench run` artifact (a sweep in `artifact.load`, no suite; its slug ends in `-bench`) is
//! not a candidate of its own: it joins the row of the candidate it measured — the slug without
//! `-bench`, else the candidate whose model, engine, quantization and window match — and fills
//! the row's bench columns (peak output tok/s; TTFT and TPOT p50 at the lowest level run). A
//! bench run no candidate matches keeps its own row, with those columns filled.

use std::collections::BTreeMap;

use bakeoff_artifact::{Artifact, ArtifactKind, EngineKind, SuiteStatus, slug::window_label};

use crate::evidence::{VerdictKind, VerdictRecord};
use crate::registry::{Entry, Registry};
use crate::score::score_text;
pub use crate::steps::level_text;
use crate::steps::{Step, steps_of, steps_of_load};

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

/// One name per model, however it was spelled: the served id of an endpoint (a file path for a
/// llama-server started without `--alias`, `Gemma-3-270M-Q4_K_M.gguf`) and the embedded
/// default's alias (`gemma-3-270m-q4_k_m`) are one model. The base name, lower case, `.gguf`
/// cut.
pub fn model_name(model: &str) -> String {
    let base = model.rsplit('/').next().unwrap_or(model).to_lowercase();
    base.strip_suffix(".gguf").unwrap_or(&base).to_string()
}

/// A `bench run` artifact: a measured sweep in `artifact.load` and no suite (its default slug
/// ends in `-bench`).
pub fn is_bench(a: &Artifact) -> bool {
    a.kind == ArtifactKind::Bakeoff
        && a.suites.is_empty()
        && (!a.load.is_empty() || a.candidate.slug.ends_with("-bench"))
}

/// The configuration a bench run is matched on: model (one name per model), engine,
/// quantization, window.
fn config_key(a: &Artifact) -> (String, EngineKind, Option<String>, Option<u64>) {
    let c = &a.candidate;
    (
        model_name(&c.model),
        c.engine,
        c.quantization.as_ref().map(|q| q.to_lowercase()),
        c.context_window.tokens,
    )
}

/// The headline figures of a candidate's newest counted bench run.
#[derive(Debug, Clone, PartialEq)]
pub struct BenchCell {
    /// The bench artifact they come from.
    pub artifact: String,
    /// Output tokens per second of the step that had the most, and that step's level.
    pub peak_tok_per_s: Option<f64>,
    pub peak_level: String,
    /// The reference level: the lowest concurrency run (the first step of an open-loop sweep).
    pub reference_level: String,
    pub ttft_p50_ms: Option<f64>,
    pub tpot_p50_ms: Option<f64>,
    /// How many rounds the figures are the mean of (`bench run --repeat N`); 1 for one run.
    pub rounds: usize,
    /// Levels whose rounds disagree beyond their own errors (`unstable`, docs/metrics.md
    /// "Repeats").
    pub unstable: Vec<String>,
    /// Steps measured on a contaminated host, of all steps (docs/metrics.md "Conditions").
    pub contaminated_steps: usize,
    pub steps: usize,
}

/// A rate as the capacity finding prints it below 100 (`6.0`), whole above (`412`).
fn rate_text(r: f64) -> String {
    if r.abs() < 100.0 {
        format!("{r:.1}")
    } else {
        format!("{r:.0}")
    }
}

fn ms_text(v: Option<f64>) -> String {
    match v {
        Some(x) if x >= 100.0 => format!("{x:.0} ms"),
        Some(x) => format!("{x:.1} ms"),
        None => "-".into(),
    }
}

impl BenchCell {
    /// From a sweep's steps; `None` when it has none. A level run in several rounds
    /// (`--repeat N`) counts as its rounds' mean, as the capacity finding counts it, never as
    /// its best round.
    pub fn of(artifact: &str, steps: &[Step]) -> Option<Self> {
        let levels = crate::steps::levels_of(steps);
        let reference = levels
            .iter()
            .enumerate()
            .min_by(|(i, a), (j, b)| match (a.concurrency, b.concurrency) {
                (Some(x), Some(y)) => x.total_cmp(&y),
                _ => i.cmp(j),
            })?
            .1;
        let mean =
            |l: &crate::steps::Level, get: fn(&Step) -> Option<f64>| l.figure(get).map(|f| f.mean);
        let peak = levels
            .iter()
            .filter_map(|l| Some((l, mean(l, |s| s.tok_per_s)?)))
            .max_by(|a, b| a.1.total_cmp(&b.1));
        Some(Self {
            artifact: artifact.to_string(),
            peak_tok_per_s: peak.map(|p| p.1),
            peak_level: peak.map(|p| p.0.label.clone()).unwrap_or_default(),
            reference_level: reference.label.clone(),
            ttft_p50_ms: mean(reference, |s| s.ttft_p50_ms),
            tpot_p50_ms: mean(reference, |s| s.tpot_p50_ms),
            rounds: levels.iter().map(|l| l.rounds.len()).max().unwrap_or(1),
            unstable: Vec::new(),
            contaminated_steps: steps.iter().filter(|s| s.contamination.is_some()).count(),
            steps: steps.len(),
        })
    }

    /// From a `bench run` sweep: the peak is the capacity finding's (the same figure and level
    /// the finding states), the rest as [`BenchCell::of`].
    pub fn of_load(artifact: &str, report: &bakeoff_artifact::LoadReport) -> Option<Self> {
        let mut cell = Self::of(artifact, &steps_of_load(report))?;
        if let Some(c) = &report.capacity
            && let (Some(peak), Some(label)) = (c.peak_throughput, &c.peak_label)
        {
            cell.peak_tok_per_s = Some(peak);
            cell.peak_level = label.clone();
        }
        cell.unstable = report
            .levels
            .iter()
            .filter(|l| l.unstable)
            .map(|l| l.label.clone())
            .collect();
        Some(cell)
    }

    /// `412 tok/s @ c=8`; under `--repeat` the mean of the rounds (`6.0 tok/s @ c=4, mean of
    /// 2 rounds`).
    pub fn peak_text(&self) -> String {
        match self.peak_tok_per_s {
            Some(r) => format!(
                "{} tok/s @ {}{}",
                rate_text(r),
                self.peak_level,
                self.rounds_text()
            ),
            None => "-".into(),
        }
    }

    fn rounds_text(&self) -> String {
        if self.rounds > 1 {
            format!(", mean of {} rounds", self.rounds)
        } else {
            String::new()
        }
    }

    /// What the figures cannot vouch for: `unstable c=4`, `CONTAMINATED 6/6 steps`.
    pub fn marks(&self) -> Vec<String> {
        let mut out = Vec::new();
        if !self.unstable.is_empty() {
            out.push(format!("unstable {}", self.unstable.join(", ")));
        }
        if self.contaminated_steps > 0 {
            out.push(format!(
                "CONTAMINATED {}/{} steps",
                self.contaminated_steps, self.steps
            ));
        }
        out
    }

    /// `29.9 ms @ c=1`.
    pub fn ttft_text(&self) -> String {
        match self.ttft_p50_ms {
            Some(_) => format!("{} @ {}", ms_text(self.ttft_p50_ms), self.reference_level),
            None => "-".into(),
        }
    }

    /// `4.12 ms @ c=1`.
    pub fn tpot_text(&self) -> String {
        match self.tpot_p50_ms {
            Some(x) => format!("{x:.2} ms @ {}", self.reference_level),
            None => "-".into(),
        }
    }
}

/// The bench figures of the newest counted bench artifact among `entries` that has steps.
fn bench_cell(entries: &[&Entry]) -> Option<BenchCell> {
    entries
        .iter()
        .rev()
        .filter(|e| !e.is_retracted() && is_bench(&e.artifact))
        .find_map(|e| {
            e.artifact
                .load
                .values()
                .find_map(|l| BenchCell::of_load(&e.name, l))
        })
}

#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub slug: String,
    /// One name per model ([`model_name`]).
    pub model: String,
    /// The newest artifact's engine (none without one); [`Row::engine_text`] adds the version.
    pub engine: Option<EngineKind>,
    pub engine_version: Option<String>,
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
    /// The newest counted bench run's figures, when the candidate has one.
    pub bench: Option<BenchCell>,
    /// Counted bench runs (included in `runs`).
    pub bench_runs: usize,
}

impl Row {
    /// Engine and version, e.g. `llama.cpp b11434`; empty when no artifact says.
    pub fn engine_text(&self) -> String {
        match self.engine {
            Some(e) => format!(
                "{e} {}",
                self.engine_version
                    .as_deref()
                    .unwrap_or("(version unknown)")
            ),
            None => String::new(),
        }
    }

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
        if self.bench_runs > 0 {
            s.push_str(&format!(" ({} bench)", self.bench_runs));
        }
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

impl CandidateTable {
    /// Any row with bench figures: the tables then show the bench columns.
    pub fn has_bench(&self) -> bool {
        self.rows.iter().any(|r| r.bench.is_some())
    }
}

/// Headers of the bench columns (terminal, markdown and HTML tables).
pub const BENCH_HEADERS: [&str; 3] = [
    "bench peak out tok/s",
    "bench TTFT p50 (lowest level)",
    "bench TPOT p50 (lowest level)",
];

fn suite_rank(s: &str) -> (usize, String) {
    (
        SUITE_ORDER
            .iter()
            .position(|x| *x == s)
            .unwrap_or(SUITE_ORDER.len()),
        s.to_string(),
    )
}

/// A suite's own cell text, marked when the suite failed or is incomplete.
fn with_status(text: String, status: SuiteStatus) -> String {
    match status {
        SuiteStatus::Failed => "FAILED (measured nothing)".into(),
        SuiteStatus::Incomplete => format!("{text} (INCOMPLETE)"),
        SuiteStatus::Complete => text,
    }
}

/// Score text, or for an unscored load suite its peak rate, or its status.
fn cell_text(name: &str, s: &bakeoff_artifact::SuiteResult) -> String {
    match s.status {
        SuiteStatus::Failed => return "FAILED (measured nothing)".into(),
        SuiteStatus::Incomplete | SuiteStatus::Complete => {}
    }
    let mut t = if s.summary.score.is_some() {
        score_text(&s.summary.score)
    } else {
        let peak = steps_of(name, s)
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
                    text: crate::refusal::cell_text(name, s)
                        .or_else(|| crate::structured::cell_text(name, s))
                        .or_else(|| crate::damage::cell_text(name, s))
                        .or_else(|| crate::adapter::cell_text(name, s))
                        .map(|t| with_status(t, s.status))
                        .unwrap_or_else(|| cell_text(name, s)),
                    status: s.status,
                    flags: crate::families::distinct_flags(
                        s.summary.flags.iter().map(|f| f.code.as_str()),
                    ),
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
    let (model, engine, engine_version, quantization, window, hardware) = match newest {
        Some(e) => {
            let c = &e.artifact.candidate;
            (
                model_name(&c.model),
                Some(c.engine),
                c.engine_version.clone(),
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
        engine_version,
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
        bench: bench_cell(entries),
        bench_runs: counted.iter().filter(|e| is_bench(&e.artifact)).count(),
    }
}

/// Add a bench slug's entries to a candidate's row: its figures (when newer or the row has
/// none), its runs and retractions. The candidate's description and verdict stay its own.
fn merge_bench(row: &mut Row, bench: &[&Entry]) {
    let counted = bench.iter().filter(|e| !e.is_retracted()).count();
    row.runs += counted;
    row.bench_runs += counted;
    row.retracted += bench.len() - counted;
    if let Some(cell) = bench_cell(bench) {
        row.bench = Some(cell);
    }
}

/// The newest counted entry of a slug (newest of any when all are retracted).
fn newest<'a>(entries: &[&'a Entry]) -> Option<&'a Entry> {
    entries
        .iter()
        .rev()
        .find(|e| !e.is_retracted())
        .or_else(|| entries.last())
        .copied()
}

/// The candidate slug a bench slug's runs belong to: the slug without `-bench`, else the
/// first candidate whose newest artifact has the same model, engine, quantization and window.
fn bench_target<'a>(
    bench_slug: &str,
    bench: &[&Entry],
    candidates: &'a [(String, Vec<&Entry>)],
) -> Option<&'a str> {
    if let Some(stem) = bench_slug.strip_suffix("-bench")
        && let Some((s, _)) = candidates.iter().find(|(s, _)| s == stem)
    {
        return Some(s);
    }
    let key = config_key(&newest(bench)?.artifact);
    candidates
        .iter()
        .find(|(_, es)| newest(es).is_some_and(|e| config_key(&e.artifact) == key))
        .map(|(s, _)| s.as_str())
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
            let requested = e.artifact.run.suites.clone().unwrap_or_default();
            e.artifact.suites.keys().cloned().chain(requested)
        })
        .collect();
    suites.sort_by_key(|s| suite_rank(s));
    suites.dedup();
    // Bench slugs (every artifact a bench run) without a verdict of their own join the
    // candidate they measured; the others are candidates.
    let (bench, candidates): (Vec<_>, Vec<_>) = reg
        .slugs()
        .into_iter()
        .map(|slug| {
            let entries: Vec<&Entry> = reg.entries_of(&slug).collect();
            (slug, entries)
        })
        .partition(|(slug, entries)| {
            !reg.verdicts.contains_key(slug) && entries.iter().all(|e| is_bench(&e.artifact))
        });
    let mut joined: BTreeMap<String, Vec<&Entry>> = BTreeMap::new();
    let mut own: Vec<String> = Vec::new();
    for (slug, entries) in &bench {
        match bench_target(slug, entries, &candidates) {
            Some(target) => joined
                .entry(target.to_string())
                .or_default()
                .extend(entries.iter().copied()),
            None => own.push(slug.clone()),
        }
    }
    let mut rows: Vec<Row> = Vec::new();
    for slug in reg.slugs() {
        let entries: Vec<&Entry> = reg.entries_of(&slug).collect();
        if candidates.iter().any(|(s, _)| *s == slug) {
            let mut row = row_for(&slug, &entries, reg.verdicts.get(&slug));
            if let Some(b) = joined.get_mut(&slug) {
                b.sort_by_key(|e| e.artifact.created_at);
                merge_bench(&mut row, b);
            }
            rows.push(row);
        } else if own.contains(&slug) {
            rows.push(row_for(&slug, &entries, reg.verdicts.get(&slug)));
        }
    }
    CandidateTable { suites, rows }
}

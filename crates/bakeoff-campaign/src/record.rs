//! `campaign.json` and `negative-results.md`, rebuilt from the campaign and its journal after
//! every variant (atomically: a reader never sees half a file).

use std::path::Path;
use std::time::Instant;

use bakeoff_artifact::campaign::{
    Axis, CAMPAIGN_VERSION, CampaignRecord, CandidatePlan, Outcome, OutcomeKind, SuiteScore,
    Timings, VariantConditions, VariantRow,
};
use bakeoff_artifact::{Artifact, SuiteStatus, write_atomic};
use chrono::Utc;

use crate::error::CampaignError;
use crate::file::Campaign;
use crate::journal::{Journal, State};
use crate::variant::{Variant, launch_line};

pub const RECORD: &str = "campaign.json";
pub const NEGATIVE_RESULTS: &str = "negative-results.md";

/// A row with nothing but its names, pending.
pub fn blank_row(candidate: &str, slug: &str) -> VariantRow {
    let mut row = VariantRow {
        candidate: candidate.to_string(),
        variant: slug.to_string(),
        index: 0,
        axes: vec![],
        delta: vec![],
        launch: String::new(),
        outcome: Outcome::pending(),
        outcome_label: String::new(),
        suggested_verdict: None,
        suites: vec![],
        artifacts: vec![],
        log: None,
        log_lines: vec![],
        displaced: vec![],
        fit: None,
        timings: Timings::default(),
        attempts: 0,
        started_at: None,
        finished_at: None,
        notes: vec![],
        conditions: None,
        probe: None,
        trial: None,
    };
    row.set_outcome(Outcome::pending());
    row
}

/// A variant's row before it has run.
pub fn pending_row(v: &Variant) -> VariantRow {
    VariantRow {
        index: v.index,
        axes: v.axis_values(),
        delta: v.delta.clone(),
        launch: v.launch_line(),
        ..blank_row(&v.candidate, &v.slug)
    }
}

/// The record as the journal has it now: each variant's latest row, pending where none.
pub fn build(c: &Campaign, state: &State) -> CampaignRecord {
    let mut variants: Vec<VariantRow> = c
        .variants
        .iter()
        .map(|v| {
            state
                .rows
                .get(&v.slug)
                .cloned()
                .unwrap_or_else(|| pending_row(v))
        })
        .collect();
    // The probes isolation designed and the trials tuning ran, after the file's variants.
    let mut probes: Vec<VariantRow> = state
        .rows
        .values()
        .filter(|r| {
            (r.probe.is_some() || r.trial.is_some())
                && !c.variants.iter().any(|v| v.slug == r.variant)
        })
        .cloned()
        .collect();
    probes.sort_by_key(|r| r.index);
    variants.extend(probes);
    let mut notes = Vec::new();
    for (slug, row) in &state.rows {
        if row.probe.is_none() && row.trial.is_none() && !c.variants.iter().any(|v| &v.slug == slug)
        {
            notes.push(format!(
                "variant {slug} was run by an earlier version of the campaign file and is no longer in it (its row is in the journal)"
            ));
        }
    }
    CampaignRecord {
        schema_version: CAMPAIGN_VERSION,
        name: c.name.clone(),
        file: c.path.display().to_string(),
        fleet: c.fleet.path.display().to_string(),
        suites: c.suites.iter().map(|s| s.as_str().to_string()).collect(),
        limit: c.limit,
        started_at: state.first_started.unwrap_or_else(Utc::now),
        updated_at: Utc::now(),
        finished: variants.iter().all(|r| r.outcome.kind.is_final()),
        candidates: c
            .candidates
            .iter()
            .map(|cand| CandidatePlan {
                name: cand.name.clone(),
                seat: cand.seat.clone(),
                engine: c
                    .fleet
                    .seat(&cand.seat)
                    .map_or(bakeoff_artifact::EngineKind::Generic, |s| s.engine),
                base: c
                    .fleet
                    .seat(&cand.seat)
                    .map(launch_line)
                    .unwrap_or_default(),
                note: cand.note.clone(),
                axes: cand
                    .ladder
                    .iter()
                    .map(|(flag, values)| Axis {
                        flag: flag.clone(),
                        values: values.iter().map(|v| v.as_str().to_string()).collect(),
                    })
                    .collect(),
                ladder_mode: cand.ladder_mode,
                displaces: cand
                    .window
                    .as_ref()
                    .map(|w| w.displaces.clone())
                    .unwrap_or_default(),
            })
            .collect(),
        variants,
        notes,
        allow_contaminated: false,
        isolations: crate::isolate::records(c, &state.rows, &state.alternatives),
        tunings: crate::tune::records(c, &state.rows),
    }
}

/// Write `campaign.json` and `negative-results.md` into the campaign's directory.
/// `allow_contaminated`: `campaign run --allow contaminated` (recorded; the renderings then
/// suggest verdicts for contaminated variants too).
pub fn write(
    c: &Campaign,
    state: &State,
    allow_contaminated: bool,
) -> Result<CampaignRecord, CampaignError> {
    let mut rec = build(c, state);
    rec.allow_contaminated = allow_contaminated;
    // A verdict that rests on a measurement taken under contaminated conditions is withheld
    // unless this run allows it — when contention could have produced the outcome: a failure
    // the engine stated in its own words (`bad-argument`, `context-too-long`) stands
    // (`Outcome::contention_could_cause`). The row keeps its conditions, the renderings say why.
    for row in &mut rec.variants {
        let tainted = row.outcome.contention_could_cause()
            && row
                .conditions
                .as_ref()
                .is_some_and(|c| c.contamination().is_some());
        row.suggested_verdict = if tainted && !allow_contaminated {
            None
        } else {
            row.outcome.suggested_verdict()
        };
    }
    write_atomic(&c.out.join(RECORD), &rec)?;
    let generated = Utc::now().format("%Y-%m-%d %H:%M UTC").to_string();
    let md = bakeoff_report::campaign::negative_results(&rec, &c.out, &generated);
    bakeoff_report::logbook::write_replace(&c.out.join(NEGATIVE_RESULTS), &md)
        .map_err(|e| CampaignError::io(&c.out.join(NEGATIVE_RESULTS), e))?;
    Ok(rec)
}

/// The suites' figures of a measured variant, and its outcome: `completed` when every
/// requested suite is complete and measured something valid, else `invalid`.
pub fn measured(art: &Artifact, requested: &[String]) -> (Vec<SuiteScore>, Outcome) {
    let mut scores = Vec::new();
    let mut problems = Vec::new();
    for name in requested {
        let Some(s) = art.suites.get(name) else {
            problems.push(format!("{name}: no result"));
            continue;
        };
        let valid = s.status != SuiteStatus::Failed && !bakeoff_suites::nothing_valid(s);
        if !valid {
            problems.push(format!("{name}: measured nothing valid"));
        } else if s.status != SuiteStatus::Complete {
            problems.push(format!("{name}: incomplete"));
        }
        scores.push(SuiteScore {
            suite: name.clone(),
            status: s.status,
            score: s.summary.score.clone(),
            flags: s
                .summary
                .flags
                .iter()
                .map(|f| format!("{}:{}", severity(f.severity), f.code.as_str()))
                .collect(),
            valid,
        });
    }
    if let Some(f) = &art.failure {
        problems.push(format!("{}: {}", f.class, f.message));
    }
    let outcome = if problems.is_empty() {
        Outcome::of(OutcomeKind::Completed, "")
    } else {
        Outcome::of(OutcomeKind::Invalid, problems.join("; "))
    };
    (scores, outcome)
}

/// A variant's conditions: its seat load's (the start record's) and its suites' (the eval
/// artifact's), summarized; `None` when neither was sampled.
pub fn conditions(
    load: Option<&bakeoff_artifact::Conditions>,
    art: Option<&Artifact>,
) -> Option<VariantConditions> {
    let mut parts = vec![("seat load", load)];
    if let Some(a) = art {
        parts.extend(
            a.suites
                .iter()
                .map(|(name, s)| (name.as_str(), s.summary.conditions.as_ref())),
        );
    }
    let c = VariantConditions::of(parts);
    (!c.sampled.is_empty()).then_some(c)
}

/// A path inside the campaign's directory, relative to it (as rows record artifacts).
pub fn relative(dir: &Path, p: &Path) -> String {
    p.strip_prefix(dir).unwrap_or(p).display().to_string()
}

fn severity(s: bakeoff_artifact::FlagSeverity) -> &'static str {
    match s {
        bakeoff_artifact::FlagSeverity::Info => "info",
        bakeoff_artifact::FlagSeverity::Warning => "warning",
        bakeoff_artifact::FlagSeverity::Invalid => "invalid",
    }
}

/// A variant's row as an attempt begins: its earlier row (artifacts of earlier attempts are
/// kept) or a fresh one.
pub(crate) fn start_row(journal: &Journal, v: &Variant, t_campaign: Instant) -> VariantRow {
    let state = journal.state();
    let mut row = state
        .rows
        .get(&v.slug)
        .cloned()
        .unwrap_or_else(|| pending_row(v));
    // The campaign file may have changed since: what runs now is what the row says.
    row.axes = v.axis_values();
    row.delta = v.delta.clone();
    row.launch = v.launch_line();
    row.index = v.index;
    row.attempts = state.attempts.get(&v.slug).copied().unwrap_or(0) + 1;
    row.started_at = Some(Utc::now());
    row.finished_at = None;
    row.displaced.clear();
    row.suites.clear();
    row.log_lines.clear();
    row.fit = None;
    row.conditions = None;
    row.timings = bakeoff_artifact::campaign::Timings {
        queued_ms: t_campaign.elapsed().as_millis() as u64,
        ..Default::default()
    };
    row
}

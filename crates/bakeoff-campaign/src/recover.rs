//! Undoing what a killed or interrupted run left behind, from the journal: the seats it
//! started and never stopped are stopped, the seats it displaced and never restored are
//! brought back, and the variant it was running is recorded `interrupted` (it runs again).

use std::path::Path;

use bakeoff_artifact::campaign::{Outcome, OutcomeKind};
use bakeoff_seats::Seats;
use chrono::Utc;

use crate::action::RestoreAction;
use crate::error::{CampaignError, Invalid};
use crate::file::Campaign;
use crate::journal::{Entry, JOURNAL, Journal};
use crate::options::RunOptions;
use crate::progress::Reporter;
use crate::record::{self, blank_row, pending_row};
use crate::variant::fleet_with;
use crate::window;

/// `campaign restore DIR`: only the recovery — stop what the campaign started, bring back what
/// it displaced, record the interrupted variant.
pub async fn restore(
    c: &Campaign,
    opts: &RunOptions,
    report: &Reporter,
) -> Result<Vec<RestoreAction>, CampaignError> {
    if !c.out.join(JOURNAL).exists() {
        return Err(CampaignError::NoJournal { dir: c.out.clone() });
    }
    let actions = recover(c, opts, report).await?;
    Ok(actions)
}

pub(crate) async fn recover(
    c: &Campaign,
    opts: &RunOptions,
    report: &Reporter,
) -> Result<Vec<RestoreAction>, CampaignError> {
    let mut journal = open_journal(c)?;
    let actions = recover_with(c, opts, &mut journal, report).await?;
    record::write(c, journal.state(), opts.allow_contaminated)?;
    Ok(actions)
}

pub(crate) fn open_journal(c: &Campaign) -> Result<Journal, CampaignError> {
    let journal = Journal::open(&c.out)?;
    if let Some(name) = &journal.state().name
        && *name != c.name
    {
        return Err(CampaignError::Invalid {
            path: journal.path().to_path_buf(),
            problem: Invalid::OtherCampaign {
                held: name.clone(),
                wanted: c.name.clone(),
            },
        });
    }
    Ok(journal)
}

/// Undo what a killed run left: stop the seats it started, restore the seats it displaced,
/// and record the variant it was running as `interrupted`.
pub(crate) async fn recover_with(
    c: &Campaign,
    opts: &RunOptions,
    journal: &mut Journal,
    report: &Reporter,
) -> Result<Vec<RestoreAction>, CampaignError> {
    let state = journal.state().clone();
    let mut actions = Vec::new();
    if state.seats_up.is_empty() && state.displaced.is_empty() && state.open.is_none() {
        return Ok(actions);
    }
    let mut fleet = fleet_with(&c.fleet, &c.variants);
    for s in &state.seats_up {
        if fleet.seat(&s.name).is_none() {
            fleet.seats.push(s.clone());
        }
    }
    let seats = Seats::new(fleet, c.out.clone(), opts.watch.clone());
    for s in &state.seats_up {
        report.note(&format!(
            "recovery: stopping {} (started by an earlier run)",
            s.name
        ));
        let action = match seats.down(&s.name, true).await {
            Ok(_) => RestoreAction::Stopped {
                seat: s.name.clone(),
            },
            Err(error) => RestoreAction::CouldNotStop {
                seat: s.name.clone(),
                error,
            },
        };
        // The journal keeps the stop's error text alone (empty when it stopped).
        let message = match &action {
            RestoreAction::CouldNotStop { error, .. } => error.to_string(),
            _ => String::new(),
        };
        journal.append(Entry::SeatStopped {
            at: Utc::now(),
            seat: s.name.clone(),
            message,
        })?;
        actions.push(action);
    }
    for (seat, variant, stopped_at) in &state.displaced {
        let action = window::restore_one(&seats, seat, *stopped_at, variant, report).await;
        let ok = !action.is_failure();
        journal.append(Entry::Restored {
            at: Utc::now(),
            seat: seat.clone(),
            ok,
            down_ms: action.down_ms(),
            message: action.restore_note(),
        })?;
        actions.push(action);
    }
    if let Some((slug, attempt, started)) = &state.open {
        let mut row = match c.variants.iter().find(|v| &v.slug == slug) {
            Some(v) => state
                .rows
                .get(slug)
                .cloned()
                .unwrap_or_else(|| pending_row(v)),
            None => state.rows.get(slug).cloned().unwrap_or_else(|| {
                let mut r = blank_row("", slug);
                r.notes.push("no longer in the campaign file".into());
                r
            }),
        };
        row.attempts = *attempt;
        row.started_at = Some(*started);
        row.finished_at = Some(Utc::now());
        row.artifacts = artifacts_of(&c.out, slug);
        for (seat, variant, at) in &state.displaced {
            if variant == slug {
                row.displaced.retain(|d| &d.seat != seat);
                row.displaced
                    .push(bakeoff_artifact::campaign::Displacement {
                        seat: seat.clone(),
                        was_up: true,
                        idle_wait_ms: 0,
                        restored: Some(true),
                        down_ms: Some((Utc::now() - *at).num_milliseconds().max(0) as u64),
                        notes: vec!["restored by the recovery of an interrupted run".into()],
                    });
            }
        }
        row.set_outcome(Outcome::of(
            OutcomeKind::Interrupted,
            "the campaign stopped while this variant ran (killed or interrupted); its files are kept and it runs again",
        ));
        actions.push(RestoreAction::Interrupted {
            variant: slug.clone(),
        });
        journal.append(Entry::VariantDone {
            at: Utc::now(),
            row: Box::new(row),
        })?;
    }
    Ok(actions)
}

/// Every artifact of a variant in the directory: `<slug>.bakeoff.json`, `<slug>.failure.json`
/// and later runs' `<slug>.<run_id>.*.json`.
fn artifacts_of(dir: &Path, slug: &str) -> Vec<String> {
    let mut out: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| {
            let Some(rest) = n.strip_prefix(slug).and_then(|r| r.strip_prefix('.')) else {
                return false;
            };
            let kind = rest.ends_with("bakeoff.json") || rest.ends_with("failure.json");
            // `<slug>.bakeoff.json` or `<slug>.<run_id>.bakeoff.json`, never another variant
            // whose slug starts with this one.
            let parts = rest.split('.').count();
            kind && (parts == 2 || parts == 3)
        })
        .collect();
    out.sort();
    out
}

//! The campaign's driver: recovery first, then each variant in order — checks, bench window,
//! start and watch, measure in-process, stop, restore — every step journaled before the next.
//! One variant's attempt is `attempt.rs`; undoing what a killed run left is `recover.rs`.

use std::path::{Path, PathBuf};
use std::time::Instant;

use bakeoff_artifact::campaign::{CampaignRecord, Outcome, OutcomeKind};
use chrono::Utc;
use tokio::sync::watch;

pub use crate::action::{RestoreAction, RestoreFailure, WatchVerdict};
pub use crate::options::RunOptions;
pub use crate::progress::{Progress, Reporter};
pub use crate::recover::restore;

use crate::attempt::VariantRun;
use crate::error::CampaignError;
use crate::file::Campaign;
use crate::journal::{Entry, JOURNAL};
use crate::record::{self, start_row};
use crate::recover::{open_journal, recover, recover_with};
use crate::variant::Variant;

/// How a `campaign run` ended.
#[derive(Debug)]
pub struct Summary {
    pub record: CampaignRecord,
    /// Stopped by Ctrl-C / SIGTERM.
    pub interrupted: bool,
    /// A displaced seat could not be brought back: the operator must act.
    pub restore_failed: bool,
    /// What the recovery of an earlier run did.
    pub recovered: Vec<RestoreAction>,
    /// Variants this run took up (run, or skipped by the ladder); 0 when every selected
    /// variant already had an outcome.
    pub taken_up: usize,
}

/// Run the campaign (resuming from its journal), or refuse before touching anything.
pub async fn run(
    c: &Campaign,
    opts: &RunOptions,
    mut stop: watch::Receiver<bool>,
    report: &Reporter,
) -> Result<Summary, CampaignError> {
    let production = c.displaced_production();
    if !production.is_empty() && !opts.confirm {
        return Err(CampaignError::NeedsConfirm {
            seats: production.join(", "),
        });
    }
    let selected = select(c, &opts.only)?;
    provision_if_needed(c, report).await?;
    let mut recovered = Vec::new();
    if opts.fresh && c.out.join(JOURNAL).exists() {
        recovered = recover(c, opts, report).await?;
        let moved = set_aside(&c.out)?;
        recovered.push(RestoreAction::SetAside { to: moved });
    }
    let mut journal = open_journal(c)?;
    recovered.extend(recover_with(c, opts, &mut journal, report).await?);
    journal.append(Entry::CampaignStarted {
        at: Utc::now(),
        name: c.name.clone(),
        file: absolute(&c.path).display().to_string(),
        pid: std::process::id(),
    })?;
    record::write(c, journal.state(), opts.allow_contaminated)?;

    let t_campaign = Instant::now();
    let total = c.variants.len() as u32;
    let mut interrupted = false;
    let mut restore_failed = false;
    let mut taken_up = 0;
    for v in c.variants.iter().filter(|v| selected.contains(&v.slug)) {
        if journal
            .state()
            .rows
            .get(&v.slug)
            .is_some_and(|r| r.outcome.kind.is_final())
        {
            continue;
        }
        taken_up += 1;
        if *stop.borrow() {
            interrupted = true;
            break;
        }
        report.emit(Progress::Variant {
            index: v.index,
            total,
            variant: v.slug.clone(),
        });
        let row = if let Some(winner) = ladder_won(c, journal.state(), v) {
            let mut row = start_row(&journal, v, t_campaign);
            row.attempts = row.attempts.saturating_sub(1);
            row.set_outcome(Outcome::skipped(
                "ladder-stopped",
                format!("ladder_mode = \"first-success\": {winner} completed first"),
            ));
            row
        } else {
            let mut ctx = VariantRun {
                c,
                opts,
                journal: &mut journal,
                report,
                stop: &mut stop,
                bench: None,
            };
            ctx.run(v, t_campaign).await?
        };
        restore_failed |= row.displaced.iter().any(|d| d.restored == Some(false));
        interrupted |= row.outcome.kind == OutcomeKind::Interrupted;
        report.emit(Progress::Done {
            variant: v.slug.clone(),
            outcome: row.outcome_label.clone(),
        });
        journal.append(Entry::VariantDone {
            at: Utc::now(),
            row: Box::new(row),
        })?;
        record::write(c, journal.state(), opts.allow_contaminated)?;
        if interrupted {
            break;
        }
    }
    if !interrupted {
        let run = isolate_all(
            c,
            opts,
            &selected,
            &mut journal,
            report,
            &mut stop,
            t_campaign,
        )
        .await?;
        taken_up += run.taken_up;
        interrupted |= run.interrupted;
        restore_failed |= run.restore_failed;
    }
    if !interrupted && !restore_failed {
        let run = tune_all(
            c,
            opts,
            &selected,
            &mut journal,
            report,
            &mut stop,
            t_campaign,
        )
        .await?;
        taken_up += run.taken_up;
        interrupted |= run.interrupted;
        restore_failed |= run.restore_failed;
    }
    let record = record::write(c, journal.state(), opts.allow_contaminated)?;
    Ok(Summary {
        record,
        interrupted,
        restore_failed,
        recovered,
        taken_up,
    })
}

/// What the isolations of a run took up.
#[derive(Default)]
struct IsolationRun {
    taken_up: usize,
    interrupted: bool,
    restore_failed: bool,
}

/// Each selected candidate with `[candidate.isolate]` and a failed variant: its probes, one
/// after another, as the planner designs them from what the earlier ones showed
/// (docs/campaign.md "Isolation that designs itself"). Each probe's row is journaled (with its
/// hypothesis) before it starts, so a recovery and a resumed run find it.
async fn isolate_all(
    c: &Campaign,
    opts: &RunOptions,
    selected: &[String],
    journal: &mut crate::journal::Journal,
    report: &Reporter,
    stop: &mut watch::Receiver<bool>,
    t_campaign: Instant,
) -> Result<IsolationRun, CampaignError> {
    let mut out = IsolationRun::default();
    for cand in &c.candidates {
        let Some(spec) = &cand.isolate else { continue };
        if !c
            .variants
            .iter()
            .any(|v| v.candidate == cand.name && selected.contains(&v.slug))
        {
            continue;
        }
        while let Some(walk) = crate::isolate::walk(
            c,
            &cand.name,
            spec,
            &journal.state().rows,
            &journal.state().alternatives,
        ) {
            if walk.alternatives_due {
                let Some((parent, _)) =
                    crate::isolate::parent(c, &cand.name, &journal.state().rows)
                else {
                    break;
                };
                report.note(&format!(
                    "{}: engine support: asking the registry of {} listed alternative build(s), no start",
                    cand.name,
                    spec.alternatives.len()
                ));
                let (fleet, parent, builds) =
                    (c.fleet.clone(), parent.clone(), spec.alternatives.clone());
                let checks = bakeoff_host::blocking::off_runtime(move || {
                    crate::isolate::alternatives::check(&fleet, &parent, &builds)
                })
                .await;
                journal.append(Entry::AlternativesChecked {
                    at: Utc::now(),
                    candidate: cand.name.clone(),
                    checks,
                })?;
                continue;
            }
            let Some((v, probe)) = walk.next else {
                if let Some(f) = &walk.record.factor {
                    report.note(&format!("{}: isolated: {f}", cand.name));
                } else {
                    report.note(&format!("{}: {}", cand.name, walk.record.summary));
                }
                break;
            };
            if *stop.borrow() {
                out.interrupted = true;
                return Ok(out);
            }
            out.taken_up += 1;
            report.note(&format!(
                "{}: probe {}: hypothesis: {}; probe: {}",
                cand.name, probe.step, probe.hypothesis, probe.probe
            ));
            if journal
                .state()
                .rows
                .get(&v.slug)
                .is_none_or(|r| r.probe.is_none())
            {
                let mut pending = record::pending_row(&v);
                pending.probe = Some(probe.clone());
                journal.append(Entry::VariantDone {
                    at: Utc::now(),
                    row: Box::new(pending),
                })?;
            }
            report.emit(Progress::Variant {
                index: v.index,
                total: c.variants.len() as u32,
                variant: v.slug.clone(),
            });
            let mut ctx = VariantRun {
                c,
                opts,
                journal,
                report,
                stop,
                bench: None,
            };
            let mut row = ctx.run(&v, t_campaign).await?;
            row.probe = Some(probe);
            out.restore_failed |= row.displaced.iter().any(|d| d.restored == Some(false));
            let stopped = row.outcome.kind == OutcomeKind::Interrupted;
            report.emit(Progress::Done {
                variant: v.slug.clone(),
                outcome: row.outcome_label.clone(),
            });
            journal.append(Entry::VariantDone {
                at: Utc::now(),
                row: Box::new(row),
            })?;
            record::write(c, journal.state(), opts.allow_contaminated)?;
            if stopped || out.restore_failed {
                out.interrupted |= stopped;
                return Ok(out);
            }
        }
    }
    Ok(out)
}

/// Each selected candidate with `[candidate.tune]` and a completed variant: its trials, one
/// after another as the coordinate search asks for them, then the winner against the base
/// (docs/campaign.md "Tuning"). Each trial's row is journaled before it starts.
async fn tune_all(
    c: &Campaign,
    opts: &RunOptions,
    selected: &[String],
    journal: &mut crate::journal::Journal,
    report: &Reporter,
    stop: &mut watch::Receiver<bool>,
    t_campaign: Instant,
) -> Result<IsolationRun, CampaignError> {
    use crate::tune::TuneNext;
    let mut out = IsolationRun::default();
    for cand in &c.candidates {
        let Some(spec) = &cand.tune else { continue };
        if !c
            .variants
            .iter()
            .any(|v| v.candidate == cand.name && selected.contains(&v.slug))
        {
            continue;
        }
        let plan = crate::tune::plan(spec);
        while let Some(walk) = crate::tune::walk(c, &cand.name, spec, &journal.state().rows) {
            let Some(next) = walk.next else {
                report.note(&format!("{}: tuning: {}", cand.name, walk.record.summary));
                break;
            };
            if *stop.borrow() {
                out.interrupted = true;
                return Ok(out);
            }
            out.taken_up += 1;
            let row = match next {
                TuneNext::Trial(trial) => {
                    let (v, trial) = *trial;
                    report.note(&format!(
                        "{}: tuning trial {}: {}",
                        cand.name,
                        trial.step,
                        if !v.delta.is_empty() {
                            v.delta.join("; ")
                        } else {
                            "the base configuration".into()
                        }
                    ));
                    if journal
                        .state()
                        .rows
                        .get(&v.slug)
                        .is_none_or(|r| r.trial.is_none())
                    {
                        let mut pending = record::pending_row(&v);
                        pending.trial = Some(trial.clone());
                        journal.append(Entry::VariantDone {
                            at: Utc::now(),
                            row: Box::new(pending),
                        })?;
                    }
                    report.emit(Progress::Variant {
                        index: v.index,
                        total: c.variants.len() as u32,
                        variant: v.slug.clone(),
                    });
                    let mut ctx = VariantRun {
                        c,
                        opts,
                        journal,
                        report,
                        stop,
                        bench: Some(&plan),
                    };
                    let mut row = ctx.run(&v, t_campaign).await?;
                    if row.trial.is_none() {
                        row.trial = Some(trial);
                    }
                    row
                }
                TuneNext::Versus(versus) => {
                    let crate::tune::Versus {
                        base,
                        winner,
                        record,
                        slug,
                    } = *versus;
                    report.note(&format!(
                        "{}: tuning: {} against {}, {} rounds alternately",
                        cand.name, winner.slug, base.slug, spec.repeat
                    ));
                    let mut cmp = crate::tune::Compare {
                        c,
                        opts,
                        journal,
                        report,
                        stop,
                    };
                    cmp.run(spec, &base, &winner, record, &slug).await?
                }
            };
            out.restore_failed |= row.displaced.iter().any(|d| d.restored == Some(false));
            let stopped = row.outcome.kind == OutcomeKind::Interrupted || *stop.borrow();
            report.emit(Progress::Done {
                variant: row.variant.clone(),
                outcome: row.outcome_label.clone(),
            });
            journal.append(Entry::VariantDone {
                at: Utc::now(),
                row: Box::new(row),
            })?;
            record::write(c, journal.state(), opts.allow_contaminated)?;
            if stopped || out.restore_failed {
                out.interrupted |= stopped;
                return Ok(out);
            }
        }
    }
    Ok(out)
}

/// A seat command with `{cache}` runs the embedded default's engine or model: provision them
/// first (a no-op when cached), as `eval run` does for its local server.
async fn provision_if_needed(c: &Campaign, report: &Reporter) -> Result<(), CampaignError> {
    let uses_cache = c
        .variants
        .iter()
        .any(|v| serde_json::to_string(&v.seat.launch).is_ok_and(|s| s.contains("{cache}")));
    if !uses_cache {
        return Ok(());
    }
    let cache = bakeoff_local::cache_dir();
    if !bakeoff_local::LocalEngine::in_cache(&cache).is_present() {
        report.note(&format!(
            "provisioning the embedded default under {} (the pinned llama.cpp build and the test model; minutes, once)",
            cache.display()
        ));
    }
    bakeoff_local::provision(&cache)
        .await
        .map(|_| ())
        .map_err(|source| CampaignError::Provision { cache, source })
}

/// The variants `--only` selects: candidates or variants by name (a run, its dry run and the
/// flags' check before either).
pub fn select(c: &Campaign, only: &[String]) -> Result<Vec<String>, CampaignError> {
    if only.is_empty() {
        return Ok(c.variants.iter().map(|v| v.slug.clone()).collect());
    }
    for name in only {
        if !c
            .variants
            .iter()
            .any(|v| &v.slug == name || &v.candidate == name)
        {
            return Err(CampaignError::UnknownOnly {
                name: name.clone(),
                known: c
                    .candidates
                    .iter()
                    .map(|c| c.name.as_str())
                    .chain(c.variants.iter().map(|v| v.slug.as_str()))
                    .collect::<Vec<_>>()
                    .join(", "),
            });
        }
    }
    Ok(c.variants
        .iter()
        .filter(|v| only.iter().any(|n| *n == v.slug || *n == v.candidate))
        .map(|v| v.slug.clone())
        .collect())
}

/// A first-success ladder whose earlier variant completed: that variant's slug.
fn ladder_won(c: &Campaign, state: &crate::journal::State, v: &Variant) -> Option<String> {
    let cand = c.candidate(&v.candidate)?;
    if cand.ladder_mode != bakeoff_artifact::campaign::LadderMode::FirstSuccess {
        return None;
    }
    c.variants
        .iter()
        .filter(|o| o.candidate == v.candidate && o.index < v.index)
        .find(|o| {
            state
                .rows
                .get(&o.slug)
                .is_some_and(|r| r.outcome.kind == OutcomeKind::Completed)
        })
        .map(|o| o.slug.clone())
}

/// Move a directory's files under `previous-<time>/` (kept, never deleted).
fn set_aside(dir: &Path) -> Result<PathBuf, CampaignError> {
    let dest = dir.join(format!("previous-{}", bakeoff_artifact::run_id_now()));
    std::fs::create_dir_all(&dest).map_err(|e| CampaignError::io(&dest, e))?;
    for e in std::fs::read_dir(dir)
        .map_err(|e| CampaignError::io(dir, e))?
        .flatten()
    {
        let name = e.file_name();
        if name.to_string_lossy().starts_with("previous-") {
            continue;
        }
        let to = dest.join(&name);
        std::fs::rename(e.path(), &to).map_err(|err| CampaignError::io(&e.path(), err))?;
    }
    Ok(dest)
}

fn absolute(p: &Path) -> PathBuf {
    std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf())
}

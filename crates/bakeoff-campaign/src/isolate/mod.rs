//! Isolation that designs itself (docs/campaign.md): after a candidate's variant fails, its
//! class and the engine's own words choose the next probe from the decision table
//! ([`table::TABLE`]); each probe is a real, watched start, recorded with its hypothesis; the
//! isolation ends when a probe that started and one that failed are separated by one factor,
//! when the arithmetic proves nothing allowed fits, or when the budget runs out ("not
//! isolated", never a guess).
//!
//! [`walk`] replays the planner over the journal's rows: a probe whose row is final is read,
//! not run again, so a killed campaign resumes mid-isolation where it stopped.

pub mod alternatives;
pub mod plan;
pub mod table;
pub mod words;

use std::collections::BTreeMap;
use std::path::Path;

use bakeoff_artifact::FailureClass;
use bakeoff_artifact::campaign::{
    AlternativeCheck, IsolationRecord, IsolationStatus, OutcomeKind, ProbeRecord, VariantRow,
};
use bakeoff_seats::fleet::Launch;

use crate::candidate::Isolate;
use crate::file::Campaign;
use crate::variant::{Variant, probe_variant};
use plan::{Decision, Failed, Probe, Seen};

/// The planner's loop is bounded: no table walk takes more steps than this.
const MAX_STEPS: usize = 64;

/// Where a candidate's isolation stands.
#[derive(Debug, Clone)]
pub struct Walk {
    /// The record: status, factor, probes on each side, starts against the budget.
    pub record: IsolationRecord,
    /// The probe to run next, with its row's probe record (`None`: the isolation has ended).
    pub next: Option<(Variant, ProbeRecord)>,
    /// A failure of engine support whose listed alternative builds are still to be asked
    /// (the registry check, no start: [`alternatives::check`]).
    pub alternatives_due: bool,
}

/// The candidates' alternative builds as the registry check answered, by candidate.
pub type Checked = BTreeMap<String, Vec<AlternativeCheck>>;

/// A seat's build, as `alternatives` lists one: a Docker seat's image, a process seat's command.
fn build_of(v: &Variant) -> String {
    match &v.seat.launch {
        Launch::Process(p) => p.command.clone(),
        Launch::Docker(d) => d.image.clone(),
    }
}

/// The launch arguments of a seat (a process's args, a container's command).
fn args_of(v: &Variant) -> Vec<String> {
    match &v.seat.launch {
        Launch::Process(p) => p.args.clone(),
        Launch::Docker(d) => d.command.clone(),
    }
}

fn memory_limit(v: &Variant) -> Option<i64> {
    match &v.seat.launch {
        Launch::Docker(d) => d.memory_bytes().ok().flatten(),
        Launch::Process(_) => None,
    }
}

/// The engine's words of a row: its outcome's message, and its kept log — or, where no log
/// was kept, its notable lines (excerpts of that log: never both, so a buffer line the planner
/// sums is read once).
pub fn words_of(row: &VariantRow, dir: &Path) -> String {
    let mut text = row.outcome.message.clone();
    let log = row
        .log
        .as_ref()
        .filter(|log| !log.contains(".."))
        .and_then(|log| std::fs::read_to_string(dir.join(log)).ok());
    match log {
        Some(s) => {
            text.push('\n');
            text.push_str(&s);
        }
        None => {
            for l in &row.log_lines {
                text.push('\n');
                text.push_str(l);
            }
        }
    }
    text
}

/// The class a row failed with, for isolation: its failure class, `bad-argument` for a
/// start the campaign refused because the engine's `--help` does not list a flag, or a class of
/// engine support for a start the registry check refused.
fn failed_class(row: &VariantRow) -> Option<FailureClass> {
    let pre_start = row.outcome.reason.as_deref() == Some("pre-start");
    match row.outcome.kind {
        OutcomeKind::Failed => row.outcome.class,
        OutcomeKind::Skipped
            if pre_start
                && row
                    .outcome
                    .message
                    .contains(bakeoff_seats::checks::engine_support::UNSUPPORTED) =>
        {
            Some(if row.outcome.message.contains("architecture") {
                FailureClass::UnsupportedArchitecture
            } else {
                FailureClass::UnknownModelType
            })
        }
        OutcomeKind::Skipped
            if pre_start && words::refused_flag(&row.outcome.message).is_some() =>
        {
            Some(FailureClass::BadArgument)
        }
        _ => None,
    }
}

fn seen_of(row: &VariantRow, dir: &Path) -> Option<Seen> {
    if !row.outcome.kind.is_final() {
        return None;
    }
    Some(match (row.outcome.kind, failed_class(row)) {
        (OutcomeKind::Completed | OutcomeKind::Invalid, _) => Seen::Ready,
        (_, Some(class)) => Seen::Failed {
            class,
            text: words_of(row, dir),
        },
        _ => Seen::NotStarted(row.outcome.label()),
    })
}

/// A row that used a start (a probe the memory check or a pre-start check refused did not).
fn started(row: &VariantRow) -> bool {
    row.attempts > 0
        && matches!(
            row.outcome.kind,
            OutcomeKind::Completed
                | OutcomeKind::Invalid
                | OutcomeKind::Failed
                | OutcomeKind::Interrupted
        )
}

/// The index a candidate's probes take: after every variant of the file, in blocks of 100 per
/// candidate, so a resumed campaign gives a probe the same index.
fn probe_index(c: &Campaign, candidate: &str, step: u32) -> u32 {
    let pos = c
        .candidates
        .iter()
        .position(|x| x.name == candidate)
        .unwrap_or(0) as u32;
    c.variants.len() as u32 + 100 * pos + step
}

/// The failed variant a candidate's isolation starts from: its first variant of the file that
/// failed (or that the engine's `--help` refused).
pub fn parent<'a>(
    c: &'a Campaign,
    candidate: &str,
    rows: &BTreeMap<String, VariantRow>,
) -> Option<(&'a Variant, FailureClass)> {
    c.variants
        .iter()
        .filter(|v| v.candidate == candidate)
        .find_map(|v| Some((v, failed_class(rows.get(&v.slug)?)?)))
}

/// The isolation of `candidate` as the journal's rows (and its alternatives' checks) have it.
pub fn walk(
    c: &Campaign,
    candidate: &str,
    spec: &Isolate,
    rows: &BTreeMap<String, VariantRow>,
    checked: &Checked,
) -> Option<Walk> {
    let (parent, class) = parent(c, candidate, rows)?;
    let parent_row = rows.get(&parent.slug)?;
    let failed = Failed {
        class,
        text: words_of(parent_row, &c.out),
        args: args_of(parent),
        memory_limit: memory_limit(parent),
    };
    let levers = table::levers(parent.seat.engine);
    let mut seen: Vec<(Probe, Seen)> = Vec::new();
    let mut slugs: Vec<String> = Vec::new();
    let mut starts = 0u32;
    let mut ms = 0u64;
    let mut record = IsolationRecord {
        candidate: candidate.to_string(),
        parent: parent.slug.clone(),
        class,
        status: IsolationStatus::InProgress,
        factor: None,
        passed: None,
        failed: None,
        summary: String::new(),
        starts: 0,
        max_starts: spec.max_starts,
        seconds: 0,
        budget_s: spec.budget_s,
        not_attempted: Vec::new(),
        alternatives: Vec::new(),
    };
    let conclude = |record: &mut IsolationRecord, k: plan::Conclusion, slugs: &[String]| {
        record.status = k.status;
        record.factor = k.factor;
        record.passed = k.passed.and_then(|i| slugs.get(i).cloned());
        record.failed = Some(
            k.failed
                .and_then(|i| slugs.get(i).cloned())
                .unwrap_or_else(|| parent.slug.clone()),
        )
        .filter(|_| record.factor.is_some());
        record.summary = k.summary;
        record.not_attempted.extend(k.not_attempted);
    };
    // Engine support: no start of this build changes the engine's answer; the listed
    // alternative builds are asked instead, without a start.
    if table::ENGINE_SUPPORT.contains(&class) && !spec.alternatives.is_empty() {
        let Some(checks) = checked.get(candidate) else {
            record.summary = format!(
                "engine support: the registry check of {} listed alternative build(s) is due (no start)",
                spec.alternatives.len()
            );
            return Some(Walk {
                record,
                next: None,
                alternatives_due: true,
            });
        };
        conclude(
            &mut record,
            alternatives::conclude(&build_of(parent), checks),
            &slugs,
        );
        record.alternatives = checks.clone();
        return Some(Walk {
            record,
            next: None,
            alternatives_due: false,
        });
    }
    let mut next = None;
    for _ in 0..MAX_STEPS {
        match plan::decide(&failed, &levers, spec.max_gpu_memory_utilization, &seen) {
            Decision::Conclude(k) => {
                conclude(&mut record, k, &slugs);
                break;
            }
            Decision::Probe { probe, if_cut } => {
                let step = seen.len() as u32 + 1;
                let v = probe_variant(parent, &probe.changes, probe_index(c, candidate, step));
                if slugs.contains(&v.slug) {
                    // The table never repeats a configuration; if it would, stop rather than loop.
                    conclude(&mut record, if_cut, &slugs);
                    break;
                }
                if let Some(row) = rows.get(&v.slug)
                    && let Some(s) = seen_of(row, &c.out)
                {
                    starts += u32::from(started(row));
                    ms += row.timings.total_ms;
                    slugs.push(v.slug.clone());
                    seen.push((probe, s));
                    continue;
                }
                if starts >= spec.max_starts || ms / 1000 >= spec.budget_s {
                    let cut = format!("{}: {}", probe.hypothesis, probe.label());
                    conclude(&mut record, if_cut, &slugs);
                    if record.status != IsolationStatus::Isolated {
                        record.summary = format!(
                            "not isolated: the budget ran out ({starts} of {} starts, {} of {} s) before a probe separated a start from a failure",
                            spec.max_starts,
                            ms / 1000,
                            spec.budget_s
                        );
                    }
                    record.not_attempted.push(cut);
                    break;
                }
                let rec = ProbeRecord {
                    parent: parent.slug.clone(),
                    class,
                    step,
                    hypothesis: probe.hypothesis.clone(),
                    probe: probe.label(),
                    if_ready: probe.if_ready.clone(),
                    if_failed: probe.if_failed.clone(),
                };
                record.summary = format!("probe {step}: {}: {}", rec.hypothesis, rec.probe);
                next = Some((v, rec));
                break;
            }
        }
    }
    record.starts = starts;
    record.seconds = ms / 1000;
    Some(Walk {
        record,
        next,
        alternatives_due: false,
    })
}

/// Every candidate's isolation, as the journal has it (for `campaign.json`).
pub fn records(
    c: &Campaign,
    rows: &BTreeMap<String, VariantRow>,
    checked: &Checked,
) -> Vec<IsolationRecord> {
    c.candidates
        .iter()
        .filter_map(|cand| walk(c, &cand.name, cand.isolate.as_ref()?, rows, checked))
        .map(|w| w.record)
        .collect()
}

/// What `--dry-run` prints for a candidate with `[candidate.isolate]`: for each class the
/// table covers, the first probe its base configuration would get.
pub fn dry_run_lines(c: &Campaign, candidate: &str) -> Vec<String> {
    let Some(cand) = c.candidate(candidate) else {
        return Vec::new();
    };
    let Some(spec) = &cand.isolate else {
        return Vec::new();
    };
    let Some(base) = c.variants.iter().find(|v| v.candidate == candidate) else {
        return Vec::new();
    };
    let levers = table::levers(base.seat.engine);
    let mut out = vec![format!(
        "isolation: on (at most {} starts, {} s); after a failure of {}, the first probe by class:",
        spec.max_starts, spec.budget_s, base.slug
    )];
    let mut classes: Vec<FailureClass> = Vec::new();
    for r in table::TABLE {
        for cl in r.classes {
            if !classes.contains(cl) {
                classes.push(*cl);
            }
        }
    }
    for class in classes {
        let failed = Failed {
            class,
            text: String::new(),
            args: args_of(base),
            memory_limit: memory_limit(base),
        };
        let line = match plan::decide(&failed, &levers, spec.max_gpu_memory_utilization, &[]) {
            Decision::Probe { probe, .. } => format!("{}: {}", probe.hypothesis, probe.label()),
            Decision::Conclude(k) => match class {
                FailureClass::BadArgument => "the flag the engine's refusal names, left out".into(),
                FailureClass::ContextTooLong => "the window the engine derives, read from its words".into(),
                FailureClass::KvCacheBudget => "the window the engine's stated KV budget holds, or the GPU-memory fraction priced to the allowed headroom".into(),
                _ => k.summary,
            },
        };
        out.push(format!("  {class}: {line}"));
    }
    out
}

#[cfg(test)]
mod tests;

//! One measurement of an endpoint — preflight, the thinking check, the suites (journaled as
//! items finish), the artifact — as a library function.
//!
//! It exists because `bakeoff eval run` and a campaign run the same measurement: the binary
//! wires signals, the embedded default and the terminal around [`evaluate`], and a campaign
//! calls it in-process, once per candidate. Both get the same artifact, written the same way
//! ([`crate::output::run_files`], [`write_run_artifact`]), with the candidate built by the one
//! [`crate::output::candidate`] (which `bench run` uses too).

use std::path::PathBuf;
use std::time::Instant;

use bakeoff_artifact::failure_table::remediation;
use bakeoff_artifact::{
    Artifact, ArtifactKind, Candidate, EndpointRecord, Evidence, Failure, FailureClass,
    FlagSeverity, ItemRecord, RunFiles, RunStatus, StoreError,
};
use bakeoff_client::Client;
use tokio::sync::watch;

use bakeoff_suites::preflight::{PreflightOptions, PreflightOutcome, Unfit, run_preflight};
use bakeoff_suites::progress::{CeilingEvent, EvalEvent, EvalHook, PreflightPhase};

use crate::ceiling::Ceilings;
use crate::output::Output;
use bakeoff_suites::runner::{RunOutcome, nothing_valid, run_suites_with};
use bakeoff_suites::suite_choice::SuiteName;
use bakeoff_suites::suite_run::{SuiteContext, SuiteOptions};

/// What to measure and where to write it.
pub struct EvalRequest<'a> {
    pub client: &'a Client,
    pub preflight: &'a PreflightOptions,
    pub suites: &'a [SuiteName],
    pub options: &'a SuiteOptions,
    /// The harness ceiling the load suites' steps are checked against, measured on their
    /// first need (and shared by the caller's other runs); `None` (`--no-calibrate`): they go
    /// unchecked. A ceiling already set in `options` is kept.
    pub ceilings: Option<&'a Ceilings>,
    pub output: Output<'a>,
    /// Where progress goes (the preflight's phases, each suite's start and end, every
    /// finished item); `None`: nowhere.
    pub progress: Option<EvalHook>,
}

/// The written artifact and where it is.
pub struct Evaluated {
    pub artifact: Artifact,
    pub path: PathBuf,
}

impl Evaluated {
    /// True when the run measured something valid and is complete (eval run's exit 0).
    pub fn ok(&self) -> bool {
        self.artifact.kind == ArtifactKind::Bakeoff && self.artifact.status == RunStatus::Complete
    }
}

#[derive(Debug, thiserror::Error)]
pub enum EvalError {
    #[error("interrupted by the operator during preflight; nothing was measured")]
    InterruptedInPreflight,
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Preflight, suites, artifact — `eval run` without the terminal: the artifact is written
/// (journal as items finish, final file atomically) and returned. `stop` flips to true on
/// Ctrl-C/SIGTERM: during preflight the run ends with `InterruptedInPreflight`; during the
/// suites it stops after the item in flight and writes an `incomplete` artifact.
pub async fn evaluate(
    req: EvalRequest<'_>,
    stop: &mut watch::Receiver<bool>,
) -> Result<Evaluated, EvalError> {
    let start = Instant::now();
    let client = req.client;
    let hook = req.progress.as_ref();
    let emit = |e: EvalEvent| {
        if let Some(h) = hook {
            h(e);
        }
    };
    emit(EvalEvent::Preflight(PreflightPhase::Probing {
        ready_timeout: req.preflight.ready_timeout,
    }));
    let mut pre = tokio::select! {
        p = run_preflight(client, req.preflight) => p,
        () = stopped(stop) => return Err(EvalError::InterruptedInPreflight),
    };
    emit(EvalEvent::Preflight(PreflightPhase::finished(
        &pre,
        start.elapsed(),
    )));
    let mut candidate = req.output.candidate(client, &pre);
    // The run's file names, claimed now: a later run of the slug never overwrites this one.
    let mut files = req.output.claim(&candidate.slug)?;

    if let Some(unfit) = &pre.unfit {
        let elapsed_ms = start.elapsed().as_millis() as u64;
        let mut art = unfit_artifact(candidate, client, &pre, unfit, elapsed_ms);
        art.run = req.output.run_record;
        return finish(&mut files, art);
    }

    let model = pre
        .report
        .model
        .clone()
        .unwrap_or_else(|| "default".to_string());
    // Does --thinking take effect on this endpoint? Checked, never assumed.
    if req.options.thinking != bakeoff_suites::thinking::ThinkingMode::Default {
        emit(EvalEvent::Preflight(PreflightPhase::CheckingThinking {
            mode: req.options.thinking.as_str(),
        }));
    }
    let (thinking_check, thinking_flag) = bakeoff_suites::thinking::verify(
        client,
        &model,
        pre.discovered.facts.engine,
        req.options.thinking,
    )
    .await;
    pre.report.thinking_mode = Some(thinking_check);
    pre.report.flags.extend(thinking_flag);
    let options = with_ceiling(&req, &mut candidate, &emit).await;
    let mut journal = files.open_journal()?;
    let mut journal_error = None;

    let ctx = SuiteContext {
        client,
        model,
        facts: &pre.discovered.facts,
        options: &options,
    };
    let mut on_item = |suite: &str, item: &ItemRecord| {
        if let Err(e) = journal.append(suite, item) {
            journal_error.get_or_insert(e.to_string());
        }
    };
    let outcome = run_suites_with(&ctx, req.suites, stop, &mut on_item, hook).await;
    if let Some(e) = journal_error {
        candidate.notes.push(format!("journal write failed: {e}"));
    }

    let measured = outcome.measured_anything();
    let kind = if measured {
        ArtifactKind::Bakeoff
    } else {
        ArtifactKind::Failure
    };
    let mut art = preflighted(kind, candidate, client, &pre);
    art.run = req.output.run_record;
    for s in outcome.suites.values() {
        art.instrument_flags.extend(s.summary.flags.iter().cloned());
    }
    if let Some(reason) = &outcome.interrupted {
        art.status = RunStatus::Incomplete;
        art.incomplete_reason = Some(reason.clone());
    }
    if !measured {
        art.failure = Some(nothing_measured(&outcome, start));
    }
    if let (Some(facts), Some(c)) = (art.endpoint.facts.as_mut(), outcome.suites.get("context")) {
        match bakeoff_suites::context::overflow_fact(c) {
            Ok(o) => facts.overflow = o,
            Err(e) => art
                .instrument_flags
                .push(bakeoff_suites::context::overflow_unread(&e)),
        }
    }
    art.suites = outcome.suites;
    finish(&mut files, art)
}

/// The suite options with the harness ceiling set when a load suite runs and the request
/// asked for it. One that cannot be measured is said in the candidate's notes (and as an
/// event), and the load steps go unchecked, as with `--no-calibrate`.
async fn with_ceiling(
    req: &EvalRequest<'_>,
    candidate: &mut Candidate,
    emit: &(dyn Fn(EvalEvent) + Sync),
) -> SuiteOptions {
    let mut options = req.options.clone();
    let load = req
        .suites
        .iter()
        .any(|s| matches!(s, SuiteName::Throughput | SuiteName::Longgen));
    let Some(ceilings) = req.ceilings.filter(|_| load) else {
        return options;
    };
    if options.throughput.harness_ceiling.is_some() {
        return options;
    }
    let on = |e: CeilingEvent| emit(EvalEvent::Ceiling(e));
    let https = crate::ceiling::is_https(req.client);
    match ceilings.get(https, &on).await {
        Ok(c) => options.throughput.harness_ceiling = Some(c),
        Err(e) => candidate
            .notes
            .push(crate::ceiling::unmeasured(https, &e.to_string())),
    }
    options
}

/// Resolves once `stop` reads true; never, if its sender is gone without having said so.
async fn stopped(stop: &mut watch::Receiver<bool>) {
    if stop.wait_for(|s| *s).await.is_err() {
        std::future::pending::<()>().await;
    }
}

fn finish(files: &mut RunFiles, mut artifact: Artifact) -> Result<Evaluated, EvalError> {
    let path = write_run_artifact(files, &mut artifact)?;
    Ok(Evaluated { artifact, path })
}

/// A run's artifact before its results: `kind`, the candidate, the endpoint as preflight found
/// it, the preflight report and its flags — ONE builder for `eval run`, `eval damage`,
/// `eval adapter` and `bench run`, so no path leaves out the preflight's flags.
pub fn preflighted(
    kind: ArtifactKind,
    candidate: Candidate,
    client: &Client,
    pre: &PreflightOutcome,
) -> Artifact {
    let endpoint = EndpointRecord {
        url: client.url().redacted(),
        facts: Some(pre.discovered.facts.clone()),
    };
    let mut art = Artifact::new(kind, candidate, endpoint);
    art.preflight = Some(pre.report.clone());
    art.instrument_flags = pre.report.flags.clone();
    art
}

/// The failure artifact of an endpoint its preflight found unfit, `elapsed_ms` into the run
/// ([`Unfit::failure`]): the class, the evidence and the fix (docs/artifacts.md).
pub fn unfit_artifact(
    candidate: Candidate,
    client: &Client,
    pre: &PreflightOutcome,
    unfit: &Unfit,
    elapsed_ms: u64,
) -> Artifact {
    let mut art = preflighted(ArtifactKind::Failure, candidate, client, pre);
    art.failure = Some(unfit.failure(elapsed_ms));
    art
}

/// Stamp the run id (and any `--replace` record) on `art` and write it under the run's stem.
pub fn write_run_artifact(files: &mut RunFiles, art: &mut Artifact) -> Result<PathBuf, StoreError> {
    art.run_id = Some(files.run_id().to_string());
    art.replaces = files.replaced().to_vec();
    files.write_artifact(art)
}

/// The failure of a run that measured nothing: every request failed, every suite refused, or
/// the instrument rejected every family.
fn nothing_measured(outcome: &RunOutcome, start: Instant) -> Failure {
    let mut evidence: Vec<Evidence> = Vec::new();
    for (name, s) in &outcome.suites {
        for it in &s.items {
            if let Some(e) = &it.error {
                let ev = Evidence {
                    what: format!("{name}/{} POST /v1/chat/completions", it.id),
                    detail: e.message.clone(),
                };
                if !evidence.iter().any(|x| x.detail == ev.detail) {
                    evidence.push(ev);
                }
            }
        }
    }
    // Refusals (an unknown window, no tokenizer route) are flagged `invalid` by the suite;
    // they are a configuration gap, not a serving failure.
    let refusals: Vec<String> = outcome
        .suites
        .values()
        .flat_map(|s| s.summary.flags.iter())
        .filter(|f| f.severity == FlagSeverity::Invalid && f.code.is_refusal())
        .map(|f| f.message.clone())
        .collect();
    // Suites whose items all ran but whose every family the instrument rejected.
    let invalid: Vec<String> = outcome
        .suites
        .iter()
        .filter(|(_, s)| nothing_valid(s))
        .map(|(name, s)| {
            let flags: Vec<&str> = s
                .summary
                .flags
                .iter()
                .filter(|f| f.severity == FlagSeverity::Invalid)
                .map(|f| f.message.as_str())
                .collect();
            format!("{name}: {}", flags.join("; "))
        })
        .collect();
    if evidence.is_empty() && !invalid.is_empty() {
        Failure {
            class: FailureClass::NotMeasurable,
            message: format!(
                "every requested suite measured nothing valid: the instrument rejected every \
                     family ({})",
                invalid.join(" | ")
            ),
            evidence: invalid
                .iter()
                .map(|r| Evidence {
                    what: "instrument-failure".into(),
                    detail: r.clone(),
                })
                .collect(),
            elapsed_ms: start.elapsed().as_millis() as u64,
            remediation: Some(remediation(FailureClass::NotMeasurable).into()),
        }
    } else if evidence.is_empty() && !refusals.is_empty() {
        Failure {
            class: FailureClass::NotMeasurable,
            message: format!("the suites refused to measure: {}", refusals.join("; ")),
            evidence: refusals
                .iter()
                .map(|r| Evidence {
                    what: "suite refusal".into(),
                    detail: r.clone(),
                })
                .collect(),
            elapsed_ms: start.elapsed().as_millis() as u64,
            remediation: Some(remediation(FailureClass::NotMeasurable).into()),
        }
    } else {
        Failure {
            class: FailureClass::InferenceFailing,
            message: "preflight passed but every suite request failed: nothing was measured".into(),
            evidence,
            elapsed_ms: start.elapsed().as_millis() as u64,
            remediation: Some(remediation(FailureClass::InferenceFailing).into()),
        }
    }
}

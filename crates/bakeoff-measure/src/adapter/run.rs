//! `bakeoff eval adapter` as a library function: preflight, the adapter's route, the check
//! (journaled as items finish), the artifact. The binary wires the signals and the terminal
//! around [`run`].

use std::path::PathBuf;
use std::time::Duration;

use bakeoff_artifact::{
    AdapterRoute, AdapterVerdict, ArtifactKind, EngineKind, Evidence, Failure, FailureClass,
    ItemRecord, RunStatus, StoreError, SuiteResult,
};
use bakeoff_client::Client;
use bakeoff_client::adapter::{AdapterError, resolve};
use tokio::sync::watch;

use super::{AdapterInput, AdapterOptions, SUITE, check};
use crate::Output;
use crate::damage::Prompt;
use crate::evaluate::{Evaluated, preflighted, unfit_artifact, write_run_artifact};
use bakeoff_suites::preflight::{PreflightOptions, run_preflight};

/// Each control call of the adapter's lookup (`/v1/models`, `/lora-adapters`).
const LOOKUP_LIMIT: Duration = Duration::from_secs(15);

/// What to check and where to write it.
pub struct AdapterRequest<'a> {
    pub client: &'a Client,
    /// Asked of the base model.
    pub preflight: &'a PreflightOptions,
    pub adapter: &'a str,
    /// `--base`; else the model preflight found.
    pub base: Option<&'a str>,
    pub prompts: &'a [Prompt],
    /// Where the prompts came from, as recorded in `artifact.run`.
    pub prompts_source: &'a str,
    pub options: &'a AdapterOptions,
    /// Where the artifact goes: its slug is `--slug`, else the candidate's default with
    /// `-adapter`; the check's own facts are added to its run record.
    pub output: Output<'a>,
    /// Where progress goes.
    pub progress: &'a (dyn Fn(AdapterEvent<'_>) + Sync),
}

/// What the check is doing, for whoever draws it.
pub enum AdapterEvent<'a> {
    /// Preflight started: a real completion from the base model.
    Preflight,
    /// The adapter is served: the check starts, `prompts` × 3 requests.
    Resolved {
        engine: EngineKind,
        route: &'a AdapterRoute,
        prompts: usize,
    },
    /// The `done`th of `total` requests finished.
    Item {
        done: usize,
        total: usize,
        id: &'a str,
    },
}

#[derive(Debug, thiserror::Error)]
pub enum AdapterRunError {
    #[error("interrupted by the operator during preflight; nothing was measured")]
    InterruptedInPreflight,
    /// The failure artifact is written at `path`.
    #[error(
        "the endpoint is not fit to be measured ({class}): {message}; failure artifact {}",
        path.display()
    )]
    Unfit {
        class: FailureClass,
        message: String,
        path: PathBuf,
    },
    /// The adapter (or `--base`) is not served, or its listing could not be read; no file is
    /// claimed.
    #[error(transparent)]
    Route(#[from] AdapterError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Preflight, the route, the check, the artifact — `eval adapter` without the terminal. `stop`
/// flips to true on Ctrl-C/SIGTERM: during preflight the run ends with
/// `InterruptedInPreflight`; during the check it stops after the request in flight and writes
/// an `incomplete` artifact.
pub async fn run(
    req: AdapterRequest<'_>,
    stop: &mut watch::Receiver<bool>,
) -> Result<Evaluated, AdapterRunError> {
    let client = req.client;
    (req.progress)(AdapterEvent::Preflight);
    let pre = tokio::select! {
        p = run_preflight(client, req.preflight) => p,
        _ = stop.changed() => return Err(AdapterRunError::InterruptedInPreflight),
    };
    let mut cand = req.output.candidate(client, &pre);
    cand.notes
        .push(format!("adapter check of {:?}", req.adapter));
    if let Some(unfit) = &pre.unfit {
        let mut files = req.output.claim(&cand.slug)?;
        let mut art = unfit_artifact(cand, client, &pre, unfit, pre.report.elapsed_ms);
        art.run = run_record(&req, None);
        let path = write_run_artifact(&mut files, &mut art)?;
        return Err(AdapterRunError::Unfit {
            class: unfit.class,
            message: unfit.message.clone(),
            path,
        });
    }
    let engine = pre.discovered.facts.engine;
    let base = req.base.or(pre.report.model.as_deref());
    // An adapter the endpoint does not serve is the operator's to fix, before any file is
    // claimed.
    let route = resolve(client, engine, base, req.adapter, LOOKUP_LIMIT).await?;
    (req.progress)(AdapterEvent::Resolved {
        engine,
        route: &route,
        prompts: req.prompts.len(),
    });
    let mut files = req.output.claim(&cand.slug)?;
    let seed = bakeoff_suites::context::fresh_seed(req.adapter);
    let mut journal = files.open_journal()?;
    let mut journal_error = None;
    let total = req.prompts.len() * 3;
    let mut done = 0usize;
    let mut on_item = |item: &ItemRecord| {
        done += 1;
        (req.progress)(AdapterEvent::Item {
            done,
            total,
            id: &item.id,
        });
        if let Err(e) = journal.append(SUITE, item) {
            journal_error.get_or_insert(e.to_string());
        }
    };
    let measured = check(
        AdapterInput {
            client,
            engine,
            route: &route,
            prompts: req.prompts,
            options: req.options,
            seed,
        },
        stop,
        &mut on_item,
    )
    .await;
    let report = measured.report;
    let kind = if report.verdict == AdapterVerdict::NotMeasured {
        ArtifactKind::Failure
    } else {
        ArtifactKind::Bakeoff
    };
    let mut art = preflighted(kind, cand, client, &pre);
    if let Some(e) = journal_error {
        art.candidate
            .notes
            .push(format!("journal write failed: {e}"));
    }
    art.run = run_record(&req, Some(seed));
    art.instrument_flags
        .extend(measured.result.summary.flags.iter().cloned());
    if let Some(reason) = &measured.interrupted {
        art.status = RunStatus::Incomplete;
        art.incomplete_reason = Some(reason.clone());
    }
    if kind == ArtifactKind::Failure {
        art.failure = Some(not_measured(&measured.result, &report.message));
    }
    art.suites.insert(SUITE.to_string(), measured.result);
    art.adapter = Some(report);
    let path = write_run_artifact(&mut files, &mut art)?;
    Ok(Evaluated {
        artifact: art,
        path,
    })
}

/// True when the adapter was found applied and the check is complete (`eval adapter`'s exit 0).
pub fn applied(art: &bakeoff_artifact::Artifact) -> bool {
    art.adapter
        .as_ref()
        .is_some_and(|r| r.verdict == AdapterVerdict::Applied)
        && art.status == RunStatus::Complete
}

/// What the operator asked for, as recorded in the artifact.
fn run_record(req: &AdapterRequest<'_>, seed: Option<u64>) -> bakeoff_artifact::RunRecord {
    bakeoff_artifact::RunRecord {
        command: Some("eval adapter".into()),
        adapter: Some(req.adapter.to_owned()),
        base: Some(req.base.map(str::to_owned)),
        prompts: Some(req.prompts_source.to_owned()),
        top_k: Some(req.options.top_k),
        max_tokens: Some(req.options.max_tokens),
        seed: Some(seed),
        ready_timeout_s: Some(req.preflight.ready_timeout.as_secs()),
        ..req.output.run_record.clone()
    }
}

/// The failure of a check that measured nothing: every request failed, or none carried
/// logprobs.
fn not_measured(result: &SuiteResult, message: &str) -> Failure {
    let mut evidence: Vec<Evidence> = Vec::new();
    for it in &result.items {
        let detail = it
            .error
            .as_ref()
            .map(|e| e.message.clone())
            .or_else(|| it.check.clone());
        if let Some(detail) = detail
            && !evidence.iter().any(|e| e.detail == detail)
        {
            evidence.push(Evidence {
                what: format!("adapter/{} POST /v1/chat/completions", it.id),
                detail,
            });
        }
    }
    let failing = result.items.iter().any(|i| i.error.is_some());
    let class = if failing {
        FailureClass::InferenceFailing
    } else {
        FailureClass::NotMeasurable
    };
    Failure {
        class,
        message: message.to_string(),
        evidence,
        elapsed_ms: result.items.iter().map(|i| i.latency.e2e_ms as u64).sum(),
        remediation: Some(bakeoff_artifact::failure_table::remediation(class).into()),
    }
}

//! `bakeoff eval adapter`: is a LoRA adapter applied at all? The check is
//! `bakeoff_suites::adapter`; how the endpoint serves the adapter is the client's
//! (`bakeoff_client::adapter`, through the dialect); this file wires preflight, the check, the
//! artifact and the terminal. Exit 0 applied; 1 adapter-no-op, withheld or not measured.

use std::time::Duration;

use bakeoff_artifact::{
    AdapterVerdict, Artifact, ArtifactKind, EndpointRecord, Evidence, Failure, FailureClass,
    RunStatus, StoreError,
};
use bakeoff_client::Client;
use bakeoff_client::adapter::{AdapterError, resolve};
use bakeoff_suites::adapter::{self, AdapterInput};
use bakeoff_suites::evaluate::{Naming, candidate, run_files, write_run_artifact};
use bakeoff_suites::run_preflight;
use tokio::sync::watch;

use crate::config::AdapterConfig;
use crate::exit::{Error, Exit};
use crate::progress::Progress;

/// Each control call of the adapter's lookup (`/v1/models`, `/lora-adapters`).
const LOOKUP_LIMIT: Duration = Duration::from_secs(15);

pub async fn run(cfg: AdapterConfig) -> Result<Exit, Error> {
    std::fs::create_dir_all(&cfg.naming.out).map_err(|source| StoreError::CreateDir {
        path: cfg.naming.out.clone(),
        source,
    })?;
    let mut stop = super::stop_signal::watch();
    let display = Progress::new(false);
    let result = match cfg.endpoint.client_for(cfg.url.clone()) {
        Ok(client) => measure(&cfg, &client, &mut stop.rx, &display).await,
        Err(e) => Err(e),
    };
    drop(stop);
    display.finish();
    result
}

async fn measure(
    cfg: &AdapterConfig,
    client: &Client,
    stop: &mut watch::Receiver<bool>,
    display: &Progress,
) -> Result<Exit, Error> {
    display.status("[adapter] preflight: a real completion from the base model …");
    let pre = tokio::select! {
        p = run_preflight(client, &cfg.endpoint.preflight) => p,
        _ = stop.changed() => return Err(Error::failed("interrupted by the operator during preflight; nothing was measured")),
    };
    let naming = Naming {
        slug: cfg.naming.slug.clone(),
        hardware: None,
        notes: vec![format!("adapter check of {:?}", cfg.adapter)],
    };
    let cand = candidate(&naming, "-adapter", client, &pre);
    let endpoint = EndpointRecord {
        url: client.url().redacted(),
        facts: Some(pre.discovered.facts.clone()),
    };
    if let Some(unfit) = &pre.unfit {
        let mut files = run_files(&cfg.naming.out, &cand.slug, false)?;
        let mut art = Artifact::new(ArtifactKind::Failure, cand, endpoint);
        art.preflight = Some(pre.report.clone());
        art.instrument_flags = pre.report.flags.clone();
        art.run = run_record(cfg, None);
        art.failure = Some(unfit.failure(pre.report.elapsed_ms));
        let path = write_run_artifact(&mut files, &mut art)?;
        display.finish();
        return Err(Error::failed(format!(
            "the endpoint is not fit to be measured ({}): {}; failure artifact {}",
            unfit.class,
            unfit.message,
            path.display()
        )));
    }
    let engine = pre.discovered.facts.engine;
    let base = cfg.base.as_deref().or(pre.report.model.as_deref());
    // An adapter the endpoint does not serve is the operator's to fix (exit 2), before any
    // file is claimed.
    let route = resolve(client, engine, base, &cfg.adapter, LOOKUP_LIMIT)
        .await
        .map_err(|e| match e {
            AdapterError::Listing { .. } => Error::failed(e),
            _ => Error::usage(e),
        })?;
    display.line(&format!(
        "[adapter] {engine}: base {:?}, adapter {:?}; {} prompts × 3 requests (base, adapter, \
         base again)",
        route.base_model,
        route.adapter,
        cfg.prompts.len()
    ));
    let mut files = run_files(&cfg.naming.out, &cand.slug, false)?;
    let seed = bakeoff_suites::context::fresh_seed(&cfg.adapter);
    let mut journal = files.open_journal()?;
    let mut journal_error = None;
    let total = cfg.prompts.len() * 3;
    let mut done = 0usize;
    let mut on_item = |item: &bakeoff_artifact::ItemRecord| {
        done += 1;
        display.transient(&format!("[adapter {done}/{total}] {}", item.id));
        if let Err(e) = journal.append(adapter::SUITE, item) {
            journal_error.get_or_insert(e.to_string());
        }
    };
    let measured = adapter::check(
        AdapterInput {
            client,
            engine,
            route: &route,
            prompts: &cfg.prompts,
            options: &cfg.options,
            seed,
        },
        stop,
        &mut on_item,
    )
    .await;
    display.finish();
    let report = measured.report;
    let verdict = report.verdict;
    let kind = if verdict == AdapterVerdict::NotMeasured {
        ArtifactKind::Failure
    } else {
        ArtifactKind::Bakeoff
    };
    let mut art = Artifact::new(kind, cand, endpoint);
    if let Some(e) = journal_error {
        art.candidate
            .notes
            .push(format!("journal write failed: {e}"));
    }
    art.preflight = Some(pre.report.clone());
    art.run = run_record(cfg, Some(seed));
    art.instrument_flags = pre.report.flags.clone();
    art.instrument_flags
        .extend(measured.result.summary.flags.iter().cloned());
    if let Some(reason) = &measured.interrupted {
        art.status = RunStatus::Incomplete;
        art.incomplete_reason = Some(reason.clone());
    }
    if kind == ArtifactKind::Failure {
        art.failure = Some(not_measured(&measured.result, &report.message));
    }
    art.suites
        .insert(adapter::SUITE.to_string(), measured.result);
    art.adapter = Some(report);
    let path = write_run_artifact(&mut files, &mut art)?;
    if cfg.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&art).map_err(Error::json)?
        );
    } else if let Some(r) = &art.adapter {
        print!(
            "{}",
            bakeoff_report::adapter::terminal(
                r,
                &path.display().to_string(),
                bakeoff_report::table::width()
            )
        );
        if let Some(reason) = &art.incomplete_reason {
            println!(
                "incomplete: {}",
                bakeoff_report::escape::for_terminal(reason, 400)
            );
        }
    }
    Ok(Exit::from_ok(
        verdict == AdapterVerdict::Applied && art.status == RunStatus::Complete,
    ))
}

/// What the operator asked for, as recorded in the artifact.
fn run_record(cfg: &AdapterConfig, seed: Option<u64>) -> bakeoff_artifact::RunRecord {
    bakeoff_artifact::RunRecord {
        command: Some("eval adapter".into()),
        adapter: Some(cfg.adapter.clone()),
        base: Some(cfg.base.clone()),
        prompts: Some(cfg.prompts_source.clone()),
        top_k: Some(cfg.options.top_k),
        max_tokens: Some(cfg.options.max_tokens),
        seed: Some(seed),
        ready_timeout_s: Some(cfg.endpoint.preflight.ready_timeout.as_secs()),
        ..Default::default()
    }
}

/// The failure of a check that measured nothing: every request failed, or none carried
/// logprobs.
fn not_measured(result: &bakeoff_artifact::SuiteResult, message: &str) -> Failure {
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

//! `bakeoff eval run`: preflight, suites, artifact.

use std::time::Instant;

use bakeoff_artifact::failure_table::remediation;
use bakeoff_artifact::{
    Artifact, ArtifactKind, EndpointRecord, Evidence, Failure, FailureClass, RunFiles, RunStatus,
};
use bakeoff_client::Client;
use bakeoff_suites::context;
use bakeoff_suites::{RunOutcome, SuiteContext, SuiteOptions, run_preflight, run_suites};
use tokio::sync::watch;

use crate::config::RunConfig;
use crate::exit::{Error, Exit};
use crate::local_default;

pub async fn run(mut cfg: RunConfig) -> Result<Exit, Error> {
    cfg.suite_options.load_progress = super::bench::suite_progress(!cfg.json);
    // Ctrl-C (or SIGTERM) is watched from here on: while provisioning or starting the
    // embedded server it stops cleanly (the server handle kills its process on drop); during
    // preflight it stops the embedded server; during the suites it stops after the item in
    // flight and keeps everything finished.
    let (tx, mut rx) = watch::channel(false);
    let watcher = tokio::spawn(async move {
        wait_for_stop_signal().await;
        let _ = tx.send(true);
    });
    let started = tokio::select! {
        r = local_default::start_unless(cfg.endpoint.url.as_ref(), &cfg.naming.out, cfg.local) => r,
        _ = rx.changed() => Err(Error::failed("interrupted by the operator before the endpoint was ready; nothing was measured")),
    };
    let local = match started {
        Ok(x) => x,
        Err(e) => {
            watcher.abort();
            return Err(e);
        }
    };
    let local_url = local.as_ref().map(|l| l.server.url());
    let result = match super::client_for(&cfg.endpoint, local_url.as_deref()) {
        Ok(client) => measure(&cfg, &client, local.as_ref(), &mut rx).await,
        Err(e) => Err(e),
    };
    watcher.abort();
    local_default::stop(local).await;
    result
}

async fn measure(
    cfg: &RunConfig,
    client: &Client,
    local: Option<&local_default::LocalServer>,
    rx: &mut watch::Receiver<bool>,
) -> Result<Exit, Error> {
    let start = Instant::now();
    let opts = &cfg.endpoint.preflight;
    let mut pre = tokio::select! {
        p = run_preflight(client, opts) => p,
        _ = rx.changed() => return Err(Error::failed("interrupted by the operator during preflight; nothing was measured")),
    };
    let mut candidate = super::candidate(&cfg.naming, "", client, &pre, local);
    // The run's file names, claimed now: a later run of the slug never overwrites this one.
    let mut files = super::run_files(&cfg.naming.out, &candidate.slug, cfg.naming.replace)?;
    let endpoint = EndpointRecord {
        url: client.url().redacted(),
        facts: Some(pre.discovered.facts.clone()),
    };
    let run_record = run_record(cfg, local.is_some());

    if let Some(unfit) = &pre.unfit {
        let mut art = Artifact::new(ArtifactKind::Failure, candidate, endpoint);
        art.preflight = Some(pre.report.clone());
        art.instrument_flags = pre.report.flags.clone();
        art.run = run_record;
        art.failure = Some(Failure {
            class: unfit.class,
            message: unfit.message.clone(),
            evidence: unfit.evidence.clone(),
            elapsed_ms: start.elapsed().as_millis() as u64,
            remediation: unfit.remediation.clone(),
        });
        return finish(cfg, &mut files, art, Exit::Failed);
    }

    let model = pre
        .report
        .model
        .clone()
        .unwrap_or_else(|| "default".to_string());
    // Does --thinking take effect on this endpoint? Checked, never assumed.
    let (thinking_check, thinking_flag) = bakeoff_suites::thinking::verify(
        client,
        &model,
        pre.discovered.facts.engine,
        cfg.suite_options.thinking,
    )
    .await;
    pre.report.thinking_mode = Some(thinking_check);
    pre.report.flags.extend(thinking_flag);
    let mut journal = files.open_journal()?;
    let mut journal_error = None;

    let suite_options = &with_ceiling(cfg).await?;
    let ctx = SuiteContext {
        client,
        model: model.clone(),
        facts: &pre.discovered.facts,
        options: suite_options,
    };
    let mut on_item = |suite: &str, item: &bakeoff_artifact::ItemRecord| {
        if let Err(e) = journal.append(suite, item) {
            journal_error.get_or_insert(e.to_string());
        }
    };
    let outcome = run_suites(&ctx, &cfg.suites, rx, &mut on_item).await;
    if let Some(e) = journal_error {
        candidate.notes.push(format!("journal write failed: {e}"));
    }

    let measured = outcome.measured_anything();
    let kind = if measured {
        ArtifactKind::Bakeoff
    } else {
        ArtifactKind::Failure
    };
    let mut art = Artifact::new(kind, candidate, endpoint);
    art.preflight = Some(pre.report.clone());
    art.run = run_record;
    art.instrument_flags = pre.report.flags.clone();
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
        facts.overflow = context::overflow_fact(c);
    }
    art.suites = outcome.suites;
    let code = if !measured || art.status == RunStatus::Incomplete {
        Exit::Failed
    } else {
        Exit::Ok
    };
    finish(cfg, &mut files, art, code)
}

/// What the run was asked to do, as recorded in the artifact.
fn run_record(cfg: &RunConfig, embedded_default: bool) -> serde_json::Value {
    let opts = &cfg.endpoint.preflight;
    let suite_options = &cfg.suite_options;
    serde_json::json!({
        "suites": cfg.suites.iter().map(|s| s.as_str()).collect::<Vec<_>>(),
        "max_model_len_hint": opts.max_model_len,
        "ready_timeout_s": opts.ready_timeout.as_secs(),
        "embedded_default": embedded_default,
        "thinking": suite_options.thinking.as_str(),
        "battery": suite_options.battery.as_ref().map(|p| p.display().to_string()),
        "limit": suite_options.limit,
        "seed": suite_options.context.seed,
        "tokenizer": suite_options
            .context
            .tokenizer
            .as_ref()
            .map(|t| t.path().display().to_string()),
    })
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
        .filter(|f| f.severity == bakeoff_artifact::FlagSeverity::Invalid && f.code.is_refusal())
        .map(|f| f.message.clone())
        .collect();
    // Suites whose items all ran but whose every family the instrument rejected.
    let invalid: Vec<String> = outcome
        .suites
        .iter()
        .filter(|(_, s)| bakeoff_suites::nothing_valid(s))
        .map(|(name, s)| {
            let flags: Vec<&str> = s
                .summary
                .flags
                .iter()
                .filter(|f| f.severity == bakeoff_artifact::FlagSeverity::Invalid)
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

fn finish(
    cfg: &RunConfig,
    files: &mut RunFiles,
    mut art: Artifact,
    code: Exit,
) -> Result<Exit, Error> {
    let path = super::write_run_artifact(files, &mut art)?;
    if cfg.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&art).map_err(Error::json)?
        );
    } else {
        println!(
            "{}",
            bakeoff_report::terminal::run_summary(&art, &path.display().to_string())
        );
        print!("{}", super::bench::suite_sweeps(&art));
    }
    Ok(code)
}

async fn wait_for_stop_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = term.recv() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

/// The harness ceiling for the load suites, measured once per run against the built-in
/// loopback target (as `bench run` does), so their steps can be flagged `client-bound`.
async fn with_ceiling(cfg: &RunConfig) -> Result<SuiteOptions, Error> {
    let mut options = cfg.suite_options.clone();
    let load = cfg.suites.iter().any(|s| {
        matches!(
            s,
            bakeoff_suites::SuiteName::Throughput | bakeoff_suites::SuiteName::Longgen
        )
    });
    if load && cfg.calibrate {
        options.throughput.harness_ceiling = Some(super::bench::harness_ceiling(cfg.json).await?);
    }
    Ok(options)
}

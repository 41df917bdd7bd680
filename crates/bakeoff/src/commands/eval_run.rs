//! `bakeoff eval run`: preflight, suites, artifact.

use std::path::PathBuf;
use std::time::Instant;

use bakeoff_artifact::{
    Artifact, ArtifactKind, EndpointRecord, Evidence, Failure, FailureClass, RunFiles, RunStatus,
    slug,
};
use bakeoff_client::Client;
use bakeoff_suites::context::{self, ContextOptions};
use bakeoff_suites::{SuiteContext, SuiteName, SuiteOptions, run_preflight, run_suites};
use tokio::sync::watch;

use super::{client_for, preflight_options};
use crate::cli::RunArgs;
use crate::exit::{CliError, Exit, failed, usage};
use crate::local_default;

pub async fn run(a: RunArgs) -> Result<Exit, CliError> {
    // Validate everything before anything starts or is written.
    let suites = SuiteName::parse_list(&a.suite).map_err(usage)?;
    if let Some(s) = &a.slug {
        slug::validate_slug(s).map_err(usage)?;
    }
    let opts = preflight_options(&a.endpoint)?;
    let suite_options = suite_options(&a)?;
    if a.local_ctx == 0 || a.local_parallel == 0 {
        return Err(usage("--local-ctx and --local-parallel must be positive"));
    }

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
        r = local_default::endpoint_or_start(
            a.endpoint.endpoint.as_deref(),
            &a.out,
            a.local_ctx,
            a.local_parallel,
        ) => r,
        _ = rx.changed() => Err(failed("interrupted by the operator before the endpoint was ready; nothing was measured")),
    };
    let (endpoint, local) = match started {
        Ok(x) => x,
        Err(e) => {
            watcher.abort();
            return Err(e);
        }
    };
    let result = match client_for(&endpoint, &a.endpoint) {
        Ok(client) => {
            measure(
                &a,
                &client,
                &suites,
                &opts,
                &suite_options,
                local.as_ref(),
                &mut rx,
            )
            .await
        }
        Err(e) => Err(e),
    };
    watcher.abort();
    local_default::stop(local).await;
    result
}

async fn measure(
    a: &RunArgs,
    client: &Client,
    suites: &[SuiteName],
    opts: &bakeoff_suites::PreflightOptions,
    suite_options: &SuiteOptions,
    local: Option<&local_default::LocalServer>,
    rx: &mut watch::Receiver<bool>,
) -> Result<Exit, CliError> {
    let start = Instant::now();
    let mut pre = tokio::select! {
        p = run_preflight(client, opts) => p,
        _ = rx.changed() => return Err(failed("interrupted by the operator during preflight; nothing was measured")),
    };
    let mut candidate = super::candidate(
        super::Naming {
            slug: a.slug.as_deref(),
            slug_suffix: "",
            notes: &a.note,
            hardware: a.hardware.as_deref(),
        },
        client,
        &pre,
        local,
    );
    // The run's file names, claimed now: a later run of the slug never overwrites this one.
    let mut files = super::run_files(&a.out, &candidate.slug, a.replace)?;
    let endpoint = EndpointRecord {
        url: client.url().redacted(),
        facts: Some(pre.discovered.facts.clone()),
    };
    let run_record = serde_json::json!({
        "suites": suites.iter().map(|s| s.as_str()).collect::<Vec<_>>(),
        "max_model_len_hint": opts.max_model_len,
        "ready_timeout_s": opts.ready_timeout.as_secs(),
        "embedded_default": local.is_some(),
        "thinking": suite_options.thinking.as_str(),
        "battery": suite_options.battery.as_ref().map(|p| p.display().to_string()),
        "limit": suite_options.limit,
        "seed": suite_options.context.seed,
        "tokenizer": suite_options
            .context
            .tokenizer
            .as_ref()
            .map(|t| t.path().display().to_string()),
    });

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
        return finish(a, &mut files, art, Exit::Failed);
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
        suite_options.thinking,
    )
    .await;
    pre.report.thinking_mode = Some(thinking_check);
    pre.report.flags.extend(thinking_flag);
    let mut journal = files.open_journal().map_err(failed)?;
    let mut journal_error = None;

    let suite_options = &with_ceiling(a, suites, suite_options).await?;
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
    let outcome = run_suites(&ctx, suites, rx, &mut on_item).await;
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
            .filter(|f| {
                f.severity == bakeoff_artifact::FlagSeverity::Invalid
                    && f.code.ends_with("-refused")
            })
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
        art.failure = Some(if evidence.is_empty() && !invalid.is_empty() {
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
                remediation: Some(
                    "the scores are below chance beyond doubt: check the battery's answer keys and \
                     the extraction (docs/statistics.md) before reading anything about the model"
                        .into(),
                ),
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
                remediation: Some(
                    "supply what the suite asked for (e.g. --max-model-len N) and rerun".into(),
                ),
            }
        } else {
            Failure {
                class: FailureClass::InferenceFailing,
                message: "preflight passed but every suite request failed: nothing was measured"
                    .into(),
                evidence,
                elapsed_ms: start.elapsed().as_millis() as u64,
                remediation: Some(
                    "read the engine log for the first error; rerun preflight".into(),
                ),
            }
        });
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
    finish(a, &mut files, art, code)
}

fn context_options(a: &RunArgs) -> Result<ContextOptions, CliError> {
    Ok(ContextOptions {
        targets: a
            .context_targets
            .as_deref()
            .map(context::parse_targets)
            .transpose()
            .map_err(usage)?,
        depths: context::parse_depths(&a.context_depths).map_err(usage)?,
        seed: a.seed.unwrap_or_else(fresh_seed),
        overflow_probe: !a.no_overflow_probe,
        tokenizer: a
            .tokenizer
            .as_deref()
            .map(|p| bakeoff_text::LocalTokenizer::from_file(p).map(std::sync::Arc::new))
            .transpose()
            .map_err(usage)?,
    })
}

/// A per-run seed: std's randomly keyed hasher draws its keys from the OS, so two runs never
/// share one unless `--seed` says so.
fn fresh_seed() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default(),
    );
    h.finish()
}

fn finish(
    a: &RunArgs,
    files: &mut RunFiles,
    mut art: Artifact,
    code: Exit,
) -> Result<Exit, CliError> {
    let path: PathBuf = super::write_run_artifact(files, &mut art)?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&art).map_err(usage)?);
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

/// `--thinking`, `--battery` and `--limit`, validated before anything starts.
fn suite_options(a: &RunArgs) -> Result<SuiteOptions, CliError> {
    let thinking = bakeoff_suites::ThinkingMode::parse(&a.endpoint.thinking).map_err(usage)?;
    if let Some(p) = &a.battery {
        bakeoff_suites::intelligence::load(Some(p)).map_err(usage)?;
    }
    if a.limit == Some(0) {
        return Err(usage("--limit must be at least 1"));
    }
    Ok(SuiteOptions {
        thinking,
        battery: a.battery.clone(),
        limit: a.limit,
        context: context_options(a)?,
        throughput: throughput_options(a)?,
        longgen: longgen_options(a)?,
        load_progress: super::bench::suite_progress(!a.json),
    })
}

fn throughput_options(
    a: &RunArgs,
) -> Result<bakeoff_suites::throughput::ThroughputOptions, CliError> {
    let l = &a.load;
    // The same level parser as `bench run --concurrency`.
    let concurrency = bakeoff_load::plan::parse_levels(&l.load_concurrency)
        .ok()
        .filter(|c| !c.is_empty())
        .ok_or_else(|| usage("--load-concurrency needs levels of at least 1, e.g. 1,2,4"))?;
    if l.load_requests == 0 || l.load_prompt_tokens == 0 || l.load_output_tokens == 0 {
        return Err(usage(
            "--load-requests, --load-prompt-tokens and --load-output-tokens must be at least 1",
        ));
    }
    Ok(bakeoff_suites::throughput::ThroughputOptions {
        concurrency,
        requests_per_step: l.load_requests,
        prompt_tokens: l.load_prompt_tokens,
        output_tokens: l.load_output_tokens,
        ..Default::default()
    })
}

fn longgen_options(a: &RunArgs) -> Result<bakeoff_suites::longgen::LonggenOptions, CliError> {
    let l = &a.load;
    if l.longgen_probes == 0 || l.longgen_tokens == 0 {
        return Err(usage(
            "--longgen-probes and --longgen-tokens must be at least 1",
        ));
    }
    Ok(bakeoff_suites::longgen::LonggenOptions {
        probes: l.longgen_probes,
        output_tokens: l.longgen_tokens,
        ..Default::default()
    })
}

/// The harness ceiling for the load suites, measured once per run against the built-in
/// loopback target (as `bench run` does), so their steps can be flagged `client-bound`.
async fn with_ceiling(
    a: &RunArgs,
    suites: &[SuiteName],
    options: &SuiteOptions,
) -> Result<SuiteOptions, CliError> {
    let mut options = options.clone();
    let load = suites
        .iter()
        .any(|s| matches!(s, SuiteName::Throughput | SuiteName::Longgen));
    if load && !a.load.no_calibrate {
        options.throughput.harness_ceiling = Some(super::bench::harness_ceiling(a.json).await?);
    }
    Ok(options)
}

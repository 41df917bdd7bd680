//! `bakeoff eval run`: preflight, suites, artifact — with progress on stderr (the
//! preflight's phases, "[suite n/N]" with the time so far, an ETA and the outcomes so far, each
//! suite's end as a lasting line), also with `--json` (stdout stays pure JSON).

use std::sync::Arc;

use bakeoff_artifact::RunRecord;
use bakeoff_client::Client;
use bakeoff_local::embedded;
use bakeoff_measure::ceiling::Ceilings;
use bakeoff_measure::evaluate::{EvalRequest, evaluate};
use bakeoff_progress::Progress;
use bakeoff_progress::eval::eval_hook;
use bakeoff_progress::steps::suite_progress;
use bakeoff_report::bench_summary;
use bakeoff_suites::EvalHook;
use tokio::sync::watch;

use crate::exit::{Error, Exit};
use bakeoff_flags::config::RunConfig;

pub async fn run(mut cfg: RunConfig) -> Result<Exit, Error> {
    // An output directory that cannot be made fails now, before minutes of measuring.
    bakeoff_artifact::store::create_dir(&cfg.naming.out)?;
    // Ctrl-C (or SIGTERM) is watched from here on: while provisioning or starting the
    // embedded server it stops cleanly (the server handle kills its process on drop); during
    // preflight it stops the embedded server; during the suites it stops after the item in
    // flight and keeps everything finished.
    let mut stop = super::stop_signal::watch();
    let started = tokio::select! {
        r = embedded::start_unless(cfg.endpoint.url.as_ref(), &cfg.naming.out, cfg.local) => r.map_err(Error::from),
        _ = stop.rx.changed() => Err(Error::failed("interrupted by the operator before the endpoint was ready; nothing was measured")),
    };
    let local = started?;
    // The display starts once the embedded default (which reports its own provisioning) is up.
    let display = Arc::new(Progress::new(false));
    let (load_progress, steps) = suite_progress(display.clone());
    cfg.suite_options.load_progress = load_progress;
    let hook = eval_hook(display.clone(), steps);
    let local_url = local.as_ref().map(|l| l.server.url());
    let result = match super::measuring::client_for(&cfg.endpoint, local_url.as_deref()) {
        Ok(client) => measure(&cfg, &client, local.as_ref(), &mut stop.rx, &display, hook).await,
        Err(e) => Err(e),
    };
    drop(stop);
    display.finish();
    embedded::stop(local).await;
    result
}

async fn measure(
    cfg: &RunConfig,
    client: &Client,
    local: Option<&embedded::LocalServer>,
    rx: &mut watch::Receiver<bool>,
    display: &Progress,
    hook: EvalHook,
) -> Result<Exit, Error> {
    // Measured once for this run, when a load suite first needs it.
    let ceilings = Ceilings::default();
    let req = EvalRequest {
        client,
        preflight: &cfg.endpoint.preflight,
        suites: &cfg.suites,
        options: &cfg.suite_options,
        ceilings: cfg.calibrate.then_some(&ceilings),
        output: super::measuring::output(&cfg.naming, local, "", run_record(cfg, local.is_some())),
        progress: Some(hook),
    };
    let evaluated = evaluate(req, rx).await;
    display.finish();
    let evaluated = evaluated?;
    if cfg.json {
        stdoutln!(
            "{}",
            serde_json::to_string_pretty(&evaluated.artifact).map_err(Error::json)?
        );
    } else {
        stdoutln!(
            "{}",
            super::screen(&bakeoff_report::terminal::run_summary(
                &evaluated.artifact,
                &evaluated.path.display().to_string()
            ))
        );
        stdout!(
            "{}",
            super::screen(&bench_summary::suite_sweeps(&evaluated.artifact))
        );
        stdoutln!(
            "{}",
            super::screen(&bench_summary::conditions_line(&evaluated.artifact))
        );
    }
    Ok(Exit::from_ok(evaluated.ok()))
}

/// What the run was asked to do, as recorded in the artifact.
fn run_record(cfg: &RunConfig, embedded_default: bool) -> RunRecord {
    let opts = &cfg.endpoint.preflight;
    let suite_options = &cfg.suite_options;
    let path = |p: &Option<std::path::PathBuf>| p.as_ref().map(|p| p.display().to_string());
    let structured = cfg.suites.contains(&bakeoff_suites::SuiteName::Structured);
    RunRecord {
        suites: Some(cfg.suites.iter().map(|s| s.as_str().to_string()).collect()),
        max_model_len_hint: Some(opts.max_model_len),
        ready_timeout_s: Some(opts.ready_timeout.as_secs()),
        embedded_default: Some(embedded_default),
        thinking: Some(suite_options.thinking.as_str().to_string()),
        battery: Some(path(&suite_options.battery)),
        refusal_battery: Some(path(&suite_options.refusal_battery)),
        structured_battery: structured.then(|| path(&suite_options.structured_battery)),
        schema_form: structured.then(|| suite_options.schema_form.as_str().to_string()),
        limit: Some(suite_options.limit.map(|l| l as u64)),
        seed: Some(Some(suite_options.context.seed)),
        tokenizer: Some(
            suite_options
                .context
                .tokenizer
                .as_ref()
                .map(|t| t.path().display().to_string()),
        ),
        ..Default::default()
    }
}

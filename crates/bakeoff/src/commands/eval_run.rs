//! `bakeoff eval run`: preflight, suites, artifact.

use bakeoff_client::Client;
use bakeoff_suites::SuiteOptions;
use bakeoff_suites::evaluate::{EvalRequest, evaluate};
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
        super::stop_signal::wait().await;
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
    let options = with_ceiling(cfg).await?;
    let naming = super::naming(&cfg.naming, local);
    let req = EvalRequest {
        client,
        preflight: &cfg.endpoint.preflight,
        suites: &cfg.suites,
        options: &options,
        naming: &naming,
        slug_suffix: "",
        out: &cfg.naming.out,
        replace: cfg.naming.replace,
        run_record: run_record(cfg, local.is_some()),
    };
    let evaluated = evaluate(req, rx).await?;
    if cfg.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&evaluated.artifact).map_err(Error::json)?
        );
    } else {
        println!(
            "{}",
            bakeoff_report::terminal::run_summary(
                &evaluated.artifact,
                &evaluated.path.display().to_string()
            )
        );
        print!("{}", super::bench::suite_sweeps(&evaluated.artifact));
    }
    Ok(Exit::from_ok(evaluated.ok()))
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

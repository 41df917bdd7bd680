//! `bakeoff eval adapter`: is a LoRA adapter applied at all? The run is
//! `bakeoff_measure::adapter::run` (preflight, the route, the check, the artifact); this file
//! wires the signals, the progress and the terminal. Exit 0 applied; 1 adapter-no-op, withheld
//! or not measured.

use bakeoff_client::Client;
use bakeoff_measure::adapter::{self, AdapterEvent, AdapterRequest};
use bakeoff_progress::Progress;
use bakeoff_progress::eval::adapter_event;
use tokio::sync::watch;

use crate::exit::{Error, Exit};
use bakeoff_flags::config::AdapterConfig;

pub async fn run(cfg: AdapterConfig) -> Result<Exit, Error> {
    bakeoff_artifact::store::create_dir(&cfg.naming.out)?;
    let mut stop = super::stop_signal::watch();
    let display = Progress::new(false);
    let result = match cfg.endpoint.client_for(cfg.url.clone()) {
        Ok(client) => measure(&cfg, &client, &mut stop.rx, &display).await,
        Err(e) => Err(e.into()),
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
    let progress = |e: AdapterEvent<'_>| adapter_event(display, e);
    let req = AdapterRequest {
        client,
        preflight: &cfg.endpoint.preflight,
        adapter: &cfg.adapter,
        base: cfg.base.as_deref(),
        prompts: &cfg.prompts,
        prompts_source: &cfg.prompts_source,
        options: &cfg.options,
        output: super::measuring::output(&cfg.naming, None, "-adapter", Default::default()),
        progress: &progress,
    };
    let run = adapter::run(req, stop).await;
    display.finish();
    let done = run?;
    let art = &done.artifact;
    if cfg.json {
        stdoutln!(
            "{}",
            serde_json::to_string_pretty(art).map_err(Error::json)?
        );
    } else if let Some(r) = &art.adapter {
        stdout!(
            "{}",
            super::screen(&bakeoff_report::adapter::terminal(
                r,
                &done.path.display().to_string(),
                bakeoff_report::table::width()
            ))
        );
        if let Some(reason) = &art.incomplete_reason {
            stdoutln!(
                "{}",
                super::screen(&format!(
                    "incomplete: {}",
                    bakeoff_report::escape::for_terminal(reason, 400)
                ))
            );
        }
    }
    Ok(Exit::from_ok(adapter::applied(art)))
}

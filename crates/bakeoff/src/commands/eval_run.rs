//! `bakeoff eval run`: preflight, suites, artifact — with progress on stderr (the
//! preflight's phases, "[suite n/N]" with the time so far, an ETA and the outcomes so far, each
//! suite's end as a lasting line), also with `--json` (stdout stays pure JSON).

use std::sync::Arc;

use bakeoff_artifact::RunRecord;
use bakeoff_client::Client;
use bakeoff_report::bench_summary;
use bakeoff_suites::describe;
use bakeoff_suites::evaluate::{EvalRequest, evaluate};
use bakeoff_suites::{EvalEvent, EvalHook, SuiteOptions};
use tokio::sync::watch;

use super::step_progress::StepProgress;
use crate::config::RunConfig;
use crate::exit::{Error, Exit};
use crate::local_default;
use crate::progress::Progress;

pub async fn run(mut cfg: RunConfig) -> Result<Exit, Error> {
    // An output directory that cannot be made fails now, before minutes of measuring.
    bakeoff_artifact::store::create_dir(&cfg.naming.out)?;
    // Ctrl-C (or SIGTERM) is watched from here on: while provisioning or starting the
    // embedded server it stops cleanly (the server handle kills its process on drop); during
    // preflight it stops the embedded server; during the suites it stops after the item in
    // flight and keeps everything finished.
    let mut stop = super::stop_signal::watch();
    let started = tokio::select! {
        r = local_default::start_unless(cfg.endpoint.url.as_ref(), &cfg.naming.out, cfg.local) => r,
        _ = stop.rx.changed() => Err(Error::failed("interrupted by the operator before the endpoint was ready; nothing was measured")),
    };
    let local = started?;
    // The display starts once the embedded default (which reports its own provisioning) is up.
    let display = Arc::new(Progress::new(false));
    let (load_progress, steps) = super::step_progress::suite_progress(display.clone());
    cfg.suite_options.load_progress = load_progress;
    let hook = eval_hook(display.clone(), steps);
    let local_url = local.as_ref().map(|l| l.server.url());
    let result = match super::measuring::client_for(&cfg.endpoint, local_url.as_deref()) {
        Ok(client) => measure(&cfg, &client, local.as_ref(), &mut stop.rx, &display, hook).await,
        Err(e) => Err(e),
    };
    drop(stop);
    display.finish();
    local_default::stop(local).await;
    result
}

async fn measure(
    cfg: &RunConfig,
    client: &Client,
    local: Option<&local_default::LocalServer>,
    rx: &mut watch::Receiver<bool>,
    display: &Progress,
    hook: EvalHook,
) -> Result<Exit, Error> {
    let options = with_ceiling(cfg, display, bakeoff_suites::bench::is_https(client)).await?;
    let naming = super::measuring::naming(&cfg.naming, local);
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
        progress: Some(hook),
    };
    let evaluated = evaluate(req, rx).await;
    display.finish();
    let evaluated = evaluated?;
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
        print!("{}", bench_summary::suite_sweeps(&evaluated.artifact));
        println!("{}", bench_summary::conditions_line(&evaluated.artifact));
    }
    Ok(Exit::from_ok(evaluated.ok()))
}

/// What the run was asked to do, as recorded in the artifact.
fn run_record(cfg: &RunConfig, embedded_default: bool) -> RunRecord {
    let opts = &cfg.endpoint.preflight;
    let suite_options = &cfg.suite_options;
    let path = |p: &Option<std::path::PathBuf>| p.as_ref().map(|p| p.display().to_string());
    RunRecord {
        suites: Some(cfg.suites.iter().map(|s| s.as_str().to_string()).collect()),
        max_model_len_hint: Some(opts.max_model_len),
        ready_timeout_s: Some(opts.ready_timeout.as_secs()),
        embedded_default: Some(embedded_default),
        thinking: Some(suite_options.thinking.as_str().to_string()),
        battery: Some(path(&suite_options.battery)),
        refusal_battery: Some(path(&suite_options.refusal_battery)),
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

/// The harness ceiling for the load suites, measured once per run against the built-in
/// loopback target (as `bench run` does), so their steps can be flagged `client-bound`.
async fn with_ceiling(
    cfg: &RunConfig,
    display: &Progress,
    https: bool,
) -> Result<SuiteOptions, Error> {
    let mut options = cfg.suite_options.clone();
    let load = cfg.suites.iter().any(|s| {
        matches!(
            s,
            bakeoff_suites::SuiteName::Throughput | bakeoff_suites::SuiteName::Longgen
        )
    });
    if load && cfg.calibrate {
        options.throughput.harness_ceiling =
            Some(super::step_progress::harness_ceiling(display, https).await?);
    }
    Ok(options)
}

/// Draws a measurement's events on `display`; the load suites' per-request counts (`steps`)
/// are headed by the suite that runs.
fn eval_hook(display: Arc<Progress>, steps: Arc<StepProgress>) -> EvalHook {
    Arc::new(move |e: EvalEvent| {
        if let EvalEvent::SuiteStarted { suite, .. } = &e {
            steps.set_prefix(suite);
        }
        let (lasting, text) = describe::eval_event(&e);
        if lasting {
            display.line(&text);
        } else {
            display.status(&text);
        }
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::time::Duration;

    use bakeoff_artifact::Outcome;
    use bakeoff_suites::{ItemProgress, Outcomes, PreflightPhase};

    use super::*;

    #[test]
    fn events_draw_as_plain_lines() {
        let (display, lines) = Progress::capture();
        let display = Arc::new(display);
        let steps = Arc::new(StepProgress::new(display.clone(), "load", None));
        let hook = eval_hook(display, steps);
        let s = Duration::from_secs;
        let tally = |pairs: &[(Outcome, usize)]| pairs.iter().copied().collect::<Outcomes>();
        hook(EvalEvent::Preflight(PreflightPhase::Probing {
            ready_timeout: s(60),
        }));
        hook(EvalEvent::SuiteStarted {
            suite: "smoke",
            planned: Some(6),
        });
        hook(EvalEvent::ItemFinished(ItemProgress {
            suite: "smoke",
            done: 3,
            planned: Some(6),
            outcome: Outcome::Wrong,
            elapsed: s(12),
            eta: Some(s(12)),
            outcomes: tally(&[(Outcome::Ok, 1), (Outcome::Wrong, 2)]),
        }));
        hook(EvalEvent::SuiteFinished {
            suite: "smoke",
            status: bakeoff_artifact::SuiteStatus::Complete,
            done: 6,
            planned: Some(6),
            elapsed: s(150),
            outcomes: tally(&[(Outcome::Ok, 1), (Outcome::Wrong, 5)]),
        });
        assert_eq!(
            *lines.lock().unwrap(),
            [
                "[preflight] discovering the endpoint, then probing readiness with a real \
                 completion (up to 60 s) …",
                "[smoke] starting: 6 items",
                "[smoke 3/6] 12 s elapsed, ~12 s left — ok 1, wrong 2",
                "[smoke] complete: 6/6 items in 2 min 30 s — ok 1, wrong 5",
            ]
        );
    }
}

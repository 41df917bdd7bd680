//! `bakeoff bench run` and `bakeoff bench calibrate`: wire the load engine to the endpoint,
//! draw progress (indicatif, rate-limited, hidden off a terminal or with --json), write the
//! artifact, print the table.

use std::io::IsTerminal;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bakeoff_artifact::{Artifact, ArtifactKind, EndpointRecord, LoadReport, LoadStep, RunStatus};
use bakeoff_client::Client;
use bakeoff_load::calibrate::{CalibrationOptions, CalibrationTarget, measure_ceiling};
use bakeoff_load::{PinPolicy, Progress};
use bakeoff_suites::evaluate;
use bakeoff_suites::{PreflightOutcome, run_preflight};
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use tokio::sync::watch;

use crate::cli::BenchCommand;
use crate::config::{BenchRunConfig, CalibrateConfig};
use crate::exit::{Error, Exit};
use crate::local_default;

pub async fn run(c: BenchCommand) -> Result<Exit, Error> {
    match c {
        BenchCommand::Run(a) => bench_run((*a).validate()?).await,
        BenchCommand::Calibrate(a) => calibrate(a.validate()?).await,
    }
}

/// Progress bars: one per step, redrawn at most 4 times a second (redraws steal CPU from the
/// client under load), drawn only when stderr is a terminal and --json is off.
struct Bars {
    multi: MultiProgress,
    current: Mutex<Option<(ProgressBar, u64)>>,
}

impl Bars {
    fn new(visible: bool) -> Self {
        let target = if visible {
            ProgressDrawTarget::stderr_with_hz(4)
        } else {
            ProgressDrawTarget::hidden()
        };
        Self {
            multi: MultiProgress::with_draw_target(target),
            current: Mutex::new(None),
        }
    }
}

impl Progress for Bars {
    fn step_started(&self, label: &str, planned: Option<u64>, duration: Option<Duration>) {
        let pb = match planned {
            Some(n) => ProgressBar::new(n),
            None => ProgressBar::new_spinner(),
        };
        let tmpl = match (planned, duration) {
            (Some(_), _) => "{prefix:>14} [{bar:30}] {pos}/{len} {elapsed} {msg}",
            (None, _) => "{prefix:>14} {spinner} {pos} requests {elapsed} {msg}",
        };
        if let Ok(style) = ProgressStyle::with_template(tmpl) {
            pb.set_style(style.progress_chars("=> "));
        }
        pb.set_prefix(label.to_string());
        let pb = self.multi.add(pb);
        if let Ok(mut cur) = self.current.lock() {
            *cur = Some((pb, 0));
        }
    }

    fn request_finished(&self, ok: bool) {
        if let Ok(mut cur) = self.current.lock()
            && let Some((pb, errors)) = cur.as_mut()
        {
            pb.inc(1);
            if !ok {
                *errors += 1;
                pb.set_message(format!("{errors} errors"));
            }
        }
    }

    fn step_finished(&self, step: &LoadStep) {
        if let Ok(mut cur) = self.current.lock()
            && let Some((pb, _)) = cur.take()
        {
            pb.finish_with_message(format!(
                "{}/{} ok, {:.1} tok/s",
                step.ok,
                step.sent,
                step.output_tokens_per_second.unwrap_or(0.0)
            ));
        }
    }
}

/// Progress bars for the load suites inside `eval run`.
pub(crate) fn suite_progress(want: bool) -> bakeoff_suites::throughput::LoadProgress {
    let visible = want && std::io::stderr().is_terminal();
    bakeoff_suites::throughput::LoadProgress(
        visible.then(|| Arc::new(Bars::new(true)) as Arc<dyn Progress>),
    )
}

/// The sweep tables of the load suites of an `eval run` artifact.
pub(crate) fn suite_sweeps(art: &Artifact) -> String {
    let mut out = String::new();
    for name in ["throughput", "longgen"] {
        let Some(s) = art.suites.get(name) else {
            continue;
        };
        if let Ok(r) = serde_json::from_value::<LoadReport>(s.summary.details.clone()) {
            out.push_str(&format!("\n{name}:\n{}", bakeoff_report::bench::sweep(&r)));
        }
        if let Some(p) = s.summary.details.get("probes").and_then(|p| p.as_array()) {
            for p in p {
                out.push_str(&format!(
                    "longgen probe {}: {} tokens, decode {:.1} tok/s (server {:.1})\n",
                    p["probe"],
                    p["output_tokens"],
                    p["decode_tokens_per_second"].as_f64().unwrap_or(0.0),
                    p["server_decode_tokens_per_second"].as_f64().unwrap_or(0.0)
                ));
            }
        }
    }
    out
}

async fn bench_run(cfg: BenchRunConfig) -> Result<Exit, Error> {
    let local =
        local_default::start_unless(cfg.endpoint.url.as_ref(), &cfg.naming.out, cfg.local).await?;
    let local_url = local.as_ref().map(|l| l.server.url());
    let result = match super::client_for(&cfg.endpoint, local_url.as_deref()) {
        Ok(client) => measure(&cfg, &client, local.as_ref()).await,
        Err(e) => Err(e),
    };
    local_default::stop(local).await;
    result
}

async fn measure(
    cfg: &BenchRunConfig,
    client: &Client,
    local: Option<&local_default::LocalServer>,
) -> Result<Exit, Error> {
    let pre = run_preflight(client, &cfg.endpoint.preflight).await;
    if let Some(unfit) = &pre.unfit {
        return Err(Error::failed(format!(
            "endpoint is not fit to be measured ({}): {}; run `bakeoff eval preflight` for the evidence",
            unfit.class, unfit.message
        )));
    }
    let mut plan = cfg.plan.clone();
    plan.model = pre.report.model.clone().unwrap_or_else(|| "default".into());
    if !cfg.no_pin {
        plan.pin = PinPolicy::for_engine(pre.discovered.facts.engine);
    }
    if cfg.calibrate {
        plan.ceiling = Some(harness_ceiling(cfg.json).await?);
    }

    let (tx, rx) = watch::channel(false);
    let watcher = tokio::spawn(async move {
        let _ = tokio::signal::ctrl_c().await;
        let _ = tx.send(true);
    });
    let bars = Arc::new(Bars::new(!cfg.json && std::io::stderr().is_terminal()));
    let report = bakeoff_load::run(client, &plan, bars, rx).await?;
    watcher.abort();

    let mut art = artifact(cfg, client, &pre, local, report);
    let mut files = evaluate::run_files(&cfg.naming.out, &art.candidate.slug, cfg.naming.replace)?;
    let path = evaluate::write_run_artifact(&mut files, &mut art)?;
    if cfg.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&art).map_err(Error::json)?
        );
    } else if let Some(r) = art.load.get("throughput") {
        println!("{}", bakeoff_report::bench::sweep(r));
        println!("artifact: {}", path.display());
    }
    let measured_all = art
        .load
        .values()
        .all(|r| !r.steps.is_empty() && r.steps.iter().all(|s| s.ok > 0));
    Ok(Exit::from_ok(
        measured_all && art.status == RunStatus::Complete,
    ))
}

/// The harness ceiling with the default calibration, measured against a fresh loopback target
/// (what `bench run` and `eval run`'s load suites measure first); announced unless `quiet`.
pub(crate) async fn harness_ceiling(
    quiet: bool,
) -> Result<bakeoff_artifact::HarnessCeiling, Error> {
    if !quiet {
        eprintln!("[bakeoff] measuring the harness ceiling against the loopback target …");
    }
    ceiling(CalibrationOptions::default()).await
}

async fn ceiling(o: CalibrationOptions) -> Result<bakeoff_artifact::HarnessCeiling, Error> {
    let target = CalibrationTarget::start().await.map_err(|e| {
        Error::internal(format!("cannot start the loopback calibration target: {e}"))
    })?;
    Ok(measure_ceiling(&target.url(), o).await?)
}

fn artifact(
    cfg: &BenchRunConfig,
    client: &Client,
    pre: &PreflightOutcome,
    local: Option<&local_default::LocalServer>,
    report: LoadReport,
) -> Artifact {
    let facts = &pre.discovered.facts;
    let candidate = evaluate::candidate(&super::naming(&cfg.naming, local), "-bench", client, pre);
    let endpoint = EndpointRecord {
        url: client.url().redacted(),
        facts: Some(facts.clone()),
    };
    let mut art = Artifact::new(ArtifactKind::Bakeoff, candidate, endpoint);
    art.preflight = Some(pre.report.clone());
    art.instrument_flags = pre.report.flags.clone();
    art.instrument_flags
        .extend(report.flags.iter().cloned().map(|mut f| {
            f.suite = Some("throughput".into());
            f
        }));
    art.run = serde_json::json!({ "command": "bench run", "embedded_default": local.is_some() });
    if let Some(i) = &report.interrupted {
        art.status = RunStatus::Incomplete;
        art.incomplete_reason = Some(i.clone());
    }
    art.load.insert("throughput".into(), report);
    art
}

async fn calibrate(cfg: CalibrateConfig) -> Result<Exit, Error> {
    let c = ceiling(cfg.options).await?;
    if cfg.json {
        println!("{}", serde_json::to_string_pretty(&c).map_err(Error::json)?);
    } else {
        println!(
            "harness ceiling on this machine: {:.0} req/s (1-token requests), {:.0} streamed tokens/s, \
             {} concurrent streams, peak RSS {:.0} MiB\nsweep steps above half of these are flagged client-bound",
            c.requests_per_second,
            c.streamed_tokens_per_second,
            c.concurrent_streams,
            c.peak_rss_mib.unwrap_or(0.0)
        );
    }
    Ok(Exit::Ok)
}

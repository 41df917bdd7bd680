//! `bakeoff bench run` and `bakeoff bench calibrate`: wire the load engine to the endpoint,
//! draw progress on stderr (`crate::progress`: "step k/N", ETA, the harness ceiling as soon as
//! it is measured; a spinner on a terminal, plain lines otherwise), write the artifact, print
//! the table.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bakeoff_artifact::{Artifact, ArtifactKind, EndpointRecord, LoadReport, LoadStep, RunStatus};
use bakeoff_client::Client;
use bakeoff_load::calibrate::{CalibrationOptions, CalibrationTarget, measure_ceiling};
use bakeoff_load::{PinPolicy, Progress};
use bakeoff_report::bench_summary;
use bakeoff_suites::evaluate;
use bakeoff_suites::{PreflightOutcome, run_preflight};

use crate::cli::BenchCommand;
use crate::config::{BenchRunConfig, CalibrateConfig};
use crate::exit::{Error, Exit};
use crate::local_default;

pub async fn run(c: BenchCommand) -> Result<Exit, Error> {
    match c {
        BenchCommand::Run(a) => bench_run((*a).validate()?).await,
        BenchCommand::Calibrate(a) => calibrate(a.validate()?).await,
        BenchCommand::Compare(a) => super::bench_compare::run(a.validate()?),
    }
}

/// The load engine's steps on the one progress display ([`crate::progress::Progress`]).
/// In `bench run` (`steps: Some(N)`): "[bench step k/N] c=2" with the time since the run began
/// and an ETA (mean step time so far × steps left, once a step is done) as each step starts,
/// the requests so far on a terminal only, and each step's result as a lasting line. Inside
/// `eval run` (`steps: None`) the suite's own item events number and close the steps; this
/// adds only the requests so far, on a terminal.
pub(crate) struct StepProgress {
    display: Arc<crate::progress::Progress>,
    steps: Option<usize>,
    state: Mutex<StepState>,
}

struct StepState {
    /// `bench`, or the load suite running (set by `eval run`).
    prefix: String,
    run_start: Option<Instant>,
    step_start: Instant,
    label: String,
    planned: Option<u64>,
    sent: u64,
    errors: u64,
    /// When the requests-so-far status was last drawn (at most 4 a second: redraws steal CPU
    /// from the client under load).
    drawn: Option<Instant>,
    /// The measured step in progress (1-based; 0 during the warm-up).
    k: usize,
    finished: usize,
    finished_time: Duration,
}

impl StepProgress {
    pub(crate) fn new(
        display: Arc<crate::progress::Progress>,
        prefix: &str,
        steps: Option<usize>,
    ) -> Self {
        Self {
            display,
            steps,
            state: Mutex::new(StepState {
                prefix: prefix.to_string(),
                run_start: None,
                step_start: Instant::now(),
                label: String::new(),
                planned: None,
                sent: 0,
                errors: 0,
                drawn: None,
                k: 0,
                finished: 0,
                finished_time: Duration::ZERO,
            }),
        }
    }

    /// The load suite now running (its name heads the per-request status).
    pub(crate) fn set_prefix(&self, prefix: &str) {
        if let Ok(mut st) = self.state.lock() {
            st.prefix = prefix.to_string();
        }
    }
}

impl StepState {
    fn head(&self, steps: Option<usize>) -> String {
        match (steps, self.k) {
            (_, 0) => format!("[{} warm-up]", self.prefix),
            (Some(n), k) => format!("[{} step {k}/{n}] {}", self.prefix, self.label),
            (None, _) => format!("[{}] {}", self.prefix, self.label),
        }
    }

    /// "12 s elapsed, ~30 s left": the ETA once a step is done and while steps are left.
    fn timing(&self, steps: Option<usize>) -> String {
        let elapsed = self.run_start.map(|t| t.elapsed()).unwrap_or_default();
        let mut out = format!("{} elapsed", crate::progress::secs(elapsed));
        if let (Some(n), Ok(done)) = (steps, u32::try_from(self.finished))
            && done > 0
            && let Ok(left) = u32::try_from(n.saturating_sub(self.finished))
            && left > 0
        {
            let eta = self.finished_time / done * left;
            out.push_str(&format!(", ~{} left", crate::progress::secs(eta)));
        }
        out
    }
}

impl Progress for StepProgress {
    fn step_started(&self, label: &str, planned: Option<u64>, _duration: Option<Duration>) {
        let Ok(mut st) = self.state.lock() else {
            return;
        };
        st.run_start.get_or_insert_with(Instant::now);
        st.step_start = Instant::now();
        st.planned = planned;
        st.sent = 0;
        st.errors = 0;
        if label == "warm-up" {
            st.k = 0;
        } else {
            st.k += 1;
        }
        st.label = label.to_string();
        let text = match (self.steps, st.k, planned) {
            (_, 0, Some(n)) => format!(
                "{} {n} request{}, not measured",
                st.head(self.steps),
                if n == 1 { "" } else { "s" }
            ),
            _ => format!("{}: {}", st.head(self.steps), st.timing(self.steps)),
        };
        if self.steps.is_some() {
            self.display.status(&text);
        } else {
            self.display.transient(&text);
        }
    }

    fn request_finished(&self, ok: bool) {
        let Ok(mut st) = self.state.lock() else {
            return;
        };
        st.sent += 1;
        if !ok {
            st.errors += 1;
        }
        if st
            .drawn
            .is_some_and(|t| t.elapsed() < Duration::from_millis(250))
        {
            return;
        }
        st.drawn = Some(Instant::now());
        let of = st.planned.map(|n| format!("/{n}")).unwrap_or_default();
        let errors = match st.errors {
            0 => String::new(),
            1 => ", 1 error".to_string(),
            e => format!(", {e} errors"),
        };
        self.display.transient(&format!(
            "{}: {}{of} requests{errors}, {}",
            st.head(self.steps),
            st.sent,
            st.timing(self.steps)
        ));
    }

    fn step_finished(&self, step: &LoadStep) {
        let Ok(mut st) = self.state.lock() else {
            return;
        };
        st.finished += 1;
        let took = st.step_start.elapsed();
        st.finished_time += took;
        if self.steps.is_some() {
            self.display.line(&format!(
                "{}: {}/{} ok, {:.1} tok/s, {}",
                st.head(self.steps),
                step.ok,
                step.sent,
                step.output_tokens_per_second.unwrap_or(0.0),
                crate::progress::secs(took)
            ));
        }
    }
}

/// The load suites' steps inside `eval run`, on `display`; the returned handle is told which
/// suite runs.
pub(crate) fn suite_progress(
    display: Arc<crate::progress::Progress>,
) -> (bakeoff_suites::throughput::LoadProgress, Arc<StepProgress>) {
    let steps = Arc::new(StepProgress::new(display, "load", None));
    let load = bakeoff_suites::throughput::LoadProgress(Some(steps.clone() as Arc<dyn Progress>));
    (load, steps)
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
        // `--out` promises a failure artifact: the class, the evidence and the fix, as
        // `eval run` writes one (docs/artifacts.md).
        let path = failure_artifact(cfg, client, &pre, local, unfit)?;
        return Err(Error::failed(format!(
            "endpoint is not fit to be measured ({}): {}: {}; failure artifact {}",
            unfit.class,
            unfit.message,
            unfit
                .remediation
                .as_deref()
                .unwrap_or("run `bakeoff eval preflight` for the evidence"),
            path.display()
        )));
    }
    let mut plan = cfg.plan.clone();
    plan.model = pre.report.model.clone().unwrap_or_else(|| "default".into());
    if !cfg.no_pin {
        plan.pin = PinPolicy::for_engine(pre.discovered.facts.engine);
    }
    // Progress on stderr (stdout stays the table, or pure JSON with --json).
    let display = Arc::new(crate::progress::Progress::new(false));
    if cfg.calibrate {
        plan.ceiling = Some(harness_ceiling(&display, is_https(client)).await?);
    }

    // Ctrl-C or SIGTERM ends the step in flight; the steps measured are kept.
    let stop = super::stop_signal::watch();
    // A rate search decides its steps as it goes: no count to show.
    let steps = plan
        .find_capacity
        .is_none()
        .then(|| plan.levels() * plan.repeat.max(1) as usize);
    if let Some(vs) = &cfg.versus {
        // Both sides alternate: twice the steps.
        let progress = Arc::new(StepProgress::new(
            display.clone(),
            "bench",
            steps.map(|n| n * 2),
        ));
        let r =
            super::bench_versus::measure(cfg, vs, client, &pre, plan, progress, stop.rx.clone())
                .await;
        display.finish();
        return r;
    }
    let progress = Arc::new(StepProgress::new(display.clone(), "bench", steps));
    let report = bakeoff_load::run(client, &plan, progress, stop.rx.clone()).await;
    drop(stop);
    display.finish();
    let report = report?;

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
        for line in bench_summary::workload_lines(r) {
            println!("{line}");
        }
        println!("artifact: {}", path.display());
        println!("{}", bench_summary::conditions_line(&art));
    }
    Ok(Exit::from_ok(measured_all(&art)))
}

/// A complete run whose every sweep has steps and every step a success: a step that measured
/// nothing is a failure, never a pass.
pub(crate) fn measured_all(art: &Artifact) -> bool {
    art.status == RunStatus::Complete
        && art
            .load
            .values()
            .all(|r| !r.steps.is_empty() && r.steps.iter().all(|s| s.ok > 0))
}

/// The harness ceiling with the default calibration, measured against a fresh loopback target
/// (what `bench run` and `eval run`'s load suites measure first): announced on `progress`, and
/// its result printed as a lasting line as soon as it is known.
pub(crate) async fn harness_ceiling(
    progress: &crate::progress::Progress,
    https: bool,
) -> Result<bakeoff_artifact::HarnessCeiling, Error> {
    progress.status(if https {
        "[harness] measuring the harness ceiling against the loopback target over TLS …"
    } else {
        "[harness] measuring the harness ceiling against the loopback target …"
    });
    let c = if https {
        tls_ceiling(CalibrationOptions::default()).await?
    } else {
        ceiling(CalibrationOptions::default()).await?
    };
    progress.line(&format!(
        "[harness] ceiling: {:.0} req/s, {:.0} streamed tokens/s, {} concurrent streams; \
         steps above half of these are flagged client-bound",
        c.requests_per_second, c.streamed_tokens_per_second, c.concurrent_streams
    ));
    Ok(c)
}

/// Whether the endpoint is `https://`: its ceiling is then measured over TLS (a TLS handshake
/// per request costs the client ×4 the CPU of a plain one: docs/performance.md "TLS").
pub(crate) fn is_https(client: &Client) -> bool {
    client.url().root_path("").scheme() == "https"
}

/// The ceiling against the TLS loopback target (a throwaway CA, made in memory).
async fn tls_ceiling(o: CalibrationOptions) -> Result<bakeoff_artifact::HarnessCeiling, Error> {
    let (target, url, tls) = CalibrationTarget::start_tls().await.map_err(|e| {
        Error::internal(format!(
            "cannot start the TLS loopback calibration target: {e}"
        ))
    })?;
    let c = bakeoff_load::calibrate::measure_ceiling_with(&url, o, tls).await?;
    drop(target);
    Ok(c)
}

async fn ceiling(o: CalibrationOptions) -> Result<bakeoff_artifact::HarnessCeiling, Error> {
    let target = CalibrationTarget::start().await.map_err(|e| {
        Error::internal(format!("cannot start the loopback calibration target: {e}"))
    })?;
    Ok(measure_ceiling(&target.url(), o).await?)
}

pub(crate) fn artifact(
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
    art.run = bakeoff_artifact::RunRecord::bench_run(local.is_some());
    if let Some(i) = &report.interrupted {
        art.status = RunStatus::Incomplete;
        art.incomplete_reason = Some(i.clone());
    }
    art.load.insert("throughput".into(), report);
    art
}

/// `DIR/<slug>-bench.failure.json` for an endpoint that is not fit: nothing was measured.
fn failure_artifact(
    cfg: &BenchRunConfig,
    client: &Client,
    pre: &PreflightOutcome,
    local: Option<&local_default::LocalServer>,
    unfit: &bakeoff_suites::preflight::Unfit,
) -> Result<std::path::PathBuf, Error> {
    let candidate = evaluate::candidate(&super::naming(&cfg.naming, local), "-bench", client, pre);
    let endpoint = EndpointRecord {
        url: client.url().redacted(),
        facts: Some(pre.discovered.facts.clone()),
    };
    let mut art = Artifact::new(ArtifactKind::Failure, candidate, endpoint);
    art.preflight = Some(pre.report.clone());
    art.instrument_flags = pre.report.flags.clone();
    art.run = bakeoff_artifact::RunRecord::bench_run(local.is_some());
    art.failure = Some(bakeoff_artifact::Failure {
        class: unfit.class,
        message: unfit.message.clone(),
        evidence: unfit.evidence.clone(),
        elapsed_ms: pre.report.elapsed_ms,
        remediation: unfit.remediation.clone(),
    });
    let mut files = evaluate::run_files(&cfg.naming.out, &art.candidate.slug, cfg.naming.replace)?;
    Ok(evaluate::write_run_artifact(&mut files, &mut art)?)
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

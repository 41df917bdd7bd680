//! `bakeoff bench run` and `bakeoff bench calibrate`: wire the load engine to the endpoint,
//! draw progress on stderr (`crate::progress`: "step k/N", ETA, the harness ceiling as soon as
//! it is measured; a spinner on a terminal, plain lines otherwise), write the artifact, print
//! the table.

use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use bakeoff_artifact::{Artifact, HarnessCeiling, LoadStep};
use bakeoff_client::Client;
use bakeoff_load::Progress;
use bakeoff_load::calibrate::CalibrationOptions;
use bakeoff_load::compare::SweepComparison;
use bakeoff_report::bench_summary;
use bakeoff_suites::bench::{self, BenchProgress, BenchRequest, Benched, Versus};
use bakeoff_suites::evaluate::Evaluated;

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
    let client_b = match &cfg.versus {
        Some(vs) => {
            let Some(url_b) = vs.url.clone() else {
                return Err(Error::internal("--versus without a URL"));
            };
            Some((vs, vs.client_for(url_b)?))
        }
        None => None,
    };
    let naming = super::naming(&cfg.naming, local);
    // Progress on stderr (stdout stays the table, or pure JSON with --json), drawn from the
    // ceiling or the sweep on.
    let display = BenchDisplay::default();
    let req = BenchRequest {
        client,
        preflight: &cfg.endpoint.preflight,
        plan: &cfg.plan,
        pin: !cfg.no_pin,
        calibrate: cfg.calibrate,
        naming: &naming,
        out: &cfg.naming.out,
        replace: cfg.naming.replace,
        embedded_default: local.is_some(),
        versus: client_b.as_ref().map(|(vs, c)| Versus {
            client: c,
            preflight: &vs.preflight,
            allow_contaminated: cfg.allow_contaminated,
        }),
        progress: &display,
    };
    // Ctrl-C or SIGTERM ends the step in flight; the steps measured are kept.
    let run = bench::run(req, || {
        let stop = super::stop_signal::watch();
        (stop.rx.clone(), stop)
    })
    .await;
    if let Some(d) = display.0.get() {
        d.finish();
    }
    let benched = run?;
    match &benched {
        Benched::One(e) => print_one(cfg.json, &e.artifact, &e.path)?,
        Benched::Versus(v) => {
            print_versus(cfg.json, [&v.a, &v.b], &v.comparison, &v.comparison_path)?
        }
    }
    Ok(Exit::from_ok(benched.ok()))
}

fn print_one(json: bool, art: &Artifact, path: &Path) -> Result<(), Error> {
    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(art).map_err(Error::json)?
        );
    } else if let Some(r) = art.load.get("throughput") {
        println!("{}", bakeoff_report::bench::sweep(r));
        for line in bench_summary::workload_lines(r) {
            println!("{line}");
        }
        println!("artifact: {}", path.display());
        println!("{}", bench_summary::conditions_line(art));
    }
    Ok(())
}

fn print_versus(
    json: bool,
    sides: [&Evaluated; 2],
    cmp: &SweepComparison,
    cmp_path: &Path,
) -> Result<(), Error> {
    if json {
        let v = serde_json::json!({
            "a": sides[0].artifact,
            "b": sides[1].artifact,
            "comparison": cmp,
        });
        println!("{}", serde_json::to_string_pretty(&v).map_err(Error::json)?);
        return Ok(());
    }
    for (name, side) in ["A", "B"].iter().zip(sides) {
        if let Some(r) = side.artifact.load.get("throughput") {
            println!(
                "{name}: {}\n{}",
                bakeoff_report::escape::for_terminal(&side.artifact.endpoint.url, 300),
                bakeoff_report::bench::sweep(r)
            );
        }
    }
    print!(
        "{}",
        bakeoff_load::compare_text::text(cmp, &sides[0].path, &sides[1].path)
    );
    println!("comparison: {}", cmp_path.display());
    for (name, side) in ["A", "B"].iter().zip(sides) {
        println!("{name} {}", bench_summary::conditions_line(&side.artifact));
    }
    Ok(())
}

/// `bench run`'s progress: the display starts with the ceiling or the sweep, whichever is
/// first (nothing is drawn during preflight).
#[derive(Default)]
struct BenchDisplay(OnceLock<Arc<crate::progress::Progress>>);

impl BenchDisplay {
    fn display(&self) -> &Arc<crate::progress::Progress> {
        self.0
            .get_or_init(|| Arc::new(crate::progress::Progress::new(false)))
    }
}

impl BenchProgress for BenchDisplay {
    fn ceiling_started(&self, https: bool) {
        announce_ceiling(self.display(), https);
    }

    fn ceiling_measured(&self, c: &HarnessCeiling) {
        show_ceiling(self.display(), c);
    }

    fn sweep(&self, steps: Option<usize>) -> Arc<dyn Progress> {
        Arc::new(StepProgress::new(self.display().clone(), "bench", steps))
    }
}

/// The harness ceiling with the default calibration, measured against a fresh loopback target
/// (what `eval run`'s load suites measure first): announced on `progress`, and its result
/// printed as a lasting line as soon as it is known.
pub(crate) async fn harness_ceiling(
    progress: &crate::progress::Progress,
    https: bool,
) -> Result<HarnessCeiling, Error> {
    announce_ceiling(progress, https);
    let c = bench::ceiling(CalibrationOptions::default(), https).await?;
    show_ceiling(progress, &c);
    Ok(c)
}

fn announce_ceiling(progress: &crate::progress::Progress, https: bool) {
    progress.status(if https {
        "[harness] measuring the harness ceiling against the loopback target over TLS …"
    } else {
        "[harness] measuring the harness ceiling against the loopback target …"
    });
}

fn show_ceiling(progress: &crate::progress::Progress, c: &HarnessCeiling) {
    progress.line(&format!(
        "[harness] ceiling: {:.0} req/s, {:.0} streamed tokens/s, {} concurrent streams; \
         steps above half of these are flagged client-bound",
        c.requests_per_second, c.streamed_tokens_per_second, c.concurrent_streams
    ));
}

async fn calibrate(cfg: CalibrateConfig) -> Result<Exit, Error> {
    let c = bench::ceiling(cfg.options, false).await?;
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

//! Runs a [`LoadPlan`]: warm-up, then each step (closed loop or open loop), scraping
//! `/metrics` around each, and assembles the [`LoadReport`].
//!
//! Timing rules (docs/metrics.md): every request records its intended and actual send time as
//! offsets from its step's start; the client stamps each network chunk before parsing it
//! (`bakeoff_client::Client::chat_stream`); requests are never retried and never dropped — an
//! open-loop request that cannot go on time goes late, and its lateness is recorded.

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use bakeoff_artifact::{FlagCode, LoadReport, LoadStep, PinningRecord};
use bakeoff_client::Client;
use tokio::sync::watch;

use crate::plan::{LoadPlan, Mode};
use crate::workload::Workload;
use crate::{LoadError, prometheus, reconcile, shapes};

mod closed;
mod conversations;
mod open;
mod sessions;
mod step;
mod step_flags;
mod versus;
mod wake;

use closed::closed_step;
use open::open_step;

use step::StepSpec;
pub use step::{NoProgress, Progress, SPEC_DECODE_MIN_TOKENS, build_request};
pub use step_flags::flag_step;
use step_flags::{attach_timings_spec, pinning};
pub use versus::{Side, VERSUS_NO_SEARCH, run_versus};

/// Repeats of one level get step indexes this far apart: fresh prompt prefixes, lengths and
/// arrival seeds for each (the index feeds all three).
const REPEAT_STRIDE: usize = 1 << 12;

/// A nonce unique to this run: every request's unique prefix carries it.
fn run_nonce(plan: &LoadPlan) -> u64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(plan.seed)
}

/// Run the whole plan.
pub async fn run(
    client: &Client,
    plan: &LoadPlan,
    progress: Arc<dyn Progress>,
    cancel: watch::Receiver<bool>,
) -> Result<LoadReport, LoadError> {
    plan.validate()?;
    let run_nonce = run_nonce(plan);
    let specs = step_specs(plan);
    let mut report = empty_report(plan);
    let ctx = StepContext::new(client, plan, run_nonce, progress, cancel);

    if plan.warmup_requests > 0 {
        report.warmup_requests = ctx.warm_up(&specs).await?;
    }

    let mut metrics_ok = plan.scrape_metrics;
    let searched = match plan.find_capacity {
        Some(search) => Some(
            ctx.search(&specs, search, &mut metrics_ok, &mut report)
                .await?,
        ),
        None => None,
    };
    for spec in specs.iter().filter(|_| searched.is_none()) {
        if *ctx.cancel.borrow() {
            report.interrupted = Some("interrupted by the operator".into());
            break;
        }
        let step = ctx.measure_step(spec, &mut metrics_ok).await?;
        ctx.progress.step_finished(&step);
        report.steps.push(step);
        if *ctx.cancel.borrow() {
            report.interrupted = Some("interrupted by the operator".into());
            break;
        }
    }

    finish_report(plan, &mut report, searched);
    Ok(report)
}

/// After the last step: flags gathered from the steps, pinning settled, repeats summarized, and
/// the capacity finding (`searched`: how a `--find-capacity` search went).
fn finish_report(plan: &LoadPlan, report: &mut LoadReport, searched: Option<String>) {
    let growth = reconcile::flag_overhead_growth(&mut report.steps);
    report.flags.extend(growth);
    for s in &report.steps {
        for f in &s.flags {
            if f.code != FlagCode::ClientOverheadGrowing {
                report.flags.push(f.clone());
            }
        }
    }
    report.pinning = pinning(plan, &report.steps);
    report.levels = crate::repeats::summarize(&report.steps);
    for l in report.levels.iter().filter(|l| l.unstable) {
        report.flags.push(crate::repeats::unstable_flag(l));
    }
    let sessions_slo = matches!(plan.workload, Workload::Sessions(_)) && plan.slo.is_some();
    if report.steps.len() > 1 || !report.levels.is_empty() || searched.is_some() || sessions_slo {
        let mut cap = crate::capacity::find(report);
        if let (Some(slo), Some(how)) = (cap.slo.as_mut(), searched) {
            slo.searched = how;
        }
        report.capacity = Some(cap);
    }
}

/// The plan's steps: one per concurrency (closed loop) or per rate (open loop).
fn step_specs(plan: &LoadPlan) -> Vec<StepSpec> {
    let levels = if plan.workload.is_replay() {
        let label = match plan.workload {
            Workload::SessionReplay(_) => "replay",
            _ => "trace",
        };
        vec![(0, (label.to_string(), None, None))]
    } else {
        plan.mode
            .map_steps(
                |c| (format!("c={c}"), Some(c), None),
                |r, arrival, max_in_flight| {
                    (
                        format!("{} {r}/s", arrival.label()),
                        None,
                        Some((r, arrival, max_in_flight)),
                    )
                },
            )
            .into_iter()
            .enumerate()
            .collect::<Vec<_>>()
    };
    let repeat = plan.repeat.max(1);
    // Rounds over the whole sweep, so a drift during the run reaches every level's repeats
    // (and shows as disagreement) instead of hiding inside one level.
    (1..=repeat)
        .flat_map(|r| {
            levels
                .iter()
                .map(move |(k, (label, concurrency, rate))| StepSpec {
                    index: k + 1 + (r as usize - 1) * REPEAT_STRIDE,
                    label: if repeat > 1 {
                        format!("{label} #{r}")
                    } else {
                        label.clone()
                    },
                    concurrency: *concurrency,
                    rate: *rate,
                    repeat: (repeat > 1).then_some(r),
                    ramp: plan.ramp_up,
                })
        })
        .collect()
}

/// The report before any request: the plan, and pinning as sent (settled at the end).
fn empty_report(plan: &LoadPlan) -> LoadReport {
    LoadReport {
        mode: match (&plan.workload, &plan.mode) {
            (Workload::Trace(_), _) => "trace".into(),
            (Workload::SessionReplay(_), _) => "replay".into(),
            (_, Mode::Closed { .. }) => "closed".into(),
            (_, Mode::Open { .. }) => "open".into(),
        },
        plan: plan.to_json(),
        ceiling: plan.ceiling.clone(),
        pinning: PinningRecord {
            ignore_eos_sent: plan.pin.ignore_eos,
            min_tokens_sent: plan.pin.min_tokens,
            finished: 0,
            exact_length: 0,
            honoured: None,
            detail: String::new(),
        },
        warmup_requests: 0,
        steps: Vec::new(),
        flags: Vec::new(),
        interrupted: None,
        capacity: None,
        levels: Vec::new(),
        versus: None,
        schema: None,
    }
}

/// What every step of one run shares.
struct StepContext<'a> {
    client: &'a Client,
    plan: &'a LoadPlan,
    run_nonce: u64,
    progress: Arc<dyn Progress>,
    cancel: watch::Receiver<bool>,
    /// Whom the conditions sampler leaves out: bakeoff and the engine under test.
    exclude: bakeoff_conditions::Exclude,
}

impl<'a> StepContext<'a> {
    fn new(
        client: &'a Client,
        plan: &'a LoadPlan,
        run_nonce: u64,
        progress: Arc<dyn Progress>,
        cancel: watch::Receiver<bool>,
    ) -> Self {
        let url = client.url().root_path("");
        Self {
            client,
            plan,
            run_nonce,
            progress,
            cancel,
            // Once per run: finding the engine's pid walks every process's open files.
            exclude: bakeoff_conditions::Exclude::for_endpoint(
                url.host_str().unwrap_or(""),
                url.port_or_known_default(),
            ),
        }
    }

    /// The warm-up: `warmup_requests` closed-loop requests at the first step's concurrency
    /// (1 in open loop), measured nowhere. Returns how many were sent.
    async fn warm_up(&self, specs: &[StepSpec]) -> Result<u64, LoadError> {
        let plan = self.plan;
        let c = specs.first().and_then(|s| s.concurrency).unwrap_or(1);
        let warm = StepSpec {
            index: 0,
            label: "warm-up".into(),
            concurrency: Some(c),
            rate: None,
            repeat: None,
            ramp: None,
        };
        let bound = crate::plan::StepBound {
            requests: Some(plan.warmup_requests),
            duration: None,
            completed: None,
        };
        self.progress
            .step_started("warm-up", Some(plan.warmup_requests), None);
        let acc = closed_step(
            self.client,
            plan,
            bound,
            &warm,
            self.run_nonce,
            self.progress.clone(),
            self.cancel.clone(),
        )
        .await?;
        Ok(acc.count())
    }

    /// `--step-warmup`: the plan's warm-up requests just before a measured step, at the step's
    /// concurrency (at most the warm-up's count at once; one at a time in open loop), measured
    /// nowhere and recorded on the step. `None` when the plan has none.
    async fn step_warm_up(
        &self,
        spec: &StepSpec,
    ) -> Result<Option<bakeoff_artifact::StepWarmup>, LoadError> {
        let n = self.plan.step_warmup;
        if n == 0 {
            return Ok(None);
        }
        let c = spec
            .concurrency
            .unwrap_or(1)
            .min(u32::try_from(n).unwrap_or(u32::MAX));
        let warm = StepSpec {
            // Its own prompts: never the measured step's.
            index: spec.index | shapes::WARMUP_STEP_BIT,
            label: format!("warm-up {}", spec.label),
            concurrency: Some(c.max(1)),
            rate: None,
            repeat: None,
            ramp: None,
        };
        let bound = crate::plan::StepBound {
            requests: Some(n),
            ..crate::plan::StepBound::default()
        };
        // Whole requests: an aborted one (`--cancel-rate`) could still be generating, and
        // counted by the server, inside the step's window.
        let mut plan = self.plan.clone();
        plan.cancel_rate = 0.0;
        if matches!(
            plan.workload,
            Workload::Sessions(_) | Workload::SessionReplay(_)
        ) {
            // Single requests: a session's tool waits would stretch a warm-up into minutes.
            plan.workload = Workload::Synthetic;
        }
        let start = Instant::now();
        let acc = closed_step(
            self.client,
            &plan,
            bound,
            &warm,
            self.run_nonce,
            Arc::new(step::NoProgress),
            self.cancel.clone(),
        )
        .await?;
        let s = acc.finish(warm.label, start.elapsed());
        Ok(Some(bakeoff_artifact::StepWarmup {
            sent: s.sent,
            ok: s.ok,
            wall_s: s.wall_s,
            ttft_max_ms: s.latency.ttft.max_ms,
        }))
    }

    /// `--find-capacity`: steps chosen one after another by [`crate::capacity::next_rate`],
    /// pushed onto the report as they finish. Returns how the search went, in words.
    async fn search(
        &self,
        specs: &[StepSpec],
        search: crate::plan::CapacitySearch,
        metrics_ok: &mut bool,
        report: &mut LoadReport,
    ) -> Result<String, LoadError> {
        let Some((start, arrival, cap)) = specs.first().and_then(|s| s.rate) else {
            return Err(crate::invalid::Missing::CapacityStartRate.into());
        };
        let mut state = crate::capacity::Search::new(start, search);
        let mut rate = Some(start);
        while let Some(r) = rate {
            if *self.cancel.borrow() {
                report.interrupted = Some("interrupted by the operator".into());
                break;
            }
            let spec = StepSpec {
                index: report.steps.len() + 1,
                label: format!("{} {}/s", arrival.label(), crate::schedule::rate_text(r)),
                concurrency: None,
                rate: Some((r, arrival, cap)),
                repeat: None,
                ramp: self.plan.ramp_up,
            };
            let step = self.measure_step(&spec, metrics_ok).await?;
            self.progress.step_finished(&step);
            rate = state.record(r, crate::capacity::meets_slo(&step));
            report.steps.push(step);
        }
        Ok(state.describe())
    }

    /// The step's requests, by its shape: a trace's replay, a closed loop, or an open-loop
    /// rate.
    async fn requests(
        &self,
        spec: &StepSpec,
    ) -> Result<crate::measure::StepAccumulator, LoadError> {
        let (client, plan) = (self.client, self.plan);
        Ok(match (spec.rate, &plan.workload) {
            (_, Workload::SessionReplay(r)) => {
                sessions::replay_step(client, plan, r, self.progress.clone(), self.cancel.clone())
                    .await?
            }
            (_, Workload::Trace(t)) => {
                conversations::trace_step(
                    client,
                    plan,
                    t,
                    spec.index,
                    self.run_nonce,
                    self.progress.clone(),
                    self.cancel.clone(),
                )
                .await?
            }
            (None, _) => {
                closed_step(
                    client,
                    plan,
                    plan.bound,
                    spec,
                    self.run_nonce,
                    self.progress.clone(),
                    self.cancel.clone(),
                )
                .await?
            }
            (Some(_), _) => {
                open_step(
                    client,
                    plan,
                    spec,
                    self.run_nonce,
                    self.progress.clone(),
                    self.cancel.clone(),
                )
                .await?
            }
        })
    }

    /// One measured step: `/metrics` scraped around it (until a scrape fails: then never
    /// again), the requests, then the step's figures and flags.
    async fn measure_step(
        &self,
        spec: &StepSpec,
        metrics_ok: &mut bool,
    ) -> Result<LoadStep, LoadError> {
        let (client, plan) = (self.client, self.plan);
        // Before the scrape: the server's counters over the step must not hold the warm-up.
        let warmup = self.step_warm_up(spec).await?;
        let before = if *metrics_ok {
            scrape(client).await
        } else {
            None
        };
        if before.is_none() {
            *metrics_ok = false;
        }
        self.progress.step_started(
            &spec.label,
            plan.bound.requests.or(plan.bound.completed),
            plan.bound.duration,
        );
        let sampler = bakeoff_conditions::Sampler::start_off_runtime(self.exclude.clone()).await;
        // GPU power and energy over the step (docs/metrics.md, "GPU telemetry and tokens per joule").
        let telemetry =
            bakeoff_conditions::telemetry::TelemetrySampler::start_off_runtime(&self.exclude).await;
        // The engine's gauges, on a task of their own (docs/metrics.md, "Engine gauges through
        // a step").
        let gauges = plan
            .gauge_interval
            .map(|i| crate::gauges::GaugeSampler::start(client, i));
        let start = Instant::now();
        let acc = self.requests(spec).await?;
        let ramp = spec.ramp.unwrap_or(Duration::ZERO);
        // The measured window starts where the ramp ends.
        let wall = start.elapsed().saturating_sub(ramp);
        let gauges = match gauges {
            Some(g) => Some(g.finish(ramp).await),
            None => None,
        };
        // First: the conditions' last nvidia-smi call must not count in the step's energy.
        let gpu_telemetry = telemetry.finish_off_runtime().await;
        let conditions = sampler.finish_off_runtime().await;
        let (ramp_tally, cancel_tally) = (acc.ramp_tally(), acc.cancel_tally());
        let after = if *metrics_ok {
            scrape_settled(client, cancel_tally.cancelled > 0).await
        } else {
            None
        };
        let timings_spec = acc.timings_spec_decode();
        let cache_tally = acc.cache_tally();
        let completed_ok = acc.ok_count();
        let mut step = acc.finish(spec.label.clone(), wall);
        step.warmup = warmup;
        step.bound = plan
            .bound
            .completed
            .zip(plan.bound.duration)
            .map(|(n, cap)| bakeoff_artifact::StepBoundRecord {
                requests: n,
                duration_cap_s: cap.as_secs_f64(),
                completed: completed_ok,
                ended_by: closed::ended_by(n, completed_ok, step.sent, *self.cancel.borrow())
                    .into(),
            });
        step.concurrency = spec.concurrency;
        step.repeat = spec.repeat;
        step.gauges = gauges;
        step.ramp_up = spec.ramp.map(|r| ramp_tally.record(r.as_secs_f64()));
        if let Some((r, a, _)) = spec.rate {
            step.requested_rate = Some(r);
            step.arrival = Some(a.label());
        }
        if let (Some(b), Some(a)) = (&before, &after) {
            step.metrics = prometheus::delta(b, a, step.output_tokens);
            if let Some(m) = step.metrics.as_mut() {
                prometheus::attach_client_ratios(
                    m,
                    step.latency.ttft.mean_ms,
                    step.latency.e2e.mean_ms,
                );
            }
        }
        // The server counted the ramp's tokens and the cancelled requests' too: both join the
        // client's side of the reconciliation instead of showing as a mismatch.
        let ok_tokens = step.output_tokens + ramp_tally.output_tokens;
        if (spec.ramp.is_some() || plan.cancel_rate > 0.0)
            && let Some(m) = step.metrics.as_mut()
        {
            shapes::reconcile_tokens(m, ok_tokens, cancel_tally);
        }
        if plan.cancel_rate > 0.0 {
            step.cancellations = Some(shapes::cancellations(
                plan.cancel_rate,
                cancel_tally,
                step.metrics.as_ref(),
                ok_tokens,
            ));
        }
        attach_timings_spec(&mut step, timings_spec);
        if !plan.workload.is_synthetic() {
            step.prefix_cache = Some(crate::workload::prefix_cache::reading(
                cache_tally,
                step.metrics.as_ref(),
            ));
        }
        flag_step(plan, &mut step);
        step.flags.extend(conditions.findings.iter().cloned());
        step.conditions = Some(conditions);
        step.gpu_telemetry = Some(bakeoff_conditions::telemetry::with_tokens(
            gpu_telemetry,
            step.output_tokens,
        ));
        Ok(step)
    }
}

async fn scrape(client: &Client) -> Option<prometheus::Scrape> {
    match client
        .get_text(client.url().root_path("metrics"), Duration::from_secs(5))
        .await
    {
        Ok((200, text)) => {
            let s = prometheus::parse(&text);
            s.family().map(|_| s)
        }
        _ => None,
    }
}

/// The scrape after a step. When clients aborted requests, the server counts an aborted
/// request only once it has noticed the closed connection (llama.cpp b11434 flushes a slot's
/// generated tokens into its counters when it releases the slot), which may come after the
/// client has moved on: scrape until the generated-token counter holds still for one
/// interval, at most [`SETTLE_TRIES`] times.
async fn scrape_settled(client: &Client, settle: bool) -> Option<prometheus::Scrape> {
    let mut last = scrape(client).await?;
    if !settle {
        return Some(last);
    }
    let generated = |s: &prometheus::Scrape| {
        prometheus::delta(&prometheus::Scrape::default(), s, 0).and_then(|d| d.generation_tokens)
    };
    for _ in 0..SETTLE_TRIES {
        tokio::time::sleep(SETTLE_INTERVAL).await;
        let Some(next) = scrape(client).await else {
            break;
        };
        let held = generated(&next) == generated(&last);
        last = next;
        if held {
            break;
        }
    }
    Some(last)
}

/// How often and how long [`scrape_settled`] waits for the server's counters to settle.
const SETTLE_INTERVAL: Duration = Duration::from_millis(250);
const SETTLE_TRIES: u32 = 8;

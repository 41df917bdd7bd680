//! `bench run`, `bench calibrate`.

use std::time::Duration;

use bakeoff_load::calibrate::CalibrationOptions;
use bakeoff_load::{Arrival, LengthSpec, LoadPlan, Mode, PinPolicy, Slo, StepBound};
use bakeoff_local::embedded::Embedded;

use super::{EndpointConfig, RunNaming, embedded};
use crate::FlagError;
use crate::cli::{BenchCalibrateArgs, BenchRunArgs};

#[derive(Debug)]
pub struct BenchRunConfig {
    pub endpoint: EndpointConfig,
    /// The sweep, checked; its model is set, and its pin policy chosen for the engine, once
    /// preflight has seen the endpoint.
    pub plan: LoadPlan,
    /// `--no-pin`: send no ignore_eos / min_tokens.
    pub no_pin: bool,
    /// Measure the harness ceiling first (not `--no-calibrate`).
    pub calibrate: bool,
    pub naming: RunNaming,
    pub json: bool,
    pub local: Embedded,
    /// `--versus URL`: the second endpoint, measured alternately with the first.
    pub versus: Option<EndpointConfig>,
    /// `--allow contaminated` (with --versus or --schema).
    pub allow_contaminated: bool,
    /// `--schema FILE`, read and compiled, with `--schema-form`.
    pub schema: Option<bakeoff_measure::bench::schema::SchemaBench>,
}

impl BenchRunArgs {
    pub fn validate(self) -> Result<BenchRunConfig, FlagError> {
        let naming = RunNaming::new(self.naming.clone())?;
        let local = embedded(self.local_ctx, self.local_parallel)?;
        // The levels, lengths and SLO are checked before anything starts.
        let plan = plan(&self)?;
        let endpoint = self.endpoint.validate()?;
        let versus = match &self.versus {
            Some(u) => Some(endpoint.versus(
                u,
                self.versus_model.clone(),
                self.versus_api_key_env.as_deref(),
            )?),
            None => None,
        };
        if versus.is_some() && plan.find_capacity.is_some() {
            return Err(bakeoff_load::LoadError::from(
                bakeoff_load::invalid::Conflict::VersusWithCapacity,
            )
            .into());
        }
        let allow_contaminated = super::allow_contaminated(&self.allow, "bench run")?;
        let schema = match &self.schema {
            Some(p) => {
                if plan.find_capacity.is_some() {
                    return Err(FlagError::invalid(
                        "--schema measures fixed levels alternately: leave out --find-capacity",
                    ));
                }
                Some(bakeoff_measure::bench::schema::SchemaBench {
                    file: p.display().to_string(),
                    schema: bakeoff_measure::bench::schema::load_schema(p)?,
                    form: self.schema_form.into(),
                    allow_contaminated,
                })
            }
            None => None,
        };
        Ok(BenchRunConfig {
            schema,
            versus,
            allow_contaminated,
            endpoint,
            plan,
            no_pin: self.no_pin,
            calibrate: !self.no_calibrate,
            naming,
            json: self.json,
            local,
        })
    }
}

fn plan(a: &BenchRunArgs) -> Result<LoadPlan, FlagError> {
    let mut p = LoadPlan::new("");
    p.mode = match &a.rate {
        Some(r) => Mode::Open {
            rates: bakeoff_load::plan::parse_rates(r)?,
            // By the library's name for it: the library checks --burstiness against the kind.
            arrival: Arrival::parse_with(Arrival::from(a.arrival).as_str(), a.burstiness)?,
            max_in_flight: a.max_in_flight,
        },
        None => Mode::Closed {
            concurrency: bakeoff_load::plan::parse_levels(&a.concurrency)?,
        },
    };
    let duration =
        match a.duration {
            Some(d) if !(d.is_finite() && d > 0.0) => {
                return Err(FlagError::invalid(
                    "--duration must be a positive number of seconds",
                ));
            }
            Some(d) => Some(Duration::try_from_secs_f64(d).map_err(|_| {
                FlagError::invalid("--duration must be a positive number of seconds")
            })?),
            None => None,
        };
    // No bound given: 32 requests per step.
    let requests = a
        .requests
        .or(if duration.is_none() && a.step_requests.is_none() {
            Some(32)
        } else {
            None
        });
    p.bound = StepBound {
        requests,
        duration,
        completed: a.step_requests,
    };
    p.warmup_requests = a.warmup;
    p.step_warmup = a.step_warmup;
    p.prompt_tokens = LengthSpec::parse(&a.prompt_tokens, "prompt_tokens")?;
    p.output_tokens = LengthSpec::parse(&a.output_tokens, "output_tokens")?;
    p.pin = PinPolicy::none();
    p.allow_prefix_cache = a.allow_prefix_cache;
    p.temperature = a.temperature;
    p.seed = a.seed;
    p.slo = a.slo.as_deref().map(Slo::parse).transpose()?;
    p.scrape_metrics = !a.no_metrics;
    shapes(a, &mut p)?;
    p.repeat = a.repeat;
    p.find_capacity = a
        .find_capacity
        .then(bakeoff_load::plan::CapacitySearch::default);
    p.workload = workload(a)?;
    if let bakeoff_load::Workload::Trace(t) = &p.workload
        && a.requests.is_none()
        && a.step_requests.is_none()
        && duration.is_none()
    {
        // A trace's own length bounds its step.
        p.bound.requests = Some(t.trace.entries.len() as u64);
    }
    if let bakeoff_load::Workload::SessionReplay(r) = &p.workload
        && a.requests.is_none()
        && duration.is_none()
    {
        // The recording's own length bounds its step.
        p.bound.requests = Some(r.file.turns() as u64);
    }
    if p.workload.is_replay() {
        // The trace is the schedule; only --max-in-flight carries over.
        p.mode = Mode::Open {
            rates: Vec::new(),
            arrival: Arrival::Constant,
            max_in_flight: a.max_in_flight,
        };
    }
    p.validate()?;
    Ok(p)
}

/// `--burstiness` (open loop), `--ramp-up`, `--cancel-rate`, `--gauge-interval`
/// (docs/metrics.md, "Load shapes" and "Engine gauges through a step"); the plan checks ranges.
fn shapes(a: &BenchRunArgs, p: &mut LoadPlan) -> Result<(), FlagError> {
    if a.burstiness.is_some() && a.rate.is_none() {
        return Err(FlagError::invalid(
            "--burstiness shapes open-loop arrivals: give --rate R --arrival gamma",
        ));
    }
    let secs = |v: f64, flag: &str| {
        Duration::try_from_secs_f64(v)
            .ok()
            .filter(|_| v.is_finite())
            .ok_or_else(|| {
                FlagError::invalid(format!("{flag} must be a number of seconds, 0 or more"))
            })
    };
    p.ramp_up = a.ramp_up.map(|r| secs(r, "--ramp-up")).transpose()?;
    p.cancel_rate = a.cancel_rate.unwrap_or(0.0);
    let g = secs(a.gauge_interval, "--gauge-interval")?;
    p.gauge_interval = (!g.is_zero() && !a.no_metrics).then_some(g);
    Ok(())
}

/// `--multi-turn`, `--trace`, `--prompts-sharegpt` (docs/metrics.md, "Workloads").
fn workload(a: &BenchRunArgs) -> Result<bakeoff_load::Workload, FlagError> {
    use bakeoff_load::workload::{MultiTurn, ShareGpt, Trace, TraceReplay, Workload};
    use std::sync::Arc;
    if a.system_prompt_tokens.is_some() && a.multi_turn.is_none() && a.sessions.is_none() {
        return Err(FlagError::invalid(
            "--system-prompt-tokens is the shared system prompt of --multi-turn conversations or --sessions: add one of them",
        ));
    }
    if let Some(turns) = a.sessions {
        use bakeoff_load::workload::sessions::{Fork, Sessions, WaitSpec};
        return Ok(Workload::Sessions(Sessions {
            turns,
            system_prompt_tokens: a.system_prompt_tokens.unwrap_or(0),
            tool_result_tokens: LengthSpec::parse(&a.tool_result_tokens, "tool_result_tokens")
                .map_err(|e| FlagError::invalid(format!("--tool-result-tokens: {e}")))?,
            tool_wait: WaitSpec::parse(&a.tool_wait)
                .map_err(|e| FlagError::invalid(e.to_string()))?,
            fork: a.fork.map(|sessions| Fork {
                sessions,
                turns: a.fork_turns,
            }),
            tools: a.tools,
        }));
    }
    if let Some(path) = &a.sessions_file {
        use bakeoff_load::workload::{SessionFile, SessionReplay};
        return Ok(Workload::SessionReplay(SessionReplay {
            file: Arc::new(SessionFile::load(path)?),
            speedup: a.speedup.unwrap_or(1.0),
        }));
    }
    if a.trace_speedup.is_some() && a.trace.is_none() {
        return Err(FlagError::invalid(
            "--trace-speedup needs --trace FILE.jsonl",
        ));
    }
    let sharegpt = match &a.prompts_sharegpt {
        Some(path) => Some(Arc::new(ShareGpt::load(path)?)),
        None => None,
    };
    Ok(match (&a.trace, a.multi_turn) {
        (Some(path), _) => Workload::Trace(TraceReplay {
            trace: Arc::new(Trace::load(path)?),
            speedup: a.trace_speedup.unwrap_or(1.0),
        }),
        (None, Some(turns)) => Workload::MultiTurn(MultiTurn {
            turns,
            system_prompt_tokens: a.system_prompt_tokens.unwrap_or(0),
            sharegpt,
        }),
        (None, None) => match sharegpt {
            Some(s) => Workload::ShareGpt(s),
            None => Workload::Synthetic,
        },
    })
}

#[derive(Debug)]
pub struct CalibrateConfig {
    pub options: CalibrationOptions,
    pub json: bool,
}

impl BenchCalibrateArgs {
    pub fn validate(self) -> Result<CalibrateConfig, FlagError> {
        let phase = Duration::try_from_secs_f64(self.seconds)
            .ok()
            .filter(|_| self.seconds.is_finite() && self.seconds > 0.0);
        let (Some(phase), true) = (phase, self.streams > 0) else {
            return Err(FlagError::invalid(
                "--seconds and --streams must be positive",
            ));
        };
        Ok(CalibrateConfig {
            options: CalibrationOptions {
                streams: self.streams,
                phase,
                ..CalibrationOptions::default()
            },
            json: self.json,
        })
    }
}

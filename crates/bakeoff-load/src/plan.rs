//! What a sweep will do: mode and steps, bounds, lengths, pinning, prefixes, SLOs.

use std::time::Duration;

use bakeoff_artifact::HarnessCeiling;

use crate::LoadError;
use crate::invalid::{Conflict, Missing, NotPositive, OutOfRange, SloInvalid, Unparsable};
use crate::lengths::LengthSpec;
use crate::pin::PinPolicy;
use crate::schedule::Arrival;
use crate::workload::RequestPlan;

#[derive(Debug, Clone, PartialEq)]
pub enum Mode {
    /// A fixed number of workers, each sending its next request when the last one finished.
    Closed { concurrency: Vec<u32> },
    /// Requests sent on a schedule regardless of how many are in flight.
    Open {
        rates: Vec<f64>,
        arrival: Arrival,
        /// In-flight cap; above it a request waits and its lateness is recorded (never dropped).
        max_in_flight: Option<usize>,
    },
}

impl Mode {
    /// One value per step, in order: `closed(c)` for each concurrency, or
    /// `open(rate, arrival, max_in_flight)` for each rate.
    pub fn map_steps<T>(
        &self,
        mut closed: impl FnMut(u32) -> T,
        mut open: impl FnMut(f64, Arrival, Option<usize>) -> T,
    ) -> Vec<T> {
        match self {
            Mode::Closed { concurrency } => concurrency.iter().map(|c| closed(*c)).collect(),
            Mode::Open {
                rates,
                arrival,
                max_in_flight,
            } => rates
                .iter()
                .map(|r| open(*r, *arrival, *max_in_flight))
                .collect(),
        }
    }
}

/// Each step ends when either bound is reached (at least one is required).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct StepBound {
    /// Requests sent (`--requests`).
    pub requests: Option<u64>,
    pub duration: Option<Duration>,
    /// `--step-requests`: the step ends once this many requests have completed successfully
    /// (closed loop; failures are replaced, at most this many of them); `duration` is then
    /// required as its upper bound.
    pub completed: Option<u64>,
}

/// Service-level objectives for goodput: a request is "good" when it meets every one given.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Slo {
    pub ttft: Option<Duration>,
    pub tpot: Option<Duration>,
    pub e2e: Option<Duration>,
}

impl Slo {
    /// `ttft=500ms,tpot=50ms,e2e=10s` (units `ms` or `s`; a bare number is ms).
    pub fn parse(s: &str) -> Result<Self, LoadError> {
        let mut slo = Slo::default();
        for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (k, v) = part
                .split_once('=')
                .ok_or_else(|| SloInvalid::NotKeyValue {
                    part: part.to_string(),
                })?;
            let d = parse_duration(v).ok_or_else(|| SloInvalid::NotADuration {
                part: part.to_string(),
                value: v.to_string(),
            })?;
            match k.trim() {
                "ttft" => slo.ttft = Some(d),
                "tpot" => slo.tpot = Some(d),
                "e2e" => slo.e2e = Some(d),
                other => {
                    return Err(SloInvalid::UnknownKey {
                        key: other.to_string(),
                    }
                    .into());
                }
            }
        }
        if slo == Slo::default() {
            return Err(SloInvalid::Empty.into());
        }
        Ok(slo)
    }

    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        for (k, v) in [("ttft", self.ttft), ("tpot", self.tpot), ("e2e", self.e2e)] {
            if let Some(d) = v {
                parts.push(format!("{k}={}ms", d.as_secs_f64() * 1000.0));
            }
        }
        parts.join(",")
    }
}

/// `500ms`, `2s`, `1.5s`, `250` (ms).
pub fn parse_duration(v: &str) -> Option<Duration> {
    let v = v.trim();
    let (num, scale) = if let Some(n) = v.strip_suffix("ms") {
        (n, 0.001)
    } else if let Some(n) = v.strip_suffix('s') {
        (n, 1.0)
    } else {
        (v, 0.001)
    };
    let x: f64 = num.trim().parse().ok()?;
    (x.is_finite() && x >= 0.0).then(|| Duration::from_secs_f64(x * scale))
}

#[derive(Debug, Clone)]
pub struct LoadPlan {
    pub model: String,
    pub mode: Mode,
    pub bound: StepBound,
    /// Requests sent (and discarded) before the first step, at the first step's concurrency.
    pub warmup_requests: u64,
    /// `--step-warmup`: requests sent before each measured step, at the step's concurrency
    /// (at most this many at once; one at a time in open loop), recorded on the step with their
    /// time and never counted in its figures (docs/metrics.md, "Warm-up before each step").
    pub step_warmup: u64,
    pub prompt_tokens: LengthSpec,
    pub output_tokens: LengthSpec,
    pub pin: PinPolicy,
    /// Off by default: every request gets a unique leading prefix.
    pub allow_prefix_cache: bool,
    pub temperature: f32,
    pub seed: u64,
    pub slo: Option<Slo>,
    pub ceiling: Option<HarnessCeiling>,
    /// Scrape `/metrics` before and after each step.
    pub scrape_metrics: bool,
    /// Keep compact per-request records in the report.
    pub keep_requests: bool,
    /// Extra request fields sent verbatim (engine-specific: `calibration_pace_ms` for the
    /// loopback target).
    pub extra: serde_json::Map<String, serde_json::Value>,
    /// Each level is measured this many times, in rounds over the whole sweep (so a drift
    /// reaches every level), with fresh prompts each time (`--repeat N`; 1: once).
    pub repeat: u32,
    /// Open loop with an SLO: instead of the listed rates, search for the highest rate that
    /// meets it (`--find-capacity`), from the first listed rate.
    pub find_capacity: Option<CapacitySearch>,
    /// What the requests say: synthetic prompts (the default), ShareGPT prompts, multi-turn
    /// conversations, or a replayed trace (docs/metrics.md, "Workloads").
    pub workload: crate::workload::Workload,
    /// `--ramp-up`: a linear ramp before each step's measured window, its requests left out of
    /// the step's figures (docs/metrics.md, "Load shapes").
    pub ramp_up: Option<Duration>,
    /// `--cancel-rate`: the share of a step's requests its clients abort mid-stream, each at a
    /// seeded point (0: none).
    pub cancel_rate: f64,
    /// `--gauge-interval`: sample the engine's gauges this often through each step (`None`:
    /// not at all; docs/metrics.md, "Engine gauges through a step").
    pub gauge_interval: Option<Duration>,
}

/// Gauges are sampled once a second unless the operator says otherwise.
pub const DEFAULT_GAUGE_INTERVAL: Duration = Duration::from_secs(1);

pub use crate::invalid::{MAX_CONCURRENCY, MAX_RATE, MIN_GAUGE_INTERVAL};

/// A bounded search for the highest arrival rate meeting the SLO: double from the start rate
/// until a rate fails (halve until one passes), then bisect between the highest passing and
/// the lowest failing rate until they are within `precision` of each other, in at most
/// `max_steps` steps.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CapacitySearch {
    pub max_steps: u32,
    /// Relative gap (0.1 = 10 %) at which the search stops.
    pub precision: f64,
}

impl Default for CapacitySearch {
    fn default() -> Self {
        Self {
            max_steps: 8,
            precision: 0.1,
        }
    }
}

impl LoadPlan {
    /// Defaults that measure a small local server quickly: c = 1,2,4,8,16,32,64, 32 requests
    /// per step, 128-token prompts, 128 output tokens, pinned, unique prefixes.
    pub fn new(model: impl Into<String>) -> Self {
        Self {
            model: model.into(),
            mode: Mode::Closed {
                concurrency: vec![1, 2, 4, 8, 16, 32, 64],
            },
            bound: StepBound {
                requests: Some(32),
                duration: None,
                completed: None,
            },
            warmup_requests: 2,
            step_warmup: 1,
            prompt_tokens: LengthSpec::Fixed(128),
            output_tokens: LengthSpec::Fixed(128),
            pin: PinPolicy::none(),
            allow_prefix_cache: false,
            temperature: 0.0,
            seed: 1,
            slo: None,
            ceiling: None,
            scrape_metrics: true,
            keep_requests: true,
            extra: serde_json::Map::new(),
            repeat: 1,
            find_capacity: None,
            workload: crate::workload::Workload::Synthetic,
            ramp_up: None,
            cancel_rate: 0.0,
            gauge_interval: Some(DEFAULT_GAUGE_INTERVAL),
        }
    }

    /// What each request body takes from the plan (see [`RequestPlan`]).
    pub fn request_plan(&self) -> RequestPlan<'_> {
        RequestPlan {
            model: &self.model,
            prompt_tokens: &self.prompt_tokens,
            output_tokens: &self.output_tokens,
            seed: self.seed,
            allow_prefix_cache: self.allow_prefix_cache,
            temperature: self.temperature,
            pin: &self.pin,
            extra: &self.extra,
        }
    }

    pub fn validate(&self) -> Result<(), LoadError> {
        if self.bound.requests.is_none()
            && self.bound.duration.is_none()
            && self.bound.completed.is_none()
        {
            return Err(Missing::StepBound.into());
        }
        if self.bound.requests == Some(0) || self.bound.duration == Some(Duration::ZERO) {
            return Err(NotPositive::StepBound.into());
        }
        self.validate_completed()?;
        if self.repeat == 0 {
            return Err(NotPositive::Repeat.into());
        }
        self.workload.validate()?;
        self.validate_shapes()?;
        match &self.workload {
            crate::workload::Workload::Trace(_) => {
                if self.find_capacity.is_some() {
                    return Err(Conflict::TraceWithCapacity.into());
                }
                // The trace is the schedule: no levels to check.
                return Ok(());
            }
            crate::workload::Workload::SessionReplay(_) => {
                if self.find_capacity.is_some() {
                    return Err(Conflict::ReplayWithCapacity.into());
                }
                return Ok(());
            }
            crate::workload::Workload::Sessions(_) if !matches!(self.mode, Mode::Closed { .. }) => {
                return Err(Conflict::SessionsWithRate.into());
            }
            crate::workload::Workload::MultiTurn(_)
                if !matches!(self.mode, Mode::Closed { .. }) =>
            {
                return Err(Conflict::MultiTurnWithRate.into());
            }
            _ => {}
        }
        if self.find_capacity.is_some() {
            if !matches!(self.mode, Mode::Open { .. }) {
                return Err(Conflict::CapacityWithConcurrency.into());
            }
            if self.slo.is_none() {
                return Err(Missing::CapacitySlo.into());
            }
            if self.repeat > 1 {
                return Err(Conflict::CapacityWithRepeat.into());
            }
        }
        match &self.mode {
            Mode::Closed { concurrency } => {
                if concurrency.is_empty() || concurrency.contains(&0) {
                    return Err(NotPositive::Concurrency.into());
                }
            }
            Mode::Open { rates, .. } => {
                if rates.is_empty() || rates.iter().any(|r| !(r.is_finite() && *r > 0.0)) {
                    return Err(NotPositive::Rates.into());
                }
            }
        }
        Ok(())
    }

    /// `--step-requests`: a count of completed requests, with a time bound, on closed-loop
    /// single requests.
    fn validate_completed(&self) -> Result<(), LoadError> {
        let Some(n) = self.bound.completed else {
            return Ok(());
        };
        if n == 0 {
            return Err(NotPositive::StepRequests.into());
        }
        let closed_single = matches!(self.mode, Mode::Closed { .. })
            && matches!(
                self.workload,
                crate::workload::Workload::Synthetic | crate::workload::Workload::ShareGpt(_)
            );
        if !closed_single || self.find_capacity.is_some() {
            return Err(Conflict::StepRequestsOutsideClosedLoop.into());
        }
        if self.bound.requests.is_some() {
            return Err(Conflict::StepRequestsWithRequests.into());
        }
        if self.bound.duration.is_none() {
            return Err(Missing::StepRequestsCap.into());
        }
        Ok(())
    }

    /// `--ramp-up`, `--cancel-rate` and `--gauge-interval`: in range, and on workloads that
    /// have them (a trace is its own schedule; a conversation's turns depend on the replies).
    fn validate_shapes(&self) -> Result<(), LoadError> {
        if !(self.cancel_rate.is_finite() && (0.0..1.0).contains(&self.cancel_rate)) {
            return Err(OutOfRange::CancelRate(self.cancel_rate).into());
        }
        if self.ramp_up == Some(Duration::ZERO) {
            return Err(NotPositive::RampUp.into());
        }
        if let Some(d) = self.gauge_interval.filter(|d| *d < MIN_GAUGE_INTERVAL) {
            return Err(OutOfRange::GaugeInterval(d).into());
        }
        let shaped = self.ramp_up.is_some() || self.cancel_rate > 0.0;
        if shaped
            && !matches!(
                self.workload,
                crate::workload::Workload::Synthetic | crate::workload::Workload::ShareGpt(_)
            )
        {
            return Err(Conflict::ShapesWithWorkload {
                workload: self.workload.kind(),
            }
            .into());
        }
        Ok(())
    }

    /// The open loop's arrival process.
    pub fn mode_arrival(&self) -> Option<Arrival> {
        match self.mode {
            Mode::Open { arrival, .. } => Some(arrival),
            Mode::Closed { .. } => None,
        }
    }

    /// Steps in one round of the sweep: one per level, or one for a trace.
    pub fn levels(&self) -> usize {
        match self.workload {
            crate::workload::Workload::Trace(_) | crate::workload::Workload::SessionReplay(_) => 1,
            _ => self.mode.map_steps(|_| (), |_, _, _| ()).len(),
        }
    }

    /// The plan as recorded in the report.
    pub fn to_json(&self) -> serde_json::Value {
        let mode = match &self.mode {
            Mode::Closed { concurrency } => {
                serde_json::json!({"closed": {"concurrency": concurrency}})
            }
            Mode::Open {
                rates,
                arrival,
                max_in_flight,
            } => serde_json::json!({
                "open": {"rates": rates, "arrival": arrival.as_str(), "max_in_flight": max_in_flight}
            }),
        };
        let mut mode = mode;
        if let (Some(k), Some(open)) = (
            self.mode_arrival().and_then(|a| a.burstiness()),
            mode.get_mut("open").and_then(|o| o.as_object_mut()),
        ) {
            open.insert("burstiness".into(), k.into());
        }
        let mut v = serde_json::json!({
            "model": self.model,
            "mode": mode,
            "requests_per_step": self.bound.requests,
            "duration_per_step_s": self.bound.duration.map(|d| d.as_secs_f64()),
            "warmup_requests": self.warmup_requests,
            "step_warmup_requests": self.step_warmup,
            "prompt_tokens": self.prompt_tokens.describe(),
            "output_tokens": self.output_tokens.describe(),
            "ignore_eos": self.pin.ignore_eos,
            "min_tokens": self.pin.min_tokens,
            "unique_prefixes": !self.allow_prefix_cache,
            "temperature": self.temperature,
            "seed": self.seed,
            "slo": self.slo.map(|s| s.describe()),
            "repeat": self.repeat,
            "find_capacity": self.find_capacity.map(|c| serde_json::json!({
                "max_steps": c.max_steps,
                "precision": c.precision,
            })),
            "workload": self.workload.to_json(),
            "gauge_interval_s": self.gauge_interval.map(|d| d.as_secs_f64()),
        });
        // Load shapes only when used, so a plain sweep's plan reads as before and `bench
        // compare` sees "absent" on both sides.
        if let Some(o) = v.as_object_mut() {
            if let Some(r) = self.ramp_up {
                o.insert("ramp_up_s".into(), r.as_secs_f64().into());
            }
            if self.cancel_rate > 0.0 {
                o.insert("cancel_rate".into(), self.cancel_rate.into());
            }
            if let Some(n) = self.bound.completed {
                o.insert("completed_per_step".into(), n.into());
            }
        }
        v
    }
}

/// `1,2,4,8` → levels.
pub fn parse_levels(s: &str) -> Result<Vec<u32>, LoadError> {
    s.split(',')
        .map(str::trim)
        .map(|p| {
            p.parse::<u32>()
                .ok()
                .filter(|v| (1..=MAX_CONCURRENCY).contains(v))
                .ok_or_else(|| Unparsable::Level(p.to_string()).into())
        })
        .collect()
}

/// `2,5.5,10` → rates per second.
pub fn parse_rates(s: &str) -> Result<Vec<f64>, LoadError> {
    s.split(',')
        .map(str::trim)
        .map(|p| {
            p.parse::<f64>()
                .ok()
                .filter(|v| v.is_finite() && *v > 0.0 && *v <= MAX_RATE)
                .ok_or_else(|| Unparsable::Rate(p.to_string()).into())
        })
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn slo_and_durations() {
        let s = Slo::parse("ttft=500ms,tpot=0.05s").unwrap();
        assert_eq!(s.ttft, Some(Duration::from_millis(500)));
        assert_eq!(s.tpot, Some(Duration::from_millis(50)));
        assert!(Slo::parse("ttft").is_err());
        assert!(Slo::parse("foo=1s").is_err());
        assert_eq!(parse_duration("250"), Some(Duration::from_millis(250)));
        assert_eq!(parse_levels("1, 2,4").unwrap(), vec![1, 2, 4]);
        assert!(parse_levels("1,0").is_err());
        assert!(
            parse_levels("1,,2").is_err(),
            "an empty item is a typo, not a level"
        );
        assert!(parse_levels("4000000000").is_err());
        assert!(parse_rates("1,,2").is_err());
        assert!(parse_rates("100000").is_err());
        assert!(parse_rates("2,x").is_err());
    }

    #[test]
    fn workloads_are_recorded_and_checked() {
        use crate::workload::{MultiTurn, Workload};
        let mut p = LoadPlan::new("m");
        assert_eq!(p.to_json()["workload"]["kind"], "synthetic");
        p.workload = Workload::MultiTurn(MultiTurn {
            turns: 3,
            system_prompt_tokens: 0,
            sharegpt: None,
        });
        assert!(p.validate().is_ok());
        assert_eq!(p.to_json()["workload"]["turns"], 3);
        p.mode = Mode::Open {
            rates: vec![1.0],
            arrival: crate::schedule::Arrival::Constant,
            max_in_flight: None,
        };
        assert!(p.validate().is_err(), "multi-turn is closed-loop only");
        p.workload = Workload::MultiTurn(MultiTurn {
            turns: 0,
            system_prompt_tokens: 0,
            sharegpt: None,
        });
        assert!(p.validate().is_err());
    }

    #[test]
    fn unbounded_step_is_refused() {
        let mut p = LoadPlan::new("m");
        p.bound = StepBound::default();
        assert!(p.validate().is_err());
    }
}

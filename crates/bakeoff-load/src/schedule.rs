//! Open-loop arrival schedules: the intended send time of every request, computed up front
//! from a seed, so a schedule is a recorded fact and not an accident of timers. Relative sleeps
//! drift: each one overshoots a little and the overshoots add up, so a client that sleeps the
//! gap between requests sends fewer than the rate it asked for; the dispatcher sends each
//! request against its absolute offset from the step's start instead.

use std::time::Duration;

use crate::LoadError;
use crate::invalid::{Conflict, NotPositive, Unparsable};
use crate::prng::SplitMix64;

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Arrival {
    /// Evenly spaced, `1 / rate` apart.
    Constant,
    /// Exponential inter-arrival times with mean `1 / rate` (a Poisson process).
    Poisson,
    /// Gamma inter-arrival times of shape `burstiness` (K) and scale `1 / (rate · K)`: the mean
    /// gap stays `1 / rate`, the coefficient of variation is `1 / √K`. K = 1 is Poisson, K < 1
    /// burstier, K > 1 more regular — the shape of `vllm bench serve --burstiness`
    /// (vllm/benchmarks/serve.py, vLLM 0.32: `theta = 1.0 / (request_rate * burstiness)`,
    /// `np.random.gamma(shape=burstiness, scale=theta)`).
    Gamma { burstiness: f64 },
}

impl Arrival {
    /// The process's name as the plan records it: `constant`, `poisson`, `gamma`.
    pub fn as_str(self) -> &'static str {
        match self {
            Arrival::Constant => "constant",
            Arrival::Poisson => "poisson",
            Arrival::Gamma { .. } => "gamma",
        }
    }

    /// The name with its shape, as step labels carry it: `poisson`, `gamma k=0.5`.
    pub fn label(self) -> String {
        match self {
            Arrival::Gamma { burstiness } => format!("gamma k={burstiness}"),
            a => a.as_str().to_string(),
        }
    }

    /// Gamma's shape K; `None` for the other processes.
    pub fn burstiness(self) -> Option<f64> {
        match self {
            Arrival::Gamma { burstiness } => Some(burstiness),
            _ => None,
        }
    }

    /// `constant` or `poisson`; `gamma` with shape 1 (set it with [`Arrival::parse_with`]).
    pub fn parse(s: &str) -> Option<Self> {
        match s.trim() {
            "constant" => Some(Arrival::Constant),
            "poisson" => Some(Arrival::Poisson),
            "gamma" => Some(Arrival::Gamma { burstiness: 1.0 }),
            _ => None,
        }
    }

    /// `--arrival KIND` with `--burstiness K`, checked: K is gamma's alone, and positive.
    pub fn parse_with(kind: &str, burstiness: Option<f64>) -> Result<Self, LoadError> {
        let a = Self::parse(kind).ok_or_else(|| Unparsable::Arrival(kind.to_string()))?;
        match (a, burstiness) {
            (Arrival::Gamma { .. }, Some(k)) if k.is_finite() && k > 0.0 => {
                Ok(Arrival::Gamma { burstiness: k })
            }
            (Arrival::Gamma { .. }, Some(k)) => Err(NotPositive::Burstiness(k).into()),
            (arrival, Some(_)) => Err(Conflict::BurstinessWithoutGamma {
                arrival: arrival.as_str(),
            }
            .into()),
            (a, None) => Ok(a),
        }
    }

    /// One gap of this process at `rate`, seconds.
    fn gap(self, rate: f64, rng: &mut SplitMix64) -> f64 {
        match self {
            Arrival::Constant => 1.0 / rate,
            // Inverse CDF; 1 - u is in (0, 1], so ln never sees 0.
            Arrival::Poisson => -(1.0 - rng.next_f64()).ln() / rate,
            Arrival::Gamma { burstiness: k } => gamma(k, rng) / (rate * k),
        }
    }
}

/// A standard normal draw (Box–Muller).
fn normal(rng: &mut SplitMix64) -> f64 {
    let u1 = 1.0 - rng.next_f64();
    let u2 = rng.next_f64();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

/// A Gamma(shape, 1) draw: Marsaglia & Tsang, "A simple method for generating gamma variables"
/// (ACM TOMS 26(3), 2000), with their boost `Gamma(a) = Gamma(a + 1) · U^(1/a)` for a < 1.
/// Seeded by [`SplitMix64`] alone, so a recorded seed replays the same gaps forever.
pub fn gamma(shape: f64, rng: &mut SplitMix64) -> f64 {
    if shape < 1.0 {
        let u = 1.0 - rng.next_f64();
        return gamma(shape + 1.0, rng) * u.powf(1.0 / shape);
    }
    let d = shape - 1.0 / 3.0;
    let c = 1.0 / (9.0 * d).sqrt();
    loop {
        let x = normal(rng);
        let v = (1.0 + c * x).powi(3);
        if v <= 0.0 {
            continue;
        }
        let u = 1.0 - rng.next_f64();
        if u.ln() < 0.5 * x * x + d - d * v + d * v.ln() {
            return d * v;
        }
    }
}

/// Offsets from the step's start. The first request goes at 0. Stops at `max_requests` or at
/// the first offset at or past `max_duration`, whichever comes first; with neither bound it is
/// empty (the caller validates that a step is bounded).
pub fn offsets(
    arrival: Arrival,
    rate: f64,
    max_requests: Option<u64>,
    max_duration: Option<Duration>,
    seed: u64,
) -> Vec<Duration> {
    if !(rate.is_finite() && rate > 0.0) || (max_requests.is_none() && max_duration.is_none()) {
        return Vec::new();
    }
    let mut rng = SplitMix64::new(seed);
    let limit_s = max_duration.map(|d| d.as_secs_f64());
    let cap = max_requests.unwrap_or(u64::MAX);
    let mut out = Vec::new();
    let mut t = 0.0f64;
    while (out.len() as u64) < cap {
        if limit_s.is_some_and(|l| t >= l) {
            break;
        }
        out.push(Duration::from_secs_f64(t));
        t += arrival.gap(rate, &mut rng);
    }
    out
}

/// The arrivals of a linear ramp-up of `ramp` before the measured window: the rate climbs from
/// 0 to `rate` over the ramp, so the expected count is `rate · ramp / 2`. The same process
/// (constant, Poisson, gamma) runs on a warped clock: a unit-rate schedule `s` maps to
/// `t = √(2 · ramp · s / rate)`, whose cumulative intensity is `rate · t² / (2 · ramp)`. Offsets
/// run from the ramp's start; all are below `ramp`.
pub fn ramp_offsets(arrival: Arrival, rate: f64, ramp: Duration, seed: u64) -> Vec<Duration> {
    let r = ramp.as_secs_f64();
    if !(rate.is_finite() && rate > 0.0 && r > 0.0) {
        return Vec::new();
    }
    let total = rate * r / 2.0;
    let mut rng = SplitMix64::new(seed ^ 0x7A3D_0F5E_11C4_B2A9);
    let mut out = Vec::new();
    // The first arrival comes one gap in, not at the ramp's start (where the rate is 0).
    let mut s = arrival.gap(1.0, &mut rng);
    while s < total {
        out.push(Duration::from_secs_f64((2.0 * r * s / rate).sqrt()));
        s += arrival.gap(1.0, &mut rng);
    }
    out
}

/// When each of `workers` closed-loop workers starts under a linear ramp-up of `ramp`: worker
/// `k` at `k · ramp / workers`, so the concurrency climbs by one at even steps to its full
/// level at the end of the ramp.
pub fn ramp_worker_starts(workers: u32, ramp: Duration) -> Vec<Duration> {
    (0..workers)
        .map(|k| ramp.mul_f64(f64::from(k) / f64::from(workers.max(1))))
        .collect()
}

/// Mean and coefficient of variation of the gaps between consecutive offsets, seconds.
/// A Poisson process has CV 1; a constant one 0; gamma of shape K 1/√K.
pub fn gap_stats(offsets: &[Duration]) -> Option<(f64, f64)> {
    if offsets.len() < 2 {
        return None;
    }
    let gaps: Vec<f64> = offsets
        .windows(2)
        .map(|w| (w[1] - w[0]).as_secs_f64())
        .collect();
    let n = gaps.len() as f64;
    let mean = gaps.iter().sum::<f64>() / n;
    let var = gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / n;
    Some((mean, var.sqrt() / mean))
}

/// A rate as a label prints it: at most three decimals, no trailing zeros.
pub fn rate_text(r: f64) -> String {
    let s = format!("{r:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

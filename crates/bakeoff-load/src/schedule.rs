//! Open-loop arrival schedules: the intended send time of every request, computed up front
//! from a seed, so a schedule is a recorded fact and not an accident of timers. Relative sleeps
//! drift (vLLM delivered 183.5 of 200 req/s, vllm-project/vllm#21104); the dispatcher sends each
//! request against its absolute offset from the step's start instead.

use std::time::Duration;

use crate::prng::SplitMix64;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arrival {
    /// Evenly spaced, `1 / rate` apart.
    Constant,
    /// Exponential inter-arrival times with mean `1 / rate` (a Poisson process).
    Poisson,
}

impl Arrival {
    pub fn as_str(self) -> &'static str {
        match self {
            Arrival::Constant => "constant",
            Arrival::Poisson => "poisson",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s.trim() {
            "constant" => Some(Arrival::Constant),
            "poisson" => Some(Arrival::Poisson),
            _ => None,
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
        t += match arrival {
            Arrival::Constant => 1.0 / rate,
            // Inverse CDF; 1 - u is in (0, 1], so ln never sees 0.
            Arrival::Poisson => -(1.0 - rng.next_f64()).ln() / rate,
        };
    }
    out
}

/// Mean and coefficient of variation of the gaps between consecutive offsets, seconds.
/// A Poisson process has CV 1; a constant one 0.
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

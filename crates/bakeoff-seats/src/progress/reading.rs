//! Weight-loading progress parsed from engine logs, and the projected load time.
//!
//! - vLLM prints a tqdm bar with `_BAR_FORMAT = "{desc}: {percentage:3.0f}% Completed |
//!   {n_fmt}/{total_fmt} [{elapsed}<{remaining}, {rate_fmt}]"` and desc `Loading safetensors
//!   checkpoint shards` (`Loading pt checkpoint shards` for .bin), on rank 0 only
//!   (vllm/model_executor/model_loader/weight_utils.py). tqdm's `rate_fmt` switches between
//!   `s/it` (slow) and `it/s` (fast): both are parsed.
//! - llama.cpp prints no shard N/M: `load_tensors: loading model tensors, this can take a
//!   while... (load_mode = mmap)` and `offloaded 15/49 layers to GPU` (llama.cpp
//!   src/llama-model.cpp load_tensors). It marks the phase; there is no rate to project from.

use std::sync::OnceLock;

use bakeoff_artifact::SeatLoadProgress;
use regex::Regex;

fn vllm_bar() -> &'static Option<Regex> {
    static R: OnceLock<Option<Regex>> = OnceLock::new();
    R.get_or_init(|| {
        Regex::new(
            r"Loading (safetensors|pt) checkpoint shards:\s*(\d+)% Completed \| (\d+)/(\d+) \[([\d:]+)<([\d:?]+),\s*([\d.?]+)(s/it|it/s)\]",
        )
        .ok()
    })
}

fn llama_offload() -> &'static Option<Regex> {
    static R: OnceLock<Option<Regex>> = OnceLock::new();
    R.get_or_init(|| Regex::new(r"offloaded (\d+)/(\d+) layers to GPU").ok())
}

/// `MM:SS` or `H:MM:SS` (tqdm's `format_interval`) in seconds.
fn interval_s(s: &str) -> Option<f64> {
    let mut total = 0f64;
    for part in s.split(':') {
        total = total * 60.0 + part.parse::<f64>().ok()?;
    }
    Some(total)
}

/// One parsed progress reading.
#[derive(Debug, Clone, PartialEq)]
pub struct Reading {
    pub source: &'static str,
    pub done: Option<u64>,
    pub total: Option<u64>,
    pub percent: Option<f64>,
    pub elapsed_s: Option<f64>,
    pub remaining_s: Option<f64>,
    pub seconds_per_item: Option<f64>,
}

impl Reading {
    /// Projected seconds from the start of loading to the last shard.
    pub fn projected_total_s(&self) -> Option<f64> {
        if let (Some(e), Some(r)) = (self.elapsed_s, self.remaining_s) {
            return Some(e + r);
        }
        match (self.seconds_per_item, self.total) {
            (Some(spi), Some(t)) => Some(spi * t as f64),
            _ => None,
        }
    }

    /// Over budget when the projection, or the time already spent, exceeds the budget.
    pub fn to_record(&self, budget_s: Option<f64>) -> SeatLoadProgress {
        let projected = self.projected_total_s();
        let worst = match (projected, self.elapsed_s) {
            (Some(p), Some(e)) => Some(p.max(e)),
            (p, e) => p.or(e),
        };
        SeatLoadProgress {
            source: self.source.to_string(),
            done: self.done,
            total: self.total,
            percent: self.percent,
            seconds_per_item: self.seconds_per_item,
            projected_total_s: projected,
            budget_s,
            over_budget: matches!((worst, budget_s), (Some(w), Some(b)) if w > b),
        }
    }
}

/// Parse one log line (a tqdm frame may hold several `\r`-separated bars: the last wins).
pub fn parse(line: &str) -> Option<Reading> {
    if let Some(re) = vllm_bar()
        && let Some(c) = re.captures_iter(line).last()
    {
        let source = if &c[1] == "pt" {
            "vllm-pt"
        } else {
            "vllm-safetensors"
        };
        let rate: Option<f64> = c[7].parse().ok();
        let seconds_per_item = match (&c[8], rate) {
            ("s/it", Some(r)) => Some(r),
            ("it/s", Some(r)) if r > 0.0 => Some(1.0 / r),
            _ => None,
        };
        return Some(Reading {
            source,
            done: c[3].parse().ok(),
            total: c[4].parse().ok(),
            percent: c[2].parse().ok(),
            elapsed_s: interval_s(&c[5]),
            remaining_s: interval_s(&c[6]),
            seconds_per_item,
        });
    }
    if let Some(re) = llama_offload()
        && let Some(c) = re.captures(line)
    {
        return Some(Reading {
            source: "llama.cpp",
            done: c[1].parse().ok(),
            total: c[2].parse().ok(),
            percent: None,
            elapsed_s: None,
            remaining_s: None,
            seconds_per_item: None,
        });
    }
    if line.contains("load_tensors: loading model tensors") {
        return Some(Reading {
            source: "llama.cpp",
            done: None,
            total: None,
            percent: None,
            elapsed_s: None,
            remaining_s: None,
            seconds_per_item: None,
        });
    }
    None
}

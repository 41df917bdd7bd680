//! What a bench step records of its load shape and of the engine's own state through it
//! (docs/metrics.md, "Load shapes" and "Engine gauges through a step"): the ramp-up before its
//! measured window, the requests its clients cancelled, and the engine's gauges sampled at an
//! interval.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A linear ramp-up before the step's measured window (`--ramp-up SECONDS`): its requests
/// loaded the server but are in none of the step's figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RampUpRecord {
    pub seconds: f64,
    /// Requests sent during the ramp (closed loop: workers started one by one; open loop: the
    /// rate climbing from 0).
    pub sent: u64,
    pub ok: u64,
    /// Output tokens of the ramp's completed requests.
    pub output_tokens: u64,
}

/// Requests the clients aborted mid-stream (`--cancel-rate P`, at seeded points), and how the
/// server's counters took them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Cancellations {
    /// The share of requests planned to be cancelled.
    pub rate: f64,
    /// Requests drawn for cancellation.
    pub planned: u64,
    /// Of those, aborted mid-stream (not in `ok`, not in `errors`, not in the latencies).
    pub cancelled: u64,
    /// Drawn but finished (or failed) before their abort point.
    pub finished_first: u64,
    /// Text-bearing chunks the cancelled requests received before the abort (one token a
    /// chunk on llama.cpp and vLLM; see the step's `tokens_per_chunk`).
    pub tokens_received: u64,
    /// The server's generated tokens over the step (`/metrics`) less the completed requests'
    /// output tokens: what it counted for the cancelled requests. Absent without `/metrics`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_tokens: Option<f64>,
    /// `server_tokens − tokens_received`: tokens the server generated after the clients had
    /// gone (before it saw the connection close), or, when negative, tokens it did not count.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_extra_tokens: Option<f64>,
    /// The reconciliation in words.
    pub detail: String,
}

/// One gauge over a step's measured window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct GaugeStat {
    pub peak: f64,
    pub mean: f64,
    /// Samples that carried it.
    pub samples: u64,
}

/// One scrape of the engine's gauges.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct GaugeSample {
    /// Seconds from the step's start (the ramp-up's start when there is one).
    pub t_s: f64,
    /// Gauge values by the names of [`GaugeSeries::names`]; empty when the scrape failed.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub values: BTreeMap<String, f64>,
    /// Why this scrape has no values (a failed scrape is recorded, never fatal).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// The engine's own gauges sampled through a step (`--gauge-interval`, default 1 s), on a task
/// and HTTP client of their own. Gauge names are engine-neutral: `running`, `waiting`,
/// `kv_cache_usage` (0–1), `preemptions` (the counter's increase since the step's first
/// sample), `slots` (llama.cpp `/slots`: slots in all).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct GaugeSeries {
    /// Where they were read: `vllm /metrics`, `sglang /metrics`, `llamacpp /metrics`,
    /// `llama.cpp /slots`, or `unavailable`.
    pub source: String,
    pub interval_s: f64,
    /// Each gauge's engine metric, e.g. `waiting` → `vllm:num_requests_waiting`.
    pub names: BTreeMap<String, String>,
    /// Samples before this offset (s) fell in the ramp-up and are left out of `summary`.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub measured_from_s: f64,
    pub samples: Vec<GaugeSample>,
    /// Peak and mean of each gauge over the measured window.
    pub summary: BTreeMap<String, GaugeStat>,
    /// Scrapes that failed (timed out, refused, not metrics).
    pub failed: u64,
}

fn is_zero(v: &f64) -> bool {
    *v == 0.0
}

/// What limits the server where the capacity finding's throughput stops, as the engine's
/// gauges show it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum LimitKind {
    /// The KV cache filled (and/or requests were preempted).
    KvCache,
    /// Requests queued inside the steps: every slot or batch seat was taken.
    Queue,
    /// The gauges show neither: compute (or the limit is elsewhere).
    NoneSeen,
}

/// The likely limit named from the gauges.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CapacityLimit {
    pub kind: LimitKind,
    /// The lowest level whose gauges show it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from_label: Option<String>,
    /// E.g. "KV cache 100 % and preemptions from c = 16".
    pub statement: String,
}

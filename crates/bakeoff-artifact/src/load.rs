//! Load-test results (`bakeoff bench run`, the `throughput` and `longgen` suites): one report per
//! sweep, one step per concurrency level or arrival rate, compact per-request records.
//! Every metric is defined once, in docs/metrics.md.

use std::collections::BTreeMap;

use bakeoff_stats::{LatencyBucket, LatencySummary};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::InstrumentFlag;

/// The harness's own ceiling against the built-in loopback target (`bakeoff bench calibrate`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct HarnessCeiling {
    /// Completed one-token requests per second.
    pub requests_per_second: f64,
    /// Streamed tokens (SSE events) per second.
    pub streamed_tokens_per_second: f64,
    /// Streams held open at once, every one of them receiving.
    pub concurrent_streams: u64,
    /// Peak resident memory of the process during calibration, MiB.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_rss_mib: Option<f64>,
    /// How it was obtained: `measured before this sweep`, `bakeoff bench calibrate`, ….
    pub source: String,
}

/// What was asked to pin output length, and what the server did with it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PinningRecord {
    /// `ignore_eos: true` was sent.
    pub ignore_eos_sent: bool,
    /// `min_tokens = max_tokens` was sent.
    pub min_tokens_sent: bool,
    /// Requests that finished without error.
    pub finished: u64,
    /// Of those, how many produced exactly the requested output length (server `usage`).
    pub exact_length: u64,
    /// `Some(true)`: every finished request hit its length; `Some(false)`: pinning was sent and
    /// some did not; `None`: nothing was pinned or nothing finished.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub honoured: Option<bool>,
    pub detail: String,
}

/// Client timings joined with the server's own (llama.cpp `timings`), per step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Reconciliation {
    /// Requests whose reply carried server timings.
    pub requests_with_timings: u64,
    /// Median of client decode rate / server `predicted_per_second` (1.0 = the client sees the
    /// server's speed; below 1 the client or the network is slower).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decode_ratio_p50: Option<f64>,
    /// Median of client TTFT / server `prompt_ms` (includes queueing and the first decode).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttft_ratio_p50: Option<f64>,
    /// Median of client E2E − (server `prompt_ms` + `predicted_ms`): time the server's own
    /// timings do not account for (queueing, HTTP, the client), ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unaccounted_ms_p50: Option<f64>,
    /// Median server `predicted_per_second`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_decode_tps_p50: Option<f64>,
    /// Median client decode rate, 1 / TPOT.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_decode_tps_p50: Option<f64>,
    /// Sum of `cache_n`: prompt tokens the server reused from its cache.
    pub cache_n_total: u64,
}

/// Speculative-decoding counters over a step, from `/metrics` or llama.cpp `timings`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SpecDecode {
    /// Where the numbers came from (`vllm /metrics`, `llama.cpp /metrics`, `llama.cpp timings`,
    /// `sglang /metrics`).
    pub source: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub draft_tokens: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accepted_tokens: Option<f64>,
    /// accepted / draft tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub acceptance_rate: Option<f64>,
    /// Tokens per verification step (vLLM: 1 + accepted / drafts; SGLang `spec_accept_length`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_accept_length: Option<f64>,
}

/// `/metrics` counters before and after a step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MetricsDelta {
    /// `vllm`, `sglang`, `llamacpp`.
    pub family: String,
    /// Counter increases (and gauge values at the end) by metric name, summed over labels.
    pub deltas: BTreeMap<String, f64>,
    /// Server-counted generated tokens over the step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generation_tokens: Option<f64>,
    /// Client-counted output tokens / server-counted generated tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_server_token_ratio: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec_decode: Option<SpecDecode>,
    /// The server's own mean TTFT over the step, ms: Δ`_sum` / Δ`_count` of its TTFT histogram
    /// (vLLM and SGLang `…:time_to_first_token_seconds`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_ttft_mean_ms: Option<f64>,
    /// The server's own mean end-to-end latency over the step, ms
    /// (`…:e2e_request_latency_seconds`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_e2e_mean_ms: Option<f64>,
    /// Client mean TTFT ÷ server mean TTFT.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_server_ttft_ratio: Option<f64>,
    /// Client mean E2E ÷ server mean E2E: above 1 by the network and the client's own time;
    /// growing across a sweep when the client falls behind.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_server_e2e_ratio: Option<f64>,
}

/// Goodput under `--slo`: requests meeting every objective.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Goodput {
    /// The objectives as given, e.g. `ttft=500ms,tpot=50ms`.
    pub slo: String,
    pub met: u64,
    pub of: u64,
    pub per_second: Option<f64>,
}

/// One request, compact. Times in ms; `intended_ms`/`sent_ms` from the step's start.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RequestRecord {
    pub i: u64,
    pub intended_ms: f64,
    pub sent_ms: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttft_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttfot_ms: Option<f64>,
    pub e2e_ms: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tpot_ms: Option<f64>,
    /// Requested output tokens (`max_tokens`).
    pub max_tokens: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_tokens: Option<u64>,
    /// `usage`, or `client-chunks` when the server sent no usage (a labelled fallback).
    pub token_source: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_tokens: Option<u64>,
    /// Text-bearing stream events.
    pub chunks: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finish: Option<String>,
    /// Error kind (`timeout-idle`, `stream`, `http`, …) when the request failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_message: Option<String>,
    /// llama.cpp `timings.prompt_ms`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_prompt_ms: Option<f64>,
    /// llama.cpp `timings.predicted_ms`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_predicted_ms: Option<f64>,
    /// llama.cpp `timings.predicted_per_second`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_decode_tps: Option<f64>,
    /// llama.cpp `timings.cache_n`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_cache_n: Option<u64>,
    /// llama.cpp `timings.prompt_n`: prompt tokens the server evaluated (not taken from its
    /// cache); with `server_cache_n` it gives the request's prefix-cache hit rate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_prompt_n: Option<u64>,
    /// Multi-turn workloads: the turn of its conversation this request was (1 = first).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn: Option<u32>,
    /// Multi-turn and trace workloads: the conversation this request belongs to, numbered in
    /// the step (a trace's own session ids are mapped to these numbers, never copied).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conversation: Option<u64>,
    /// `--cancel-rate`: the client aborted this request mid-stream after this many
    /// text-bearing chunks (its seeded abort point); it is in the step's `cancellations`, not in
    /// its latencies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cancelled_after: Option<u64>,
    /// Sessions: the sub-session (1-based) this request belongs to, forked from its
    /// conversation's history; absent on the parent session's own turns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sub_session: Option<u32>,
    /// Sessions: the tool wait kept before this turn, ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_wait_ms: Option<f64>,
    /// `usage.prompt_tokens_details.cached_tokens`: prompt tokens the server took from its
    /// cache, where it reports them (vLLM with `--enable-prompt-tokens-details`, OpenAI).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_cached_tokens: Option<u64>,
}

/// Latency summaries (HDR, p50/p90/p95/p99/max) of one step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StepLatencies {
    pub ttft: LatencySummary,
    pub ttfot: LatencySummary,
    pub tpot: LatencySummary,
    pub itl: LatencySummary,
    pub e2e: LatencySummary,
    /// Actual − intended send time.
    pub send_lateness: LatencySummary,
    /// TTFT measured from the intended send time (coordinated-omission corrected).
    pub ttft_corrected: LatencySummary,
    /// E2E measured from the intended send time.
    pub e2e_corrected: LatencySummary,
}

/// Log-scale histograms for charts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StepHistograms {
    pub ttft: Vec<LatencyBucket>,
    pub itl: Vec<LatencyBucket>,
    pub e2e: Vec<LatencyBucket>,
}

/// One step of a sweep.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LoadStep {
    /// `c=8`, `poisson 20/s`, `probe 1`, ….
    pub label: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub concurrency: Option<u32>,
    /// Open loop: requested arrivals per second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requested_rate: Option<f64>,
    /// `constant`, `poisson` or `gamma k=K`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arrival: Option<String>,
    pub sent: u64,
    pub ok: u64,
    /// Failed requests by error kind.
    pub errors: BTreeMap<String, u64>,
    /// First intended send → last completion, s.
    pub wall_s: f64,
    /// Requests sent per second over the send window (first to last send).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub achieved_rate: Option<f64>,
    /// Successful requests completed per second of wall time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests_per_second: Option<f64>,
    pub output_tokens: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_tokens_per_second: Option<f64>,
    /// Standard error of `output_tokens_per_second` within the step: batch means over five equal
    /// slices of its wall time, each request's output tokens spread evenly over its decode
    /// interval (docs/metrics.md, "Capacity and the knee"). Absent below four requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_tokens_per_second_se: Option<f64>,
    /// Which repeat of its level this step is (1-based), under `--repeat N` with N > 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeat: Option<u32>,
    /// `usage`, `client-chunks`, or `mixed`.
    pub token_source: String,
    /// Mean output tokens per text-bearing chunk (above 1: several tokens per chunk).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens_per_chunk: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_output_tokens: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_prompt_tokens: Option<f64>,
    pub latency: StepLatencies,
    pub histograms: StepHistograms,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub goodput: Option<Goodput>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reconciliation: Option<Reconciliation>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metrics: Option<MetricsDelta>,
    /// `client-bound`, `client-overhead-growing`, `spec-decoding-unmeasurable`, … ([`crate::FlagCode`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flags: Vec<InstrumentFlag>,
    /// What else the host and GPU were doing during the step (docs/metrics.md, "Conditions");
    /// its findings are in `flags` too. Absent in artifacts from before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conditions: Option<crate::Conditions>,
    /// GPU power, energy, utilization and memory over the step, and output tokens per joule
    /// (docs/metrics.md, "GPU telemetry and tokens per joule"); `unavailable` with the reason
    /// where neither NVML nor nvidia-smi could be read. Absent in artifacts from before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_telemetry: Option<crate::GpuTelemetry>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub requests: Vec<RequestRecord>,
    /// Multi-turn workloads: latencies of first turns and of later turns apart (later turns
    /// resend the whole history, so a prefix cache shows here; docs/metrics.md, "Workloads").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turns: Option<TurnSplit>,
    /// Agent sessions: the step's turns by their place in the session, with context depth,
    /// TTFT, cache hits and whether the cache survived the tool waits (docs/metrics.md,
    /// "Sessions").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sessions: Option<crate::SessionStep>,
    /// Non-synthetic workloads: the server's prefix-cache hit rate over the step, with where it
    /// was read, or why it is unavailable (docs/metrics.md, "Workloads").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefix_cache: Option<PrefixCacheReading>,
    /// `--ramp-up`: the requests before the measured window, left out of every figure above.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ramp_up: Option<crate::RampUpRecord>,
    /// `--cancel-rate`: the requests aborted mid-stream and the server's count of them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cancellations: Option<crate::Cancellations>,
    /// The engine's gauges sampled through the step (running, waiting, KV cache, preemptions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gauges: Option<crate::GaugeSeries>,
    /// `--step-warmup N`: the requests sent just before this step's window, left out of every
    /// figure above (docs/metrics.md, "Warm-up before each step").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warmup: Option<StepWarmup>,
    /// `--step-requests N`: the completed requests the step was to hold, how many it held and
    /// what ended it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bound: Option<StepBoundRecord>,
}

/// The warm-up requests sent just before one step, at its concurrency (at most the warm-up's
/// count at once), measured nowhere else.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StepWarmup {
    pub sent: u64,
    pub ok: u64,
    /// From the first warm-up request's send to the last one's completion, s.
    pub wall_s: f64,
    /// The slowest warm-up request's time to first token, ms: a server still busy with the
    /// step before shows here (seconds after a high-concurrency step on llama.cpp).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttft_max_ms: Option<f64>,
}

/// A step bounded by completed requests (`--step-requests N --duration SECS`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StepBoundRecord {
    /// The completed (successful) requests the step was to hold.
    pub requests: u64,
    /// The step's upper bound, s.
    pub duration_cap_s: f64,
    /// Requests that completed successfully in the step's window.
    pub completed: u64,
    /// `requests` (it held them), `time` (the upper bound came first: fewer than asked),
    /// `failures` (as many requests failed as were asked to complete), or `interrupted`.
    pub ended_by: String,
}

/// A multi-turn step's requests split by turn: the first turn of each conversation, and every
/// later turn (which resends the conversation so far).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TurnSplit {
    /// Conversations started in the step.
    pub conversations: u64,
    pub first_turn: TurnClass,
    pub later_turns: TurnClass,
}

/// The successful requests of one turn class.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TurnClass {
    /// Requests sent of this class (failed ones included).
    pub sent: u64,
    pub ok: u64,
    pub ttft: LatencySummary,
    pub e2e: LatencySummary,
    /// Mean server-counted prompt tokens (`usage.prompt_tokens`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_prompt_tokens: Option<f64>,
    /// llama.cpp only: Σ`timings.cache_n` / Σ(`cache_n` + `prompt_n`) over the class's
    /// requests that carried timings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_hit_rate: Option<f64>,
}

/// A step's prefix-cache hit rate: the share of prompt tokens the server took from its cache.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PrefixCacheReading {
    /// `llama.cpp timings` (per response Σ`cache_n` / Σ(`cache_n` + `prompt_n`)),
    /// `vllm /metrics` (Δ`vllm:prefix_cache_hits_total` / Δ`vllm:prefix_cache_queries_total`),
    /// `vllm /metrics gauge` (`vllm:gpu_prefix_cache_hit_rate`, older vLLM), `sglang /metrics
    /// gauge` (`sglang:cache_hit_rate`), or `unavailable`.
    pub source: String,
    /// 0–1; absent when unavailable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hit_rate: Option<f64>,
    /// Prompt tokens served from the cache (counter sources only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hit_tokens: Option<f64>,
    /// Prompt tokens looked up in the cache (counter sources only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queried_tokens: Option<f64>,
    /// How it was read (a gauge is the engine's own window, not exactly this step), or why it
    /// is unavailable.
    pub detail: String,
}

/// A whole sweep.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LoadReport {
    /// `closed`, `open` or `probe` (longgen).
    pub mode: String,
    /// The plan as run (lengths, bounds, seed, pinning, prefix policy).
    pub plan: serde_json::Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ceiling: Option<HarnessCeiling>,
    pub pinning: PinningRecord,
    pub warmup_requests: u64,
    pub steps: Vec<LoadStep>,
    /// Flags of the sweep as a whole (each step's are also on the step).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flags: Vec<InstrumentFlag>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interrupted: Option<String>,
    /// Where the server stops scaling: the capacity finding every sweep of two or more levels
    /// ends with (docs/metrics.md, "Capacity and the knee").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity: Option<Capacity>,
    /// Under `--repeat N` (N > 1): each level's figures as a mean with a 95 % interval across
    /// its repeats, and whether the repeats agree.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub levels: Vec<LevelSummary>,
    /// Under `bench run --versus`: this sweep is one side of two endpoints measured alternately
    /// in one run, step by step, so a drift reaches both (docs/metrics.md, "Two endpoints
    /// alternately").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub versus: Option<VersusRecord>,
    /// Under `bench run --schema`: the same workload sent constrained by a JSON Schema and
    /// unconstrained, alternately; which side this sweep is, and the compile cost measured
    /// before either (docs/suites.md, "The cost of constraining").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<SchemaLoadRecord>,
}

/// One side of `bench run --schema`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SchemaLoadRecord {
    /// `constrained` (every request carries the schema) or `unconstrained`.
    pub side: String,
    /// `--schema`'s path.
    pub schema_file: String,
    /// The request form the schema went in (`response-format`, `structured-outputs`, …).
    pub form: String,
    /// What `--schema-form` asked for.
    pub form_asked: String,
    /// The compile cost, measured once before the sweep (both sides' artifacts carry it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compile: Option<CompileCost>,
}

/// What the first request with a new schema paid: three single requests of the sweep's
/// shape, sent one after another before the warm-up, so none of it lands in a measured step.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CompileCost {
    /// An unconstrained request's time to first token.
    #[serde(default)]
    pub unconstrained_ttft_ms: Option<f64>,
    /// The first request carrying the schema: it pays the grammar's compilation.
    #[serde(default)]
    pub first_constrained_ttft_ms: Option<f64>,
    /// The next request with the same schema (a backend that caches compiled grammars pays
    /// nothing again).
    #[serde(default)]
    pub next_constrained_ttft_ms: Option<f64>,
    /// First minus next constrained TTFT: the compile cost (one sample each, no interval).
    #[serde(default)]
    pub compile_ms: Option<f64>,
    /// The server's words when it refused a probe request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// One side of an alternating run of two endpoints.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct VersusRecord {
    /// Shared by the two sides' artifacts: `bench compare` pairs their steps only when it
    /// matches.
    pub run_id: String,
    /// `A` (`--endpoint`) or `B` (`--versus`).
    pub side: String,
    /// The other side's endpoint, credentials removed.
    pub other_endpoint: String,
    /// How the steps were ordered: `A B` in odd rounds and `B A` in even ones.
    pub order: String,
}

/// What the capacity finding concluded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum CapacityVerdict {
    /// Output throughput stopped rising at a level below the top while TTFT kept rising:
    /// past it, only queueing.
    Knee,
    /// Output throughput was still rising at the top level: no knee within the sweep.
    StillRising,
    /// Throughput stopped rising but TTFT did not grow either: the server is not the limit at
    /// these levels (look at the client flags and the harness ceiling).
    Flat,
    /// Fewer than two measured levels: nothing to compare.
    TooFewLevels,
}

/// The sweep's capacity finding.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Capacity {
    pub verdict: CapacityVerdict,
    /// `concurrency` (closed loop) or `rate` (open loop, requests per second).
    pub level_kind: String,
    /// The knee's level: the lowest level no higher level out-produces beyond the noise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub knee: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub knee_label: Option<String>,
    /// Output tokens/s at the knee.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub throughput_at_knee: Option<f64>,
    /// The highest output tokens/s of the sweep and its level.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_throughput: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_label: Option<String>,
    /// TTFT p50 at the knee and at the top level, ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttft_p50_at_knee_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttft_p50_at_top_ms: Option<f64>,
    /// The finding in one sentence, e.g. "past c = 4 only queueing: …".
    pub statement: String,
    /// The noise rule the comparison used.
    pub noise_rule: String,
    /// Under `--slo`: the highest level whose goodput met the objectives.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slo: Option<SloCapacity>,
    /// Agent sessions under `--slo`: the most concurrent sessions held with 95 % of turns
    /// meeting the objectives, and, under `--repeat`, the same found in each round with its
    /// interval (docs/metrics.md, "Sessions").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sessions: Option<crate::SessionCapacity>,
    /// The likely limit, where the engine's gauges sampled through the steps show one (also
    /// the end of `statement`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<crate::CapacityLimit>,
}

/// The highest level meeting a service-level objective.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SloCapacity {
    /// The objectives as given.
    pub slo: String,
    /// Share of a level's requests that must meet every objective for the level to pass.
    pub required_share: f64,
    /// The highest passing level, when one passed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub level: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// Goodput (requests/s meeting every objective) at that level.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub goodput_per_second: Option<f64>,
    /// How it was searched: the sweep's own levels, or a bounded rate search.
    pub searched: String,
    pub statement: String,
}

/// One level's repeats: each figure as a mean with a 95 % interval across repeats.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LevelSummary {
    /// The level's label without the repeat (`c=4`, `poisson 2/s`).
    pub label: String,
    pub repeats: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_tokens_per_second: Option<bakeoff_stats::MeanInterval>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests_per_second: Option<bakeoff_stats::MeanInterval>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttft_p50_ms: Option<bakeoff_stats::MeanInterval>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tpot_p50_ms: Option<bakeoff_stats::MeanInterval>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub e2e_p50_ms: Option<bakeoff_stats::MeanInterval>,
    /// Mean GPU power over each repeat (`gpu_telemetry.power_w_mean`), W.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub power_w_mean: Option<bakeoff_stats::MeanInterval>,
    /// Each repeat's output tokens per joule (`gpu_telemetry.output_tokens_per_joule`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_tokens_per_joule: Option<bakeoff_stats::MeanInterval>,
    /// Output tokens/s's interval as a share of its mean, and the repeats that would bring it
    /// to ±5 % (docs/statistics.md, "Relative width and repeats needed").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_tokens_per_second_precision: Option<bakeoff_stats::RelativePrecision>,
    /// Where the ±5 % goal is not met: more repeats or longer steps, whichever costs less
    /// measuring time, from the repeats' spread within and between steps and their lengths
    /// (docs/statistics.md, "The cheaper fix").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_tokens_per_second_fix: Option<bakeoff_stats::CheaperFix>,
    /// The repeats' output tokens/s disagree beyond their own within-step errors (Cochran's Q
    /// at 5 %): the level's mean hides a drift or a disturbance.
    pub unstable: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub heterogeneity: Option<bakeoff_stats::Heterogeneity>,
}

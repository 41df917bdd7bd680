//! What a seat failure records beyond the generic [`crate::Failure`]: the seat's configuration,
//! the log lines that are the evidence, the root cause the classifier chose, and the timings of
//! each startup phase. Written by `bakeoff seat up|restart|swap|watch` into `<slug>.failure.json`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One startup phase the watchdog saw begin (`starting`, `loading`, `warming`, `ready`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SeatPhase {
    pub state: String,
    /// Milliseconds from the start command to the first sign of this phase.
    pub at_ms: u64,
    /// The log line that marked it, when a line did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<String>,
}

/// The log line the failure-class table matched as the first causal error.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SeatRootCause {
    pub class: crate::FailureClass,
    pub line: String,
    /// Index of the line in `evidence_lines`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line_index: Option<u64>,
    /// Where the signature comes from (engine source file, issue, seed).
    pub source: String,
}

/// Weight-loading progress parsed from the log, and the projected time to finish.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SeatLoadProgress {
    /// `vllm-safetensors`, `vllm-pt`, `llama.cpp`.
    pub source: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub done: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub percent: Option<f64>,
    /// Seconds per shard (converted from `it/s` when the bar printed a rate).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seconds_per_item: Option<f64>,
    /// Projected seconds from the start of loading to the last shard.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub projected_total_s: Option<f64>,
    /// `--load-budget`, when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_s: Option<f64>,
    pub over_budget: bool,
}

/// What the readiness probes saw during a seat's watch. The class of a seat that never became
/// ready follows from it: a probe only ever refused is `not-listening`, a log that names another
/// port is `wrong-port`, a server listing other ids is `model-name-mismatch`; only a seat whose
/// port answered and whose log fell silent is an `init-wedge`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SeatReadiness {
    /// Readiness probes made (each: discovery's control calls, then a real short completion).
    pub attempts: u64,
    /// Probes whose every connection was refused or timed out connecting (nothing listening).
    pub refused: u64,
    /// Probes whose completion timed out after the server accepted the connection.
    pub timed_out: u64,
    /// HTTP statuses seen, control calls and completions together, with how often.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub http_statuses: std::collections::BTreeMap<u16, u64>,
    /// The ids `/v1/models` listed, the last time it answered.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub served_model_ids: Vec<String>,
    /// The id the probes asked for (the seat's first served model name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requested_model: Option<String>,
    /// The port the probes expect the engine to listen on (the seat's port; a container's own
    /// port for a Docker seat).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_listen_port: Option<u16>,
    /// The port the engine's log says it listens on, when a line said so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log_listen_port: Option<u16>,
    /// That line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log_listen_line: Option<String>,
    /// The last probe's error, as the preflight put it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
}

/// The seat part of a failure artifact.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SeatRecord {
    pub seat: String,
    /// `process` or `docker`.
    pub backend: String,
    /// The seat as the fleet file declares it, secrets redacted: argument values after a
    /// secret-looking flag, secret-looking env values, `Authorization` credentials, `sk-…` /
    /// `hf_…` tokens and URL passwords (docs/fleet.md "Secrets").
    pub config: serde_json::Value,
    /// The last state the watchdog reached before the verdict.
    pub last_state: String,
    pub phases: Vec<SeatPhase>,
    /// The deep tail of the seat's log (up to the last 300 lines), oldest first.
    pub evidence_lines: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub root_cause: Option<SeatRootCause>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i64>,
    /// Docker's top-level `RestartCount` at the verdict.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restart_count: Option<u64>,
    /// Docker's `State.OOMKilled` (a host-cgroup OOM, not a CUDA OOM).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oom_killed: Option<bool>,
    /// Milliseconds since the last log line, at the verdict.
    pub silent_ms: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_progress: Option<SeatLoadProgress>,
    /// What the readiness probes saw (absent in artifacts from before it was recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub readiness: Option<SeatReadiness>,
}

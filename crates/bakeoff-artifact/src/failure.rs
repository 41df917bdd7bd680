//! Why an endpoint or a seat could not be measured, with the evidence.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A failure class, of an endpoint or of a seat. Each class's signatures, sources and
/// remediation are rows of the one failure table (`failure_table::TABLE`), written out in
/// `docs/failure-classes.md`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum FailureClass {
    /// Nothing answered at the address (connection refused, DNS, connect timeout).
    Unreachable,
    /// The server answered but no completion succeeded within the ready timeout
    /// (`/health` 503 "Loading model", or completions still failing).
    NotReady,
    /// Control endpoints answer but completions fail (errors, aborted connections, empty
    /// replies) — as in docs/field-cases.md B1: `/v1/models` up while every inference died.
    InferenceFailing,
    /// The operator asked for a model the endpoint does not serve.
    ModelNotServed,
    /// Control endpoints answer (or at least connections are accepted) but every completion
    /// times out: the wedge of docs/field-cases.md B1, named for what was observed.
    InferenceHanging,
    /// Every call, control and completion, answered a 5xx other than "still loading".
    ServerError,
    /// Something answered at the address, but not with HTTP.
    NotHttp,
    /// The server refused the credentials (HTTP 401/403): final at once, never retried.
    AuthFailed,
    /// Requests would work but the suites refused to measure (e.g. the context window is
    /// unknown and no `--max-model-len` was given): a configuration gap, not a serving failure.
    NotMeasurable,
    // Seat failures (bakeoff seat up|restart|swap|watch).
    /// No log line for `--silence-timeout` while not ready (even if `/v1/models` answers).
    InitWedge,
    /// Restarts rising within the window (Docker `RestartCount`).
    CrashLoop,
    /// `torch.OutOfMemoryError: CUDA out of memory` and kin.
    CudaOom,
    /// The KV cache does not fit (`No available memory for the cache blocks`, negative KV).
    KvCacheBudget,
    /// The engine does not support the model's architecture.
    UnsupportedArchitecture,
    /// A Python module the engine needs is missing (`ModuleNotFoundError`).
    MissingModule,
    /// transformers does not recognise the checkpoint's `model_type`.
    UnknownModelType,
    /// The quantization flag does not match the checkpoint's quantization config.
    QuantizationMismatch,
    /// Killed by the host cgroup's OOM killer (Docker `State.OOMKilled`).
    HostOom,
    /// The seat's port was already bound.
    PortInUse,
    /// The host address the engine was told to bind does not exist on this machine (errno 99,
    /// `EADDRNOTAVAIL`: `::1` without IPv6, another machine's IP): not a port conflict.
    AddressUnavailable,
    /// The seat exited before ready with no known signature (the code is in the seat record).
    Exited,
    /// The readiness probe was refused for the whole watch: nothing listens on the seat's port.
    NotListening,
    /// The engine's log says it listens on another port than the one the seat is probed on.
    WrongPort,
    /// The server serves, but not under the seat's `served_model_names`.
    ModelNameMismatch,
    /// The engine could not find the model file or directory it was given.
    ModelFileMissing,
    /// The engine was built without kernels for this GPU, or the GPU lacks a needed feature
    /// (bf16 on compute capability < 8.0, no kernel image for the device).
    GpuUnsupported,
    /// No usable GPU was visible to the engine (no CUDA device, driver mismatch).
    NoGpu,
    /// The model repository refused the download: gated or private, or no/invalid token.
    ModelAccessDenied,
    /// A disk the engine writes to (model cache, container layer) is full.
    DiskFull,
    /// The requested context is longer than the model (or its KV budget) allows.
    ContextTooLong,
    /// The engine rejected its command line: an unknown flag, or a value it does not accept.
    BadArgument,
}

impl std::fmt::Display for FailureClass {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = serde_json::to_value(self)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default();
        f.write_str(&s)
    }
}

impl FailureClass {
    /// The engine (or the server, or the operator's configuration) stated this failure in its
    /// own words — a refused flag, a context longer than the model's, a missing file, an
    /// unknown architecture, a port already bound — so a busy host cannot have caused it. The
    /// others are judgments of time (`init-wedge`, `not-ready`, timeouts), of budgets another
    /// process shares (`cuda-oom`, `kv-cache-budget`, `host-oom`), or exits with no stated
    /// cause: contention can produce those. Contamination withholds only what it can cause
    /// (docs/metrics.md "Conditions", docs/campaign.md).
    pub fn stated_by_engine(self) -> bool {
        use FailureClass::*;
        match self {
            ModelNotServed
            | NotHttp
            | AuthFailed
            | NotMeasurable
            | UnsupportedArchitecture
            | MissingModule
            | UnknownModelType
            | QuantizationMismatch
            | PortInUse
            | AddressUnavailable
            | WrongPort
            | ModelNameMismatch
            | ModelFileMissing
            | GpuUnsupported
            | NoGpu
            | ModelAccessDenied
            | DiskFull
            | ContextTooLong
            | BadArgument => true,
            Unreachable | NotReady | InferenceFailing | InferenceHanging | ServerError
            | InitWedge | CrashLoop | CudaOom | KvCacheBudget | HostOom | Exited | NotListening => {
                false
            }
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Evidence {
    /// What was observed, e.g. `POST /v1/chat/completions`.
    pub what: String,
    pub detail: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Failure {
    pub class: FailureClass,
    pub message: String,
    pub evidence: Vec<Evidence>,
    /// Milliseconds from the start of the run to the verdict.
    pub elapsed_ms: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remediation: Option<String>,
}

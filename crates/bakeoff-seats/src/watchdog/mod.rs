//! The startup watchdog: follows a seat's log and its backend state from the start command
//! until the seat is **ready** — a real completion succeeded (the preflight's check,
//! `bakeoff_client::preflight::run_preflight`) — or it has failed with a class from the one table
//! ([`crate::classify`]).
//!
//! States: starting → loading → warming → ready. Log lines move the state forward (never
//! back); only the preflight makes it ready, because `/health` 200 or `/v1/models` answering
//! proves nothing (docs/field-cases.md B1: an engine wedged with `/v1/models` up).
//!
//! Verdicts, checked on every tick (after the lines already queued are read: a chatty seat
//! cannot starve them), in this order:
//! 1. `RestartCount` rose by `crash_loop_restarts` within `crash_loop_window`: `crash-loop`
//!    (the root cause of the tail is recorded beside it). First, because a container between
//!    two restarts also reads as exited;
//! 2. the backend reports the seat exited: `host-oom` when Docker says `OOMKilled`, otherwise
//!    the root cause of the log tail, otherwise `exited` with the code. A state that could not
//!    be read (the Docker engine did not answer) is not an exit;
//! 3. the probes say no wait can help: the server lists other model ids than the seat's
//!    (`model-name-mismatch`), or the log names another listening port and the seat's port then
//!    refused (`wrong-port`);
//! 4. no log line for `silence_timeout` while not ready: `init-wedge`;
//! 5. `ready_timeout` passed: `not-ready`.
//!
//! A silence or a timeout is then refined by what the readiness probes saw
//! ([`crate::readiness`]): a port that only ever refused is `not-listening`, not a wedge.
//!
//! Two halves: [`machine`] is the watch as a transition function — observations in (a log
//! line, a backend state read, a finished readiness probe, a tick of the clock), events out,
//! every piece of state in one struct ([`Watchdog`]), no I/O and no clock of its own; [`drive`]
//! is the async driver that gathers those observations from the backend and the probes, with
//! the timeouts and cadences of the watch, and stops at the terminal event.

use std::time::Duration;

use bakeoff_artifact::{FailureClass, PreflightReport, SeatPhase, SeatRootCause};
use bakeoff_client::tls::TlsOptions;
use bakeoff_client::{ApiKey, Client, ClientOptions, EndpointUrl, Timeouts};

use crate::classify::Cause;
use crate::progress::reading::Reading;

pub mod disk;
pub mod drive;
pub mod event;
pub mod machine;
pub mod readings;
#[cfg(test)]
mod tests;
mod verdict;

pub use drive::watch;
pub use event::{Ending, Event};
pub use machine::{Observation, Watchdog};

/// How much of the log is kept as evidence: vLLM's real cause sits above a ~40-line traceback
/// and the wrapper (vLLM v1/engine/utils.py `wait_for_engine_startup`), so the tail must be
/// deep (at least 250 lines).
pub const TAIL_LINES: usize = 300;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum State {
    Starting,
    Loading,
    Warming,
    Ready,
    Failed,
}

impl State {
    pub fn as_str(self) -> &'static str {
        match self {
            State::Starting => "starting",
            State::Loading => "loading",
            State::Warming => "warming",
            State::Ready => "ready",
            State::Failed => "failed",
        }
    }
}

#[derive(Debug, Clone)]
pub struct WatchOptions {
    /// No log line for this long while not ready: `init-wedge`.
    pub silence_timeout: Duration,
    /// Give up (`not-ready`) after this long.
    pub ready_timeout: Duration,
    /// Flag a load projected to take longer than this.
    pub load_budget: Option<Duration>,
    pub crash_loop_restarts: u64,
    pub crash_loop_window: Duration,
    /// Pause between readiness probes.
    pub probe_interval: Duration,
    /// Where the watch's events go as they happen (its start, phases, notes, load progress,
    /// restarts, the silence timer once a second), for a progress display worded by
    /// [`crate::progress::describe`]; `None`: nowhere. The verdict is the report, never an
    /// event here.
    pub events: Option<tokio::sync::mpsc::UnboundedSender<Event>>,
    /// How often the disk a loading seat writes is sampled (its container's writable layer, its
    /// mounted caches): an inspect with sizes walks the whole layer, so never more often than
    /// once a second ([`disk::MIN_EVERY`]).
    pub disk_every: Duration,
    /// Growth of a container's writable layer, before ready, that is flagged as a download
    /// landing inside the container (`download-in-writable-layer`), in bytes.
    pub writable_layer_limit: u64,
    /// How long partial blobs in a mounted cache may go without growing before the download is
    /// called stalled (`download-stalled`).
    pub download_stall: Duration,
}

impl Default for WatchOptions {
    fn default() -> Self {
        Self {
            silence_timeout: Duration::from_secs(300),
            ready_timeout: Duration::from_secs(3600),
            load_budget: None,
            crash_loop_restarts: 3,
            crash_loop_window: Duration::from_secs(600),
            probe_interval: Duration::from_millis(500),
            events: None,
            disk_every: Duration::from_secs(5),
            writable_layer_limit: 1 << 30,
            download_stall: Duration::from_secs(120),
        }
    }
}

/// What the watchdog saw.
#[derive(Debug, Clone)]
pub struct WatchReport {
    pub state: State,
    /// The state reached before the verdict (for a failure: where it died).
    pub last_state: State,
    pub class: Option<FailureClass>,
    pub message: String,
    pub remediation: Option<String>,
    pub cause: Option<Cause>,
    pub phases: Vec<SeatPhase>,
    pub tail: Vec<String>,
    pub exit_code: Option<i64>,
    pub restart_count: Option<u64>,
    pub oom_killed: Option<bool>,
    pub silent_ms: u64,
    pub elapsed_ms: u64,
    pub progress: Option<Reading>,
    pub load_over_budget: bool,
    /// `--load-budget` in seconds, when given.
    pub load_budget_s: Option<f64>,
    pub preflight: Option<PreflightReport>,
    /// What the readiness probes saw.
    pub readiness: bakeoff_artifact::SeatReadiness,
    /// Notes for the operator (a load over budget, …).
    pub notes: Vec<String>,
    /// Findings of the checks before the start, the readings during the load and the checks
    /// after ready (written into the seat record, and the failure artifact on a failure).
    pub findings: Vec<bakeoff_artifact::SeatFinding>,
}

/// What the readiness probes ask for and expect.
#[derive(Debug, Clone, Default)]
pub struct ProbeTarget {
    /// The model id to request (the seat's first served model name).
    pub model: Option<String>,
    /// The port the engine should listen on: the seat's port, or a container's own port.
    pub listen_port: Option<u16>,
    /// The key the probes send (the seat's `api_key_env`, read at the start).
    pub api_key: Option<ApiKey>,
    /// The seat's `api_key_env`, named in the remedy of a refused probe.
    pub api_key_env: Option<String>,
    /// How an `https://` seat is trusted (its `[seat.tls]`).
    pub tls: TlsOptions,
}

impl WatchReport {
    /// A report decided without a watch having observed anything: the class's remediation is
    /// the failure table's, every observation empty.
    pub fn decided(
        state: State,
        last_state: State,
        class: Option<FailureClass>,
        message: String,
    ) -> Self {
        WatchReport {
            state,
            last_state,
            class,
            message,
            remediation: class.map(|c| crate::classify::remediation(c).to_string()),
            cause: None,
            phases: vec![],
            tail: vec![],
            exit_code: None,
            restart_count: None,
            oom_killed: None,
            silent_ms: 0,
            elapsed_ms: 0,
            progress: None,
            load_over_budget: false,
            load_budget_s: None,
            preflight: None,
            readiness: Default::default(),
            notes: vec![],
            findings: vec![],
        }
    }

    pub fn ready(&self) -> bool {
        self.state == State::Ready
    }

    pub fn root_cause_record(&self) -> Option<SeatRootCause> {
        self.cause.as_ref().map(|c| SeatRootCause {
            class: c.class,
            line: c.line.clone(),
            line_index: Some(c.line_index as u64),
            source: c.source.to_string(),
        })
    }
}

/// The state a log line signals, if any (llama.cpp b11434 server logs measured here; vLLM
/// lines from vllm/v1/worker/gpu_worker.py, gpu_model_runner.py and
/// model_executor/model_loader/weight_utils.py).
pub fn state_signal(line: &str) -> Option<State> {
    const LOADING: &[&str] = &[
        "load_model: loading model",
        "load_tensors:",
        "llama_model_loader:",
        "Loading safetensors checkpoint shards",
        "Loading pt checkpoint shards",
        "Starting to load model",
        "Loading weights",
    ];
    const WARMING: &[&str] = &[
        "warming up the model",
        "llama_server: model loaded",
        "Model loading took",
        "Available KV cache memory",
        "GPU KV cache size",
        "Capturing CUDA graphs",
        "Graph capturing finished",
        "torch.compile",
        "Application startup complete",
        "listening on http",
    ];
    if WARMING.iter().any(|m| line.contains(m)) {
        Some(State::Warming)
    } else if LOADING.iter().any(|m| line.contains(m)) {
        Some(State::Loading)
    } else {
        None
    }
}

/// A client for readiness probes: short timeouts, so a wedged engine costs a few seconds per
/// probe, never the whole watch.
pub fn probe_client(url: &str) -> Option<Client> {
    probe_client_for(url, None, &TlsOptions::default())
}

/// [`probe_client`] sending `api_key` (a seat's `api_key_env`) in the header and trusting an
/// `https://` seat as `tls` says (its `[seat.tls]`). `None` when `url` is not a URL or `tls`
/// cannot be built (a CA file that stopped being readable since the fleet file was parsed).
pub fn probe_client_for(url: &str, api_key: Option<ApiKey>, tls: &TlsOptions) -> Option<Client> {
    let url = EndpointUrl::parse(url).ok()?;
    let tls = bakeoff_client::tls::Tls::new(tls).ok()?;
    Client::try_new(
        url,
        ClientOptions {
            timeouts: Timeouts {
                connect: Duration::from_secs(2),
                first_byte: Duration::from_secs(10),
                idle: Duration::from_secs(10),
                total: Duration::from_secs(15),
            },
            api_key,
            tls,
        },
    )
    .ok()
}

//! One lifecycle for both backends: create, start, observe, stop, follow the log. The watchdog
//! and the seat operations only see [`Backend`]; what differs between a process and a
//! container stays in `process.rs` and `docker.rs`.

use std::time::Duration;

use tokio::sync::mpsc;

use crate::docker::DockerBackend;
use crate::fleet::{Fleet, Launch, Seat};
use crate::process::ProcessBackend;
use crate::redact::Redactor;

#[derive(Debug, thiserror::Error)]
pub enum BackendError {
    #[error("seat {seat}: {message}")]
    Process { seat: String, message: String },
    #[error("seat {seat}: Docker: {message}")]
    Docker { seat: String, message: String },
}

/// What the backend sees of a seat right now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Observed {
    /// No process started by bakeoff / no container of that name.
    Missing,
    /// A container that exists but was never started (or was stopped and kept: dormant).
    Created,
    Running,
    /// Docker is about to start it again (a restart policy at work).
    Restarting,
    Exited {
        code: Option<i64>,
        oom_killed: Option<bool>,
    },
    /// The state could not be read: the Docker engine did not answer (or answered an error
    /// other than "no such container"). Not "down", and never taken for an exit.
    Unknown {
        reason: String,
    },
}

impl Observed {
    pub fn is_up(&self) -> bool {
        matches!(self, Observed::Running | Observed::Restarting)
    }

    pub fn label(&self) -> String {
        match self {
            Observed::Missing => "down".into(),
            Observed::Created => "created (stopped)".into(),
            Observed::Running => "running".into(),
            Observed::Restarting => "restarting".into(),
            Observed::Exited { code: Some(c), .. } => format!("exited ({c})"),
            Observed::Exited { code: None, .. } => "exited".into(),
            Observed::Unknown { reason } => format!("unknown ({reason})"),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Status {
    pub observed: Observed,
    /// Docker's top-level `RestartCount`; `None` for processes.
    pub restart_count: Option<u64>,
    /// pid or container id.
    pub id: Option<String>,
}

impl Status {
    pub fn missing() -> Self {
        Self {
            observed: Observed::Missing,
            restart_count: None,
            id: None,
        }
    }

    pub fn unknown(reason: impl Into<String>) -> Self {
        Self {
            observed: Observed::Unknown {
                reason: reason.into(),
            },
            restart_count: None,
            id: None,
        }
    }
}

pub enum Backend {
    Process(ProcessBackend),
    Docker(DockerBackend),
}

impl Backend {
    pub async fn for_seat(fleet: &Fleet, seat: &Seat) -> Result<Backend, BackendError> {
        Ok(match &seat.launch {
            Launch::Process(_) => Backend::Process(ProcessBackend::new(fleet, seat)),
            Launch::Docker(_) => Backend::Docker(DockerBackend::connect(fleet, seat).await?),
        })
    }

    pub async fn status(&mut self) -> Status {
        match self {
            Backend::Process(p) => p.status(),
            Backend::Docker(d) => d.status().await,
        }
    }

    /// When the running seat started (`None`: not running, or not known).
    pub async fn started_at(&self) -> Option<chrono::DateTime<chrono::Utc>> {
        match self {
            Backend::Process(p) => p.started_at(),
            Backend::Docker(d) => d.started_at().await,
        }
    }

    /// Make the seat exist without starting it (a container is created; a process has
    /// nothing to create).
    pub async fn create(&mut self) -> Result<(), BackendError> {
        match self {
            Backend::Process(_) => Ok(()),
            Backend::Docker(d) => d.ensure_created().await.map(|_| ()),
        }
    }

    pub async fn start(&mut self) -> Result<(), BackendError> {
        match self {
            Backend::Process(p) => p.start().await,
            Backend::Docker(d) => d.start().await,
        }
    }

    /// Stop it, escalating to SIGKILL when the grace runs out, and check what the stop freed
    /// (`crate::release`). `keep` leaves a container created (a dormant seat, a swap's rollback
    /// target). A process seat's survivors are recorded in `<seat>.zombie.json` here, so the
    /// start that follows a restart or swap already refuses; a Docker seat's in `Seats::down`.
    pub async fn stop(&mut self, keep: bool) -> Result<crate::release::StopReport, BackendError> {
        let proc = crate::release::ProcRoot::system();
        match self {
            Backend::Process(p) => {
                let stopped = p.stop().await?;
                let mut report = crate::release::verify(stopped, &proc).await;
                if let Some(dir) = p.state_dir() {
                    crate::release::persist(dir, &mut report);
                }
                Ok(report)
            }
            Backend::Docker(d) => Ok(crate::release::verify(d.stop(keep).await?, &proc).await),
        }
    }

    /// Follow the log from the current start on, one line per message (frames are split on
    /// `\n` and `\r`: tqdm bars redraw with `\r`).
    pub fn follow(&self, tx: mpsc::Sender<String>) -> tokio::task::JoinHandle<()> {
        match self {
            Backend::Process(p) => p.follow(tx),
            Backend::Docker(d) => d.follow(tx),
        }
    }

    /// The last `n` lines of the log.
    pub async fn tail(&self, n: usize) -> Vec<String> {
        match self {
            Backend::Process(p) => p.tail(n),
            Backend::Docker(d) => d.tail(n).await,
        }
    }

    /// The container's writable layer in bytes (Docker's `SizeRw`); `None` for a process (it
    /// has no layer of its own), or when the engine did not answer.
    pub async fn writable_layer_bytes(&self) -> Option<u64> {
        match self {
            Backend::Process(_) => None,
            Backend::Docker(d) => d.writable_layer_bytes().await,
        }
    }

    /// [`Backend::writable_layer_bytes`] as a future owning what it needs (for the watch to
    /// run beside its loop); `None` for a process.
    pub fn writable_layer_reader(&self) -> Option<crate::watchdog::disk::LayerReader> {
        match self {
            Backend::Process(_) => None,
            Backend::Docker(d) => Some(Box::pin(d.writable_layer_reader())),
        }
    }
}

/// Splits a byte stream into lines on `\n` or `\r`, keeping a partial line across frames.
#[derive(Default)]
pub struct LineSplitter {
    partial: Vec<u8>,
}

impl LineSplitter {
    pub fn push(&mut self, bytes: &[u8], out: &mut Vec<String>) {
        for &b in bytes {
            if b == b'\n' || b == b'\r' {
                if !self.partial.is_empty() {
                    out.push(String::from_utf8_lossy(&self.partial).into_owned());
                    self.partial.clear();
                }
            } else {
                self.partial.push(b);
            }
        }
    }

    /// The partial line, when the stream ended without a newline.
    pub fn finish(&mut self) -> Option<String> {
        if self.partial.is_empty() {
            None
        } else {
            let s = String::from_utf8_lossy(&self.partial).into_owned();
            self.partial.clear();
            Some(s)
        }
    }

    /// The last `n` of `lines` and the partial line, redacted: a log's tail.
    pub fn tail(mut self, mut lines: Vec<String>, n: usize, redactor: &Redactor) -> Vec<String> {
        lines.extend(self.finish());
        let skip = lines.len().saturating_sub(n);
        lines
            .split_off(skip)
            .iter()
            .map(|l| redactor.text(l))
            .collect()
    }
}

pub(crate) const FOLLOW_POLL: Duration = Duration::from_millis(100);

//! One lifecycle for both backends: create, start, observe, stop, follow the log. The watchdog
//! and the seat operations only see [`Backend`]; what differs between a process and a
//! container stays in `process.rs` and `docker/`.

use tokio::sync::mpsc;

use crate::docker::DockerBackend;
use crate::fleet::launch::Launch;
use crate::fleet::types::{Fleet, Seat};
pub use crate::observed::{BackendError, LineSplitter, Observed, Status};
use crate::process::ProcessBackend;

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

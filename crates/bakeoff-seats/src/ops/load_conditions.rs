//! The host's conditions around a seat load (docs/metrics.md "Conditions"): a
//! [`Sampler`] started just before the start command and finished when the watch ends (ready
//! or failed), recorded in the seat start record. The engine being started is left out from
//! when its pid is known (a process seat's child, a local container's init process), with its
//! descendants: its own load is the measurement, not contention. A drop of the page cache
//! during the load (`page-cache-dropped`) means the weights may have been read back from the
//! disk mid-load, so the load time is not the seat's.

use bakeoff_artifact::Conditions;
use bakeoff_conditions::{Exclude, Sampler};

use crate::backend::Backend;
use crate::fleet::types::Seat;

/// Start sampling before `seat`'s start command; `None` for a seat on another host (this
/// host's conditions say nothing of its load) or when the sampler could not be started.
pub async fn start(seat: &Seat) -> Option<Sampler> {
    if seat.host != "local" {
        return None;
    }
    // The first sample reads /proc and runs nvidia-smi: off the async threads.
    tokio::task::spawn_blocking(|| Sampler::start(Exclude::for_seat_load()))
        .await
        .ok()
}

/// Name the engine just spawned to the sampler, when its pid can be read.
pub async fn exclude_engine(sampler: &Sampler, backend: &mut Backend) {
    match backend {
        Backend::Process(_) => {
            let id = backend.status().await.id;
            if let Some(pid) = id.as_deref().and_then(|i| i.parse::<u32>().ok()) {
                sampler.exclude_engine(pid, format!("pid {pid}: the seat's process, spawned"));
            }
        }
        Backend::Docker(d) => {
            if let Some(pid) = d.host_pid().await {
                sampler.exclude_engine(
                    pid,
                    format!("pid {pid}: the container's init process on this host"),
                );
            }
        }
    }
}

/// Stop sampling: the load's conditions, with their findings.
pub async fn finish(sampler: Option<Sampler>) -> Option<Conditions> {
    let s = sampler?;
    tokio::task::spawn_blocking(move || s.finish()).await.ok()
}

//! The states of every seat of a fleet, host by host: hosts are asked concurrently, each over
//! one Docker connection shared by its seats and within [`HOST_STATUS_TIMEOUT`]. A host whose
//! engine does not answer makes only its own Docker seats `unknown (host unreachable: …)`;
//! every other seat, and every process seat, reads as usual, and `status` never hangs on it.

use std::time::Duration;

use chrono::{DateTime, Utc};

use crate::backend::{Backend, Status};
use crate::docker::DockerBackend;
use crate::fleet::launch::Launch;
use crate::fleet::types::{Fleet, Seat};
use crate::process::ProcessBackend;

/// How long one host may take to answer for all its seats. Long enough for an ssh handshake
/// (`ssh`'s own ConnectTimeout is 10 s too) and a few inspects on a loaded host; short enough
/// that `seat status` on a fleet with a dead host still answers within seconds.
pub const HOST_STATUS_TIMEOUT: Duration = Duration::from_secs(10);

/// One seat's state and, while it runs, when it started.
pub type SeatState = (Status, Option<DateTime<Utc>>);

/// Every seat's state, in the fleet's seat order.
pub async fn gather(fleet: &Fleet) -> Vec<SeatState> {
    let per_host = fleet.hosts.keys().map(|h| docker_host(fleet, h));
    let docker: Vec<(String, SeatState)> = futures_util::future::join_all(per_host)
        .await
        .into_iter()
        .flatten()
        .collect();
    let mut out = Vec::with_capacity(fleet.seats.len());
    for seat in &fleet.seats {
        out.push(match &seat.launch {
            // A process seat is this machine's: its state file and /proc, no engine to ask.
            Launch::Process(_) => {
                state_of(Backend::Process(ProcessBackend::new(fleet, seat))).await
            }
            Launch::Docker(_) => docker
                .iter()
                .find(|(n, _)| n == &seat.name)
                .map(|(_, s)| s.clone())
                .unwrap_or_else(|| {
                    (
                        Status::unknown(format!("host {:?} is not declared", seat.host)),
                        None,
                    )
                }),
        });
    }
    out
}

async fn state_of(mut b: Backend) -> SeatState {
    let st = b.status().await;
    let started = if st.observed.is_up() {
        b.started_at().await
    } else {
        None
    };
    (st, started)
}

/// The Docker seats of `host`, by name, over one connection, within [`HOST_STATUS_TIMEOUT`].
async fn docker_host(fleet: &Fleet, host: &str) -> Vec<(String, SeatState)> {
    let seats: Vec<&Seat> = fleet
        .seats
        .iter()
        .filter(|s| s.host == host && matches!(s.launch, Launch::Docker(_)))
        .collect();
    if seats.is_empty() {
        return Vec::new();
    }
    let unknown = |reason: &str| {
        seats
            .iter()
            .map(|s| (s.name.clone(), (Status::unknown(reason), None)))
            .collect::<Vec<_>>()
    };
    let work = async {
        let docker = match crate::docker::connect(fleet.hosts.get(host)).await {
            Ok(d) => d,
            Err(e) => return unknown(&format!("host unreachable: {e}")),
        };
        let mut out = Vec::new();
        for seat in &seats {
            let state = match DockerBackend::on(docker.clone(), fleet, seat) {
                Ok(b) => state_of(Backend::Docker(b)).await,
                Err(e) => (Status::unknown(e.to_string()), None),
            };
            out.push((seat.name.clone(), state));
        }
        out
    };
    match tokio::time::timeout(HOST_STATUS_TIMEOUT, work).await {
        Ok(v) => v,
        Err(_) => unknown(&format!(
            "host unreachable: host {host:?} ({}) did not answer within {} s",
            crate::docker::transport::label(fleet.hosts.get(host)),
            HOST_STATUS_TIMEOUT.as_secs()
        )),
    }
}

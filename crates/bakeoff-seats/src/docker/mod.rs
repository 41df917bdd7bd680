//! Docker seats through the Docker Engine API (bollard).
//!
//! - The client speaks API **1.41** (Docker 20.10, the oldest daemon we run against) and
//!   negotiates down for older daemons: bollard 0.21 defaults to 1.53, which a 20.10 daemon
//!   refuses.
//! - A container is labelled `bakeoff.seat`, `bakeoff.fleet` and `bakeoff.config-hash`; a
//!   stopped container whose hash differs from the fleet file is recreated, a running one is
//!   never touched behind the operator's back.
//! - `RestartCount` is read from the top level of inspect, not from `State`; `OOMKilled` is a
//!   host-cgroup OOM (Docker Engine API container inspect, bollard 0.22
//!   `ContainerInspectResponse`).
//! - Log frames do not line up with lines: they are buffered and split on `\n`/`\r`. The
//!   stream ends when the container stops; while a restart policy restarts it, the follower
//!   reopens it from the last timestamp it saw.
//!
//! The backend's parts: the container's configuration (`spec`), its creation, start and the
//! verified stop (`lifecycle`), what inspect reads of it (`inspect`), its log (`logs`); how the
//! engine is reached (`transport`, `ssh`) and the readings of `docker top`/`docker stats`.

use bollard::Docker;

use crate::fleet::launch::{DockerLaunch, Launch};
use crate::fleet::types::{Fleet, Seat};
use crate::observed::BackendError;
use crate::redact::Redactor;

mod inspect;
mod lifecycle;
mod logs;
pub mod restart;
mod spec;
mod ssh;
pub mod stats;
pub mod top;
pub mod transport;

pub use lifecycle::stop_request_timeout;
pub use restart::restart_policy;
pub use transport::{ConnectError, DOCKER_API, connect};

pub struct DockerBackend {
    docker: Docker,
    seat: Seat,
    launch: DockerLaunch,
    fleet_name: String,
    name: String,
    /// Every log line read back goes through it (see `process.rs`).
    redactor: Redactor,
}

fn is_not_found(e: &bollard::errors::Error) -> bool {
    matches!(
        e,
        bollard::errors::Error::DockerResponseServerError {
            status_code: 404,
            ..
        }
    )
}

impl DockerBackend {
    pub async fn connect(fleet: &Fleet, seat: &Seat) -> Result<Self, BackendError> {
        let docker =
            connect(fleet.host_of(seat))
                .await
                .map_err(|source| BackendError::Connect {
                    seat: seat.name.clone(),
                    source: Box::new(source),
                })?;
        Self::on(docker, fleet, seat)
    }

    /// The backend of `seat` on an engine already connected (one connection serves every seat
    /// of a host, as `Seats::status` does).
    pub fn on(docker: Docker, fleet: &Fleet, seat: &Seat) -> Result<Self, BackendError> {
        let launch = match &seat.launch {
            Launch::Docker(d) => d.clone(),
            Launch::Process(_) => {
                return Err(BackendError::Docker {
                    seat: seat.name.clone(),
                    message: "not a Docker seat".into(),
                });
            }
        };
        Ok(Self {
            docker,
            name: seat.container_name().unwrap_or_default(),
            seat: seat.clone(),
            launch,
            fleet_name: fleet.name.clone(),
            redactor: Redactor::for_seat(seat),
        })
    }

    pub fn container_name(&self) -> &str {
        &self.name
    }

    fn err(&self, message: impl Into<String>) -> BackendError {
        BackendError::Docker {
            seat: self.seat.name.clone(),
            message: message.into(),
        }
    }
}

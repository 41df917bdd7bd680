//! What `docker inspect` tells of the seat's container: its state for `seat status`, its start
//! time, its host pid, its writable layer, and what a stop needs to know.

use bollard::models::ContainerStateStatusEnum;
use bollard::query_parameters::InspectContainerOptions;

use super::{DockerBackend, is_not_found};
use crate::observed::{BackendError, Observed, Status};

impl DockerBackend {
    /// The host pid of the container's init process, when it runs (for the load's conditions,
    /// which leave the engine out).
    pub async fn host_pid(&self) -> Option<u32> {
        self.seen().await.ok().flatten().and_then(|c| c.pid)
    }

    /// What a stop needs to know of the container now; `None`: there is no such container.
    pub(super) async fn seen(&self) -> Result<Option<crate::release::ContainerSeen>, BackendError> {
        match self
            .docker
            .inspect_container(&self.name, None::<InspectContainerOptions>)
            .await
        {
            Ok(info) => {
                let st = info.state.unwrap_or_default();
                Ok(Some(crate::release::ContainerSeen {
                    id: info.id.unwrap_or_default(),
                    running: st.running == Some(true)
                        || st.restarting == Some(true)
                        || st.status == Some(ContainerStateStatusEnum::REMOVING),
                    status: st
                        .status
                        .map_or_else(|| "in an unknown state".to_string(), |s| s.to_string()),
                    pid: st
                        .pid
                        .and_then(|p| u32::try_from(p).ok())
                        .filter(|p| *p > 0),
                    exit_code: st.exit_code,
                    oom_killed: st.oom_killed == Some(true),
                }))
            }
            Err(e) if is_not_found(&e) => Ok(None),
            Err(e) => Err(self.err(format!("cannot inspect {}: {e}", self.name))),
        }
    }

    pub async fn status(&self) -> Status {
        match self
            .docker
            .inspect_container(&self.name, None::<InspectContainerOptions>)
            .await
        {
            Ok(info) => {
                let st = info.state.clone().unwrap_or_default();
                let observed = match st.status {
                    Some(ContainerStateStatusEnum::RUNNING)
                    | Some(ContainerStateStatusEnum::PAUSED) => Observed::Running,
                    Some(ContainerStateStatusEnum::RESTARTING) => Observed::Restarting,
                    Some(ContainerStateStatusEnum::CREATED) => Observed::Created,
                    Some(ContainerStateStatusEnum::EXITED)
                    | Some(ContainerStateStatusEnum::DEAD) => Observed::Exited {
                        code: st.exit_code,
                        oom_killed: st.oom_killed,
                    },
                    _ => Observed::Exited {
                        code: st.exit_code,
                        oom_killed: st.oom_killed,
                    },
                };
                Status {
                    observed,
                    // Top-level in inspect, not in State (bollard 0.22 `ContainerInspectResponse`).
                    restart_count: info.restart_count.map(|c| c.max(0) as u64),
                    id: info.id.map(|i| i.chars().take(12).collect()),
                }
            }
            // Only "no such container" means it is not there; anything else (the engine
            // not answering, a 500) means we cannot tell.
            Err(e) if is_not_found(&e) => Status::missing(),
            Err(e) => Status::unknown(format!("Docker engine: {e}")),
        }
    }

    /// When the running container started (Docker's `State.StartedAt`), for the uptime.
    pub async fn started_at(&self) -> Option<chrono::DateTime<chrono::Utc>> {
        let info = self
            .docker
            .inspect_container(&self.name, None::<InspectContainerOptions>)
            .await
            .ok()?;
        let st = info.state?;
        if st.running != Some(true) {
            return None;
        }
        chrono::DateTime::parse_from_rfc3339(st.started_at.as_deref()?)
            .ok()
            .map(|t| t.with_timezone(&chrono::Utc))
    }

    /// The container's writable layer in bytes: `SizeRw` of an inspect with `size`, which
    /// makes the daemon walk the layer (expensive on a big one: the watch samples it every few
    /// seconds, beside its loop). `None` when the engine did not answer or reports no size.
    pub async fn writable_layer_bytes(&self) -> Option<u64> {
        self.writable_layer_reader().await
    }

    /// [`DockerBackend::writable_layer_bytes`] as a future that owns its client, so the watch
    /// can run it as a task while it goes on reading the log.
    pub fn writable_layer_reader(
        &self,
    ) -> impl std::future::Future<Output = Option<u64>> + Send + 'static {
        let docker = self.docker.clone();
        let name = self.name.clone();
        async move {
            let info = docker
                .inspect_container(&name, Some(InspectContainerOptions { size: true }))
                .await
                .ok()?;
            info.size_rw.and_then(|b| u64::try_from(b).ok())
        }
    }
}

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

use std::collections::HashMap;
use std::time::Duration;

use bollard::Docker;
use bollard::models::{
    ContainerCreateBody, ContainerStateStatusEnum, DeviceRequest, HostConfig, PortBinding,
    RestartPolicy, RestartPolicyNameEnum,
};
use bollard::query_parameters::{
    CreateContainerOptions, InspectContainerOptions, LogsOptions, RemoveContainerOptions,
    StartContainerOptions, StopContainerOptions,
};
use futures_util::StreamExt;
use sha2::{Digest, Sha256};
use tokio::sync::mpsc;

use crate::backend::{BackendError, LineSplitter, Observed, Status};
use crate::fleet::{DockerLaunch, Fleet, Launch, Seat};
use crate::redact::Redactor;

mod ssh;
pub mod stats;
pub mod top;
pub mod transport;

/// The API version the client speaks (Docker 20.10 = 1.41).
pub const DOCKER_API: bollard::ClientVersion = bollard::ClientVersion {
    major_version: 1,
    minor_version: 41,
};
/// How long a `stop` request may take beyond the seat's `stop_timeout_s`.
const STOP_MARGIN_S: u64 = 30;

/// The timeout of one `POST /containers/NAME/stop`. bollard's timeout covers the whole
/// request, and the daemon answers only once the container has stopped — up to `t` seconds
/// after the signal — so the client's usual 30 s would give up on any seat whose
/// `stop_timeout_s` is near or above 30 s while Docker is still stopping it.
pub fn stop_request_timeout(stop_timeout_s: u64) -> Duration {
    Duration::from_secs(stop_timeout_s.saturating_add(STOP_MARGIN_S))
}

/// A restart policy string of the fleet file, checked.
pub fn restart_policy(s: &str) -> Result<RestartPolicy, String> {
    let (name, n) = match s.split_once(':') {
        Some((a, b)) => (
            a,
            Some(
                b.parse::<i64>()
                    .map_err(|_| format!("restart {s:?}: the retry count must be a number"))?,
            ),
        ),
        None => (s, None),
    };
    let name = match name {
        "no" => RestartPolicyNameEnum::NO,
        "always" => RestartPolicyNameEnum::ALWAYS,
        "unless-stopped" => RestartPolicyNameEnum::UNLESS_STOPPED,
        "on-failure" => RestartPolicyNameEnum::ON_FAILURE,
        other => {
            return Err(format!(
                "restart {other:?} must be no, always, unless-stopped, on-failure or on-failure:N"
            ));
        }
    };
    if n.is_some() && name != RestartPolicyNameEnum::ON_FAILURE {
        return Err(format!(
            "restart {s:?}: only on-failure takes a retry count"
        ));
    }
    Ok(RestartPolicy {
        name: Some(name),
        maximum_retry_count: n,
    })
}

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

/// Connect to a host's Docker engine (`None`: this machine's socket), by the host's
/// transport (`transport.rs`).
pub async fn connect(host: Option<&crate::fleet::Host>) -> Result<Docker, String> {
    transport::connect(host).await
}

impl DockerBackend {
    pub async fn connect(fleet: &Fleet, seat: &Seat) -> Result<Self, BackendError> {
        let docker =
            connect(fleet.host_of(seat))
                .await
                .map_err(|message| BackendError::Docker {
                    seat: seat.name.clone(),
                    message,
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

    /// A hash of everything that goes into the container's configuration.
    fn config_hash(&self) -> String {
        let v = serde_json::json!({"launch": self.launch, "port": self.seat.port});
        let mut h = Sha256::new();
        h.update(v.to_string().as_bytes());
        hex::encode(&h.finalize()[..8])
    }

    fn create_body(&self) -> Result<ContainerCreateBody, BackendError> {
        let l = &self.launch;
        let cport = l.container_port.unwrap_or(self.seat.port);
        let key = format!("{cport}/tcp");
        let mut labels: HashMap<String, String> = l.labels.clone().into_iter().collect();
        labels.insert("bakeoff.seat".into(), self.seat.name.clone());
        labels.insert("bakeoff.fleet".into(), self.fleet_name.clone());
        labels.insert("bakeoff.config-hash".into(), self.config_hash());
        labels.insert("bakeoff.role".into(), self.seat.role.as_str().to_string());
        let memory = l.memory_bytes().map_err(|e| self.err(e))?;
        let restart = l
            .restart
            .as_deref()
            .map(restart_policy)
            .transpose()
            .map_err(|e| self.err(e))?;
        let device_requests = (!l.gpus.is_empty()).then(|| {
            vec![DeviceRequest {
                driver: Some("nvidia".into()),
                device_ids: Some(l.gpus.clone()),
                capabilities: Some(vec![vec!["gpu".into()]]),
                ..Default::default()
            }]
        });
        let host_network = l.network_mode.as_deref() == Some("host");
        let mut ports = HashMap::new();
        ports.insert(
            key.clone(),
            Some(vec![PortBinding {
                // A local seat is published on loopback only; a remote host's seat on all
                // addresses (the gateway reaches it over the network).
                host_ip: Some(if self.seat.host == "local" {
                    "127.0.0.1".into()
                } else {
                    "0.0.0.0".into()
                }),
                host_port: Some(self.seat.port.to_string()),
            }]),
        );
        Ok(ContainerCreateBody {
            image: Some(l.image.clone()),
            cmd: (!l.command.is_empty()).then(|| {
                l.command
                    .iter()
                    .map(|c| crate::process::substitute(c, &self.seat))
                    .collect()
            }),
            env: Some(l.env.iter().map(|(k, v)| format!("{k}={v}")).collect()),
            // On the host's network nothing is published: the engine listens on the port.
            exposed_ports: (!host_network).then(|| vec![key]),
            labels: Some(labels),
            host_config: Some(HostConfig {
                port_bindings: (!host_network).then_some(ports),
                network_mode: l.network_mode.clone(),
                binds: (!l.mounts.is_empty()).then(|| l.mounts.clone()),
                restart_policy: restart,
                memory,
                // No swap beyond the limit: a memory limit that is too small must show as an
                // OOM kill, not as a seat that swaps for an hour.
                memory_swap: memory,
                device_requests,
                init: Some(true),
                ..Default::default()
            }),
            ..Default::default()
        })
    }

    /// Create the container if it does not exist (or exists, stopped, with another config).
    /// Returns whether it was (re)created.
    pub async fn ensure_created(&mut self) -> Result<bool, BackendError> {
        match self
            .docker
            .inspect_container(&self.name, None::<InspectContainerOptions>)
            .await
        {
            Ok(info) => {
                let labels = info
                    .config
                    .as_ref()
                    .and_then(|c| c.labels.clone())
                    .unwrap_or_default();
                if labels.get("bakeoff.seat") != Some(&self.seat.name) {
                    return Err(self.err(format!(
                        "a container named {} exists and was not created by bakeoff for this seat; \
                         rename it or set docker.container_name",
                        self.name
                    )));
                }
                if labels.get("bakeoff.config-hash") == Some(&self.config_hash()) {
                    return Ok(false);
                }
                let running = info.state.as_ref().and_then(|s| s.running).unwrap_or(false);
                if running {
                    return Err(self.err(format!(
                        "container {} is running with another configuration than the fleet file; \
                         bring it down first (bakeoff seat down {})",
                        self.name, self.seat.name
                    )));
                }
                self.remove().await?;
            }
            Err(e) if is_not_found(&e) => {}
            Err(e) => return Err(self.err(e.to_string())),
        }
        let body = self.create_body()?;
        self.docker
            .create_container(
                Some(CreateContainerOptions {
                    name: Some(self.name.clone()),
                    ..Default::default()
                }),
                body,
            )
            .await
            .map_err(|e| self.err(format!("cannot create {}: {e}", self.name)))?;
        Ok(true)
    }

    pub async fn start(&mut self) -> Result<(), BackendError> {
        self.ensure_created().await?;
        self.docker
            .start_container(&self.name, None::<StartContainerOptions>)
            .await
            .map_err(|e| self.err(format!("cannot start {}: {e}", self.name)))
    }

    /// `docker stop` with the seat's grace — Docker itself sends SIGKILL when the grace runs
    /// out, and an exit code of 137 says it had to; when the container still runs after it, or
    /// the stop request failed, `docker kill` (SIGKILL) and then `docker rm -f`; then a bounded
    /// wait until the container is gone (stopped, with `keep`) and its processes with it. What
    /// refuses to go is returned (`container_left`, `survivors`), never hidden (docs/field-cases.md B5).
    pub async fn stop(&mut self, keep: bool) -> Result<crate::release::Stopped, BackendError> {
        let grace = self.seat.stop_grace();
        // At most fleet::MAX_STOP_TIMEOUT_S: it fits.
        let t = i32::try_from(grace).unwrap_or(i32::MAX);
        // The implicit `local` host is this machine (its seats publish on loopback): its
        // `/proc` and ports are the container's host's.
        let local = self.seat.host == "local";
        let mut stopped = crate::release::Stopped::new(&self.seat, local);
        let Some(before) = self.seen().await? else {
            return Ok(stopped);
        };
        stopped.was_running = before.running;
        let proc = crate::release::ProcRoot::system();
        if local {
            stopped.procs = crate::release::container_procs(&proc, &before);
        }
        let docker = self
            .docker
            .clone()
            .with_timeout(stop_request_timeout(grace));
        let polite = match docker
            .stop_container(
                &self.name,
                Some(StopContainerOptions {
                    t: Some(t),
                    signal: None,
                }),
            )
            .await
        {
            Ok(()) => Ok(()),
            Err(e) if is_not_found(&e) => return Ok(stopped),
            // 304: already stopped.
            Err(bollard::errors::Error::DockerResponseServerError {
                status_code: 304, ..
            }) => Ok(()),
            Err(e) => Err(e.to_string()),
        };
        let after = self.seen().await.ok().flatten();
        let mut force_remove = false;
        match (&polite, &after) {
            (Ok(()), None) => {}
            (Ok(()), Some(a)) if !a.running => {
                if before.running && a.exit_code == Some(137) && !a.oom_killed {
                    stopped.escalated.push(format!(
                        "Docker sent SIGKILL after the {grace} s grace (the container ignored SIGTERM)"
                    ));
                }
            }
            _ => {
                let why = match &polite {
                    Err(e) => format!("the stop request failed ({e})"),
                    Ok(()) => "it still ran after docker stop".to_string(),
                };
                stopped.escalated.push(match self.kill().await {
                    Ok(()) => format!("SIGKILL (docker kill) because {why}"),
                    Err(e) => format!("SIGKILL (docker kill) because {why}; the kill failed: {e}"),
                });
                // Still running after the kill: only `docker rm -f` is left.
                force_remove = self
                    .wait_container(false, crate::release::STOP_VERIFY_WAIT)
                    .await
                    .is_some_and(|c| c.running);
            }
        }
        let mut remove_error = None;
        if !keep || force_remove {
            if force_remove {
                stopped.escalated.push("docker rm -f".to_string());
            }
            remove_error = self.remove().await.err().map(|e| e.to_string());
        }
        if let Some(c) = self
            .wait_container(!keep || force_remove, crate::release::STOP_VERIFY_WAIT)
            .await
        {
            stopped.container_left = Some(format!(
                "container {} is {} (host pid {}){}",
                c.id.chars().take(12).collect::<String>(),
                c.status,
                c.pid.map_or("unknown".to_string(), |p| p.to_string()),
                remove_error.map(|e| format!("; {e}")).unwrap_or_default()
            ));
            if local {
                for p in crate::release::container_procs(&proc, &c) {
                    if !stopped.procs.iter().any(|q| q.pid == p.pid) {
                        stopped.procs.push(p);
                    }
                }
            }
        }
        stopped.survivors = crate::release::wait_procs_gone(
            &proc,
            &stopped.procs,
            crate::release::STOP_VERIFY_WAIT,
        )
        .await;
        Ok(stopped)
    }

    async fn remove(&self) -> Result<(), BackendError> {
        match self
            .docker
            .remove_container(
                &self.name,
                Some(RemoveContainerOptions {
                    force: true,
                    ..Default::default()
                }),
            )
            .await
        {
            Ok(()) => Ok(()),
            Err(e) if is_not_found(&e) => Ok(()),
            Err(e) => Err(self.err(format!("cannot remove {}: {e}", self.name))),
        }
    }

    /// The host pid of the container's init process, when it runs (for the load's conditions,
    /// which leave the engine out).
    pub async fn host_pid(&self) -> Option<u32> {
        self.seen().await.ok().flatten().and_then(|c| c.pid)
    }

    /// What a stop needs to know of the container now; `None`: there is no such container.
    async fn seen(&self) -> Result<Option<crate::release::ContainerSeen>, BackendError> {
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

    /// `docker kill` (SIGKILL), with a bounded request.
    async fn kill(&self) -> Result<(), String> {
        let docker = self
            .docker
            .clone()
            .with_timeout(crate::release::STOP_VERIFY_WAIT);
        match docker
            .kill_container(
                &self.name,
                Some(bollard::query_parameters::KillContainerOptions {
                    signal: "KILL".into(),
                }),
            )
            .await
        {
            Ok(()) => Ok(()),
            Err(e) if is_not_found(&e) => Ok(()),
            Err(e) => Err(e.to_string()),
        }
    }

    /// Poll until the container is gone (`gone`) or no longer running, at most `within`;
    /// what was last seen when it did not get there.
    async fn wait_container(
        &self,
        gone: bool,
        within: Duration,
    ) -> Option<crate::release::ContainerSeen> {
        let deadline = std::time::Instant::now() + within;
        loop {
            let seen = match self.seen().await {
                Ok(None) => return None,
                Ok(Some(c)) if !gone && !c.running => return None,
                Ok(Some(c)) => Some(c),
                // The engine does not answer: nothing can be verified, say so by what we saw.
                Err(_) => None,
            };
            if std::time::Instant::now() >= deadline {
                return seen.or(Some(crate::release::ContainerSeen {
                    id: self.name.clone(),
                    running: false,
                    status: "not inspectable (the Docker engine did not answer)".into(),
                    pid: None,
                    exit_code: None,
                    oom_killed: false,
                }));
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
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

    pub fn follow(&self, tx: mpsc::Sender<String>) -> tokio::task::JoinHandle<()> {
        let docker = self.docker.clone();
        let name = self.name.clone();
        let redactor = self.redactor.clone();
        tokio::spawn(async move {
            // With timestamps=true each line starts with an RFC 3339 timestamp. A reopened
            // stream resumes at `since` (1-second resolution), so lines at or before the last
            // timestamp already sent are dropped (compared as times: Docker trims trailing
            // zeros of the fraction, so the text does not sort).
            type Ts = chrono::DateTime<chrono::FixedOffset>;
            let mut last: Option<Ts> = None;
            let mut since: i32 = 0;
            loop {
                let mut stream = docker.logs(
                    &name,
                    Some(LogsOptions {
                        follow: true,
                        stdout: true,
                        stderr: true,
                        since,
                        timestamps: true,
                        tail: "all".into(),
                        ..Default::default()
                    }),
                );
                let resumed_after = last;
                let mut split = LineSplitter::default();
                let mut pending = Vec::new();
                loop {
                    let item = stream.next().await;
                    let ended = !matches!(item, Some(Ok(_)));
                    if let Some(Ok(out)) = item {
                        split.push(&out.into_bytes(), &mut pending);
                    } else if let Some(l) = split.finish() {
                        pending.push(l);
                    }
                    for l in pending.drain(..) {
                        let parsed = l
                            .split_once(' ')
                            .and_then(|(ts, text)| Some((Ts::parse_from_rfc3339(ts).ok()?, text)));
                        let text = match parsed {
                            Some((ts, text)) => {
                                if resumed_after.is_some_and(|r| ts <= r) {
                                    continue;
                                }
                                last = Some(ts);
                                text.to_string()
                            }
                            // A `\r`-split continuation carries no timestamp of its own.
                            None => l,
                        };
                        if tx.send(redactor.text(&text)).await.is_err() {
                            return;
                        }
                    }
                    if ended {
                        break;
                    }
                }
                if tx.is_closed() {
                    return;
                }
                if let Some(t) = last {
                    since = i32::try_from(t.timestamp()).unwrap_or(0);
                }
                // The stream ended: the container stopped (maybe to be restarted). Reopen.
                tokio::time::sleep(Duration::from_millis(250)).await;
            }
        })
    }

    pub async fn tail(&self, n: usize) -> Vec<String> {
        let mut stream = self.docker.logs(
            &self.name,
            Some(LogsOptions {
                follow: false,
                stdout: true,
                stderr: true,
                tail: n.to_string(),
                ..Default::default()
            }),
        );
        let mut split = LineSplitter::default();
        let mut lines = Vec::new();
        while let Some(Ok(out)) = stream.next().await {
            split.push(&out.into_bytes(), &mut lines);
        }
        split.tail(lines, n, &self.redactor)
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The stop request outlives the daemon's own wait (`t` seconds, then SIGKILL).
    #[test]
    fn the_stop_request_outlives_the_stop_grace() {
        assert_eq!(stop_request_timeout(0), Duration::from_secs(30));
        assert_eq!(stop_request_timeout(10), Duration::from_secs(40));
        assert_eq!(stop_request_timeout(120), Duration::from_secs(150));
        let max = crate::fleet::MAX_STOP_TIMEOUT_S;
        assert!(stop_request_timeout(max) > Duration::from_secs(max));
        assert!(i32::try_from(max).is_ok());
    }
}

//! Create, start and the verified stop: `docker stop` with the seat's grace, then `docker kill`
//! and `docker rm -f` when it does not go, and a bounded wait until the container and its
//! processes are gone.

use std::time::Duration;

use bollard::query_parameters::{
    CreateContainerOptions, InspectContainerOptions, RemoveContainerOptions, StartContainerOptions,
    StopContainerOptions,
};

use super::{DockerBackend, is_not_found};
use crate::observed::BackendError;

/// How long a `stop` request may take beyond the seat's `stop_timeout_s`.
const STOP_MARGIN_S: u64 = 30;

/// The timeout of one `POST /containers/NAME/stop`. bollard's timeout covers the whole
/// request, and the daemon answers only once the container has stopped — up to `t` seconds
/// after the signal — so the client's usual 30 s would give up on any seat whose
/// `stop_timeout_s` is near or above 30 s while Docker is still stopping it.
pub fn stop_request_timeout(stop_timeout_s: u64) -> Duration {
    Duration::from_secs(stop_timeout_s.saturating_add(STOP_MARGIN_S))
}

impl DockerBackend {
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

    /// `docker kill` (SIGKILL), with a bounded request.
    async fn kill(&self) -> Result<(), bollard::errors::Error> {
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
            Err(e) => Err(e),
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
}

#[cfg(test)]
#[cfg(test)]
mod tests {
    use super::*;

    /// The stop request outlives the daemon's own wait (`t` seconds, then SIGKILL).
    #[test]
    fn the_stop_request_outlives_the_stop_grace() {
        assert_eq!(stop_request_timeout(0), Duration::from_secs(30));
        assert_eq!(stop_request_timeout(10), Duration::from_secs(40));
        assert_eq!(stop_request_timeout(120), Duration::from_secs(150));
        let max = crate::fleet::types::MAX_STOP_TIMEOUT_S;
        assert!(stop_request_timeout(max) > Duration::from_secs(max));
        assert!(i32::try_from(max).is_ok());
    }
}

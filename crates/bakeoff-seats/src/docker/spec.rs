//! The container's configuration: its create body (image, command, env, ports, mounts, GPUs,
//! memory, restart policy, labels) and the hash that tells a stale container from a current one.

use std::collections::HashMap;

use bollard::models::{ContainerCreateBody, DeviceRequest, HostConfig, PortBinding};
use sha2::{Digest, Sha256};

use super::DockerBackend;
use super::restart::restart_policy;
use crate::observed::BackendError;

impl DockerBackend {
    /// A hash of everything that goes into the container's configuration.
    pub(super) fn config_hash(&self) -> String {
        let v = serde_json::json!({"launch": self.launch, "port": self.seat.port});
        let mut h = Sha256::new();
        h.update(v.to_string().as_bytes());
        hex::encode(&h.finalize()[..8])
    }

    pub(super) fn create_body(&self) -> Result<ContainerCreateBody, BackendError> {
        let l = &self.launch;
        let cport = l.container_port.unwrap_or(self.seat.port);
        let key = format!("{cport}/tcp");
        let mut labels: HashMap<String, String> = l.labels.clone().into_iter().collect();
        labels.insert("bakeoff.seat".into(), self.seat.name.clone());
        labels.insert("bakeoff.fleet".into(), self.fleet_name.clone());
        labels.insert("bakeoff.config-hash".into(), self.config_hash());
        labels.insert("bakeoff.role".into(), self.seat.role.as_str().to_string());
        let memory = l.memory_bytes().map_err(|e| self.err(e.to_string()))?;
        let restart = l
            .restart
            .as_deref()
            .map(restart_policy)
            .transpose()
            .map_err(|e| self.err(e.to_string()))?;
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
                    .map(|c| crate::fleet::types::substitute(c, &self.seat))
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
}

//! The fleet file as written (serde's view of `fleet.toml`) and its validation into the checked
//! [`Host`]s, [`Seat`]s and [`Route`]s of a [`Fleet`]. Every check returns the message that
//! [`Fleet::parse`] reports as [`super::FleetError::Invalid`].

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::docker_host::HostInvalid;
use super::launch::{DockerLaunch, Launch, NotASize, ProcessLaunch};
use super::seat_tls::SeatTlsError;
use super::types::{Engine, Fleet, Host, MAX_STOP_TIMEOUT_S, Role, Route, Seat};
use crate::checks::template_pin::BadPin;
use crate::docker::restart::RestartError;

/// What makes a fleet file invalid, once it parsed: [`super::FleetError::Invalid`] reports it
/// after the file's path.
#[derive(Debug, thiserror::Error)]
pub enum FleetInvalid {
    /// The redacted `[gateway] url`.
    #[error("[gateway] url = {url:?} is not an http(s) URL: write it as http://HOST:PORT")]
    GatewayUrl { url: String },
    #[error(transparent)]
    Host(#[from] HostInvalid),
    #[error("seat {seat:?}: {reason}")]
    Seat {
        seat: String,
        #[source]
        reason: SeatInvalid,
    },
    #[error(transparent)]
    SeatTls(#[from] SeatTlsError),
    #[error(transparent)]
    Pin(#[from] BadPin),
    #[error("route {alias:?}: seat {seat:?} is not declared")]
    RouteSeat { alias: String, seat: String },
    #[error("route {alias:?}: give seat = \"NAME\" or api_base = \"http://host:port/v1\"")]
    RouteTarget { alias: String },
}

/// What is wrong with one `[[seat]]` (the message after `seat "NAME": `).
#[derive(Debug, thiserror::Error)]
pub enum SeatInvalid {
    /// The seat's name is not a slug (the slug check's words, about a name).
    #[error("{}", source.to_string().replace("slug", "name"))]
    Name {
        source: bakeoff_artifact::slug::BadSlug,
    },
    #[error("declared twice (seat names are unique)")]
    Twice,
    #[error("host {host:?} is not declared (add [hosts.{host}])")]
    HostUndeclared { host: String },
    #[error("port must be 1-65535")]
    Port,
    /// `served_model_names = []`, or a name that is empty.
    #[error(
        "served_model_names names no model: give at least one name, e.g. served_model_names = [\"qwen3-8b\"], or leave the key out for the engine's own name"
    )]
    ServedNames,
    #[error(
        "stop_timeout_s {0} is over the {MAX_STOP_TIMEOUT_S} s limit; use a value of 0-{MAX_STOP_TIMEOUT_S}"
    )]
    StopTimeout(u64),
    #[error("gpu_memory_utilization {0} must be in (0, 1]")]
    GpuMemoryUtilization(f64),
    #[error(
        "api_key_env {0:?} is not an environment variable's name; name the variable that holds the key, e.g. api_key_env = \"SEAT_API_KEY\""
    )]
    ApiKeyEnv(String),
    #[error("has both [seat.process] and [seat.docker]: pick one")]
    BothLaunches,
    #[error("has no launch: add [seat.process] (command, args, env) or [seat.docker] (image, …)")]
    NoLaunch,
    #[error("process.command is empty")]
    EmptyCommand,
    #[error(
        "a process seat runs on this machine: host must be \"local\" (use docker for remote hosts)"
    )]
    ProcessNotLocal,
    #[error("docker.image is empty")]
    EmptyImage,
    #[error(transparent)]
    Memory(#[from] NotASize),
    #[error("docker.network_mode is empty: drop it or write \"host\"")]
    EmptyNetworkMode,
    #[error(
        "docker.network_mode = \"host\" publishes no port: drop container_port and let the engine listen on {{port}}"
    )]
    HostNetworkPort,
    #[error(transparent)]
    Restart(#[from] RestartError),
    #[error("mount {0:?} must be HOST:CONTAINER or HOST:CONTAINER:ro")]
    Mount(String),
    /// A container GPU id over the host's declared count.
    #[error("GPU {gpu} is not on host {host:?}, which declares gpus = {gpus}")]
    ContainerGpu { gpu: u32, host: String, gpus: u32 },
    /// A seat's GPU id (a container's or a process's `CUDA_VISIBLE_DEVICES`) over the host's
    /// declared count.
    #[error(
        "GPU {gpu} is not on host {host:?}: it declares gpus = {gpus} (ids 0-{}); fix: use an id of that host, or correct [hosts.{host}] gpus",
        gpus - 1
    )]
    GpuNotOnHost { gpu: u32, host: String, gpus: u32 },
}

/// A bakeoff fleet file (TOML): the hosts, the seats on them, the gateway's routes
/// (docs/fleet.md). Unknown keys are errors.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "bakeoff fleet file")]
pub(super) struct RawFile {
    /// `[fleet]`: the fleet's name and state directory.
    #[serde(default)]
    fleet: RawFleet,
    /// `[hosts.NAME]`: the machines seats run on (absent: only `local`).
    #[serde(default)]
    hosts: BTreeMap<String, RawHost>,
    /// `[[seat]]`: the named serving slots.
    #[serde(default)]
    seat: Vec<RawSeat>,
    /// `[[route]]`: gateway aliases and the seat each reaches.
    #[serde(default)]
    route: Vec<RawRoute>,
    /// `[gateway]`: the LiteLLM proxy in front of the fleet.
    #[serde(default)]
    gateway: Option<RawGateway>,
}

#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Fleet")]
pub(super) struct RawFleet {
    /// The fleet's name (default `fleet`): names its monitor and state files.
    name: Option<String>,
    /// Where seats' state is kept, relative to the fleet file (default `.bakeoff-seats`).
    state_dir: Option<PathBuf>,
}

#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Host")]
pub(super) struct RawHost {
    /// `unix:///var/run/docker.sock`, `tcp://10.0.0.5:2375`, `ssh://user@host`; absent: the
    /// local socket.
    docker: Option<String>,
    /// `{ ca, cert, key }`: the client files for a `tcp://` engine with `--tlsverify`.
    tls: Option<super::docker_host::TlsFiles>,
    /// An ssh_config file for an `ssh://` host (`ssh -F`), relative to the fleet file.
    ssh_config: Option<PathBuf>,
    /// Where seats on this host answer (default 127.0.0.1).
    address: Option<String>,
    /// How many GPUs the host has (ids 0 to gpus-1).
    #[serde(default)]
    gpus: u32,
    /// The memory of each of its GPUs, in GiB, for the placement check where no reading gives
    /// it (a remote host, no NVML here).
    gpu_memory_gib: Option<f64>,
    /// The nvidia-smi `plan` runs over ssh on this host, when not `nvidia-smi` on its PATH.
    nvidia_smi: Option<String>,
}

#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Seat")]
pub(super) struct RawSeat {
    /// The seat's name, unique in the fleet.
    name: String,
    /// The `[hosts.NAME]` it runs on (default `local`).
    #[serde(default = "default_host")]
    host: String,
    /// The engine: `vllm`, `sglang`, `llama.cpp` or `generic`.
    engine: Engine,
    /// `production` (never touched without `--confirm`), `bench` or `dormant`.
    role: Role,
    /// The port the seat answers on.
    port: u16,
    /// Absent: the engine's own name for the model. Present: at least one non-empty name.
    served_model_names: Option<Vec<String>>,
    /// vLLM's `--gpu-memory-utilization`, for the memory plan.
    gpu_memory_utilization: Option<f64>,
    /// `[seat.process]`: run as a process on the host.
    process: Option<ProcessLaunch>,
    /// `[seat.docker]`: run as a Docker container.
    docker: Option<DockerLaunch>,
    /// Seconds to wait after SIGTERM / `docker stop` before killing.
    stop_timeout_s: Option<u64>,
    /// The pinned chat template, relative to the fleet file's directory: the served template
    /// must equal it.
    chat_template: Option<PathBuf>,
    /// The environment variable holding the key the engine was started with (`--api-key`,
    /// `VLLM_API_KEY`, …): bakeoff's own probes of the seat send it, in the header only.
    api_key_env: Option<String>,
    /// `[seat.tls]`: the seat serves HTTPS (docs/fleet.md "Seats behind TLS").
    tls: Option<super::seat_tls::RawSeatTls>,
}

fn default_host() -> String {
    "local".into()
}

#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Route")]
pub(super) struct RawRoute {
    /// The gateway's model alias.
    alias: String,
    /// The seat that serves it.
    seat: Option<String>,
    /// Or the upstream base URL, resolved to the seat on its port.
    api_base: Option<String>,
    /// The gateway's upstream model name (`hosted_vllm/<served-name>`), informational.
    model: Option<String>,
}

#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Gateway")]
pub(super) struct RawGateway {
    /// A LiteLLM proxy `config.yaml`, relative to the fleet file.
    litellm_config: Option<PathBuf>,
    /// Where the gateway answers (`http://HOST:PORT`): `seat status --probe` also probes each
    /// alias through it and reads its own view (`/model/info`).
    url: Option<String>,
    /// The environment variable holding the gateway's key (its master or a virtual key); the
    /// key itself never sits in the fleet file.
    api_key_env: Option<String>,
    /// An `https://` gateway's private CA (PEM), relative to the fleet file.
    ca_cert: Option<PathBuf>,
    /// Accept the gateway's certificate without verifying it (recorded wherever it is used).
    #[serde(default)]
    insecure: bool,
}

impl RawFile {
    /// The fleet's name (default `fleet`).
    pub(super) fn name(&self) -> String {
        self.fleet.name.clone().unwrap_or_else(|| "fleet".into())
    }

    /// The state directory, relative to the fleet file's directory `dir`.
    pub(super) fn state_dir(&self, dir: &Path) -> PathBuf {
        self.fleet
            .state_dir
            .as_ref()
            .map(|d| dir.join(d))
            .unwrap_or_else(|| dir.join(".bakeoff-seats"))
    }

    /// The LiteLLM config the gateway's aliases are imported from, as written.
    pub(super) fn litellm_config(&self) -> Option<&PathBuf> {
        self.gateway.as_ref()?.litellm_config.as_ref()
    }

    /// The gateway's base URL (`[gateway] url`), checked to be an http(s) URL.
    pub(super) fn gateway_url(&self) -> Result<Option<String>, FleetInvalid> {
        let Some(u) = self.gateway.as_ref().and_then(|g| g.url.as_ref()) else {
            return Ok(None);
        };
        match url::Url::parse(u) {
            Ok(p) if (p.scheme() == "http" || p.scheme() == "https") && p.host().is_some() => {
                Ok(Some(u.trim_end_matches('/').to_string()))
            }
            _ => Err(FleetInvalid::GatewayUrl {
                url: crate::redact::text(u),
            }),
        }
    }

    /// How an `https://` gateway is trusted (`[gateway] ca_cert`, relative to `dir`, the fleet
    /// file's directory; `[gateway] insecure`).
    pub(super) fn gateway_tls(&self, dir: &Path) -> bakeoff_client::tls::TlsOptions {
        let g = self.gateway.as_ref();
        bakeoff_client::tls::TlsOptions {
            ca_cert: g.and_then(|g| g.ca_cert.as_ref()).map(|p| dir.join(p)),
            insecure: g.is_some_and(|g| g.insecure),
        }
    }

    /// The environment variable named by `[gateway] api_key_env`.
    pub(super) fn gateway_key_env(&self) -> Option<String> {
        self.gateway.as_ref()?.api_key_env.clone()
    }

    /// The declared hosts, plus `local` (this machine, its Docker socket) when not declared.
    /// Relative `tls` and `ssh_config` paths are relative to `dir`, the fleet file's directory.
    pub(super) fn hosts(&self, dir: &Path) -> Result<BTreeMap<String, Host>, HostInvalid> {
        let mut hosts = BTreeMap::new();
        for (name, h) in &self.hosts {
            let keys = super::docker_host::check(
                name,
                h.docker.as_deref(),
                h.tls.as_ref(),
                h.ssh_config.as_deref(),
                dir,
            )?;
            if let Some(m) = h.gpu_memory_gib
                && !(m.is_finite() && m > 0.0)
            {
                return Err(HostInvalid::GpuMemory {
                    host: name.clone(),
                    gib: m,
                });
            }
            hosts.insert(
                name.clone(),
                Host {
                    name: name.clone(),
                    docker: keys.docker,
                    tls: keys.tls,
                    ssh_config: keys.ssh_config,
                    address: h.address.clone().unwrap_or_else(|| "127.0.0.1".into()),
                    gpus: h.gpus,
                    gpu_memory_gib: h.gpu_memory_gib,
                    nvidia_smi: h.nvidia_smi.clone().filter(|b| !b.trim().is_empty()),
                },
            );
        }
        // `local` always exists: this machine, its Docker socket.
        hosts.entry("local".into()).or_insert_with(|| Host {
            name: "local".into(),
            docker: None,
            tls: None,
            ssh_config: None,
            address: "127.0.0.1".into(),
            gpus: 0,
            gpu_memory_gib: None,
            nvidia_smi: None,
        });
        Ok(hosts)
    }

    /// The seats, each checked against `hosts` and the seats before it.
    pub(super) fn seats(&self, hosts: &BTreeMap<String, Host>) -> Result<Vec<Seat>, FleetInvalid> {
        let mut seats: Vec<Seat> = Vec::new();
        for s in &self.seat {
            let seat = s
                .check(hosts, &seats)
                .map_err(|reason| FleetInvalid::Seat {
                    seat: s.name.clone(),
                    reason,
                })?;
            seats.push(seat);
        }
        Ok(seats)
    }

    /// The `[[route]]` aliases, resolved against the seats of `fleet`.
    pub(super) fn routes(&self, fleet: &Fleet) -> Result<Vec<Route>, FleetInvalid> {
        let mut routes = Vec::new();
        for r in &self.route {
            let seat = match (&r.seat, &r.api_base) {
                (Some(s), _) => {
                    if fleet.seat(s).is_none() {
                        return Err(FleetInvalid::RouteSeat {
                            alias: r.alias.clone(),
                            seat: s.clone(),
                        });
                    }
                    Some(s.clone())
                }
                (None, Some(base)) => fleet.resolve_api_base(base),
                (None, None) => {
                    return Err(FleetInvalid::RouteTarget {
                        alias: r.alias.clone(),
                    });
                }
            };
            routes.push(Route {
                alias: r.alias.clone(),
                seat,
                api_base: r.api_base.clone(),
                model: r.model.clone(),
                from: "fleet.toml".into(),
            });
        }
        Ok(routes)
    }
}

impl RawSeat {
    /// The checked seat; `seats` are those declared before it. The message says what is wrong
    /// (the caller names the seat).
    fn check(&self, hosts: &BTreeMap<String, Host>, seats: &[Seat]) -> Result<Seat, SeatInvalid> {
        bakeoff_artifact::slug::validate_slug(&self.name)
            .map_err(|source| SeatInvalid::Name { source })?;
        if seats.iter().any(|o| o.name == self.name) {
            return Err(SeatInvalid::Twice);
        }
        let host = hosts
            .get(&self.host)
            .ok_or_else(|| SeatInvalid::HostUndeclared {
                host: self.host.clone(),
            })?;
        if self.port == 0 {
            return Err(SeatInvalid::Port);
        }
        if let Some(names) = &self.served_model_names
            && (names.is_empty() || names.iter().any(|n| n.trim().is_empty()))
        {
            return Err(SeatInvalid::ServedNames);
        }
        if let Some(t) = self.stop_timeout_s
            && t > MAX_STOP_TIMEOUT_S
        {
            return Err(SeatInvalid::StopTimeout(t));
        }
        if let Some(u) = self.gpu_memory_utilization
            && !(u > 0.0 && u <= 1.0)
        {
            return Err(SeatInvalid::GpuMemoryUtilization(u));
        }
        let launch = self.launch(host)?;
        Ok(Seat {
            name: self.name.clone(),
            host: self.host.clone(),
            engine: self.engine,
            role: self.role,
            port: self.port,
            served_model_names: self.served_model_names.clone().unwrap_or_default(),
            gpu_memory_utilization: self.gpu_memory_utilization,
            tls: super::seat_tls::of(self.tls.as_ref(), &launch),
            launch,
            stop_timeout_s: self.stop_timeout_s.unwrap_or(10),
            chat_template: self.chat_template.clone(),
            api_key_env: match &self.api_key_env {
                Some(n)
                    if n.trim().is_empty()
                        || n.contains(char::is_whitespace)
                        || n.contains('=') =>
                {
                    return Err(SeatInvalid::ApiKeyEnv(n.clone()));
                }
                other => other.clone(),
            },
        })
        .and_then(|seat| gpus_on_host(seat, host))
    }

    /// The seat's one launch, process or Docker, checked.
    fn launch(&self, host: &Host) -> Result<Launch, SeatInvalid> {
        match (&self.process, &self.docker) {
            (Some(p), None) => process_launch(p, &self.host).map(Launch::Process),
            (None, Some(d)) => docker_launch(d, host).map(Launch::Docker),
            (Some(_), Some(_)) => Err(SeatInvalid::BothLaunches),
            (None, None) => Err(SeatInvalid::NoLaunch),
        }
    }
}

/// A process launch: a command, on this machine (`host` is the seat's host name).
fn process_launch(p: &ProcessLaunch, host: &str) -> Result<ProcessLaunch, SeatInvalid> {
    if p.command.trim().is_empty() {
        return Err(SeatInvalid::EmptyCommand);
    }
    if host != "local" {
        return Err(SeatInvalid::ProcessNotLocal);
    }
    Ok(p.clone())
}

/// A Docker launch: an image, a memory size and restart policy Docker accepts, mounts with both
/// sides, and GPUs the host has.
fn docker_launch(d: &DockerLaunch, host: &Host) -> Result<DockerLaunch, SeatInvalid> {
    if d.image.trim().is_empty() {
        return Err(SeatInvalid::EmptyImage);
    }
    d.memory_bytes()?;
    match d.network_mode.as_deref() {
        Some(m) if m.trim().is_empty() => {
            return Err(SeatInvalid::EmptyNetworkMode);
        }
        // Nothing is published on the host network: the engine must listen on the seat's port.
        Some("host") if d.container_port.is_some() => {
            return Err(SeatInvalid::HostNetworkPort);
        }
        _ => {}
    }
    if let Some(r) = &d.restart {
        crate::docker::restart::restart_policy(r)?;
    }
    for m in &d.mounts {
        if m.split(':').count() < 2 {
            return Err(SeatInvalid::Mount(m.clone()));
        }
    }
    for g in &d.gpus {
        if let Ok(i) = g.parse::<u32>()
            && i >= host.gpus
        {
            return Err(SeatInvalid::ContainerGpu {
                gpu: i,
                host: host.name.clone(),
                gpus: host.gpus,
            });
        }
    }
    Ok(d.clone())
}

/// A seat's GPU ids must exist on its host: with `gpus = N` declared, an index of N or more is
/// refused at parse (the fleet field cases' (docs/field-cases.md) fleet numbered GPUs per host; a seat moved between hosts keeps
/// ids its new host does not have, and the engine finds out at load). `all`, UUIDs and a host
/// without a declared count are not checked.
fn gpus_on_host(seat: Seat, host: &Host) -> Result<Seat, SeatInvalid> {
    if host.gpus == 0 {
        return Ok(seat);
    }
    for id in seat.gpu_ids() {
        if let Ok(i) = id.parse::<u32>()
            && i >= host.gpus
        {
            return Err(SeatInvalid::GpuNotOnHost {
                gpu: i,
                host: host.name.clone(),
                gpus: host.gpus,
            });
        }
    }
    Ok(seat)
}

/// The JSON Schema of the fleet file (schemas/fleet-file.schema.json), for an editor's checking.
pub fn file_json_schema() -> serde_json::Value {
    serde_json::to_value(schemars::schema_for!(RawFile)).unwrap_or(serde_json::Value::Null)
}

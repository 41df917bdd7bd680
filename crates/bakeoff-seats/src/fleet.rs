//! The fleet file (`fleet.toml`, docs/fleet.md): hosts, their GPUs, seats with a process or
//! Docker launch, and gateway aliases (`[[route]]` entries or an imported LiteLLM
//! `config.yaml`), each alias resolved to the seat that serves it.
//!
//! Parsing is raw (serde) then validated into a [`Fleet`] that only holds checked values, so a
//! command never starts half a fleet and then discovers a typo.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

#[derive(Debug, thiserror::Error)]
pub enum FleetError {
    #[error("cannot read the fleet file {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: {message}")]
    Parse { path: PathBuf, message: String },
    #[error("{path}: {message}")]
    Invalid { path: PathBuf, message: String },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Role {
    /// Serves users: never started, stopped or swapped without `--confirm`.
    Production,
    /// A seat for measurements.
    Bench,
    /// Kept created but stopped (a rollback target).
    Dormant,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Engine {
    #[serde(rename = "vllm")]
    Vllm,
    #[serde(rename = "sglang")]
    Sglang,
    #[serde(rename = "llama.cpp")]
    LlamaCpp,
    #[serde(rename = "generic")]
    Generic,
}

impl Engine {
    pub fn kind(self) -> bakeoff_artifact::EngineKind {
        use bakeoff_artifact::EngineKind as K;
        match self {
            Engine::Vllm => K::Vllm,
            Engine::Sglang => K::Sglang,
            Engine::LlamaCpp => K::LlamaCpp,
            Engine::Generic => K::Generic,
        }
    }
}

// ---- raw file ---------------------------------------------------------------------------

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    #[serde(default)]
    fleet: RawFleet,
    #[serde(default)]
    hosts: BTreeMap<String, RawHost>,
    #[serde(default)]
    seat: Vec<RawSeat>,
    #[serde(default)]
    route: Vec<RawRoute>,
    #[serde(default)]
    gateway: Option<RawGateway>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFleet {
    name: Option<String>,
    state_dir: Option<PathBuf>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawHost {
    /// `unix:///var/run/docker.sock`, `tcp://10.0.0.5:2375`; absent: the local socket.
    docker: Option<String>,
    /// Where seats on this host answer (default 127.0.0.1).
    address: Option<String>,
    #[serde(default)]
    gpus: u32,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSeat {
    name: String,
    #[serde(default = "default_host")]
    host: String,
    engine: Engine,
    role: Role,
    port: u16,
    #[serde(default)]
    served_model_names: Vec<String>,
    gpu_memory_utilization: Option<f64>,
    process: Option<ProcessLaunch>,
    docker: Option<DockerLaunch>,
    /// Seconds to wait after SIGTERM / `docker stop` before killing.
    stop_timeout_s: Option<u64>,
}

/// The longest `stop_timeout_s` a seat may ask for (an hour): a stop is a wait the operator
/// sits through, and the Docker stop request's own timeout is derived from it.
pub const MAX_STOP_TIMEOUT_S: u64 = 3600;

fn default_host() -> String {
    "local".into()
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRoute {
    alias: String,
    seat: Option<String>,
    api_base: Option<String>,
    /// The gateway's upstream model name (`hosted_vllm/<served-name>`), informational.
    model: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawGateway {
    /// A LiteLLM proxy `config.yaml`, relative to the fleet file.
    litellm_config: Option<PathBuf>,
}

// ---- checked fleet ----------------------------------------------------------------------

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProcessLaunch {
    pub command: String,
    #[serde(default)]
    pub args: Vec<String>,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DockerLaunch {
    pub image: String,
    /// The container's command (entrypoint left to the image).
    #[serde(default)]
    pub command: Vec<String>,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// `HOST:CONTAINER[:ro]` bind mounts.
    #[serde(default)]
    pub mounts: Vec<String>,
    /// GPU ids handed to the container (`--gpus device=…`).
    #[serde(default)]
    pub gpus: Vec<String>,
    /// `no`, `always`, `unless-stopped`, `on-failure` or `on-failure:N`.
    #[serde(default)]
    pub restart: Option<String>,
    /// Memory limit: bytes, or with a suffix `k`, `m`, `g` (`512m`, `8g`).
    #[serde(default)]
    pub memory: Option<String>,
    #[serde(default)]
    pub labels: BTreeMap<String, String>,
    /// The port the engine listens on inside the container (default: the seat's port).
    #[serde(default)]
    pub container_port: Option<u16>,
    /// Container name (default `bakeoff-<seat>`).
    #[serde(default)]
    pub container_name: Option<String>,
}

impl DockerLaunch {
    pub fn memory_bytes(&self) -> Result<Option<i64>, String> {
        self.memory.as_deref().map(parse_bytes).transpose()
    }
}

fn parse_bytes(s: &str) -> Result<i64, String> {
    let t = s.trim().to_ascii_lowercase();
    let t = t.strip_suffix('b').unwrap_or(&t);
    let (num, mult) = match t.chars().last() {
        Some('k') => (&t[..t.len() - 1], 1i64 << 10),
        Some('m') => (&t[..t.len() - 1], 1 << 20),
        Some('g') => (&t[..t.len() - 1], 1 << 30),
        _ => (t, 1),
    };
    num.trim()
        .parse::<i64>()
        .ok()
        .and_then(|n| n.checked_mul(mult))
        .filter(|n| *n > 0)
        .ok_or_else(|| format!("memory {s:?} is not a size (use bytes or 512m, 8g)"))
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Launch {
    Process(ProcessLaunch),
    Docker(DockerLaunch),
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Host {
    pub name: String,
    /// `None`: the local Docker socket.
    pub docker: Option<String>,
    pub address: String,
    pub gpus: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Seat {
    pub name: String,
    pub host: String,
    pub engine: Engine,
    pub role: Role,
    pub port: u16,
    pub served_model_names: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_memory_utilization: Option<f64>,
    pub launch: Launch,
    pub stop_timeout_s: u64,
}

impl Seat {
    /// Seconds to wait after SIGTERM / `docker stop` before killing: `stop_timeout_s`, capped at
    /// [`MAX_STOP_TIMEOUT_S`] (the fleet file refuses more; a `Seat` built in code is capped
    /// here, so no backend overflows an `Instant` or Docker's `i32`).
    pub fn stop_grace(&self) -> u64 {
        self.stop_timeout_s.min(MAX_STOP_TIMEOUT_S)
    }

    pub fn backend_name(&self) -> &'static str {
        match self.launch {
            Launch::Process(_) => "process",
            Launch::Docker(_) => "docker",
        }
    }

    /// The container name of a Docker seat.
    pub fn container_name(&self) -> Option<String> {
        match &self.launch {
            Launch::Docker(d) => Some(
                d.container_name
                    .clone()
                    .unwrap_or_else(|| format!("bakeoff-{}", self.name)),
            ),
            Launch::Process(_) => None,
        }
    }

    /// The seat as it may be written or printed: its launch with secrets redacted
    /// ([`crate::redact`], the one rule for arguments, environment values, headers and URLs).
    /// Only for output: a seat is always launched from `self`, with the real values.
    pub fn redacted(&self) -> Seat {
        Seat {
            launch: crate::redact::launch(&self.launch),
            ..self.clone()
        }
    }

    /// The seat's configuration as recorded in artifacts: [`Seat::redacted`] as JSON.
    pub fn redacted_config(&self) -> serde_json::Value {
        serde_json::to_value(self.redacted()).unwrap_or(serde_json::Value::Null)
    }
}

/// A gateway alias and the seat it resolves to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Route {
    pub alias: String,
    /// `None`: the alias points somewhere outside this fleet.
    pub seat: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_base: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// `fleet.toml` or the LiteLLM file it came from.
    pub from: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Fleet {
    pub name: String,
    pub path: PathBuf,
    pub state_dir: PathBuf,
    pub hosts: BTreeMap<String, Host>,
    pub seats: Vec<Seat>,
    pub routes: Vec<Route>,
}

impl Fleet {
    pub fn load(path: &Path) -> Result<Fleet, FleetError> {
        let text = std::fs::read_to_string(path).map_err(|source| FleetError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        Fleet::parse(&text, path)
    }

    /// Parse and validate `text` as the fleet file at `path` (relative paths in it are
    /// relative to the file's directory).
    pub fn parse(text: &str, path: &Path) -> Result<Fleet, FleetError> {
        // The parser quotes the offending line, which may hold a key.
        let raw: RawFile = toml::from_str(text).map_err(|e| FleetError::Parse {
            path: path.to_path_buf(),
            message: crate::redact::text(&e.to_string().trim_end().replace('\n', " ")),
        })?;
        let invalid = |message: String| FleetError::Invalid {
            path: path.to_path_buf(),
            message,
        };
        let dir = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."))
            .to_path_buf();

        let mut hosts = BTreeMap::new();
        for (name, h) in &raw.hosts {
            if let Some(d) = &h.docker
                && !(d.starts_with("unix://")
                    || d.starts_with("tcp://")
                    || d.starts_with("http://"))
            {
                return Err(invalid(format!(
                    "host {name:?}: docker = {d:?} must start with unix://, tcp:// or http://"
                )));
            }
            hosts.insert(
                name.clone(),
                Host {
                    name: name.clone(),
                    docker: h.docker.clone(),
                    address: h.address.clone().unwrap_or_else(|| "127.0.0.1".into()),
                    gpus: h.gpus,
                },
            );
        }
        // `local` always exists: this machine, its Docker socket.
        hosts.entry("local".into()).or_insert_with(|| Host {
            name: "local".into(),
            docker: None,
            address: "127.0.0.1".into(),
            gpus: 0,
        });

        let mut seats: Vec<Seat> = Vec::new();
        for s in &raw.seat {
            let at = |m: String| invalid(format!("seat {:?}: {m}", s.name));
            bakeoff_artifact::slug::validate_slug(&s.name)
                .map_err(|e| at(e.replace("slug", "name")))?;
            if seats.iter().any(|o| o.name == s.name) {
                return Err(at("declared twice (seat names are unique)".into()));
            }
            let host = hosts.get(&s.host).ok_or_else(|| {
                at(format!(
                    "host {:?} is not declared (add [hosts.{}])",
                    s.host, s.host
                ))
            })?;
            if s.port == 0 {
                return Err(at("port must be 1-65535".into()));
            }
            if let Some(t) = s.stop_timeout_s
                && t > MAX_STOP_TIMEOUT_S
            {
                return Err(at(format!(
                    "stop_timeout_s {t} is over the {MAX_STOP_TIMEOUT_S} s limit; use a value of 0-{MAX_STOP_TIMEOUT_S}"
                )));
            }
            if let Some(u) = s.gpu_memory_utilization
                && !(u > 0.0 && u <= 1.0)
            {
                return Err(at(format!("gpu_memory_utilization {u} must be in (0, 1]")));
            }
            let launch = match (&s.process, &s.docker) {
                (Some(p), None) => {
                    if p.command.trim().is_empty() {
                        return Err(at("process.command is empty".into()));
                    }
                    if s.host != "local" {
                        return Err(at(
                            "a process seat runs on this machine: host must be \"local\" (use docker for remote hosts)"
                                .into(),
                        ));
                    }
                    Launch::Process(p.clone())
                }
                (None, Some(d)) => {
                    if d.image.trim().is_empty() {
                        return Err(at("docker.image is empty".into()));
                    }
                    d.memory_bytes().map_err(&at)?;
                    if let Some(r) = &d.restart {
                        crate::docker::restart_policy(r).map_err(&at)?;
                    }
                    for m in &d.mounts {
                        if m.split(':').count() < 2 {
                            return Err(at(format!(
                                "mount {m:?} must be HOST:CONTAINER or HOST:CONTAINER:ro"
                            )));
                        }
                    }
                    for g in &d.gpus {
                        if let Ok(i) = g.parse::<u32>()
                            && i >= host.gpus
                        {
                            return Err(at(format!(
                                "GPU {i} is not on host {:?}, which declares gpus = {}",
                                host.name, host.gpus
                            )));
                        }
                    }
                    Launch::Docker(d.clone())
                }
                (Some(_), Some(_)) => {
                    return Err(at(
                        "has both [seat.process] and [seat.docker]: pick one".into()
                    ));
                }
                (None, None) => {
                    return Err(at(
                        "has no launch: add [seat.process] (command, args, env) or [seat.docker] (image, …)"
                            .into(),
                    ));
                }
            };
            seats.push(Seat {
                name: s.name.clone(),
                host: s.host.clone(),
                engine: s.engine,
                role: s.role,
                port: s.port,
                served_model_names: s.served_model_names.clone(),
                gpu_memory_utilization: s.gpu_memory_utilization,
                launch,
                stop_timeout_s: s.stop_timeout_s.unwrap_or(10),
            });
        }

        let mut fleet = Fleet {
            name: raw.fleet.name.clone().unwrap_or_else(|| "fleet".into()),
            path: path.to_path_buf(),
            state_dir: raw
                .fleet
                .state_dir
                .as_ref()
                .map(|d| dir.join(d))
                .unwrap_or_else(|| dir.join(".bakeoff-seats")),
            hosts,
            seats,
            routes: Vec::new(),
        };

        for r in &raw.route {
            let seat = match (&r.seat, &r.api_base) {
                (Some(s), _) => {
                    if fleet.seat(s).is_none() {
                        return Err(invalid(format!(
                            "route {:?}: seat {s:?} is not declared",
                            r.alias
                        )));
                    }
                    Some(s.clone())
                }
                (None, Some(base)) => fleet.resolve_api_base(base),
                (None, None) => {
                    return Err(invalid(format!(
                        "route {:?}: give seat = \"NAME\" or api_base = \"http://host:port/v1\"",
                        r.alias
                    )));
                }
            };
            fleet.routes.push(Route {
                alias: r.alias.clone(),
                seat,
                api_base: r.api_base.clone(),
                model: r.model.clone(),
                from: "fleet.toml".into(),
            });
        }
        if let Some(g) = &raw.gateway
            && let Some(cfg) = &g.litellm_config
        {
            let p = dir.join(cfg);
            let text = std::fs::read_to_string(&p).map_err(|source| FleetError::Read {
                path: p.clone(),
                source,
            })?;
            let routes = fleet.import_litellm(&text, &p)?;
            fleet.routes.extend(routes);
        }
        Ok(fleet)
    }

    pub fn seat(&self, name: &str) -> Option<&Seat> {
        self.seats.iter().find(|s| s.name == name)
    }

    pub fn host_of(&self, seat: &Seat) -> Option<&Host> {
        self.hosts.get(&seat.host)
    }

    /// The base URL a seat answers on (`http://ADDRESS:PORT`).
    pub fn seat_url(&self, seat: &Seat) -> String {
        let addr = self
            .host_of(seat)
            .map(|h| h.address.as_str())
            .unwrap_or("127.0.0.1");
        format!("http://{addr}:{}", seat.port)
    }

    /// Other seats on the same host that bind the same port.
    pub fn port_siblings<'a>(&'a self, seat: &'a Seat) -> impl Iterator<Item = &'a Seat> + 'a {
        self.seats
            .iter()
            .filter(move |o| o.name != seat.name && o.host == seat.host && o.port == seat.port)
    }

    /// The aliases that resolve to `seat`.
    pub fn aliases_of(&self, seat: &str) -> Vec<&Route> {
        self.routes
            .iter()
            .filter(|r| r.seat.as_deref() == Some(seat))
            .collect()
    }

    /// The seat a route reaches right now. A route with an `api_base` reaches whatever serves
    /// that host and port: when the seat it was resolved to (at parse time: the first
    /// non-dormant one) is not up but a sibling on the same port is — after `seat swap` — the
    /// alias is that sibling's. `is_up(seat)` says which seats are up.
    pub fn route_seat_now(&self, route: &Route, is_up: impl Fn(&str) -> bool) -> Option<String> {
        let resolved = route.seat.as_deref()?;
        if route.api_base.is_none() || is_up(resolved) {
            return Some(resolved.to_string());
        }
        let seat = self.seat(resolved)?;
        Some(
            self.port_siblings(seat)
                .find(|s| is_up(&s.name))
                .map_or(resolved, |s| s.name.as_str())
                .to_string(),
        )
    }

    /// The seat an `api_base` points at: same port and the host's address (loopback names
    /// count as the local host).
    pub fn resolve_api_base(&self, base: &str) -> Option<String> {
        let url = url::Url::parse(base).ok()?;
        let host = url.host_str()?.to_string();
        let port = url.port_or_known_default()?;
        let loopback = |h: &str| h == "localhost" || h == "127.0.0.1" || h == "::1" || h == "[::1]";
        // A seat that is `up` on one host but `dormant` on the same port is a rollback
        // target; the alias resolves to the one that is not dormant when both match.
        let mut matches: Vec<&Seat> = self
            .seats
            .iter()
            .filter(|s| {
                s.port == port
                    && self.host_of(s).is_some_and(|h| {
                        h.address == host
                            || (loopback(&host) && (loopback(&h.address) || h.name == "local"))
                    })
            })
            .collect();
        matches.sort_by_key(|s| s.role == Role::Dormant);
        matches.first().map(|s| s.name.clone())
    }

    /// Routes from a LiteLLM proxy config: `model_list[].model_name` →
    /// `litellm_params.api_base`, resolved to seats (docs.litellm.ai/docs/proxy/configs).
    pub fn import_litellm(&self, text: &str, path: &Path) -> Result<Vec<Route>, FleetError> {
        #[derive(Deserialize)]
        struct Cfg {
            #[serde(default)]
            model_list: Vec<Entry>,
        }
        #[derive(Deserialize)]
        struct Entry {
            model_name: String,
            #[serde(default)]
            litellm_params: Params,
        }
        #[derive(Deserialize, Default)]
        struct Params {
            model: Option<String>,
            api_base: Option<String>,
        }
        let cfg: Cfg = serde_yaml_ng::from_str(text).map_err(|e| FleetError::Parse {
            path: path.to_path_buf(),
            message: crate::redact::text(&format!("not a LiteLLM config: {e}")),
        })?;
        let from = path
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_else(|| "litellm".into());
        Ok(cfg
            .model_list
            .into_iter()
            .map(|e| Route {
                seat: e
                    .litellm_params
                    .api_base
                    .as_deref()
                    .and_then(|b| self.resolve_api_base(b)),
                alias: e.model_name,
                api_base: e.litellm_params.api_base,
                model: e.litellm_params.model,
                from: from.clone(),
            })
            .collect())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse() {
        assert_eq!(parse_bytes("512m").unwrap(), 512 << 20);
        assert_eq!(parse_bytes("8g").unwrap(), 8 << 30);
        assert_eq!(parse_bytes("100").unwrap(), 100);
        assert!(parse_bytes("lots").is_err());
    }
}

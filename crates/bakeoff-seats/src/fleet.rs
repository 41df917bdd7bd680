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
    #[error(
        "cannot read the fleet file {path} ({source}): check the path, or pass --fleet FILE (docs/fleet.md)"
    )]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: {message}")]
    Parse { path: PathBuf, message: String },
    #[error("{path}: {message}")]
    Invalid { path: PathBuf, message: String },
}

/// A seat name the fleet file does not declare ([`Fleet::require`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("seat {name:?} is not in {}; name one it declares: {known}", fleet.display())]
pub struct UnknownSeat {
    pub name: String,
    pub fleet: PathBuf,
    pub known: String,
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

impl Role {
    /// As the fleet file spells it (`production`, `bench`, `dormant`).
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Production => "production",
            Role::Bench => "bench",
            Role::Dormant => "dormant",
        }
    }
}

/// The engine of a seat: the one vocabulary enum (`"vllm"`, `"sglang"`, `"llama.cpp"`,
/// `"generic"` in the fleet file).
pub use bakeoff_artifact::EngineKind as Engine;

/// The longest `stop_timeout_s` a seat may ask for (an hour): a stop is a wait the operator
/// sits through, and the Docker stop request's own timeout is derived from it.
pub const MAX_STOP_TIMEOUT_S: u64 = 3600;

mod docker_host;
mod raw;
mod seat_tls;

pub use seat_tls::{SeatTls, engine_cert_flag};

pub use docker_host::{SshAddress, TlsFiles};
use raw::RawFile;

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
    /// `host`: the container shares the host's network and listens on the seat's port itself
    /// (no port publishing; for an engine without a bridge, or a fast path). Default: Docker's
    /// bridge with the port published. Left out of the JSON when unset, so existing
    /// containers keep their configuration hash.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network_mode: Option<String>,
}

impl DockerLaunch {
    pub fn memory_bytes(&self) -> Result<Option<i64>, String> {
        self.memory.as_deref().map(parse_bytes).transpose()
    }
}

fn parse_bytes(s: &str) -> Result<i64, String> {
    parse_size(s)
        .and_then(|n| i64::try_from(n).ok())
        .ok_or_else(|| format!("memory {s:?} is not a size (use bytes or 512m, 8g)"))
}

/// A size as the fleet file's `memory` takes it: bytes, or with a suffix `k`, `m`, `g` (an
/// optional `b` after it), binary multiples; `None` when it is not one, or not above 0. The
/// one reading for the fleet file and the flags that take a size.
pub fn parse_size(s: &str) -> Option<u64> {
    let t = s.trim().to_ascii_lowercase();
    let t = t.strip_suffix('b').unwrap_or(&t);
    let (num, mult) = match t.chars().last() {
        Some('k') => (&t[..t.len() - 1], 1u64 << 10),
        Some('m') => (&t[..t.len() - 1], 1 << 20),
        Some('g') => (&t[..t.len() - 1], 1 << 30),
        _ => (t, 1),
    };
    num.trim()
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(mult))
        .filter(|n| *n > 0)
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
    /// `None`: the local Docker socket. Else `unix://`, `tcp://`/`http://` or `ssh://`.
    pub docker: Option<String>,
    /// Client certificates for a `tcp://` engine with `--tlsverify`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls: Option<TlsFiles>,
    /// The ssh_config an `ssh://` host is reached with (`ssh -F`; default: the operator's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ssh_config: Option<PathBuf>,
    pub address: String,
    pub gpus: u32,
    /// The memory of each GPU in GiB, declared for the placement check (`gpu_memory_gib`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_memory_gib: Option<f64>,
    /// The nvidia-smi `plan` runs on an `ssh://` host (`nvidia_smi`; default: `nvidia-smi` on
    /// the remote PATH).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nvidia_smi: Option<String>,
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
    /// The pinned chat template (`chat_template = "path"`), resolved against the fleet file's
    /// directory and checked readable at parse (docs/fleet.md "Checks before a start").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chat_template: Option<PathBuf>,
    /// `api_key_env = "NAME"`: the variable holding the key the engine requires; bakeoff's
    /// probes of the seat (readiness, status, template checks) send it in the header. Only the
    /// name is kept, never the key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key_env: Option<String>,
    /// The seat serves HTTPS, trusted as this says (`[seat.tls]`, or the engine's own
    /// certificate flag in its arguments: [`engine_cert_flag`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls: Option<SeatTls>,
}

impl Seat {
    /// How bakeoff's clients trust this seat (the system's roots for a seat without TLS, which
    /// is never asked for them).
    pub fn tls_options(&self) -> bakeoff_client::tls::TlsOptions {
        self.tls.as_ref().map(SeatTls::options).unwrap_or_default()
    }

    /// The key of `api_key_env`, read from bakeoff's environment now; `None` when the seat
    /// names none or the variable is unset or empty (the probes then go without one, and a
    /// 401 says which variable to set).
    pub fn api_key(&self) -> Option<bakeoff_client::ApiKey> {
        let name = self.api_key_env.as_deref()?;
        std::env::var(name)
            .ok()
            .and_then(bakeoff_client::ApiKey::new)
    }

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

    /// The GPUs a seat is given: a container's `gpus`, a process's `CUDA_VISIBLE_DEVICES`
    /// (empty: none named).
    pub fn gpu_ids(&self) -> Vec<String> {
        match &self.launch {
            Launch::Docker(d) => d.gpus.clone(),
            Launch::Process(p) => p
                .env
                .get("CUDA_VISIBLE_DEVICES")
                .map(|v| {
                    v.split(',')
                        .map(|g| g.trim().to_string())
                        .filter(|g| !g.is_empty())
                        .collect()
                })
                .unwrap_or_default(),
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
    /// The gateway in front of the seats (`[gateway] url`), when the fleet names one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gateway_url: Option<String>,
    /// The environment variable holding the gateway's key (`[gateway] api_key_env`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gateway_key_env: Option<String>,
    /// How an `https://` gateway is trusted (`[gateway] ca_cert`, `[gateway] insecure`).
    #[serde(skip)]
    pub gateway_tls: bakeoff_client::tls::TlsOptions,
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

        let hosts = raw.hosts(&dir).map_err(invalid)?;
        let seats = raw.seats(&hosts).map_err(invalid)?;
        let seats = crate::checks::template_pin::resolve_pins(seats, &dir)
            .map_err(|e| invalid(e.to_string()))?;
        let seats = seat_tls::resolve(seats, &dir).map_err(invalid)?;
        let mut fleet = Fleet {
            name: raw.name(),
            path: path.to_path_buf(),
            state_dir: raw.state_dir(&dir),
            hosts,
            seats,
            routes: Vec::new(),
            gateway_url: raw.gateway_url().map_err(invalid)?,
            gateway_key_env: raw.gateway_key_env(),
            gateway_tls: raw.gateway_tls(&dir),
        };
        fleet.routes = raw.routes(&fleet).map_err(invalid)?;
        if let Some(cfg) = raw.litellm_config() {
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

    /// The seat `name`, or the one refusal every command gives for a name the fleet file does
    /// not declare (it lists the names it does).
    pub fn require(&self, name: &str) -> Result<&Seat, UnknownSeat> {
        self.seat(name).ok_or_else(|| UnknownSeat {
            name: name.to_string(),
            fleet: self.path.clone(),
            known: self
                .seats
                .iter()
                .map(|s| s.name.as_str())
                .collect::<Vec<_>>()
                .join(", "),
        })
    }

    pub fn host_of(&self, seat: &Seat) -> Option<&Host> {
        self.hosts.get(&seat.host)
    }

    /// The base URL a seat answers on (`http://ADDRESS:PORT`, `https://` for a seat that
    /// serves TLS).
    pub fn seat_url(&self, seat: &Seat) -> String {
        let addr = self
            .host_of(seat)
            .map(|h| h.address.as_str())
            .unwrap_or("127.0.0.1");
        let scheme = if seat.tls.is_some() { "https" } else { "http" };
        format!("{scheme}://{addr}:{}", seat.port)
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

/// Placeholders in a seat's command, args and env: `{port}` (the seat's port), `{seat}` (its
/// name) and `{cache}` (bakeoff's cache, where scripts/provision.sh puts the engine and model).
pub fn substitute(s: &str, seat: &Seat) -> String {
    s.replace("{port}", &seat.port.to_string())
        .replace("{seat}", &seat.name)
        .replace("{cache}", &bakeoff_local::cache_dir().display().to_string())
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

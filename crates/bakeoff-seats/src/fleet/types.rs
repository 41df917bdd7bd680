//! The checked fleet (docs/fleet.md): its hosts, seats and gateway routes, as [`super::Fleet::parse`]
//! builds them, and what every module asks of them. Parsing and validation sit above this, in
//! [`super`]; the modules that read a fleet import it from here.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::docker_host::TlsFiles;
use super::launch::Launch;
use super::seat_tls::SeatTls;

/// A seat name the fleet file does not declare ([`Fleet::require`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("seat {name:?} is not in {}; name one it declares: {known}", fleet.display())]
pub struct UnknownSeat {
    pub name: String,
    pub fleet: PathBuf,
    pub known: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
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
    /// certificate flag in its arguments: [`crate::fleet::engine_cert_flag`]).
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
}

/// Placeholders in a seat's command, args and env: `{port}` (the seat's port), `{seat}` (its
/// name) and `{cache}` (bakeoff's cache, where scripts/provision.sh puts the engine and model).
pub fn substitute(s: &str, seat: &Seat) -> String {
    s.replace("{port}", &seat.port.to_string())
        .replace("{seat}", &seat.name)
        .replace("{cache}", &bakeoff_local::cache_dir().display().to_string())
}

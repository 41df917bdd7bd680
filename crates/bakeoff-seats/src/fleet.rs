//! The fleet file (`fleet.toml`, docs/fleet.md): hosts, their GPUs, seats with a process or
//! Docker launch, and gateway aliases (`[[route]]` entries or an imported LiteLLM
//! `config.yaml`), each alias resolved to the seat that serves it.
//!
//! Parsing is raw (serde) then validated into a [`Fleet`] that only holds checked values, so a
//! command never starts half a fleet and then discovers a typo.

use std::path::{Path, PathBuf};

use serde::Deserialize;

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
    #[error("{path}: {reason}")]
    Invalid {
        path: PathBuf,
        #[source]
        reason: FleetInvalid,
    },
}

pub(crate) mod docker_host;
pub mod launch;
mod raw;
mod seat_tls;
pub mod types;

pub use docker_host::{HostInvalid, SshAddress, SshAddressError, TlsFiles};
pub use launch::{DockerLaunch, Launch, NotASize, ProcessLaunch, parse_size};
pub use raw::{FleetInvalid, SeatInvalid, file_json_schema};
pub use seat_tls::{SeatTls, SeatTlsError, engine_cert_flag};
pub use types::{
    Engine, Fleet, Host, MAX_STOP_TIMEOUT_S, Role, Route, Seat, UnknownSeat, substitute,
};

use raw::RawFile;

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
        // One line naming the key and the fix, redacted (the parser's diagram quotes the line,
        // which may hold a key).
        let raw: RawFile = toml::from_str(text).map_err(|e| FleetError::Parse {
            path: path.to_path_buf(),
            message: crate::toml_line::one_line(&e, text),
        })?;
        let invalid = |reason: FleetInvalid| FleetError::Invalid {
            path: path.to_path_buf(),
            reason,
        };
        let dir = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."))
            .to_path_buf();

        let hosts = raw.hosts(&dir).map_err(|e| invalid(e.into()))?;
        let seats = raw.seats(&hosts).map_err(invalid)?;
        let mut seats = crate::checks::template_pin::resolve_pins(seats, &dir)
            .map_err(|e| invalid(e.into()))?;
        for s in &mut seats {
            if let Some(tls) = s.tls.as_mut() {
                seat_tls::resolve(&s.name, tls, &dir).map_err(|e| invalid(e.into()))?;
            }
        }
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

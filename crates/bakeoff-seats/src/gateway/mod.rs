//! The gateway in front of the fleet (a LiteLLM proxy): [`export`] writes its `config.yaml` from
//! the fleet's seats and routes; [`probe`] asks the running gateway what it routes where
//! (`/model/info`) and sends a real completion through it for each alias, so `seat status`
//! reports one outage per seat however many aliases route to it (docs/field-cases.md F2).

pub mod export;
pub mod probe;

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum GatewayError {
    #[error(
        "{path} already exists: pass --force to replace it, or choose another --out (bakeoff never overwrites a file without being told)"
    )]
    Exists { path: PathBuf },
    #[error(
        "--out {} is a directory: it names the config file to write; fix: e.g. --out {}",
        path.display(),
        path.join("config.yaml").display()
    )]
    IsDir { path: PathBuf },
    #[error("cannot write {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "--api-key-env {name:?} is not an environment variable name: use letters, digits and _ (e.g. LLM_API_KEY)"
    )]
    KeyEnv { name: String },
    #[error("cannot render the LiteLLM config: {0}")]
    Render(String),
}

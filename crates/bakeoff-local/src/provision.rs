//! The pinned engine and test model, provisioned by the project's own script.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use crate::LocalError;

/// The script is compiled in: the binary provisions the same way from any directory. It lives
/// in this crate (`scripts/provision.sh` runs it), so the crate builds from its own files alone.
const SCRIPT: &str = include_str!("../provision.sh");

/// `$BAKEOFF_CACHE`, else `~/.cache/bakeoff`.
pub fn cache_dir() -> PathBuf {
    if let Some(c) = std::env::var_os("BAKEOFF_CACHE").filter(|c| !c.is_empty()) {
        return PathBuf::from(c);
    }
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("."));
    home.join(".cache").join("bakeoff")
}

/// Where the provisioned parts live.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocalEngine {
    pub llama_server: PathBuf,
    pub llama_bench: PathBuf,
    pub model: PathBuf,
    /// The pinned llama.cpp build number.
    pub build: &'static str,
}

impl LocalEngine {
    pub fn in_cache(cache: &Path) -> Self {
        let engine = cache.join("llama.cpp-b11434");
        Self {
            llama_server: engine.join("bin").join("llama-server"),
            llama_bench: engine.join("bin").join("llama-bench"),
            model: cache.join("models").join("gemma-3-270m-q4_k_m.gguf"),
            build: "b11434",
        }
    }

    pub fn is_present(&self) -> bool {
        self.llama_server.is_file()
            && self.model.is_file()
            && self
                .llama_server
                .parent()
                .and_then(Path::parent)
                .is_some_and(|d| d.join("BUILD_OK").is_file())
    }
}

/// Provision (a no-op when cached). Progress goes to stderr, as the script prints it.
pub async fn provision(cache: &Path) -> Result<LocalEngine, LocalError> {
    let engine = LocalEngine::in_cache(cache);
    if engine.is_present() {
        return Ok(engine);
    }
    let script = tempfile::Builder::new()
        .prefix("bakeoff-provision-")
        .suffix(".sh")
        .tempfile()
        .map_err(|e| LocalError::Provision(format!("cannot write the provisioning script: {e}")))?;
    std::fs::write(script.path(), SCRIPT)
        .map_err(|e| LocalError::Provision(format!("cannot write the provisioning script: {e}")))?;
    let status = tokio::process::Command::new("bash")
        .arg(script.path())
        .arg("all")
        .env("BAKEOFF_CACHE", cache)
        .stdin(Stdio::null())
        .stdout(Stdio::inherit())
        .stderr(Stdio::inherit())
        .status()
        .await
        .map_err(|e| LocalError::Provision(format!("cannot run bash: {e}")))?;
    if !status.success() || !engine.is_present() {
        return Err(LocalError::Provision(format!(
            "provisioning failed ({status}); rerun scripts/provision.sh to see why"
        )));
    }
    Ok(engine)
}

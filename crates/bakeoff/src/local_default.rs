//! The embedded default: no `--endpoint` means "provision the pinned llama.cpp build and the
//! test model, start a local llama-server on a free loopback port, measure it, stop it".

use std::path::Path;
use std::time::Duration;

use bakeoff_seats::{LlamaServer, LlamaServerSpec, cache_dir, provision};

use crate::exit::{CliError, failed};

/// The served id of the test model (`--alias`), so slugs do not carry a cache path.
pub const ALIAS: &str = "gemma-3-270m-q4_k_m";

pub struct LocalServer {
    pub server: LlamaServer,
    pub hardware: String,
    pub note: String,
}

pub async fn start(out: &Path, ctx: u32, parallel: u32) -> Result<LocalServer, CliError> {
    let cache = cache_dir();
    eprintln!(
        "[bakeoff] embedded default: provisioning under {}",
        cache.display()
    );
    let engine = provision(&cache).await.map_err(failed)?;
    let spec = LlamaServerSpec {
        bin: engine.llama_server.clone(),
        model: engine.model.clone(),
        ctx,
        parallel,
        alias: Some(ALIAS.to_string()),
        extra_args: vec![],
        log: out.join("local-llama-server.log"),
    };
    let mut server = LlamaServer::start(&spec).await.map_err(failed)?;
    eprintln!(
        "[bakeoff] started llama-server {} (pid {}) on {} (-c {ctx} -np {parallel}); log {}",
        engine.build,
        server.pid().unwrap_or(0),
        server.url(),
        spec.log.display()
    );
    server
        .wait_healthy(Duration::from_secs(120))
        .await
        .map_err(failed)?;
    let cores = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    Ok(LocalServer {
        server,
        hardware: format!("local CPU ({cores} threads available), llama.cpp CPU build"),
        note: format!(
            "embedded default: llama.cpp {} CPU, -c {ctx} -np {parallel}, test model {ALIAS}",
            engine.build
        ),
    })
}

/// The endpoint to measure: the one given, or a freshly started embedded default. Stop the
/// returned server with [`stop`] once the measurement is written.
pub async fn endpoint_or_start(
    endpoint: Option<&str>,
    out: &Path,
    ctx: u32,
    parallel: u32,
) -> Result<(String, Option<LocalServer>), CliError> {
    match endpoint {
        Some(e) => Ok((e.to_string(), None)),
        None => {
            let l = start(out, ctx, parallel).await?;
            Ok((l.server.url(), Some(l)))
        }
    }
}

/// Stop the embedded default, when one was started.
pub async fn stop(local: Option<LocalServer>) {
    if let Some(l) = local {
        l.server.stop().await;
        eprintln!("[bakeoff] stopped the local llama-server");
    }
}

//! The embedded default: no `--endpoint` means "provision the pinned llama.cpp build and the
//! test model, start a local llama-server on a free loopback port, measure it, stop it".

use std::io::Write as _;
use std::path::Path;
use std::time::Duration;

use crate::{LlamaServer, LlamaServerSpec, LocalError, cache_dir, provision};

/// The embedded default's llama-server `-c` and `-np` (`--local-ctx`, `--local-parallel`).
#[derive(Debug, Clone, Copy)]
pub struct Embedded {
    pub ctx: u32,
    pub parallel: u32,
}

/// The served id of the test model (`--alias`), so slugs do not carry a cache path.
pub const ALIAS: &str = "gemma-3-270m-q4_k_m";

/// The embedded default, started: the server, and what a run records about it.
pub struct LocalServer {
    pub server: LlamaServer,
    pub hardware: String,
    pub note: String,
}

/// Provision and start the embedded default, its log under `out`; its steps are told on
/// stderr.
pub async fn start(out: &Path, ctx: u32, parallel: u32) -> Result<LocalServer, LocalError> {
    let cache = cache_dir();
    say(format_args!(
        "[bakeoff] embedded default: provisioning under {}",
        cache.display()
    ));
    let engine = provision(&cache).await?;
    let spec = LlamaServerSpec {
        bin: engine.llama_server.clone(),
        model: engine.model.clone(),
        ctx,
        parallel,
        alias: Some(ALIAS.to_string()),
        extra_args: vec![],
        log: out.join("local-llama-server.log"),
    };
    let mut server = LlamaServer::start(&spec).await?;
    say(format_args!(
        "[bakeoff] started llama-server {} (pid {}) on {} (-c {ctx} -np {parallel}); log {}",
        engine.build,
        server.pid().unwrap_or(0),
        server.url(),
        spec.log.display()
    ));
    server.wait_healthy(Duration::from_secs(120)).await?;
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

/// The embedded default, started unless an endpoint was given. Stop the returned server with
/// [`stop`] once the measurement is written.
pub async fn start_unless(
    endpoint: Option<&bakeoff_client::EndpointUrl>,
    out: &Path,
    local: Embedded,
) -> Result<Option<LocalServer>, LocalError> {
    match endpoint {
        Some(_) => Ok(None),
        None => start(out, local.ctx, local.parallel).await.map(Some),
    }
}

/// Stop the embedded default, when one was started.
pub async fn stop(local: Option<LocalServer>) {
    if let Some(l) = local {
        l.server.stop().await;
        say(format_args!("[bakeoff] stopped the local llama-server"));
    }
}

/// One line on stderr; never `eprintln!`, which panics when stderr is closed.
fn say(line: std::fmt::Arguments<'_>) {
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}

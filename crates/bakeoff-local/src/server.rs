//! A local `llama-server` process: started on a free loopback port, its output kept in a log
//! file, stopped (SIGKILL via `kill_on_drop`) whenever its handle is dropped — a test that
//! panics or an operator's Ctrl-C never leaves a server behind.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

use bakeoff_client::{Client, ClientOptions, EndpointUrl, Method};

#[derive(Debug, thiserror::Error)]
pub enum LocalError {
    #[error("{0}")]
    Provision(String),
    #[error("cannot start {bin}: {source}")]
    Spawn {
        bin: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot open log file {path}: {source}")]
    Log {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("no free loopback port: {0}")]
    Port(std::io::Error),
    #[error("llama-server exited with {status} before it was healthy; last log lines:\n{tail}")]
    Exited { status: String, tail: String },
    #[error("llama-server not healthy within {}; last log lines:\n{tail}", bakeoff_client::seconds(*.after))]
    NotHealthy { after: Duration, tail: String },
}

#[derive(Debug, Clone)]
pub struct LlamaServerSpec {
    pub bin: PathBuf,
    pub model: PathBuf,
    /// `-c`: total context, split across `parallel` slots unless the KV cache is unified.
    pub ctx: u32,
    /// `-np`.
    pub parallel: u32,
    /// `--alias`: the served model id (otherwise llama.cpp uses the file path).
    pub alias: Option<String>,
    pub extra_args: Vec<String>,
    pub log: PathBuf,
}

pub struct LlamaServer {
    child: tokio::process::Child,
    port: u16,
    log: PathBuf,
}

impl LlamaServer {
    /// Start it. The port is found by binding `127.0.0.1:0` and releasing it just before the
    /// server binds; a lost race shows up as `Exited` with llama.cpp's bind error in the tail.
    pub async fn start(spec: &LlamaServerSpec) -> Result<Self, LocalError> {
        let port = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").map_err(LocalError::Port)?;
            l.local_addr().map_err(LocalError::Port)?.port()
        };
        if let Some(dir) = spec.log.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        let log_file = std::fs::File::create(&spec.log).map_err(|source| LocalError::Log {
            path: spec.log.clone(),
            source,
        })?;
        let log_err = log_file.try_clone().map_err(|source| LocalError::Log {
            path: spec.log.clone(),
            source,
        })?;
        let mut cmd = tokio::process::Command::new(&spec.bin);
        cmd.arg("-m")
            .arg(&spec.model)
            .args([
                "-c",
                &spec.ctx.to_string(),
                "-np",
                &spec.parallel.to_string(),
            ])
            .args(["--host", "127.0.0.1", "--port", &port.to_string()])
            .args(["--metrics"]);
        if let Some(a) = &spec.alias {
            cmd.args(["--alias", a]);
        }
        cmd.args(&spec.extra_args)
            .stdin(Stdio::null())
            .stdout(Stdio::from(log_file))
            .stderr(Stdio::from(log_err))
            .kill_on_drop(true);
        let child = cmd.spawn().map_err(|source| LocalError::Spawn {
            bin: spec.bin.clone(),
            source,
        })?;
        Ok(Self {
            child,
            port,
            log: spec.log.clone(),
        })
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    pub fn log_path(&self) -> &PathBuf {
        &self.log
    }

    pub fn pid(&self) -> Option<u32> {
        self.child.id()
    }

    /// Wait until `/health` says 200 — the *process* is up. Whether it can serve is the
    /// preflight's real completion, not this.
    pub async fn wait_healthy(&mut self, limit: Duration) -> Result<(), LocalError> {
        let url =
            EndpointUrl::parse(&self.url()).map_err(|e| LocalError::Provision(e.to_string()))?;
        let client = Client::new(url.clone(), ClientOptions::default());
        let deadline = Instant::now() + limit;
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(LocalError::Exited {
                    status: status.to_string(),
                    tail: self.log_tail(20),
                });
            }
            if let Ok((200, _)) = client
                .control(
                    Method::Get,
                    url.root_path("health"),
                    None,
                    Duration::from_secs(2),
                )
                .await
            {
                return Ok(());
            }
            if Instant::now() >= deadline {
                return Err(LocalError::NotHealthy {
                    after: limit,
                    tail: self.log_tail(20),
                });
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    /// The last `n` lines of the server's log.
    pub fn log_tail(&self, n: usize) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(n)..].join("\n")
    }

    /// Stop it and wait for it to be gone.
    pub async fn stop(mut self) {
        let _ = self.child.start_kill();
        let _ = tokio::time::timeout(Duration::from_secs(10), self.child.wait()).await;
    }

    /// Kill it without consuming the handle (tests use this to kill a server mid-run).
    pub fn kill_now(&mut self) {
        let _ = self.child.start_kill();
    }
}

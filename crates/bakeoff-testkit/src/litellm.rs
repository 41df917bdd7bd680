//! The real LiteLLM proxy (`litellm[proxy]` from PyPI, installed by `scripts/install-litellm.sh`
//! into `$BAKEOFF_CACHE/litellm-<version>/`), started on a loopback port with a config file.
//! It never skips: a missing install fails the test with the fix.
//!
//! The proxy runs offline (this machine reaches package registries only): no telemetry, the cost
//! map from the installed package instead of GitHub (`LITELLM_LOCAL_MODEL_COST_MAP`), offline
//! mode where the version knows it (docs.litellm.ai/docs/proxy/outbound_requests), no database.
//! It refuses to start without a master key, so each proxy gets a fresh one ([`Proxy::key`]).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Keep in step with `LITELLM_VERSION` in scripts/install-litellm.sh.
pub const LITELLM_VERSION: &str = "1.106.12";

/// LiteLLM imports slowly (a few hundred modules): the first answer can take half a minute.
const START_LIMIT: Duration = Duration::from_secs(90);

/// Write a proxy config at `path` whose `model_list` routes each `(model_name, server URL)` to
/// that OpenAI-compatible server; one name given twice is two deployments, which LiteLLM's
/// default routing (simple-shuffle) picks between at random per request.
pub fn write_config(path: &Path, deployments: &[(&str, &str)]) {
    let mut text = String::from("model_list:\n");
    for (name, url) in deployments {
        text.push_str(&format!(
            "  - model_name: {name}\n    litellm_params:\n      model: openai/gemma\n      api_base: {url}/v1\n      api_key: none\n"
        ));
    }
    if let Err(e) = std::fs::write(path, text) {
        panic!("cannot write the LiteLLM config {}: {e}", path.display());
    }
}

/// The installed `litellm` executable (`BAKEOFF_LITELLM` overrides); panics with the fix.
pub fn executable() -> PathBuf {
    let p = std::env::var_os("BAKEOFF_LITELLM").map_or_else(
        || {
            bakeoff_local::cache_dir()
                .join(format!("litellm-{LITELLM_VERSION}"))
                .join("bin/litellm")
        },
        PathBuf::from,
    );
    assert!(
        p.is_file(),
        "the LiteLLM proxy is not installed at {}: run scripts/install-litellm.sh \
         (scripts/install-test-deps.sh runs it)",
        p.display()
    );
    p
}

/// A running proxy; its process group is killed on drop.
pub struct Proxy {
    child: Child,
    /// `http://127.0.0.1:PORT`.
    pub url: String,
    pub port: u16,
    /// The master key clients send as `Authorization: Bearer …`. A test value, made per proxy.
    pub key: String,
    pub log: PathBuf,
}

fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind a free port");
    l.local_addr().expect("local addr").port()
}

/// `GET path` on loopback: the status code, if anything answered in time.
fn get_status(port: u16, path: &str) -> Option<u16> {
    let addr = std::net::SocketAddr::from(([127, 0, 0, 1], port));
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(1)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    s.set_write_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut head = [0u8; 32];
    let n = s.read(&mut head).ok()?;
    let line = String::from_utf8_lossy(&head[..n]).into_owned();
    line.split_whitespace().nth(1)?.parse().ok()
}

impl Proxy {
    /// Start `litellm --config CONFIG` on a free loopback port and wait (bounded) until it
    /// answers `/health/liveliness`. Its output goes to `log_dir/litellm-PORT.log`.
    pub async fn start(config: &Path, log_dir: &Path) -> Proxy {
        let exe = executable();
        let port = free_port();
        let log = log_dir.join(format!("litellm-{port}.log"));
        let out = std::fs::File::create(&log).expect("create the proxy log");
        let err = out.try_clone().expect("clone the log handle");
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let key = format!("sk-bakeoff-test-{}-{nanos}", std::process::id());
        let mut cmd = Command::new(&exe);
        cmd.arg("--config")
            .arg(config)
            .args(["--port", &port.to_string(), "--host", "127.0.0.1"])
            .env("LITELLM_MASTER_KEY", &key)
            .env("LITELLM_TELEMETRY", "False")
            .env("LITELLM_LOCAL_MODEL_COST_MAP", "True")
            .env("LITELLM_OFFLINE_MODE", "true")
            // What the exported config says must be enough: no key or proxy from the shell.
            .env_remove("OPENAI_API_KEY")
            .env_remove("DATABASE_URL")
            .env_remove("HTTP_PROXY")
            .env_remove("HTTPS_PROXY")
            .env_remove("ALL_PROXY")
            .env_remove("http_proxy")
            .env_remove("https_proxy")
            .env_remove("all_proxy")
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err);
        // Its own process group: uvicorn workers die with it.
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        let child = cmd.spawn().expect("spawn litellm");
        let mut proxy = Proxy {
            child,
            url: format!("http://127.0.0.1:{port}"),
            port,
            key,
            log,
        };
        let t0 = Instant::now();
        loop {
            if let Ok(Some(status)) = proxy.child.try_wait() {
                panic!(
                    "the LiteLLM proxy exited ({status}) before answering:\n{}",
                    proxy.log_tail()
                );
            }
            if get_status(port, "/health/liveliness") == Some(200) {
                return proxy;
            }
            assert!(
                t0.elapsed() < START_LIMIT,
                "the LiteLLM proxy did not answer within {START_LIMIT:?}:\n{}",
                proxy.log_tail()
            );
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    }

    /// The last lines of the proxy's output, for assertion messages.
    pub fn log_tail(&self) -> String {
        let t = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = t.lines().collect();
        lines[lines.len().saturating_sub(40)..].join("\n")
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-KILL", "--", &format!("-{}", self.child.id())])
            .status();
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

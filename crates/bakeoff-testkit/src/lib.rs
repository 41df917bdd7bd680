//! Test support. Real parts first: [`real_llama`] starts the real, provisioned `llama-server`
//! with the real test model. It never skips: when the engine is missing the test fails and says
//! how to provision it (`scripts/provision.sh`), because a skipped engine test is a test that
//! measured nothing.
//!
//! [`scripted`] holds in-process servers for behaviour the small model cannot show; each
//! fixture names the real engine behaviour it copies and where that is documented.
#![allow(clippy::unwrap_used, clippy::expect_used)]

pub mod fleet;
pub mod json;
pub mod litellm;
pub mod screen;
pub mod scripted;
pub mod vllm;
pub mod vllm_lora;

use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::Duration;

use bakeoff_local::{LlamaServer, LlamaServerSpec, LocalEngine, cache_dir};
use tokio::sync::{Mutex, MutexGuard};

/// The provisioned engine and model; panics with the fix when they are missing.
pub fn engine() -> LocalEngine {
    let e = LocalEngine::in_cache(&cache_dir());
    assert!(
        e.is_present(),
        "the real llama-server and test model are not provisioned under {}: run scripts/provision.sh \
         (the README's test command does this first)",
        cache_dir().display()
    );
    e
}

/// Engine tests in one test binary run one at a time: the machine has 2 cores and the
/// measurements should not fight each other.
pub async fn serial() -> Serial {
    serial_as("llama").await
}

/// [`serial`], its time recorded under `what` (`llama`, `vllm`, …). The one lock serves the
/// llama.cpp tests and the vLLM tier alike: on 2 cores a vLLM beside a llama-server slows both
/// several times over (measured: the tier finished no test in 18 min beside the llama tests),
/// while one at a time each runs at its own speed.
pub async fn serial_as(what: &'static str) -> Serial {
    static LOCK: OnceLock<Mutex<()>> = OnceLock::new();
    let guard = LOCK.get_or_init(|| Mutex::new(())).lock().await;
    Serial {
        _guard: guard,
        _timer: Timer::start(what),
    }
}

/// The engine lock, held. When it is let go, the seconds it was held are recorded ([`Timer`]).
pub struct Serial {
    _guard: MutexGuard<'static, ()>,
    _timer: Timer,
}

/// Seconds a test held an engine (a lock or a shared server), appended when dropped to the file
/// `BAKEOFF_TEST_TIMES` names (when set) as "seconds\tengine\ttest": `scripts/test` prints
/// the slowest at the end, because CI keeps only the tail of a run's output.
pub struct Timer {
    what: &'static str,
    since: std::time::Instant,
}

impl Timer {
    pub fn start(what: &'static str) -> Timer {
        Timer {
            what,
            since: std::time::Instant::now(),
        }
    }
}

impl Drop for Timer {
    fn drop(&mut self) {
        let Some(path) = std::env::var_os("BAKEOFF_TEST_TIMES") else {
            return;
        };
        let name = std::thread::current()
            .name()
            .unwrap_or("unnamed")
            .to_owned();
        let line = format!(
            "{:.1}\t{}\t{name}\n",
            self.since.elapsed().as_secs_f64(),
            self.what
        );
        // One short write with O_APPEND: lines from several test binaries never interleave.
        if let Ok(mut f) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
        {
            use std::io::Write;
            let _ = f.write_all(line.as_bytes());
        }
    }
}

/// A temporary directory that lives as long as the test.
pub fn tempdir() -> tempfile::TempDir {
    tempfile::tempdir().expect("tempdir")
}

/// Start the real llama-server (`-c ctx -np parallel` plus `extra`) and wait for `/health`.
/// The server is killed when the handle drops.
pub async fn real_llama(
    ctx: u32,
    parallel: u32,
    extra: &[&str],
    log_dir: &std::path::Path,
) -> LlamaServer {
    let e = engine();
    let spec = LlamaServerSpec {
        bin: e.llama_server.clone(),
        model: e.model.clone(),
        ctx,
        parallel,
        alias: Some("gemma-3-270m-q4_k_m".into()),
        extra_args: extra.iter().map(|s| s.to_string()).collect(),
        log: log_dir.join(format!("llama-server-{ctx}-{parallel}.log")),
    };
    let mut s = LlamaServer::start(&spec).await.expect("start llama-server");
    s.wait_healthy(Duration::from_secs(120))
        .await
        .expect("llama-server healthy");
    s
}

/// The `bakeoff` binary built by cargo for integration tests of the crate that owns it.
pub fn model_path() -> PathBuf {
    engine().model
}

/// The second real model: SmolLM2 135M Instruct (Q4_1), whose GGUF carries a ChatML template
/// (the template-pin tests serve Gemma with it). Panics with the fix when not provisioned.
pub fn smollm2_path() -> PathBuf {
    let p = cache_dir().join("models/SmolLM2-135M-Instruct.Q4_1.gguf");
    assert!(
        p.is_file(),
        "the SmolLM2 test model is not provisioned at {}: run scripts/provision.sh smollm2",
        p.display()
    );
    p
}

/// The real test LoRA adapter for the Gemma 3 270M test model: a GGUF written by
/// `scripts/make-test-lora.py` with the pinned `gguf` package (scripts/make-test-lora.sh,
/// which `scripts/install-test-deps.sh` runs; cached). Panics with the fix when it is missing.
pub fn test_lora_path() -> PathBuf {
    let p = cache_dir().join("models/gemma-3-270m-test-lora-v1.gguf");
    assert!(
        p.is_file(),
        "the test LoRA adapter is not at {}: run scripts/make-test-lora.sh \
         (scripts/install-test-deps.sh runs it)",
        p.display()
    );
    p
}

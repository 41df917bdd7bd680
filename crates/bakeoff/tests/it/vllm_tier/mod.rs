//! The vLLM tier: every vLLM path of bakeoff checked against a real vLLM (vLLM's CPU build from
//! PyPI serving SmolLM2-135M-Instruct, `bakeoff_testkit::vllm`; docs/engines.md). Run alone with
//! `cargo test -p bakeoff --test it vllm_tier::`; `scripts/test` runs it where the machine can
//! and says in its last lines when it cannot.
//!
//! Most tests share one server (`bakeoff_testkit::vllm::shared`: LoRA adapters and tool calling
//! on); the seat and watchdog tests start their own through bakeoff itself, one at a time.

mod adapter;
mod bench;
mod campaign;
mod damage;
mod discovery;
mod kv;
mod seats;
mod spec;
mod structured;
mod tools;

use std::path::Path;

use serde_json::Value;

/// `bakeoff ARGS…` off the async runtime, with its exit code, stdout and stderr.
pub async fn run(args: &[&str]) -> (i32, String, String) {
    let o = crate::util::bakeoff_async(args).await;
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// The one artifact of `suffix` in `dir`, parsed.
pub fn only(dir: &Path, suffix: &str) -> Value {
    crate::util::read_json(&crate::util::only_file(dir, suffix))
}

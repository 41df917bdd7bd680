//! A command of the engine checks (the engine's own Python, the `docker` CLI) run to its end
//! within a time limit. A leaf: the registry probes ([`super`]) and the image's files
//! ([`super::image`]) both run commands through it.

use std::time::Duration;

/// Run `cmd` to its end, killing it after `limit`; its stdout, or why it failed.
pub(super) fn run_with_timeout(
    mut cmd: std::process::Command,
    limit: Duration,
) -> Result<String, String> {
    let out = bakeoff_gpu::bounded::run_bounded(&mut cmd, limit).map_err(|e| e.to_string())?;
    if out.status.success() {
        return Ok(out.stdout);
    }
    let last = out
        .stderr
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("");
    Err(format!(
        "exited with {}: {}",
        out.status,
        last.chars().take(200).collect::<String>()
    ))
}

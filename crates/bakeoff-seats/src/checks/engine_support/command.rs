//! A command of the engine checks (the engine's own Python, the `docker` CLI) run to its end
//! within a time limit. A leaf: the registry probes ([`super`]) and the image's files
//! ([`super::image`]) both run commands through it.

use std::process::ExitStatus;
use std::time::Duration;

use bakeoff_host::bounded::BoundedError;

/// Why a command gave no output: it could not run or overran, or it failed.
#[derive(Debug, thiserror::Error)]
pub enum CommandError {
    #[error(transparent)]
    Run(#[from] BoundedError),
    /// `last`: the last non-empty line of its standard error, at most 200 characters.
    #[error("exited with {status}: {last}")]
    Exited { status: ExitStatus, last: String },
}

/// Run `cmd` to its end, killing it after `limit`; its stdout, or why it failed.
pub(super) fn run_with_timeout(
    mut cmd: std::process::Command,
    limit: Duration,
) -> Result<String, CommandError> {
    let out = bakeoff_host::bounded::run_bounded(&mut cmd, limit)?;
    if out.status.success() {
        return Ok(out.stdout);
    }
    let last = out
        .stderr
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("");
    Err(CommandError::Exited {
        status: out.status,
        last: last.chars().take(200).collect(),
    })
}

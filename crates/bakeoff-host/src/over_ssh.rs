//! GPU readings of another host, through the channel its Docker engine is reached by: one
//! `ssh` call that runs nvidia-smi's two queries (GPUs, then compute processes, separated by
//! a marker line so one round trip carries both), parsed by the same CSV parser as on this
//! machine. The `ssh` command itself is built by the caller (bakeoff-seats owns the host's
//! ssh options); this module runs it with a timeout and reads what came back.
//!
//! [`read_over`] blocks for up to [`SSH_READ_TIMEOUT`]: async callers run it through
//! `tokio::task::spawn_blocking`.

use std::process::Command;
use std::time::Duration;

use crate::bounded::{BoundedError, run_bounded};
use crate::nvidia_smi::{QUERY_APPS, QUERY_GPU, join, parse_compute_apps, parse_query_gpu};
use crate::readings::{ReadingSource, Readings};

/// The whole ssh round trip (connect, login, two nvidia-smi runs): ssh's own `ConnectTimeout`
/// bounds only the TCP connect, so a host that accepts and then hangs is cut here.
pub const SSH_READ_TIMEOUT: Duration = Duration::from_secs(20);

/// The line between the two queries' outputs (no CSV line of nvidia-smi can look like it).
pub const MARKER: &str = "bakeoff-compute-apps-follow";

/// `s` as one word for a POSIX shell (ssh hands the remote command to the login shell).
fn sh_quote(s: &str) -> String {
    if !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/._-+:@".contains(&b))
    {
        s.to_owned()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// The remote command line: both queries, the marker between them; `&&` so a missing
/// nvidia-smi stops at once with the shell's reason on stderr.
pub fn remote_command(bin: &str) -> String {
    let b = sh_quote(bin);
    format!(
        "{b} --query-gpu={QUERY_GPU} --format=csv,noheader,nounits && echo {MARKER} && {b} --query-compute-apps={QUERY_APPS} --format=csv,noheader,nounits"
    )
}

/// The reason to show for a failed run: ssh's (or the remote shell's) last stderr line, else
/// the first line nvidia-smi printed (it reports a driver failure on stdout).
fn reason(stderr: &str, stdout: &str, status: &str) -> String {
    stderr
        .lines()
        .map(str::trim)
        .rfind(|l| !l.is_empty())
        .or_else(|| {
            stdout
                .lines()
                .map(str::trim)
                .find(|l| !l.is_empty() && *l != MARKER)
        })
        .map(str::to_owned)
        .unwrap_or_else(|| format!("exited with {status}"))
}

/// Reads what the remote command printed. `failed`: why it exited non-zero, when it did.
pub fn parse_output(stdout: &str, failed: Option<String>, label: &str) -> Readings {
    let (gpu_text, apps_text) = match stdout.split_once(MARKER) {
        Some((g, a)) => (g, Some(a)),
        None => (stdout, None),
    };
    let (gpus, bad) = parse_query_gpu(gpu_text);
    if gpus.is_empty() {
        let why = match (&failed, bad.is_empty()) {
            (Some(f), _) => f.clone(),
            (None, true) => "nvidia-smi listed no GPU".to_owned(),
            (None, false) => format!("nvidia-smi output did not parse: {}", bad.join("; ")),
        };
        return Readings::unavailable(
            ReadingSource::NvidiaSmi,
            format!("{label} unavailable: {why}; claims only for this host"),
        );
    }
    match (apps_text, failed) {
        (Some(a), None) => Readings {
            source: ReadingSource::NvidiaSmi,
            gpus: join(gpus, parse_compute_apps(a).0),
            unavailable: None,
        },
        (_, f) => Readings {
            source: ReadingSource::NvidiaSmi,
            gpus,
            unavailable: Some(format!(
                "GPUs read, but not their processes: {}",
                f.unwrap_or_else(|| "no process list came back".into())
            )),
        },
    }
}

/// Runs `cmd` (an `ssh … HOST <remote_command>`) for at most [`SSH_READ_TIMEOUT`], killing
/// it then, and reads the GPUs it printed. `label` names the channel in every message.
pub fn read_over(mut cmd: Command, label: &str) -> Readings {
    let unavailable = |why: String| {
        Readings::unavailable(
            ReadingSource::NvidiaSmi,
            format!("{label} unavailable: {why}; claims only for this host"),
        )
    };
    let out = match run_bounded(&mut cmd, SSH_READ_TIMEOUT) {
        Ok(o) => o,
        Err(BoundedError::Spawn { source, .. }) => {
            return unavailable(format!("cannot run ssh ({source}); install openssh-client"));
        }
        Err(BoundedError::Timeout { limit, .. }) => {
            return unavailable(format!("no answer in {} s (ssh killed)", limit.as_secs()));
        }
        Err(e) => return unavailable(e.to_string()),
    };
    let (status, stdout, stderr) = (out.status, out.stdout, out.stderr);
    let failed = (!status.success()).then(|| reason(&stderr, &stdout, &status.to_string()));
    parse_output(&stdout, failed, label)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_binary_path_is_quoted_for_the_remote_shell() {
        assert!(remote_command("nvidia-smi").starts_with("nvidia-smi --query-gpu="));
        assert!(remote_command("/opt/my smi").starts_with("'/opt/my smi' --query-gpu="));
        assert_eq!(sh_quote("a'b"), r"'a'\''b'");
    }

    #[test]
    fn both_tables_come_back_in_one_output() {
        let out = format!(
            "0, GPU-a, NVIDIA H200, 143771, 1625, 142146\n{MARKER}\nGPU-a, 5159, 1616, llama-server\n"
        );
        let r = parse_output(&out, None, "nvidia-smi over ssh ops@gpu2");
        assert!(r.unavailable.is_none(), "{r:?}");
        assert_eq!(r.gpus.len(), 1);
        assert_eq!(r.gpus[0].processes[0].pid, 5159);
    }

    #[test]
    fn a_failure_says_why_in_one_line() {
        let r = parse_output(
            "",
            Some(reason(
                "Warning: x\nbash: line 1: nvidia-smi: command not found\n",
                "",
                "exit status: 127",
            )),
            "nvidia-smi over ssh ops@gpu2",
        );
        let why = r.unavailable.unwrap_or_default();
        assert_eq!(
            why,
            "nvidia-smi over ssh ops@gpu2 unavailable: bash: line 1: nvidia-smi: command not found; claims only for this host"
        );
        let na = parse_output("[N/A], [N/A], [N/A], [N/A], [N/A], [N/A]\n", None, "x");
        assert!(na.gpus.is_empty());
        assert!(na.unavailable.unwrap_or_default().contains("did not parse"));
    }
}

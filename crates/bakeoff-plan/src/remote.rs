//! GPU readings of another host, through the channel its Docker engine is reached by: one
//! `ssh` call that runs nvidia-smi's two queries (GPUs, then compute processes, separated by
//! a marker line so one round trip carries both), parsed by the same CSV parser as on this
//! machine. The `ssh` command itself is built by the caller (bakeoff-seats owns the host's
//! ssh options); this module runs it with a timeout and reads what came back.
//!
//! Every reading is labelled with where it came from (`nvidia-smi over ssh ops@gpu2`), and a
//! host whose nvidia-smi cannot be reached says why in one line and is planned by claims.

use std::collections::BTreeMap;
use std::process::Command;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::gpu::{ReadingSource, Readings};
use crate::nvidia_smi::{QUERY_APPS, QUERY_GPU, join, parse_compute_apps, parse_query_gpu};

/// The whole ssh round trip (connect, login, two nvidia-smi runs): ssh's own `ConnectTimeout`
/// bounds only the TCP connect, so a host that accepts and then hangs is cut here.
pub const SSH_READ_TIMEOUT: Duration = Duration::from_secs(20);

/// The line between the two queries' outputs (no CSV line of nvidia-smi can look like it).
pub const MARKER: &str = "bakeoff-compute-apps-follow";

/// What one host's GPUs read, and how its processes map to seats.
#[derive(Serialize, Deserialize, schemars::JsonSchema, Debug, Clone, PartialEq)]
pub struct HostReadings {
    pub host: String,
    /// Where the figures come from: `nvidia-smi over ssh USER@HOST`, or the channel that has
    /// none (`tcp://`).
    pub source: String,
    pub readings: Readings,
    /// Host PIDs of each seat container's processes on that host (`docker top`), by container
    /// name: how the GPU processes there are mapped to seats.
    pub container_pids: BTreeMap<String, Vec<u32>>,
    /// What could not be read besides the GPUs (a container's PIDs), one line each.
    pub notes: Vec<String>,
}

impl HostReadings {
    /// A host with no shell channel to read GPUs through (`tcp://`, TLS): claims only.
    pub fn not_over(host: &str, scheme: &str) -> Self {
        Self {
            host: host.to_owned(),
            source: format!("none ({scheme}://)"),
            readings: Readings::unavailable(
                ReadingSource::NvidiaSmi,
                format!("not available over {scheme}:// (claims only)"),
            ),
            container_pids: BTreeMap::new(),
            notes: Vec::new(),
        }
    }

    /// The one line the plan prints for this host.
    pub fn summary(&self) -> String {
        let n = self.readings.gpus.len();
        match (&self.readings.unavailable, n) {
            (Some(why), 0) => format!("GPU readings on {}: {why}", self.host),
            (Some(why), _) => format!(
                "GPU readings on {}: {} ({n} GPU{}); {why}",
                self.host,
                self.source,
                if n == 1 { "" } else { "s" }
            ),
            (None, _) => format!(
                "GPU readings on {}: {} ({n} GPU{})",
                self.host,
                self.source,
                if n == 1 { "" } else { "s" }
            ),
        }
    }

    /// The container (by name) whose processes include host PID `pid`.
    pub fn container_of(&self, pid: u32) -> Option<&str> {
        self.container_pids
            .iter()
            .find(|(_, pids)| pids.contains(&pid))
            .map(|(name, _)| name.as_str())
    }
}

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
    let out = match crate::bounded::run_bounded(&mut cmd, SSH_READ_TIMEOUT) {
        Ok(o) => o,
        Err(crate::bounded::BoundedError::Spawn { source, .. }) => {
            return unavailable(format!("cannot run ssh ({source}); install openssh-client"));
        }
        Err(crate::bounded::BoundedError::Timeout { limit, .. }) => {
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

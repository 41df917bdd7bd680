//! The Docker side of a stop's checks: the container as a stop sees it, and its processes on
//! this host. The Docker backend signals; this only reads.

use std::time::Duration;

use super::{ProcRoot, ProcStat};

/// How long the kill, the forced removal and the processes' exit may each take before what is
/// left counts as a zombie loader.
pub const STOP_VERIFY_WAIT: Duration = Duration::from_secs(10);

/// A container as a stop sees it.
#[derive(Debug, Clone)]
pub struct ContainerSeen {
    /// The full id (64 hex), or the name when the engine did not answer.
    pub id: String,
    /// Running, restarting, or being removed: its processes may still live.
    pub running: bool,
    pub status: String,
    /// The host pid of its first process (`State.Pid`).
    pub pid: Option<u32>,
    pub exit_code: Option<i64>,
    pub oom_killed: bool,
}

/// The container's processes on this host: `State.Pid` and its descendants, only when that pid
/// really is in the container's cgroup (a pid read from a daemon in a VM means nothing here).
pub fn container_procs(proc: &ProcRoot, c: &ContainerSeen) -> Vec<ProcStat> {
    match c.pid {
        Some(pid) if proc.container_of(pid).as_deref() == Some(c.id.as_str()) => {
            proc.with_descendants(pid)
        }
        _ => Vec::new(),
    }
}

/// Poll until none of `procs` (pid and start time) is alive, at most `within`; those left.
pub async fn wait_procs_gone(
    proc: &ProcRoot,
    procs: &[ProcStat],
    within: Duration,
) -> Vec<ProcStat> {
    let deadline = std::time::Instant::now() + within;
    loop {
        let left: Vec<_> = procs
            .iter()
            .filter_map(|p| proc.alive(p.pid, p.start_ticks))
            .collect();
        if left.is_empty() || std::time::Instant::now() >= deadline {
            return left;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

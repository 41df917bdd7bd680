//! What this host's `/proc` says, parsed by the `procfs` crate: the one place in the workspace
//! that reads `/proc` text. Processes (their stat line, command line, resident memory, cgroup,
//! open descriptors), the host's busy CPU ticks, load average, memory, uptime and file locks,
//! and the sockets listening on a port.
//!
//! Every reading goes through a [`ProcRoot`], normally `/proc` ([`ProcRoot::system`]); the root
//! is a parameter so that tests can point it at a fake tree (a process stuck in `D` cannot be
//! made without root tricks) or at a view of the real one that shows only some processes.
//! A process that vanishes while it is read is skipped, and an unreadable file is `None` or
//! empty, never an error: `/proc` changes under every reader, and another user's processes may
//! be hidden (`hidepid`).

pub mod fake;
mod sockets;
mod system;

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use procfs::process::Process;
use serde::{Deserialize, Serialize};

pub use sockets::listening_in;
pub use system::{FileLock, Memory, own_peak_rss_bytes, parse_locks, ticks_per_second};

/// One process as `/proc/<pid>/stat` shows it: the fields bakeoff reads.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcStat {
    pub pid: u32,
    /// The command name (`comm`, at most 15 bytes): what a kernel thread is called.
    pub comm: String,
    /// `R`, `S`, `D` (uninterruptible sleep), `Z` (exited, not reaped), `T`, …
    pub state: char,
    pub ppid: u32,
    pub pgrp: u32,
    /// utime + stime, clock ticks, all threads.
    pub cpu_ticks: u64,
    /// Start time in clock ticks after boot: with the pid, the process's identity (a reused
    /// pid has another start time).
    pub start_ticks: u64,
}

impl ProcStat {
    /// Exited (a zombie waiting for its parent, or dead): holds nothing any more.
    pub fn is_gone(&self) -> bool {
        matches!(self.state, 'Z' | 'X' | 'x')
    }

    fn from_procfs(pid: u32, s: procfs::process::Stat) -> Option<Self> {
        Some(Self {
            pid,
            comm: s.comm,
            state: s.state,
            ppid: u32::try_from(s.ppid).ok()?,
            pgrp: u32::try_from(s.pgrp).ok()?,
            cpu_ticks: s.utime.checked_add(s.stime)?,
            start_ticks: s.starttime,
        })
    }
}

/// What a process's state letter means, for messages.
pub fn state_words(state: char) -> &'static str {
    match state {
        'D' => "uninterruptible sleep (D)",
        'R' => "running (R)",
        'S' => "sleeping (S)",
        'T' | 't' => "stopped (T)",
        'Z' => "zombie, not reaped (Z)",
        _ => "alive",
    }
}

/// The roots and every process descended from them, in one snapshot (`all`).
pub fn descendants(all: &[ProcStat], roots: &[u32]) -> HashSet<u32> {
    let mut children: HashMap<u32, Vec<u32>> = HashMap::new();
    for p in all {
        children.entry(p.ppid).or_default().push(p.pid);
    }
    let mut out: HashSet<u32> = HashSet::new();
    let mut todo: Vec<u32> = roots.to_vec();
    while let Some(pid) = todo.pop() {
        if out.insert(pid)
            && let Some(c) = children.get(&pid)
        {
            todo.extend(c);
        }
    }
    out
}

/// The Docker container id in one cgroup path of `/proc/<pid>/cgroup` (v2:
/// `/system.slice/docker-<64 hex>.scope`; v1: `/docker/<64 hex>`).
pub fn container_id(cgroup_path: &str) -> Option<String> {
    cgroup_path.split('/').rev().find_map(|seg| {
        let seg = seg.strip_suffix(".scope").unwrap_or(seg);
        let id = seg.strip_prefix("docker-").unwrap_or(seg);
        (id.len() == 64 && id.bytes().all(|b| b.is_ascii_hexdigit())).then(|| id.to_owned())
    })
}

/// The longest command line kept for display: enough to recognise an engine, short enough for
/// one line.
const CMDLINE_MAX: usize = 300;

/// A `/proc` to read from.
#[derive(Debug, Clone)]
pub struct ProcRoot {
    root: PathBuf,
}

impl Default for ProcRoot {
    fn default() -> Self {
        Self::system()
    }
}

impl ProcRoot {
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self { root: root.into() }
    }

    /// This machine's `/proc`.
    pub fn system() -> Self {
        Self::new("/proc")
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    fn process(&self, pid: u32) -> Option<Process> {
        Process::new_with_root(self.root.join(pid.to_string())).ok()
    }

    /// `/proc/<pid>/stat`, when the process exists and can be read.
    pub fn entry(&self, pid: u32) -> Option<ProcStat> {
        ProcStat::from_procfs(pid, self.process(pid)?.stat().ok()?)
    }

    /// Whether `pid` is a live process: it exists and has not exited (a zombie keeps its entry
    /// but holds no files, locks or memory).
    pub fn is_alive(&self, pid: u32) -> bool {
        self.entry(pid).is_some_and(|e| !e.is_gone())
    }

    /// The same process (pid and start time), still holding what it holds (not exited).
    pub fn alive(&self, pid: u32, start_ticks: u64) -> Option<ProcStat> {
        self.entry(pid)
            .filter(|e| e.start_ticks == start_ticks && !e.is_gone())
    }

    /// Every process's stat line (those that vanish while being read are skipped).
    pub fn all(&self) -> Vec<ProcStat> {
        self.processes()
            .filter_map(|(pid, p)| ProcStat::from_procfs(pid, p.stat().ok()?))
            .collect()
    }

    /// Every process under this root with its pid; one that vanishes while the directory is
    /// read is skipped, and an unreadable root has none.
    pub(crate) fn processes(&self) -> impl Iterator<Item = (u32, procfs::process::Process)> {
        procfs::process::all_processes_with_root(&self.root)
            .into_iter()
            .flatten()
            .filter_map(|p| {
                let p = p.ok()?;
                Some((u32::try_from(p.pid).ok()?, p))
            })
    }

    /// The members of process group `pgid` that have not exited.
    pub fn group_members(&self, pgid: u32) -> Vec<ProcStat> {
        self.all()
            .into_iter()
            .filter(|e| e.pgrp == pgid && !e.is_gone())
            .collect()
    }

    /// `pid` and every process below it (a parent chain read from one snapshot), not exited.
    pub fn with_descendants(&self, pid: u32) -> Vec<ProcStat> {
        let all = self.all();
        let tree = descendants(&all, &[pid]);
        let mut out: Vec<ProcStat> = all
            .into_iter()
            .filter(|e| tree.contains(&e.pid) && !e.is_gone())
            .collect();
        // The root first, as callers name it first.
        out.sort_by_key(|e| e.pid != pid);
        out
    }

    /// The arguments of `pid` (`/proc/<pid>/cmdline`); `None` when the process is gone or its
    /// command line cannot be read, empty for a kernel thread.
    pub fn cmdline_args(&self, pid: u32) -> Option<Vec<String>> {
        self.process(pid)?.cmdline().ok()
    }

    /// The command line for display: space-joined, cut to a length that fits a line; a kernel
    /// thread (or a process whose memory is being torn down) by its `[comm]`.
    pub fn cmdline(&self, pid: u32) -> Option<String> {
        let s = self.cmdline_args(pid).unwrap_or_default().join(" ");
        if s.is_empty() {
            return self.entry(pid).map(|e| format!("[{}]", e.comm));
        }
        Some(match s.char_indices().nth(CMDLINE_MAX) {
            Some((i, _)) => format!("{}…", &s[..i]),
            None => s,
        })
    }

    /// Resident memory (`VmRSS` of `/proc/<pid>/status`), in bytes.
    pub fn rss_bytes(&self, pid: u32) -> Option<u64> {
        let kib = self.process(pid)?.status().ok()?.vmrss?;
        Some(kib.saturating_mul(1024))
    }

    /// The Docker container a process belongs to (its cgroup path), when it is in one.
    pub fn container_of(&self, pid: u32) -> Option<String> {
        let cgroups = self.process(pid)?.cgroups().ok()?;
        cgroups.into_iter().find_map(|c| container_id(&c.pathname))
    }

    /// Seconds since `pid` started, from its start time and the host's uptime.
    pub fn age_s(&self, pid: u32) -> Option<u64> {
        let started = self.entry(pid)?.start_ticks as f64 / ticks_per_second() as f64;
        let up = self.uptime_s()?;
        (up >= started).then_some((up - started) as u64)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;

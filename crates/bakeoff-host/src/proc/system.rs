//! The host-wide files: `/proc/stat`'s CPU line, `/proc/loadavg`, `/proc/meminfo`,
//! `/proc/uptime` and `/proc/locks`; and this process's own peak resident set.

use procfs::prelude::*;
use procfs::{KernelStats, LoadAverage, LockType, Locks, Meminfo, Uptime};

use super::ProcRoot;

/// Clock ticks per second (`sysconf(_SC_CLK_TCK)`, `USER_HZ`): the unit of every tick count
/// here. 100 on every mainstream architecture.
pub fn ticks_per_second() -> u64 {
    procfs::ticks_per_second().max(1)
}

/// What `/proc/meminfo` says of the page cache and free memory, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Memory {
    pub free_bytes: u64,
    /// `MemAvailable` (since Linux 3.14; absent before).
    pub available_bytes: Option<u64>,
    /// `Cached`: the page cache.
    pub cached_bytes: u64,
}

/// One lock of `/proc/locks` that is held (a waiter's line is not one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileLock {
    /// `FLOCK`, `POSIX`, `OFDLCK`, `LEASE`, …
    pub kind: String,
    /// The pid that took the lock: `None` for an open-file-description lock (no one process
    /// owns it), `Some(0)` when the holder is in a pid namespace the reader cannot see.
    pub pid: Option<u32>,
    /// The locked file's device (major, minor) and inode.
    pub major: u32,
    pub minor: u32,
    pub inode: u64,
}

/// The held locks in `/proc/locks` text. procfs reads a waiter's line (`1: -> FLOCK …`) as a
/// lock of its own, so those lines are left out first; each line is parsed alone, so one line
/// of an unknown shape hides no other.
pub fn parse_locks(text: &str) -> Vec<FileLock> {
    text.lines()
        .filter(|l| l.split_whitespace().nth(1) != Some("->"))
        .filter_map(|l| Locks::from_read(l.as_bytes()).ok())
        .flat_map(|Locks(v)| v)
        .map(|l| FileLock {
            kind: match l.lock_type {
                // procfs names it `ODF`; the file (and `lslocks`) say `OFDLCK`.
                LockType::ODF => "OFDLCK".to_owned(),
                t => t.as_str().to_owned(),
            },
            pid: l.pid.and_then(|p| u32::try_from(p).ok()),
            major: l.devmaj,
            minor: l.devmin,
            inode: l.inode,
        })
        .collect()
}

/// This process's peak resident set (`VmHWM` of `/proc/self/status`), in bytes.
pub fn own_peak_rss_bytes() -> Option<u64> {
    let kib = procfs::process::Process::myself()
        .ok()?
        .status()
        .ok()?
        .vmhwm?;
    Some(kib.saturating_mul(1024))
}

impl ProcRoot {
    /// The host's busy ticks from `/proc/stat`'s `cpu` line: user + nice + system + irq +
    /// softirq (idle, iowait and steal left out; guest time is already inside user). Counting
    /// the host's total rather than summing processes also catches the short-lived ones (a
    /// build's compiler runs) that start and exit between two samples.
    pub fn host_busy_ticks(&self) -> Option<u64> {
        let s =
            KernelStats::from_file(self.root.join("stat"), procfs::current_system_info()).ok()?;
        let t = s.total;
        Some(t.user + t.nice + t.system + t.irq.unwrap_or(0) + t.softirq.unwrap_or(0))
    }

    /// `/proc/loadavg`: the 1-, 5- and 15-minute figures.
    pub fn loadavg(&self) -> Option<[f64; 3]> {
        let l = LoadAverage::from_file(self.root.join("loadavg")).ok()?;
        // procfs reads them as f32; the kernel prints two decimals, so rounding the widened
        // value to two gives back the printed figure (0.33, not 0.33000001311302185).
        Some([l.one, l.five, l.fifteen].map(|x| (f64::from(x) * 100.0).round() / 100.0))
    }

    /// `/proc/meminfo`: free, available and cached bytes.
    pub fn memory(&self) -> Option<Memory> {
        let m = Meminfo::from_file(self.root.join("meminfo")).ok()?;
        Some(Memory {
            free_bytes: m.mem_free,
            available_bytes: m.mem_available,
            cached_bytes: m.cached,
        })
    }

    /// Seconds since boot (`/proc/uptime`).
    pub fn uptime_s(&self) -> Option<f64> {
        Some(Uptime::from_file(self.root.join("uptime")).ok()?.uptime)
    }

    /// The held locks of `/proc/locks` (empty when unreadable).
    pub fn locks(&self) -> Vec<FileLock> {
        std::fs::read_to_string(self.root.join("locks"))
            .map(|t| parse_locks(&t))
            .unwrap_or_default()
    }
}

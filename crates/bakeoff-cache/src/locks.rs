//! Who holds a download lock. The Hugging Face hub guards each blob with
//! `HUB/.locks/models--ORG--NAME/<sha>.lock` (the `filelock` package: `flock(2)` on Linux), so
//! a stale pull loop that survived a partial kill keeps the lock and the retry stalls on it —
//! the stall is the lock, not a rate limit (docs/field-cases.md B6).
//!
//! Two sources, because each alone misleads: `/proc/locks` names the pid that took the lock
//! (that pid may be dead while a child that inherited the descriptor still holds it), and an
//! `flock(LOCK_EX|LOCK_NB)` probe says whether anyone holds it right now. The probe is released
//! at once when it succeeds.

use std::collections::HashMap;
use std::fs::File;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use rustix::fs::{FlockOperation, flock};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::procinfo;

/// One line of `/proc/locks` that holds (not waits for) a lock.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcLock {
    /// `FLOCK`, `POSIX`, `OFDLCK`, `LEASE`, …
    pub kind: String,
    /// The pid that took the lock; `-1` for open-file-description locks, `0` when the holder
    /// is in a pid namespace the reader cannot see.
    pub pid: i64,
    pub major: u32,
    pub minor: u32,
    pub inode: u64,
}

/// Parses `/proc/locks`. Lines look like `1: FLOCK  ADVISORY  WRITE 1234 08:01:5678 0 EOF`;
/// a waiter is marked `1: -> FLOCK …` and is skipped (it holds nothing). Device numbers are
/// printed in hex, the inode in decimal. Lines that do not parse are skipped: the file's shape
/// is the kernel's, and one odd line must not hide the others.
pub fn parse_proc_locks(text: &str) -> Vec<ProcLock> {
    text.lines().filter_map(parse_line).collect()
}

fn parse_line(line: &str) -> Option<ProcLock> {
    let mut fields = line.split_whitespace();
    fields.next()?; // "1:"
    let kind = fields.next()?;
    if kind == "->" {
        return None;
    }
    let _mode = fields.next()?; // ADVISORY / MANDATORY / ACTIVE / BREAKING
    let _access = fields.next()?; // READ / WRITE
    let pid = fields.next()?.parse::<i64>().ok()?;
    let mut id = fields.next()?.split(':');
    let major = u32::from_str_radix(id.next()?, 16).ok()?;
    let minor = u32::from_str_radix(id.next()?, 16).ok()?;
    let inode = id.next()?.parse::<u64>().ok()?;
    Some(ProcLock {
        kind: kind.to_string(),
        pid,
        major,
        minor,
        inode,
    })
}

/// Reads and parses this machine's `/proc/locks` (empty when unreadable).
pub fn read_proc_locks() -> Vec<ProcLock> {
    std::fs::read_to_string("/proc/locks")
        .map(|t| parse_proc_locks(&t))
        .unwrap_or_default()
}

/// glibc's `gnu_dev_major`: the major number of a `st_dev`.
pub fn dev_major(dev: u64) -> u32 {
    (((dev >> 32) & 0xffff_f000) | ((dev >> 8) & 0x0000_0fff)) as u32
}

/// glibc's `gnu_dev_minor`: the minor number of a `st_dev`.
pub fn dev_minor(dev: u64) -> u32 {
    (((dev >> 12) & 0xffff_ff00) | (dev & 0x0000_00ff)) as u32
}

/// `/proc/locks` entries indexed by (major, minor, inode) for matching against `stat`.
#[derive(Debug, Default)]
pub struct LockTable {
    by_file: HashMap<(u32, u32, u64), Vec<ProcLock>>,
}

impl LockTable {
    pub fn new(locks: Vec<ProcLock>) -> Self {
        let mut by_file: HashMap<(u32, u32, u64), Vec<ProcLock>> = HashMap::new();
        for lock in locks {
            by_file
                .entry((lock.major, lock.minor, lock.inode))
                .or_default()
                .push(lock);
        }
        Self { by_file }
    }

    /// This machine's table, read now.
    pub fn read() -> Self {
        Self::new(read_proc_locks())
    }

    /// The entries for the file with this `st_dev` and `st_ino`.
    pub fn entries(&self, dev: u64, ino: u64) -> &[ProcLock] {
        self.by_file
            .get(&(dev_major(dev), dev_minor(dev), ino))
            .map(Vec::as_slice)
            .unwrap_or(&[])
    }

    /// The live processes holding a lock on this file, by `/proc/locks`; when every pid named
    /// there is gone (or hidden), the live processes with the file open — a child that
    /// inherited the descriptor keeps an `flock` after its parent is killed. Empty when
    /// `/proc/locks` has no entry for the file.
    pub fn holders(&self, dev: u64, ino: u64) -> Vec<u32> {
        let entries = self.entries(dev, ino);
        if entries.is_empty() {
            return Vec::new();
        }
        let mut pids: Vec<u32> = entries
            .iter()
            .filter_map(|e| u32::try_from(e.pid).ok())
            .filter(|pid| *pid > 0 && procinfo::alive(*pid))
            .collect();
        pids.sort_unstable();
        pids.dedup();
        if pids.is_empty() {
            pids = procinfo::pids_with_open(dev, ino);
        }
        pids
    }
}

/// A process that holds a lock.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct LockHolder {
    pub pid: u32,
    /// `/proc/PID/cmdline` joined with spaces, tokens redacted; empty when unreadable.
    pub cmdline: String,
}

/// What the probe and `/proc/locks` say about one lock file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum LockState {
    /// Somebody holds it. `holders` is empty when the holder is invisible from here (another
    /// pid namespace, e.g. the pull runs in a container and the audit does not).
    Held { holders: Vec<LockHolder> },
    /// Nobody holds it: the probe got the lock (and released it). A leftover file.
    Stale,
    /// It could not be probed (no permission to open it); the reason in words.
    Unknown { reason: String },
}

/// Probes `path`: `Ok(true)` when nobody holds an `flock` on it (the probe took the lock and
/// released it at once), `Ok(false)` when somebody does.
pub fn probe_free(path: &Path) -> std::io::Result<bool> {
    // flock(2) works on a read-only descriptor, so the probe needs no write permission and
    // cannot truncate or create anything.
    let file = File::open(path)?;
    match flock(&file, FlockOperation::NonBlockingLockExclusive) {
        Ok(()) => {
            // Closing the descriptor also releases it; unlocking first makes the window as
            // short as we can make it for a downloader that starts right now.
            let _ = flock(&file, FlockOperation::Unlock);
            Ok(true)
        }
        Err(e) if e == rustix::io::Errno::WOULDBLOCK => Ok(false),
        Err(e) => Err(e.into()),
    }
}

/// The state of one lock file: probe, then name the holders from `table`.
pub fn lock_state(path: &Path, table: &LockTable) -> LockState {
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) => {
            return LockState::Unknown {
                reason: format!("cannot stat {}: {e}", path.display()),
            };
        }
    };
    match probe_free(path) {
        Ok(true) => LockState::Stale,
        Ok(false) => {
            let holders = table
                .holders(meta.dev(), meta.ino())
                .into_iter()
                .map(|pid| LockHolder {
                    pid,
                    cmdline: procinfo::cmdline(pid),
                })
                .collect();
            LockState::Held { holders }
        }
        Err(e) => LockState::Unknown {
            reason: format!("cannot probe {}: {e}", path.display()),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_locks_lines_parse_with_hex_devices() {
        let text = "1: FLOCK  ADVISORY  WRITE 1234 08:1a:5678 0 EOF\n\
                    1: -> FLOCK  ADVISORY  WRITE 1235 08:1a:5678 0 EOF\n\
                    2: OFDLCK ADVISORY  READ  -1 00:2f:99 0 EOF\n\
                    garbage\n";
        let locks = parse_proc_locks(text);
        assert_eq!(locks.len(), 2);
        assert_eq!(
            locks[0],
            ProcLock {
                kind: "FLOCK".into(),
                pid: 1234,
                major: 8,
                minor: 0x1a,
                inode: 5678
            }
        );
        assert_eq!(locks[1].pid, -1);
        assert_eq!(locks[1].minor, 0x2f);
    }

    #[test]
    fn dev_numbers_split_like_glibc() {
        // makedev(8, 1) and makedev(259, 300) in glibc's encoding.
        let make = |ma: u64, mi: u64| {
            ((ma & 0xfffff000) << 32)
                | ((ma & 0xfff) << 8)
                | ((mi & 0xffffff00) << 12)
                | (mi & 0xff)
        };
        assert_eq!((dev_major(make(8, 1)), dev_minor(make(8, 1))), (8, 1));
        assert_eq!(
            (dev_major(make(259, 300)), dev_minor(make(259, 300))),
            (259, 300)
        );
    }
}

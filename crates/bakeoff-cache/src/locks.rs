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

use bakeoff_host::ProcRoot;
use bakeoff_host::proc::FileLock;
use rustix::fs::{FlockOperation, flock};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

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
    by_file: HashMap<(u32, u32, u64), Vec<FileLock>>,
}

impl LockTable {
    pub fn new(locks: Vec<FileLock>) -> Self {
        let mut by_file: HashMap<(u32, u32, u64), Vec<FileLock>> = HashMap::new();
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
        Self::new(ProcRoot::system().locks())
    }

    /// The entries for the file with this `st_dev` and `st_ino`.
    pub fn entries(&self, dev: u64, ino: u64) -> &[FileLock] {
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
        let proc = ProcRoot::system();
        let mut pids: Vec<u32> = entries
            .iter()
            .filter_map(|e| e.pid)
            .filter(|pid| *pid > 0 && proc.is_alive(*pid))
            .collect();
        pids.sort_unstable();
        pids.dedup();
        if pids.is_empty() {
            pids = proc.pids_with_open(dev, ino);
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
                    cmdline: crate::redact::cmdline_of(pid),
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

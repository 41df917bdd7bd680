//! Two small readings for a watchdog that watches a mounted cache directory while a seat
//! loads: how many bytes the tree holds on disk (sampled twice, the growth says a download is
//! moving) and which processes hold a lock under it (the name to put in a "stalled on a lock"
//! finding). Neither ever fails: a watchdog must keep going when a file vanishes mid-walk.

use std::collections::HashSet;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::locks::LockTable;

/// A lock under a directory held by a live process.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct HeldLock {
    /// The locked file.
    pub path: PathBuf,
    pub pid: u32,
    /// `/proc/PID/cmdline` joined with spaces, tokens redacted.
    pub cmdline: String,
}

/// Allocated bytes (`st_blocks * 512`) of everything under `path`, `path` included, without
/// following symlinks; a file with several hard links counts once. Unreadable entries count 0.
/// Allocated, not apparent, size: a preallocated or sparse download grows in blocks, and that is
/// what fills the disk.
pub fn tree_bytes(path: &Path) -> u64 {
    let mut seen = HashSet::new();
    let mut total = 0u64;
    walk(path, &mut |_, meta| {
        if meta.nlink() <= 1 || seen.insert((meta.dev(), meta.ino())) {
            total = total.saturating_add(meta.blocks().saturating_mul(512));
        }
    });
    total
}

/// Every regular file under `root` that `/proc/locks` says a live process holds a lock on,
/// with the holder's pid and redacted command line (one entry per holder). Read-only: no probe,
/// so a watchdog never takes a lock from under a downloader. Symlinks are not followed.
pub fn held_locks(root: &Path) -> Vec<HeldLock> {
    let table = LockTable::read();
    let mut found = Vec::new();
    walk(root, &mut |path, meta| {
        if !meta.is_file() {
            return;
        }
        for pid in table.holders(meta.dev(), meta.ino()) {
            found.push(HeldLock {
                path: path.to_path_buf(),
                pid,
                cmdline: crate::redact::cmdline_of(pid),
            });
        }
    });
    found.sort_by(|a, b| (&a.path, a.pid).cmp(&(&b.path, b.pid)));
    found
}

/// Depth-first walk calling `visit` with each entry's `lstat`, never following symlinks and
/// skipping what cannot be read.
pub(crate) fn walk(root: &Path, visit: &mut dyn FnMut(&Path, &std::fs::Metadata)) {
    let mut stack = vec![root.to_path_buf()];
    while let Some(path) = stack.pop() {
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        visit(&path, &meta);
        if meta.is_dir()
            && let Ok(entries) = std::fs::read_dir(&path)
        {
            stack.extend(entries.flatten().map(|e| e.path()));
        }
    }
}

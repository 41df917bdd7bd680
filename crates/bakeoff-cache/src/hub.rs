//! The Hugging Face hub cache layout, read-only.
//!
//! Sources (checked against huggingface_hub, docs "Manage huggingface_hub cache-system" —
//! https://huggingface.co/docs/huggingface_hub/guides/manage-cache — and
//! `src/huggingface_hub/file_download.py`, `hf_hub_download`/`_download_to_tmp_and_move`):
//!
//! ```text
//! HF_HOME/hub/                          (HF_HUB_CACHE; HF_HOME defaults to ~/.cache/huggingface)
//!   .locks/models--ORG--NAME/<sha>.lock  filelock (flock(2) on Linux), one per blob being fetched
//!   models--ORG--NAME/                   also datasets--ORG--NAME/, spaces--ORG--NAME/
//!     blobs/<sha>                        the file contents, named by etag (sha256 for LFS files)
//!     blobs/<sha>.incomplete             a download in progress or interrupted; resumed by Range
//!     refs/<branch>                      holds a commit hash (refs/pr/1 nests)
//!     snapshots/<commit>/<file>          symlink -> ../../blobs/<sha>, made after the blob is whole
//! ```
//!
//! Because a snapshot symlink is made only once its blob was renamed from `.incomplete`, a
//! symlink to a missing blob is damage (a blob deleted by hand, a copy that dropped files), not
//! a download in flight. llama.cpp `-hf` downloads land in this layout too (docs/field-cases.md B7).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::usage::{tree_bytes, walk};

/// Directory prefixes of hub repositories, with the kind each names.
const REPO_PREFIXES: [(&str, &str); 3] = [
    ("models--", "model"),
    ("datasets--", "dataset"),
    ("spaces--", "space"),
];

/// The suffix of a blob still being written.
pub const INCOMPLETE: &str = ".incomplete";

/// One repository in a hub cache.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct HubRepo {
    /// `model`, `dataset` or `space`.
    pub kind: String,
    /// `ORG/NAME`.
    pub id: String,
    /// The `models--ORG--NAME` directory.
    pub path: PathBuf,
    /// Allocated bytes on disk (`st_blocks * 512`), each blob once (snapshots are symlinks).
    pub size_on_disk: u64,
    pub snapshots: Vec<Snapshot>,
    /// `blobs/*.incomplete`.
    pub incomplete_blobs: Vec<PartialFile>,
    /// True when no snapshot file points at a missing blob and no blob is `.incomplete`.
    pub complete: bool,
}

/// One `snapshots/<commit>` directory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Snapshot {
    pub commit: String,
    /// The refs (`main`, `pr/1`) that hold this commit.
    pub refs: Vec<String>,
    /// Files of the snapshot, relative to it.
    pub files: Vec<String>,
    /// Files whose symlink points at a blob that is not there.
    pub missing: Vec<MissingTarget>,
}

/// A snapshot file whose blob is missing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct MissingTarget {
    /// Relative to the snapshot.
    pub file: String,
    /// Where the symlink points (as written in the link).
    pub target: PathBuf,
}

/// A file still being downloaded, or left by an interrupted download.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct PartialFile {
    pub path: PathBuf,
    /// Bytes written so far (the apparent size: downloads append).
    pub bytes: u64,
    /// Seconds since it was last written (from its mtime).
    pub age_secs: u64,
}

impl PartialFile {
    /// Reads size and age of `path`; `None` when it vanished (a download just finished).
    pub fn read(path: &Path) -> Option<Self> {
        let meta = std::fs::symlink_metadata(path).ok()?;
        let age_secs = meta
            .modified()
            .ok()
            .and_then(|m| SystemTime::now().duration_since(m).ok())
            .map_or(0, |d| d.as_secs());
        Some(Self {
            path: path.to_path_buf(),
            bytes: meta.len(),
            age_secs,
        })
    }
}

/// The repository kind and `ORG/NAME` of a `models--ORG--NAME` directory name.
pub fn repo_id(dir_name: &str) -> Option<(&'static str, String)> {
    REPO_PREFIXES.iter().find_map(|(prefix, kind)| {
        let rest = dir_name.strip_prefix(prefix)?;
        (!rest.is_empty()).then(|| (*kind, rest.replace("--", "/")))
    })
}

/// Is `dir` a hub directory (it holds at least one repository dir or a `.locks` dir)?
pub fn is_hub_dir(dir: &Path) -> bool {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    entries.flatten().any(|e| {
        let name = e.file_name();
        let name = name.to_string_lossy();
        name == ".locks" || repo_id(&name).is_some()
    })
}

/// Every repository directory in a hub directory, sorted by name.
pub fn repo_dirs(hub: &Path) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(hub)
        .map(|entries| {
            entries
                .flatten()
                .filter(|e| repo_id(&e.file_name().to_string_lossy()).is_some())
                .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
                .map(|e| e.path())
                .collect()
        })
        .unwrap_or_default();
    dirs.sort();
    dirs
}

/// Scans one `models--ORG--NAME` directory. Never fails: what cannot be read is left out.
pub fn scan_repo(dir: &Path) -> HubRepo {
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let (kind, id) = repo_id(&name).unwrap_or(("model", name.clone()));
    let refs = read_refs(&dir.join("refs"));
    let mut snapshots = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir.join("snapshots")) {
        for entry in entries.flatten() {
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                let commit = entry.file_name().to_string_lossy().into_owned();
                let mut snapshot = scan_snapshot(&entry.path(), &commit);
                snapshot.refs = refs
                    .iter()
                    .filter(|(_, c)| **c == commit)
                    .map(|(r, _)| r.clone())
                    .collect();
                snapshots.push(snapshot);
            }
        }
    }
    snapshots.sort_by(|a, b| a.commit.cmp(&b.commit));
    let mut incomplete_blobs: Vec<PartialFile> = std::fs::read_dir(dir.join("blobs"))
        .map(|entries| {
            entries
                .flatten()
                .filter(|e| e.file_name().to_string_lossy().ends_with(INCOMPLETE))
                .filter_map(|e| PartialFile::read(&e.path()))
                .collect()
        })
        .unwrap_or_default();
    incomplete_blobs.sort_by(|a, b| a.path.cmp(&b.path));
    let complete = incomplete_blobs.is_empty() && snapshots.iter().all(|s| s.missing.is_empty());
    HubRepo {
        kind: kind.to_string(),
        id,
        path: dir.to_path_buf(),
        size_on_disk: tree_bytes(dir),
        snapshots,
        incomplete_blobs,
        complete,
    }
}

/// `refs/<name>` files (nested for `refs/pr/1`) and the commit each holds.
fn read_refs(refs_dir: &Path) -> BTreeMap<String, String> {
    let mut refs = BTreeMap::new();
    walk(refs_dir, &mut |path, meta| {
        if meta.is_file()
            && let Ok(commit) = std::fs::read_to_string(path)
            && let Ok(name) = path.strip_prefix(refs_dir)
        {
            refs.insert(
                name.to_string_lossy().into_owned(),
                commit.trim().to_string(),
            );
        }
    });
    refs
}

fn scan_snapshot(dir: &Path, commit: &str) -> Snapshot {
    let mut files = Vec::new();
    let mut missing = Vec::new();
    walk(dir, &mut |path, meta| {
        if meta.is_dir() {
            return;
        }
        let rel = path
            .strip_prefix(dir)
            .map(|r| r.to_string_lossy().into_owned())
            .unwrap_or_default();
        if meta.file_type().is_symlink() && std::fs::metadata(path).is_err() {
            // `metadata` follows the link: it fails when the blob is gone.
            let target = std::fs::read_link(path).unwrap_or_default();
            missing.push(MissingTarget {
                file: rel.clone(),
                target,
            });
        }
        files.push(rel);
    });
    files.sort();
    missing.sort_by(|a, b| a.file.cmp(&b.file));
    Snapshot {
        commit: commit.to_string(),
        refs: Vec::new(),
        files,
        missing,
    }
}

/// The lock files of one repository: `HUB/.locks/<repo dir name>/*.lock`, sorted.
pub fn repo_locks(hub: &Path, repo_dir_name: &str) -> Vec<PathBuf> {
    let mut locks = Vec::new();
    walk(
        &hub.join(".locks").join(repo_dir_name),
        &mut |path, meta| {
            if meta.is_file() && path.extension().is_some_and(|e| e == "lock") {
                locks.push(path.to_path_buf());
            }
        },
    );
    locks.sort();
    locks
}

/// The `.incomplete` blob that a lock guards: `.locks/R/<sha>.lock` ↔ `R/blobs/<sha>.incomplete`.
pub fn blob_of_lock(hub: &Path, repo_dir_name: &str, lock: &Path) -> Option<PathBuf> {
    let sha = lock.file_stem()?.to_string_lossy().into_owned();
    Some(
        hub.join(repo_dir_name)
            .join("blobs")
            .join(format!("{sha}{INCOMPLETE}")),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repo_dir_names_map_to_ids() {
        assert_eq!(
            repo_id("models--google--gemma-3-270m"),
            Some(("model", "google/gemma-3-270m".to_string()))
        );
        assert_eq!(
            repo_id("datasets--org--set"),
            Some(("dataset", "org/set".to_string()))
        );
        assert_eq!(repo_id("models--"), None);
        assert_eq!(repo_id("version.txt"), None);
    }
}

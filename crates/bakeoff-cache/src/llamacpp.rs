//! llama.cpp's own download cache, read-only.
//!
//! Sources (llama.cpp `common/common.cpp` `fs_get_cache_directory`/`fs_get_cache_file`, and
//! `common/download.cpp` — formerly in `common/arg.cpp` — `common_download_file_single`,
//! `write_etag`/`read_etag`, `get_manifest_path`):
//!
//! ```text
//! LLAMA_CACHE (default ~/.cache/llama.cpp on Linux, $XDG_CACHE_HOME/llama.cpp when set)
//!   <org>_<repo>_<file>.gguf                     a finished download (`/` in the repo -> `_`)
//!   <org>_<repo>_<file>.gguf.downloadInProgress  the partial, appended to ("ab"), resumed with a
//!                                                Range request, renamed when whole
//!   <org>_<repo>_<file>.gguf.etag                the server's ETag (older builds: .json sidecar)
//!   manifest=<org>=<repo>=<tag>.json             the `-hf` manifest response
//! ```
//!
//! llama.cpp takes no file lock on these: the writer is found as the process holding the
//! partial open. Newer builds write the Hugging Face hub layout instead (docs/field-cases.md B7), which
//! [`crate::hub`] covers.

use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::hub::PartialFile;

/// The suffix of a llama.cpp download still being written.
pub const IN_PROGRESS: &str = ".downloadInProgress";

/// One finished model file in a llama.cpp cache.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct LlamaFile {
    pub path: PathBuf,
    /// Allocated bytes on disk.
    pub size_on_disk: u64,
    /// Whether an `.etag` (or older `.json`) sidecar is there: without it llama.cpp cannot
    /// tell whether the file is current and may download it again.
    pub has_etag: bool,
}

/// What a llama.cpp cache directory holds.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct LlamaCache {
    pub files: Vec<LlamaFile>,
    pub partials: Vec<PartialFile>,
    /// `manifest=…json` files (one per `-hf` repo and tag fetched).
    pub manifests: Vec<PathBuf>,
}

/// Does `dir` look like a llama.cpp cache (a `.gguf`, a partial or a manifest at its top)?
pub fn is_llama_cache(dir: &Path) -> bool {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    entries.flatten().any(|e| {
        let name = e.file_name().to_string_lossy().into_owned();
        name.ends_with(".gguf") || name.ends_with(IN_PROGRESS) || is_manifest(&name)
    })
}

fn is_manifest(name: &str) -> bool {
    name.starts_with("manifest=") && name.ends_with(".json")
}

/// Scans the top of a llama.cpp cache (it is flat). Never fails.
pub fn scan(dir: &Path) -> LlamaCache {
    use std::os::unix::fs::MetadataExt;
    let mut cache = LlamaCache::default();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return cache;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let path = entry.path();
        if name.ends_with(IN_PROGRESS) {
            if let Some(p) = PartialFile::read(&path) {
                cache.partials.push(p);
            }
        } else if name.ends_with(".gguf") {
            let size_on_disk =
                std::fs::symlink_metadata(&path).map_or(0, |m| m.blocks().saturating_mul(512));
            let has_etag = dir.join(format!("{name}.etag")).exists()
                || dir.join(format!("{name}.json")).exists();
            cache.files.push(LlamaFile {
                path,
                size_on_disk,
                has_etag,
            });
        } else if is_manifest(&name) {
            cache.manifests.push(path);
        }
    }
    cache.files.sort_by(|a, b| a.path.cmp(&b.path));
    cache.partials.sort_by(|a, b| a.path.cmp(&b.path));
    cache.manifests.sort();
    cache
}

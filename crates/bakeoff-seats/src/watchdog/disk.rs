//! The I/O half of the disk readings ([`super::readings`] decides): which host directories a
//! seat downloads into ([`plan`]), and one sample of them and of its container's writable layer
//! ([`sample`]), taken beside the watch loop with a timeout.
//!
//! The cache directories are the engines' own, resolved as the pre-start check resolves them
//! ([`crate::checks::cache_mounts`]): for a Docker seat the host side of the mounts that hold
//! `HF_HUB_CACHE` / `HF_HOME` / `LLAMA_CACHE` or the defaults under `HOME`
//! (`/root/.cache/huggingface`, `/root/.cache/llama.cpp`); for a process seat the
//! `HF_HOME` / `HF_HUB_CACHE` / `LLAMA_CACHE` of its env, else the hub cache under `HOME` only
//! when it pulls from the hub (a local model downloads nothing). Only a seat on this machine
//! has host directories we can read.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::time::Duration;

use super::readings::{CacheSample, DiskSample, LockHolder};
use crate::checks::cache_mounts::{Coverage, EngineEnv, coverage, hf_hub_cache, llama_cache};
use crate::checks::hub_model::pull_of;
use crate::checks::model_path::host_path;
use crate::fleet::launch::Launch;
use crate::fleet::types::{Engine, Seat};

/// The most often the disk is sampled: an inspect with sizes walks the container's whole layer.
pub const MIN_EVERY: Duration = Duration::from_secs(1);
/// The longest one sample may take (an inspect with sizes of a big layer, a walk of a big
/// cache on a slow disk); a sample that takes longer is dropped and the next one tried.
pub const SAMPLE_TIMEOUT: Duration = Duration::from_secs(60);

/// Suffixes of partial downloads: huggingface_hub's blobs (`<sha>.incomplete`) and llama.cpp's
/// own downloads (`<file>.downloadInProgress`, common/arg.cpp).
const PARTIAL_SUFFIXES: [&str; 2] = [".incomplete", ".downloadInProgress"];

/// What a seat's watch samples.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DiskPlan {
    /// Host-side cache directories (outermost only: a directory under another is not counted
    /// twice).
    pub caches: Vec<PathBuf>,
    /// The fix a growing writable layer gets.
    pub layer_fix: String,
}

/// The readings of `seat`.
pub fn plan(seat: &Seat) -> DiskPlan {
    let env = EngineEnv::of(seat);
    let local = seat.host == "local";
    let (caches, layer_fix) = match &seat.launch {
        Launch::Docker(d) => {
            let home = Path::new(&env.home);
            let dirs = [
                hf_hub_cache(&env).mount_dir,
                llama_cache(&env).mount_dir,
                home.join(".cache/huggingface"),
                home.join(".cache/llama.cpp"),
            ];
            let caches = if local && !d.mounts.is_empty() {
                dirs.iter()
                    .filter_map(|c| host_path(c, &d.mounts))
                    .filter(|h| h.is_absolute())
                    .collect()
            } else {
                Vec::new()
            };
            (caches, layer_fix(seat, &env, &d.mounts))
        }
        Launch::Process(p) => {
            let named: Vec<PathBuf> = ["HF_HOME", "HF_HUB_CACHE", "LLAMA_CACHE"]
                .iter()
                .filter_map(|k| p.env.get(*k))
                .map(|v| PathBuf::from(crate::fleet::types::substitute(v, seat)))
                .collect();
            let caches = if !named.is_empty() {
                named
            } else if pull_of(seat).is_some() {
                let mut v = vec![hf_hub_cache(&env).mount_dir];
                if seat.engine == Engine::LlamaCpp {
                    v.push(llama_cache(&env).mount_dir);
                }
                v
            } else {
                Vec::new()
            };
            let caches = caches.into_iter().filter(|c| c.is_absolute()).collect();
            (caches, String::new())
        }
    };
    DiskPlan {
        caches: outermost(caches),
        layer_fix,
    }
}

/// The mount to add for a container whose layer grows: the engine's cache directories that no
/// read-write mount holds, named by the seat's own `HF_HOME` / `HF_HUB_CACHE` / `LLAMA_CACHE`
/// when it sets them.
fn layer_fix(seat: &Seat, env: &EngineEnv, mounts: &[String]) -> String {
    let mut caches = vec![hf_hub_cache(env)];
    if seat.engine == Engine::LlamaCpp {
        caches.push(llama_cache(env));
    }
    let add: Vec<String> = caches
        .iter()
        .filter(|c| coverage(mounts, &c.path) != Coverage::Writable)
        .map(|c| format!("\"{}:{}\"", c.host_dir, c.mount_dir.display()))
        .collect();
    if add.is_empty() {
        // Every cache is mounted: the download goes somewhere else in the container.
        format!(
            "find what grows inside the container (docker diff {}) and mount that directory from the host",
            seat.container_name().unwrap_or_default()
        )
    } else {
        format!(
            "mount a host cache where the engine downloads: add mounts = [{}] to [seat.docker] (docs/field-cases.md B7)",
            add.join(", ")
        )
    }
}

/// `dirs` without duplicates and without a directory under another of them.
fn outermost(mut dirs: Vec<PathBuf>) -> Vec<PathBuf> {
    dirs.sort();
    dirs.dedup();
    let all = dirs.clone();
    dirs.retain(|d| !all.iter().any(|o| o != d && d.starts_with(o)));
    dirs
}

/// A future reading the container's writable layer, owning what it needs.
pub type LayerReader = Pin<Box<dyn Future<Output = Option<u64>> + Send>>;

/// One sample: the layer (through `layer`, when the seat is a container) and each cache
/// directory (walked on a blocking thread). Bounded by [`SAMPLE_TIMEOUT`] as a whole: what did
/// not come back in time is missing from the sample, never a zero.
pub async fn sample(layer: Option<LayerReader>, caches: Vec<PathBuf>) -> DiskSample {
    let layer_bytes = match layer {
        Some(f) => tokio::time::timeout(SAMPLE_TIMEOUT, f).await.ok().flatten(),
        None => None,
    };
    let caches = if caches.is_empty() {
        Vec::new()
    } else {
        let walk = tokio::task::spawn_blocking(move || {
            caches
                .iter()
                .map(PathBuf::as_path)
                .map(read_cache)
                .collect::<Vec<CacheSample>>()
        });
        match tokio::time::timeout(SAMPLE_TIMEOUT, walk).await {
            Ok(Ok(v)) => v,
            _ => Vec::new(),
        }
    };
    DiskSample {
        layer_bytes,
        caches,
    }
}

/// One cache directory: its size on disk, its partial downloads, and — only when there are
/// some — who holds a lock under it.
fn read_cache(path: &Path) -> CacheSample {
    let partial = partial_files(path);
    let holders = if partial > 0 {
        bakeoff_cache::held_locks(path)
            .into_iter()
            .map(|h| LockHolder {
                pid: h.pid,
                command: h.cmdline,
                lock: h.path,
            })
            .collect()
    } else {
        Vec::new()
    };
    CacheSample {
        path: path.to_path_buf(),
        bytes: bakeoff_cache::tree_bytes(path),
        partial,
        holders,
    }
}

/// How many partial downloads are under `root` (symlinks not followed; unreadable entries
/// skipped).
fn partial_files(root: &Path) -> u64 {
    let mut n = 0;
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            let Ok(t) = e.file_type() else { continue };
            if t.is_dir() {
                stack.push(e.path());
            } else if t.is_file() {
                let name = e.file_name();
                let name = name.to_string_lossy();
                if PARTIAL_SUFFIXES.iter().any(|s| name.ends_with(s)) {
                    n += 1;
                }
            }
        }
    }
    n
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::fleet::types::Fleet;

    fn fleet(toml: &str) -> Fleet {
        Fleet::parse(toml, Path::new("/tmp/bakeoff-disk-plan/fleet.toml")).unwrap()
    }

    #[test]
    fn a_container_samples_the_host_side_of_its_cache_mounts() {
        let f = fleet(
            r#"
[[seat]]
name = "hf"
engine = "llama.cpp"
role = "bench"
port = 18080
[seat.docker]
image = "llama:server"
command = ["-hf", "org/model-GGUF"]
mounts = ["/srv/hf:/root/.cache/huggingface", "/srv/models:/models:ro"]
"#,
        );
        let p = plan(&f.seats[0]);
        assert_eq!(p.caches, vec![PathBuf::from("/srv/hf")]);
        // llama.cpp's own cache is not mounted: the fix names it, not the mounted hub cache.
        assert!(
            p.layer_fix
                .contains("~/.cache/llama.cpp:/root/.cache/llama.cpp"),
            "{}",
            p.layer_fix
        );
        assert!(
            !p.layer_fix.contains(":/root/.cache/huggingface\""),
            "{}",
            p.layer_fix
        );
    }

    #[test]
    fn a_container_naming_its_caches_gets_those_in_the_fix() {
        let f = fleet(
            r#"
[[seat]]
name = "v"
engine = "vllm"
role = "bench"
port = 18081
[seat.docker]
image = "vllm/vllm-openai"
command = ["serve", "Qwen/Qwen3-8B"]
env = { HF_HOME = "/data/hf" }
"#,
        );
        let p = plan(&f.seats[0]);
        assert!(p.caches.is_empty());
        assert!(p.layer_fix.contains(":/data/hf\""), "{}", p.layer_fix);
    }

    #[test]
    fn a_process_samples_its_named_caches_or_the_hub_cache_when_it_pulls() {
        let f = fleet(
            r#"
[[seat]]
name = "named"
engine = "vllm"
role = "bench"
port = 18082
[seat.process]
command = "vllm"
args = ["serve", "/models/local"]
env = { HF_HOME = "/data/hf", LLAMA_CACHE = "/data/hf/llama" }

[[seat]]
name = "local"
engine = "vllm"
role = "bench"
port = 18083
[seat.process]
command = "vllm"
args = ["serve", "/models/local"]
"#,
        );
        assert_eq!(plan(&f.seats[0]).caches, vec![PathBuf::from("/data/hf")]);
        assert!(plan(&f.seats[1]).caches.is_empty());
    }

    #[test]
    fn partial_downloads_are_counted() {
        let d = tempfile::tempdir().unwrap();
        let blobs = d.path().join("hub/models--o--m/blobs");
        std::fs::create_dir_all(&blobs).unwrap();
        std::fs::write(blobs.join("abc.incomplete"), b"x").unwrap();
        std::fs::write(blobs.join("def"), b"y").unwrap();
        std::fs::write(d.path().join("m.gguf.downloadInProgress"), b"z").unwrap();
        assert_eq!(partial_files(d.path()), 2);
    }
}

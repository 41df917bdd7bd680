//! Where a seat's engine writes what it downloads, and whether that survives the container.
//!
//! docs/field-cases.md B7: llama.cpp `-hf` downloads landed in the Hugging Face hub layout under
//! `/root/.cache/huggingface`, not the mounted `~/.cache/llama.cpp`; ~20 GB of GGUF went into
//! the container's writable layer, silently. docs/field-cases.md B6: an anonymous pull ran at ~3.7 MB/s
//! against ~90 MB/s authenticated. So for a seat that pulls from the hub:
//!
//! - a Docker seat must have every cache directory the engine writes on a read-write mount
//!   (`cache-in-writable-layer`, a warning, naming the path and the mount to add);
//! - any seat without a token in its environment gets `anonymous-hub-pull` (a note). Only the
//!   token's name is ever written, never its value.
//!
//! The directories are resolved the way the engines resolve them, from the seat's environment:
//! huggingface_hub (vLLM, SGLang): `HF_HUB_CACHE`, `HUGGINGFACE_HUB_CACHE`, `HF_HOME/hub`,
//! `XDG_CACHE_HOME/huggingface/hub`, `~/.cache/huggingface/hub`. llama.cpp changed where `-hf`
//! writes: older builds used their own cache (`LLAMA_CACHE`, `XDG_CACHE_HOME/llama.cpp`,
//! `~/.cache/llama.cpp`: `common/common.cpp` `fs_get_cache_directory`), newer ones the hub
//! layout (`LLAMA_CACHE`, then the huggingface_hub order above: `common/hf-cache.cpp`
//! `get_cache_directory`, where `LLAMA_CACHE` became the one cache for everything). The fleet
//! file does not say which build an image holds, so a llama.cpp seat must cover both;
//! `LLAMA_CACHE` makes them one. A container's `HOME` is taken from the seat's env, else
//! assumed `/root` (and the finding says it was assumed).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use bakeoff_artifact::{FindingSeverity, SeatFinding};
use bakeoff_model::args::flag_value;

use super::hub_model::{Pull, args_of, pull_of};
use crate::fleet::launch::Launch;
use crate::fleet::types::Seat;

/// The variables that carry a Hugging Face token (huggingface_hub reads both).
pub const TOKEN_VARS: [&str; 2] = ["HF_TOKEN", "HUGGING_FACE_HUB_TOKEN"];

/// One directory the engine writes downloads into, and how it was resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cache {
    /// `the Hugging Face hub cache`, `llama.cpp's own cache`.
    pub what: &'static str,
    /// The directory, as the engine sees it.
    pub path: PathBuf,
    /// `HF_HOME=/data/hf`, `default for HOME=/root`.
    pub from: String,
    /// The directory a mount should cover (`HF_HOME` itself rather than `HF_HOME/hub`).
    pub mount_dir: PathBuf,
    /// The host directory to suggest (`~/.cache/huggingface`).
    pub host_dir: &'static str,
}

/// The environment the engine runs with: the seat's own (a Docker seat) or this process's with
/// the seat's on top (a process seat inherits it).
#[derive(Debug, Clone)]
pub struct EngineEnv {
    pub vars: BTreeMap<String, String>,
    pub home: String,
    /// `HOME` was not given and `/root` was assumed (a container).
    pub home_assumed: bool,
}

impl EngineEnv {
    pub fn of(seat: &Seat) -> EngineEnv {
        match &seat.launch {
            Launch::Docker(d) => {
                let vars = d.env.clone();
                let home = vars.get("HOME").filter(|h| !h.is_empty()).cloned();
                EngineEnv {
                    home_assumed: home.is_none(),
                    home: home.unwrap_or_else(|| "/root".into()),
                    vars,
                }
            }
            Launch::Process(p) => {
                // `vars_os`: a variable that is not UTF-8 is skipped, not a panic.
                let mut vars: BTreeMap<String, String> = std::env::vars_os()
                    .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
                    .collect();
                vars.extend(p.env.clone());
                let home = vars.get("HOME").cloned().unwrap_or_else(|| "~".into());
                EngineEnv {
                    vars,
                    home,
                    home_assumed: false,
                }
            }
        }
    }

    fn get(&self, k: &str) -> Option<&str> {
        self.vars
            .get(k)
            .map(String::as_str)
            .filter(|v| !v.trim().is_empty())
    }
}

/// huggingface_hub's cache directory for `env`.
pub fn hf_hub_cache(env: &EngineEnv) -> Cache {
    let what = "the Hugging Face hub cache";
    let host_dir = "~/.cache/huggingface";
    for var in ["HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"] {
        if let Some(v) = env.get(var) {
            return Cache {
                what,
                path: v.into(),
                from: format!("{var}={v}"),
                mount_dir: v.into(),
                host_dir: "~/.cache/huggingface/hub",
            };
        }
    }
    let (base, from) = if let Some(h) = env.get("HF_HOME") {
        (PathBuf::from(h), format!("HF_HOME={h}"))
    } else if let Some(x) = env.get("XDG_CACHE_HOME") {
        (
            Path::new(x).join("huggingface"),
            format!("XDG_CACHE_HOME={x}"),
        )
    } else {
        (
            Path::new(&env.home).join(".cache/huggingface"),
            format!("the default for HOME={}", env.home),
        )
    };
    Cache {
        what,
        path: base.join("hub"),
        from,
        mount_dir: base,
        host_dir,
    }
}

/// llama.cpp's own cache (`-mu` downloads, and `-hf` in builds before the hub layout).
pub fn llama_cache(env: &EngineEnv) -> Cache {
    let what = "llama.cpp's own cache";
    let host_dir = "~/.cache/llama.cpp";
    let (path, from) = if let Some(c) = env.get("LLAMA_CACHE") {
        (PathBuf::from(c), format!("LLAMA_CACHE={c}"))
    } else if let Some(x) = env.get("XDG_CACHE_HOME") {
        (
            Path::new(x).join("llama.cpp"),
            format!("XDG_CACHE_HOME={x}"),
        )
    } else {
        (
            Path::new(&env.home).join(".cache/llama.cpp"),
            format!("the default for HOME={}", env.home),
        )
    };
    Cache {
        what,
        mount_dir: path.clone(),
        path,
        from,
        host_dir,
    }
}

/// Where newer llama.cpp builds put `-hf` downloads: `LLAMA_CACHE` when set, else the hub cache.
fn llama_hub_cache(env: &EngineEnv) -> Cache {
    match env.get("LLAMA_CACHE") {
        Some(_) => llama_cache(env),
        None => hf_hub_cache(env),
    }
}

/// Every directory the engine writes downloads into for `pull`.
pub fn written_caches(pull: &Pull, env: &EngineEnv) -> Vec<Cache> {
    let mut caches = match pull {
        Pull::HubId(_) => vec![hf_hub_cache(env)],
        Pull::LlamaHf(_) => vec![llama_cache(env), llama_hub_cache(env)],
        Pull::LlamaUrl(_) => vec![llama_cache(env)],
    };
    caches.dedup_by(|a, b| a.path == b.path);
    caches
}

/// How a container path is mounted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Coverage {
    /// Under a read-write mount.
    Writable,
    /// Its deepest mount is read-only (this mount).
    ReadOnly(String),
    /// On no mount: the container's writable layer.
    Unmounted,
}

/// The deepest of `mounts` (`HOST:CONTAINER[:opts]`) whose container side holds `path`.
pub fn coverage(mounts: &[String], path: &Path) -> Coverage {
    let mut best: Option<(usize, &String, bool)> = None;
    for m in mounts {
        let mut parts = m.splitn(3, ':');
        let (Some(_host), Some(container)) = (parts.next(), parts.next()) else {
            continue;
        };
        let ro = parts
            .next()
            .is_some_and(|o| o.split(',').any(|x| x == "ro" || x == "readonly"));
        let c = Path::new(container);
        if path.starts_with(c) {
            let depth = c.components().count();
            if best.is_none_or(|(d, _, _)| depth > d) {
                best = Some((depth, m, ro));
            }
        }
    }
    match best {
        None => Coverage::Unmounted,
        Some((_, m, true)) => Coverage::ReadOnly(m.clone()),
        Some((_, _, false)) => Coverage::Writable,
    }
}

/// The seat's Hugging Face token, by name only: `HF_TOKEN is set`, or `None`.
pub fn token_source(seat: &Seat, env: &EngineEnv) -> Option<String> {
    if let Some(v) = TOKEN_VARS.iter().find(|v| env.get(v).is_some()) {
        return Some(format!("{v} is set"));
    }
    flag_value(args_of(seat), &["-hft", "--hf-token"]).map(|_| "--hf-token is given".into())
}

/// The findings for `seat`'s downloads: caches outside every read-write mount (Docker) and an
/// anonymous hub pull.
pub fn check(seat: &Seat) -> Vec<SeatFinding> {
    let Some(pull) = pull_of(seat) else {
        return Vec::new();
    };
    let env = EngineEnv::of(seat);
    let mut findings = Vec::new();
    if let Launch::Docker(d) = &seat.launch {
        for cache in written_caches(&pull, &env) {
            if let Some(f) = writable_layer_finding(seat, &cache, &env, &d.mounts) {
                findings.push(f);
            }
        }
    }
    if let Some(repo) = pull.repo()
        && token_source(seat, &env).is_none()
    {
        findings.push(
            SeatFinding::new(
                "anonymous-hub-pull",
                FindingSeverity::Note,
                format!(
                    "{repo} is pulled without a Hugging Face token (neither {} is set in the seat's environment): anonymous pulls are rate limited (docs/field-cases.md B6: ~3.7 MB/s anonymous against ~90 MB/s authenticated)",
                    TOKEN_VARS.join(" nor ")
                ),
            )
            .with_fix(format!(
                "set HF_TOKEN in the seat's {}.env (the value is never printed or recorded)",
                seat.backend_name()
            )),
        );
    }
    findings
}

/// `cache-in-writable-layer` for `cache` when no read-write mount holds it.
fn writable_layer_finding(
    seat: &Seat,
    cache: &Cache,
    env: &EngineEnv,
    mounts: &[String],
) -> Option<SeatFinding> {
    let assumed = if env.home_assumed {
        " (the container is assumed to run as root, HOME=/root: set HOME in docker.env if its user differs)"
    } else {
        ""
    };
    let mount = format!("{}:{}", cache.host_dir, cache.mount_dir.display());
    let remote = if seat.host == "local" {
        ""
    } else {
        " (on the Docker host; write ~ out as an absolute path: Docker does not expand it)"
    };
    let (message, fix) = match coverage(mounts, &cache.path) {
        Coverage::Writable => return None,
        Coverage::Unmounted => (
            format!(
                "{} {} ({}) is on no mount: what the engine downloads there lands in the container's writable layer, silently, and is lost with the container (docs/field-cases.md B7: ~20 GB went there){assumed}",
                cache.what,
                cache.path.display(),
                cache.from
            ),
            format!("add mounts = [\"{mount}\"] to [seat.docker]{remote}"),
        ),
        Coverage::ReadOnly(m) => (
            format!(
                "{} {} ({}) is only on the read-only mount {m:?}: the engine cannot write its downloads there{assumed}",
                cache.what,
                cache.path.display(),
                cache.from
            ),
            format!("mount it read-write: mounts = [\"{mount}\"] (without :ro){remote}"),
        ),
    };
    Some(
        SeatFinding::new("cache-in-writable-layer", FindingSeverity::Warning, message)
            .with_fix(fix),
    )
}

#[cfg(test)]
mod tests;

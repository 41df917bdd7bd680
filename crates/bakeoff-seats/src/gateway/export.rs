//! `bakeoff gateway export`: a LiteLLM proxy `config.yaml` from the fleet
//! (docs.litellm.ai/docs/proxy/configs): one `model_list` entry per served name of every seat
//! and per `[[route]]` alias, each pointing at the seat's `http://ADDRESS:PORT/v1`.
//!
//! The provider prefix of `litellm_params.model` follows LiteLLM's provider docs: `hosted_vllm/`
//! for a vLLM server (docs.litellm.ai/docs/providers/vllm), `openai/` for any other
//! OpenAI-compatible server — llama.cpp's `llama-server`, SGLang, a generic endpoint
//! (docs.litellm.ai/docs/providers/openai_compatible). The served name after the prefix is what
//! the proxy sends upstream as `model`.
//!
//! A key is never written: with `--api-key-env NAME` the entry reads `os.environ/NAME`, which the
//! proxy resolves from its own environment at load (docs.litellm.ai/docs/proxy/configs, "Load
//! API keys from the environment"). Without it an `openai/` entry gets [`NO_KEY`], a placeholder
//! and not a secret: the OpenAI client inside LiteLLM refuses to send a request without some key
//! ("Missing credentials", measured against litellm 1.106.12 in front of llama-server), and a
//! server started without `--api-key` ignores the header. `hosted_vllm/` needs none.

use std::io::Write;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::GatewayError;
use crate::fleet::types::{Engine, Fleet, Role, Route, Seat};

/// A LiteLLM proxy config: only the part bakeoff writes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LitellmConfig {
    pub model_list: Vec<ModelEntry>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelEntry {
    /// The name clients ask for (an alias or a served name).
    pub model_name: String,
    pub litellm_params: LitellmParams,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LitellmParams {
    /// `<provider>/<served name>`.
    pub model: String,
    /// `http://ADDRESS:PORT/v1`.
    pub api_base: String,
    /// `os.environ/NAME`, never a key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key: Option<String>,
}

#[derive(Debug, Clone, Default)]
pub struct ExportOptions {
    /// The environment variable the proxy reads the upstream key from.
    pub api_key_env: Option<String>,
}

/// The config, and what was left out of it and why (written as comments above it).
#[derive(Debug, Clone)]
pub struct Export {
    pub config: LitellmConfig,
    pub left_out: Vec<String>,
}

/// The placeholder key of an `openai/` entry when no `--api-key-env` is given (module docs).
pub const NO_KEY: &str = "none";

/// LiteLLM's provider prefix for a seat's engine (see the module docs for the sources).
pub fn provider_prefix(engine: Engine) -> &'static str {
    match engine {
        Engine::Vllm => "hosted_vllm",
        _ => "openai",
    }
}

/// The served name in a route's `model` (`hosted_vllm/char-rp` → `char-rp`): the known
/// provider prefixes are dropped, anything else is a served name already (`Qwen/Qwen3-8B`).
fn served_of(model: &str) -> &str {
    ["hosted_vllm/", "openai/", "vllm/"]
        .iter()
        .find_map(|p| model.strip_prefix(p))
        .unwrap_or(model)
}

fn is_env_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The `model_list` for `fleet`: every non-dormant seat's served names, then every alias.
pub fn export(fleet: &Fleet, opts: &ExportOptions) -> Result<Export, GatewayError> {
    let api_key = match &opts.api_key_env {
        Some(n) if !is_env_name(n) => return Err(GatewayError::KeyEnv { name: n.clone() }),
        Some(n) => Some(format!("os.environ/{n}")),
        None => None,
    };
    let mut list: Vec<ModelEntry> = Vec::new();
    let mut left_out = Vec::new();
    let mut push = |e: ModelEntry| {
        if !list.contains(&e) {
            list.push(e);
        }
    };
    let entry = |name: &str, seat: &Seat, served: &str| {
        let prefix = provider_prefix(seat.engine);
        ModelEntry {
            model_name: name.to_string(),
            litellm_params: LitellmParams {
                model: format!("{prefix}/{served}"),
                api_base: format!("{}/v1", fleet.seat_url(seat)),
                api_key: api_key
                    .clone()
                    .or_else(|| (prefix == "openai").then(|| NO_KEY.to_string())),
            },
        }
    };
    for seat in &fleet.seats {
        if seat.role == Role::Dormant {
            // A dormant seat is stopped on purpose (a rollback target): routing to it would be
            // an outage by construction.
            left_out.push(format!(
                "seat {} is dormant: its names are not routed",
                seat.name
            ));
            continue;
        }
        for served in &seat.served_model_names {
            push(entry(served, seat, served));
        }
    }
    for route in &fleet.routes {
        match route.seat.as_deref().and_then(|s| fleet.seat(s)) {
            Some(seat) if seat.role == Role::Dormant => left_out.push(format!(
                "alias {} resolves to the dormant seat {}: not routed",
                route.alias, seat.name
            )),
            Some(seat) => {
                let served = route
                    .model
                    .as_deref()
                    .map(served_of)
                    .or(seat.served_model_names.first().map(String::as_str))
                    .unwrap_or(route.alias.as_str());
                push(entry(&route.alias, seat, served));
            }
            None => outside(route, &api_key, &mut push, &mut left_out),
        }
    }
    Ok(Export {
        config: LitellmConfig { model_list: list },
        left_out,
    })
}

/// An alias that points outside the fleet is kept as written when it says where and what.
fn outside(
    route: &Route,
    api_key: &Option<String>,
    push: &mut impl FnMut(ModelEntry),
    left_out: &mut Vec<String>,
) {
    match (&route.api_base, &route.model) {
        (Some(base), Some(model)) => push(ModelEntry {
            model_name: route.alias.clone(),
            litellm_params: LitellmParams {
                model: model.clone(),
                api_base: base.clone(),
                api_key: api_key.clone(),
            },
        }),
        _ => left_out.push(format!(
            "alias {} resolves to no seat and has no api_base and model: not routed",
            route.alias
        )),
    }
}

/// The file's text: a header naming its source and what was left out, then the YAML.
pub fn render(fleet: &Fleet, export: &Export) -> Result<String, GatewayError> {
    let yaml = serde_yaml_ng::to_string(&export.config)
        .map_err(|e| GatewayError::Render(e.to_string()))?;
    let mut out = format!(
        "# LiteLLM proxy config written by `bakeoff gateway export` from {}.\n\
         # Regenerate it from the fleet file rather than editing it by hand.\n",
        fleet.path.display()
    );
    for l in &export.left_out {
        out.push_str(&format!("# left out: {}\n", l.replace('\n', " ")));
    }
    out.push_str(&yaml);
    Ok(out)
}

/// Write `text` to `path` atomically (a temporary file in the same directory, then a rename);
/// an existing file is replaced only with `force`.
pub fn write(path: &Path, text: &str, force: bool) -> Result<(), GatewayError> {
    let err = |source| GatewayError::Write {
        path: path.to_path_buf(),
        source,
    };
    // A directory is never the file to write, with --force or without.
    if path.is_dir() {
        return Err(GatewayError::IsDir {
            path: path.to_path_buf(),
        });
    }
    if !force && path.exists() {
        return Err(GatewayError::Exists {
            path: path.to_path_buf(),
        });
    }
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(err)?;
    tmp.write_all(text.as_bytes()).map_err(err)?;
    tmp.as_file().sync_all().map_err(err)?;
    if force {
        tmp.persist(path).map_err(|e| err(e.error))?;
    } else {
        // No-clobber: a file that appeared since the check above is still not replaced.
        tmp.persist_noclobber(path).map_err(|e| {
            if e.error.kind() == std::io::ErrorKind::AlreadyExists {
                GatewayError::Exists {
                    path: path.to_path_buf(),
                }
            } else {
                err(e.error)
            }
        })?;
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn fleet(dir: &Path) -> Fleet {
        let text = r#"
[hosts.gpu1]
address = "10.0.0.7"
gpus = 2

[[seat]]
name = "char-rp"
host = "gpu1"
engine = "vllm"
role = "production"
port = 8016
served_model_names = ["char-rp", "char-rp-thinking"]
[seat.docker]
image = "vllm/vllm-openai:v0.11.0"

[[seat]]
name = "gemma"
engine = "llama.cpp"
role = "bench"
port = 8080
served_model_names = ["gemma-3-270m"]
[seat.process]
command = "llama-server"

[[seat]]
name = "old"
host = "gpu1"
engine = "vllm"
role = "dormant"
port = 8017
served_model_names = ["old-model"]
[seat.docker]
image = "vllm/vllm-openai:v0.10.0"

[[route]]
alias = "char-rp-reasoning"
seat = "char-rp"
model = "hosted_vllm/char-rp-thinking"

[[route]]
alias = "small"
api_base = "http://127.0.0.1:8080/v1"

[[route]]
alias = "legacy"
seat = "old"
"#;
        let p = dir.join("fleet.toml");
        std::fs::write(&p, text).unwrap();
        Fleet::load(&p).unwrap()
    }

    #[test]
    fn every_alias_and_served_name_routes_to_its_seat() {
        let dir = tempfile::tempdir().unwrap();
        let f = fleet(dir.path());
        let e = export(&f, &ExportOptions::default()).unwrap();
        let names: Vec<(&str, &str, &str)> = e
            .config
            .model_list
            .iter()
            .map(|m| {
                (
                    m.model_name.as_str(),
                    m.litellm_params.model.as_str(),
                    m.litellm_params.api_base.as_str(),
                )
            })
            .collect();
        assert_eq!(
            names,
            [
                ("char-rp", "hosted_vllm/char-rp", "http://10.0.0.7:8016/v1"),
                (
                    "char-rp-thinking",
                    "hosted_vllm/char-rp-thinking",
                    "http://10.0.0.7:8016/v1"
                ),
                (
                    "gemma-3-270m",
                    "openai/gemma-3-270m",
                    "http://127.0.0.1:8080/v1"
                ),
                (
                    "char-rp-reasoning",
                    "hosted_vllm/char-rp-thinking",
                    "http://10.0.0.7:8016/v1"
                ),
                ("small", "openai/gemma-3-270m", "http://127.0.0.1:8080/v1"),
            ]
        );
        assert!(e.left_out.iter().any(|l| l.contains("seat old is dormant")));
        assert!(e.left_out.iter().any(|l| l.contains("alias legacy")));
        // A placeholder only where LiteLLM's OpenAI client needs one; never a key.
        for m in &e.config.model_list {
            let want = m
                .litellm_params
                .model
                .starts_with("openai/")
                .then_some(NO_KEY);
            assert_eq!(m.litellm_params.api_key.as_deref(), want, "{m:?}");
        }
    }

    #[test]
    fn the_export_round_trips_through_the_fleets_own_import() {
        let dir = tempfile::tempdir().unwrap();
        let f = fleet(dir.path());
        let e = export(&f, &ExportOptions::default()).unwrap();
        let text = render(&f, &e).unwrap();
        let routes = f.import_litellm(&text, &dir.path().join("x.yaml")).unwrap();
        for r in &routes {
            let want = match r.alias.as_str() {
                "char-rp" | "char-rp-thinking" | "char-rp-reasoning" => "char-rp",
                _ => "gemma",
            };
            assert_eq!(r.seat.as_deref(), Some(want), "{r:?}");
        }
        assert_eq!(routes.len(), 5);
    }

    #[test]
    fn a_key_is_named_never_written() {
        let dir = tempfile::tempdir().unwrap();
        let f = fleet(dir.path());
        let opts = ExportOptions {
            api_key_env: Some("LLM_KEY".into()),
        };
        let text = render(&f, &export(&f, &opts).unwrap()).unwrap();
        assert!(text.contains("api_key: os.environ/LLM_KEY"), "{text}");
        let bad = ExportOptions {
            api_key_env: Some("sk-123 abc".into()),
        };
        let msg = export(&f, &bad).unwrap_err().to_string();
        assert!(msg.contains("not an environment variable name"), "{msg}");
    }

    #[test]
    fn an_existing_file_is_kept_without_force() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("config.yaml");
        std::fs::write(&p, "mine").unwrap();
        let msg = write(&p, "new", false).unwrap_err().to_string();
        assert!(msg.contains("--force"), "{msg}");
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "mine");
        write(&p, "new", true).unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "new");
    }

    /// A directory is the wrong --out, said with the fix; --force does not make it a file.
    #[test]
    fn a_directory_is_refused_with_or_without_force() {
        let dir = tempfile::tempdir().unwrap();
        for force in [false, true] {
            let e = write(dir.path(), "new", force).unwrap_err();
            assert!(matches!(e, GatewayError::IsDir { .. }), "{e:?}");
            let msg = e.to_string();
            assert!(
                msg.contains("is a directory") && msg.contains("fix: e.g. --out "),
                "{msg}"
            );
            assert!(!msg.contains("--force"), "{msg}");
        }
    }
}

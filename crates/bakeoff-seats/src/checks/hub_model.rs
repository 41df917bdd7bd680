//! What a seat pulls from the Hugging Face hub, read from its launch arguments: a hub id given
//! as the model (vLLM / SGLang `serve org/name`, `--model org/name`, `--model-path org/name`),
//! or llama.cpp's download flags (`-hf`/`-hfr`/`--hf-repo`, `--hf-file`, `-mu`/`--model-url`).

use bakeoff_model::args::flag_value;

use crate::fleet::launch::Launch;
use crate::fleet::types::{Engine, Seat};

/// How the engine fetches its weights.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pull {
    /// A hub id the engine resolves through the Hugging Face cache (vLLM, SGLang,
    /// transformers-based engines).
    HubId(String),
    /// llama.cpp `-hf REPO` (with or without `--hf-file`).
    LlamaHf(String),
    /// llama.cpp `-mu URL`: a plain download into llama.cpp's own cache.
    LlamaUrl(String),
}

impl Pull {
    /// The hub repository, when the pull is from the hub (a `-mu` URL may be anywhere).
    pub fn repo(&self) -> Option<&str> {
        match self {
            Pull::HubId(r) | Pull::LlamaHf(r) => Some(r),
            Pull::LlamaUrl(u) => u.contains("huggingface.co").then_some(u.as_str()),
        }
    }
}

/// The engine's arguments, whatever the backend.
pub fn args_of(seat: &Seat) -> &[String] {
    match &seat.launch {
        Launch::Process(p) => &p.args,
        Launch::Docker(d) => &d.command,
    }
}

/// What `seat` downloads from the hub, if anything. A model that is a path (absolute, `./`,
/// `~`, or for a process seat one that exists here) is local and pulls nothing.
pub fn pull_of(seat: &Seat) -> Option<Pull> {
    let args = args_of(seat);
    if seat.engine == Engine::LlamaCpp {
        if let Some(r) = flag_value(args, &["-hf", "-hfr", "--hf-repo"]) {
            return Some(Pull::LlamaHf(r.to_string()));
        }
        if let Some(f) = flag_value(args, &["-hff", "--hf-file"]) {
            // `--hf-file` alone names a file of the repo given elsewhere (an env preset).
            return Some(Pull::LlamaHf(f.to_string()));
        }
        return flag_value(args, &["-mu", "--model-url"]).map(|u| Pull::LlamaUrl(u.to_string()));
    }
    let model = flag_value(args, &["--model", "--model-path"]).or_else(|| {
        args.iter()
            .position(|a| a == "serve")
            .and_then(|i| args.get(i + 1))
            .filter(|m| !m.starts_with('-'))
            .map(String::as_str)
    })?;
    let local_here =
        matches!(seat.launch, Launch::Process(_)) && std::path::Path::new(model).exists();
    (is_hub_id(model) && !local_here).then(|| Pull::HubId(model.to_string()))
}

/// `org/name` as the hub spells repository ids: one `/`, each side starting with a letter or
/// digit and made of letters, digits, `-`, `_`, `.`.
pub fn is_hub_id(s: &str) -> bool {
    let ok_part = |p: &str| {
        p.chars().next().is_some_and(|c| c.is_ascii_alphanumeric())
            && p.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    };
    match s.split_once('/') {
        Some((org, name)) => !name.contains('/') && ok_part(org) && ok_part(name),
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hub_ids_and_paths() {
        assert!(is_hub_id("Qwen/Qwen3-8B"));
        assert!(is_hub_id("google/gemma-3-270m-it"));
        assert!(!is_hub_id("/models/qwen"));
        assert!(!is_hub_id("./qwen/x"));
        assert!(!is_hub_id("~/models/x"));
        assert!(!is_hub_id("models/a/b"));
        assert!(!is_hub_id("qwen3.gguf"));
    }
}

//! Candidate slugs: `<model>-<engine>[-<quant>][-<window>]`, e.g. `gemma-3-270m-llamacpp-q4km-32k`.
//! Lower case, `[a-z0-9-]` only, so a slug is always a safe file name.

use crate::{ContextWindow, EngineKind};

/// Build the default slug. The quantization is removed from the model part when the model name
/// already carries it, so it appears once.
pub fn default_slug(
    model: &str,
    engine: EngineKind,
    quantization: Option<&str>,
    window: ContextWindow,
) -> String {
    let base = model.rsplit('/').next().unwrap_or(model);
    let base = base
        .strip_suffix(".gguf")
        .unwrap_or(base)
        .to_ascii_lowercase();
    let quant = quantization.map(|q| q.to_ascii_lowercase());
    let mut model_part = base.clone();
    if let Some(q) = &quant {
        for sep in ['-', '.', '_'] {
            if let Some(stripped) = model_part.strip_suffix(&format!("{sep}{q}")) {
                model_part = stripped.to_string();
                break;
            }
        }
    }
    let mut parts = vec![sanitize(&model_part), engine.slug_part().to_string()];
    if let Some(q) = quant {
        parts.push(sanitize(&q).replace('-', ""));
    }
    if let Some(t) = window.tokens {
        parts.push(window_label(t));
    }
    parts.retain(|p| !p.is_empty());
    parts.join("-")
}

/// 32768 → `32k`, 131072 → `128k`, 4000 → `4000`.
pub fn window_label(tokens: u64) -> String {
    if tokens >= 1024 && tokens.is_multiple_of(1024) {
        format!("{}k", tokens / 1024)
    } else {
        tokens.to_string()
    }
}

/// Anything outside `[a-z0-9]` becomes one `-`; leading and trailing dashes are cut.
pub fn sanitize(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    out.trim_matches('-').to_string()
}

/// A `--slug` that is not already safe; `suggested` is what sanitizing it gives.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("slug {given:?} must be lower-case letters, digits and single dashes (e.g. {suggested:?})")]
pub struct BadSlug {
    pub given: String,
    pub suggested: String,
}

/// A user-given `--slug` must already be safe: it names files.
pub fn validate_slug(s: &str) -> Result<(), BadSlug> {
    if s.is_empty() || s.len() > 200 || sanitize(s) != s {
        return Err(BadSlug {
            given: s.to_string(),
            suggested: sanitize(s),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::WindowSource;

    fn w(t: u64) -> ContextWindow {
        ContextWindow {
            tokens: Some(t),
            source: WindowSource::LlamacppSlots,
        }
    }

    #[test]
    fn llama_cpp_gguf_path() {
        assert_eq!(
            default_slug(
                "/root/.cache/bakeoff/models/gemma-3-270m-q4_k_m.gguf",
                EngineKind::LlamaCpp,
                Some("q4_k_m"),
                w(32768)
            ),
            "gemma-3-270m-llamacpp-q4km-32k"
        );
    }

    #[test]
    fn hub_id_with_quant_in_name() {
        assert_eq!(
            default_slug(
                "nvidia/Gemma-4-31B-IT-NVFP4",
                EngineKind::Vllm,
                Some("nvfp4"),
                w(131072)
            ),
            "gemma-4-31b-it-vllm-nvfp4-128k"
        );
    }

    #[test]
    fn unknown_quant_and_window() {
        assert_eq!(
            default_slug(
                "Qwen/Qwen3-8B",
                EngineKind::Generic,
                None,
                ContextWindow::UNKNOWN
            ),
            "qwen3-8b-generic"
        );
        assert_eq!(window_label(4000), "4000");
    }

    #[test]
    fn user_slugs_are_checked() {
        assert!(validate_slug("ok-slug-1").is_ok());
        assert!(validate_slug("../etc").is_err());
        assert!(validate_slug("Upper").is_err());
        assert!(validate_slug("").is_err());
    }
}

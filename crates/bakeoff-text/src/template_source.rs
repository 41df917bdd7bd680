//! Where chat templates live, and getting them out: a model directory (`chat_template.jinja`,
//! which transformers ≥ 4.43 writes and prefers, else `tokenizer_config.json`'s
//! `chat_template`, a string or a list of `{name, template}`), one of those files directly,
//! a processor's `chat_template.json`, or a GGUF file (`tokenizer.chat_template` and the
//! named `tokenizer.chat_template.<name>` keys, read through bakeoff-model). A running
//! endpoint's template comes from discovery (llama.cpp `/props`) in the binary.

use std::path::{Path, PathBuf};

use serde_json::Value;

/// One template found at a path.
#[derive(Debug, Clone, PartialEq)]
pub struct ExtractedTemplate {
    /// What the table calls it: the path, plus `#name` for a named template other than the
    /// default.
    pub label: String,
    /// The file and key it came from (`tokenizer_config.json chat_template`).
    pub source: String,
    pub text: String,
    /// `bos_token` / `eos_token` from tokenizer_config.json, when given there.
    pub bos_token: Option<String>,
    pub eos_token: Option<String>,
}

/// Why no template came out of a path.
#[derive(Debug, thiserror::Error)]
pub enum TemplateSourceError {
    #[error("{}: cannot read it ({source}); fix: check the path", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}: {what}; fix: {fix}", path.display())]
    NoTemplate {
        path: PathBuf,
        what: String,
        fix: String,
    },
}

const MAX_JSON: u64 = 64 * 1024 * 1024;

fn read_text(path: &Path) -> Result<String, TemplateSourceError> {
    let io = |source| TemplateSourceError::Io {
        path: path.to_owned(),
        source,
    };
    let len = std::fs::metadata(path).map_err(io)?.len();
    if len > MAX_JSON {
        return Err(TemplateSourceError::NoTemplate {
            path: path.to_owned(),
            what: format!("{len} bytes, too large for a template or tokenizer config"),
            fix: "point at the template file, tokenizer_config.json or the model directory".into(),
        });
    }
    std::fs::read_to_string(path).map_err(io)
}

fn token_string(v: Option<&Value>) -> Option<String> {
    match v? {
        Value::String(s) => Some(s.clone()),
        Value::Object(o) => o.get("content").and_then(Value::as_str).map(str::to_owned),
        _ => None,
    }
}

/// Templates in a JSON config (`tokenizer_config.json`, `chat_template.json`).
fn from_json(path: &Path, label: &str) -> Result<Vec<ExtractedTemplate>, TemplateSourceError> {
    let text = read_text(path)?;
    let v: Value = serde_json::from_str(&text).map_err(|e| TemplateSourceError::NoTemplate {
        path: path.to_owned(),
        what: format!("invalid JSON ({e})"),
        fix: "repair or re-download the file".into(),
    })?;
    let file = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let bos = token_string(v.get("bos_token"));
    let eos = token_string(v.get("eos_token"));
    let mk = |label: String, source: String, text: &str| ExtractedTemplate {
        label,
        source,
        text: text.to_owned(),
        bos_token: bos.clone(),
        eos_token: eos.clone(),
    };
    match v.get("chat_template") {
        Some(Value::String(t)) => Ok(vec![mk(
            label.to_owned(),
            format!("{file} chat_template"),
            t,
        )]),
        Some(Value::Array(list)) => {
            // transformers: a list of {"name", "template"}; "default" is the one used.
            let mut out: Vec<ExtractedTemplate> = list
                .iter()
                .filter_map(|e| {
                    let name = e.get("name")?.as_str()?;
                    let t = e.get("template")?.as_str()?;
                    let l = if name == "default" {
                        label.to_owned()
                    } else {
                        format!("{label}#{name}")
                    };
                    Some(mk(l, format!("{file} chat_template[{name}]"), t))
                })
                .collect();
            out.sort_by_key(|t| t.label.contains('#'));
            Ok(out)
        }
        _ => Ok(Vec::new()),
    }
}

fn from_gguf(path: &Path, label: &str) -> Result<Vec<ExtractedTemplate>, TemplateSourceError> {
    let g = bakeoff_model::read_gguf_file(path).map_err(|e| TemplateSourceError::NoTemplate {
        path: path.to_owned(),
        what: e.to_string(),
        fix: "point at a complete .gguf file".into(),
    })?;
    let mut out = Vec::new();
    for kv in &g.metadata {
        let Some(t) = kv.value.as_str() else { continue };
        if kv.key == "tokenizer.chat_template" {
            out.insert(
                0,
                ExtractedTemplate {
                    label: label.to_owned(),
                    source: "GGUF tokenizer.chat_template".into(),
                    text: t.to_owned(),
                    bos_token: None,
                    eos_token: None,
                },
            );
        } else if let Some(name) = kv.key.strip_prefix("tokenizer.chat_template.") {
            out.push(ExtractedTemplate {
                label: format!("{label}#{name}"),
                source: format!("GGUF {}", kv.key),
                text: t.to_owned(),
                bos_token: None,
                eos_token: None,
            });
        }
    }
    Ok(out)
}

/// Every template at `path` (the default first). Errors when there is none: an audit of a
/// path without a template measured nothing.
pub fn extract_templates(path: &Path) -> Result<Vec<ExtractedTemplate>, TemplateSourceError> {
    let label = path.display().to_string();
    let found = if path.is_dir() {
        let jinja = path.join("chat_template.jinja");
        let mut found = Vec::new();
        if jinja.is_file() {
            let mut tc = if path.join("tokenizer_config.json").is_file() {
                from_json(&path.join("tokenizer_config.json"), &label)?
            } else {
                Vec::new()
            };
            let (bos, eos) = tc
                .first()
                .map(|t| (t.bos_token.clone(), t.eos_token.clone()))
                .unwrap_or_default();
            found.push(ExtractedTemplate {
                label: label.clone(),
                source: "chat_template.jinja".into(),
                text: read_text(&jinja)?,
                bos_token: bos,
                eos_token: eos,
            });
            // Named extras from tokenizer_config.json still count; its default is shadowed.
            tc.retain(|t| t.label.contains('#'));
            found.extend(tc);
        } else {
            for f in ["tokenizer_config.json", "chat_template.json"] {
                if path.join(f).is_file() && found.is_empty() {
                    found = from_json(&path.join(f), &label)?;
                }
            }
            if found.is_empty() {
                let ggufs: Vec<PathBuf> = std::fs::read_dir(path)
                    .map_err(|source| TemplateSourceError::Io {
                        path: path.to_owned(),
                        source,
                    })?
                    .filter_map(|e| e.ok().map(|e| e.path()))
                    .filter(|p| p.extension().is_some_and(|x| x == "gguf"))
                    .collect();
                if let [one] = ggufs.as_slice() {
                    found = from_gguf(one, &label)?;
                }
            }
        }
        found
    } else {
        match path.extension().and_then(|x| x.to_str()) {
            Some("gguf") => from_gguf(path, &label)?,
            Some("json") => from_json(path, &label)?,
            _ => vec![ExtractedTemplate {
                label: label.clone(),
                source: "template file".into(),
                text: read_text(path)?,
                bos_token: None,
                eos_token: None,
            }],
        }
    };
    if found.is_empty() {
        return Err(TemplateSourceError::NoTemplate {
            path: path.to_owned(),
            what: "no chat template found (no chat_template.jinja, no chat_template in tokenizer_config.json or chat_template.json, no tokenizer.chat_template in the GGUF)".into(),
            fix: "a base model has none; point at the instruct build, or pass the template file".into(),
        });
    }
    Ok(found)
}

//! How a request asks each engine for output constrained by a JSON Schema (docs/suites.md
//! "Structured output"), and what an engine's words say about the backend that compiled it.
//!
//! - OpenAI's `response_format: {"type": "json_schema", "json_schema": {"name", "schema",
//!   "strict": true}}`: served by llama.cpp's chat endpoint (b11434
//!   tools/server/server-common.cpp, the `response_format` branch reading
//!   `json_schema.schema`), vLLM's (0.32.0 vllm/entrypoints/generate/base/protocol.py
//!   `structured_outputs_from_response_format`: a `json_schema` response format becomes
//!   `structured_outputs.json`) and SGLang's. The default for every engine.
//! - vLLM's own: `structured_outputs: {"json": schema}` (0.32.0
//!   vllm/entrypoints/openai/chat_completion/protocol.py, `ChatCompletionRequest`), from 0.12.0,
//!   which removed the older `guided_json: schema` (docs.vllm.ai "Structured Outputs", the
//!   deprecation note). A newer vLLM sent `guided_json` treats it as an unknown extra field:
//!   HTTP 200, unconstrained output, a warning in its log only (0.32.0
//!   vllm/entrypoints/serve/engine/protocol.py `_REMOVED_GUIDED_FIELDS`).
//! - llama.cpp's own: the `json_schema` field (b11434 tools/server/README.md, "json_schema:
//!   Set a JSON schema for grammar-based sampling").

use bakeoff_artifact::EngineKind;
use serde_json::{Map, Value, json};

/// The request form that carries a schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SchemaForm {
    /// OpenAI's `response_format` of type `json_schema`, `strict: true`.
    ResponseFormat,
    /// vLLM 0.12.0 and later: `structured_outputs.json`.
    StructuredOutputs,
    /// vLLM before 0.12.0: `guided_json`.
    GuidedJson,
    /// llama.cpp: `json_schema`.
    JsonSchema,
}

impl SchemaForm {
    pub const ALL: [SchemaForm; 4] = [
        SchemaForm::ResponseFormat,
        SchemaForm::StructuredOutputs,
        SchemaForm::GuidedJson,
        SchemaForm::JsonSchema,
    ];

    /// The name in artifacts and on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            SchemaForm::ResponseFormat => "response-format",
            SchemaForm::StructuredOutputs => "structured-outputs",
            SchemaForm::GuidedJson => "guided-json",
            SchemaForm::JsonSchema => "json-schema",
        }
    }

    pub fn named(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|f| f.as_str() == s)
    }

    /// Put `schema` (named `name`) into `extra`, the request's engine-specific fields.
    pub fn apply(self, name: &str, schema: &Value, extra: &mut Map<String, Value>) {
        match self {
            SchemaForm::ResponseFormat => {
                extra.insert(
                    "response_format".into(),
                    json!({
                        "type": "json_schema",
                        "json_schema": {"name": name, "schema": schema, "strict": true}
                    }),
                );
            }
            SchemaForm::StructuredOutputs => {
                extra.insert("structured_outputs".into(), json!({ "json": schema }));
            }
            SchemaForm::GuidedJson => {
                extra.insert("guided_json".into(), schema.clone());
            }
            SchemaForm::JsonSchema => {
                extra.insert("json_schema".into(), schema.clone());
            }
        }
    }
}

/// What `--schema-form` asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FormChoice {
    /// OpenAI's form, which every engine here serves.
    #[default]
    Auto,
    /// The engine's own form: vLLM's by its version, llama.cpp's `json_schema`; OpenAI's for
    /// an engine without one (SGLang's chat endpoint, a gateway).
    Native,
    /// This form, whatever the engine.
    Forced(SchemaForm),
}

impl FormChoice {
    pub fn as_str(self) -> &'static str {
        match self {
            FormChoice::Auto => "auto",
            FormChoice::Native => "native",
            FormChoice::Forced(f) => f.as_str(),
        }
    }

    pub fn named(s: &str) -> Option<Self> {
        match s {
            "auto" => Some(FormChoice::Auto),
            "native" => Some(FormChoice::Native),
            other => SchemaForm::named(other).map(FormChoice::Forced),
        }
    }

    /// Every name `--schema-form` takes, in `--help`'s order.
    pub fn names() -> Vec<&'static str> {
        let mut v = vec!["auto", "native"];
        v.extend(SchemaForm::ALL.iter().map(|f| f.as_str()));
        v
    }

    /// The form sent to `engine` (of `version`, when known).
    pub fn resolve(self, engine: EngineKind, version: Option<&str>) -> SchemaForm {
        match self {
            FormChoice::Auto => SchemaForm::ResponseFormat,
            FormChoice::Forced(f) => f,
            FormChoice::Native => match engine {
                EngineKind::LlamaCpp => SchemaForm::JsonSchema,
                EngineKind::Vllm => match version.and_then(major_minor) {
                    Some(v) if v < (0, 12) => SchemaForm::GuidedJson,
                    _ => SchemaForm::StructuredOutputs,
                },
                EngineKind::Sglang | EngineKind::Generic => SchemaForm::ResponseFormat,
            },
        }
    }
}

/// `(major, minor)` of a version string such as `0.32.0` or `v0.11.2rc1`.
fn major_minor(v: &str) -> Option<(u64, u64)> {
    let v = v.trim().trim_start_matches('v');
    let mut parts = v.split('.');
    let major = parts.next()?.parse().ok()?;
    let minor: String = parts
        .next()?
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    Some((major, minor.parse().ok()?))
}

/// The structured-output backend an engine's own words name (a refusal's message, a reply's
/// field), lower case: `xgrammar`, `guidance`, `outlines`, `lm-format-enforcer`, or llama.cpp's
/// grammar sampler (`llama.cpp-grammar`, named by its `json_schema_to_grammar` / `grammar`
/// errors). `None` when the words name none.
///
/// vLLM's guidance backend words its refusals `Grammar error: …` (0.32.0
/// vllm/v1/structured_output/backend_guidance.py, `validate_guidance_grammar`), the backend
/// vLLM's `auto` falls back to when xgrammar rejects a schema (vllm/sampling_params.py): from
/// vLLM those words name guidance.
pub fn backend_named(engine: EngineKind, text: &str) -> Option<&'static str> {
    let t = text.to_ascii_lowercase();
    if engine == EngineKind::Vllm && t.starts_with("grammar error:") {
        return Some("guidance");
    }
    const NAMES: &[(&str, &str)] = &[
        ("xgrammar", "xgrammar"),
        ("llguidance", "guidance"),
        ("guidance", "guidance"),
        ("outlines", "outlines"),
        ("lm-format-enforcer", "lm-format-enforcer"),
        ("lm_format_enforcer", "lm-format-enforcer"),
        ("json_schema_to_grammar", "llama.cpp-grammar"),
        ("\"json_schema\":", "llama.cpp-grammar"),
        ("failed to parse grammar", "llama.cpp-grammar"),
    ];
    NAMES
        .iter()
        .find(|(needle, _)| t.contains(needle))
        .map(|(_, name)| *name)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn forms_by_engine_and_version() {
        let native = FormChoice::Native;
        assert_eq!(
            native.resolve(EngineKind::Vllm, Some("0.32.0")),
            SchemaForm::StructuredOutputs
        );
        assert_eq!(
            native.resolve(EngineKind::Vllm, Some("0.11.2")),
            SchemaForm::GuidedJson
        );
        assert_eq!(
            native.resolve(EngineKind::Vllm, None),
            SchemaForm::StructuredOutputs
        );
        assert_eq!(
            native.resolve(EngineKind::LlamaCpp, Some("b11434")),
            SchemaForm::JsonSchema
        );
        assert_eq!(
            native.resolve(EngineKind::Sglang, None),
            SchemaForm::ResponseFormat
        );
        assert_eq!(
            FormChoice::Auto.resolve(EngineKind::Vllm, Some("0.32.0")),
            SchemaForm::ResponseFormat
        );
        for n in FormChoice::names() {
            assert_eq!(FormChoice::named(n).unwrap().as_str(), n);
        }
        assert_eq!(FormChoice::named("guided"), None);
    }

    #[test]
    fn each_form_puts_the_schema_where_its_engine_reads_it() {
        let s = json!({"type": "object"});
        let mut m = Map::new();
        SchemaForm::ResponseFormat.apply("n", &s, &mut m);
        assert_eq!(m["response_format"]["json_schema"]["schema"], s);
        assert_eq!(m["response_format"]["json_schema"]["strict"], true);
        let mut m = Map::new();
        SchemaForm::StructuredOutputs.apply("n", &s, &mut m);
        assert_eq!(m["structured_outputs"]["json"], s);
        let mut m = Map::new();
        SchemaForm::GuidedJson.apply("n", &s, &mut m);
        assert_eq!(m["guided_json"], s);
        let mut m = Map::new();
        SchemaForm::JsonSchema.apply("n", &s, &mut m);
        assert_eq!(m["json_schema"], s);
    }

    #[test]
    fn backends_named_in_an_engines_words() {
        assert_eq!(
            backend_named(
                EngineKind::Vllm,
                "The provided JSON schema contains features not supported by xgrammar."
            ),
            Some("xgrammar")
        );
        assert_eq!(
            backend_named(
                EngineKind::LlamaCpp,
                r##""json_schema": Unrecognized schema: {"$ref":"#money"}"##
            ),
            Some("llama.cpp-grammar")
        );
        assert_eq!(
            backend_named(
                EngineKind::Vllm,
                r#"Grammar error: Unimplemented keys: ["uniqueItems"]"#
            ),
            Some("guidance")
        );
        assert_eq!(
            backend_named(EngineKind::LlamaCpp, "Grammar error: x"),
            None
        );
        assert_eq!(backend_named(EngineKind::Generic, "bad request"), None);
    }
}

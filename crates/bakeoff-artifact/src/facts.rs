//! What discovery learned about an endpoint.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Which engine serves the endpoint, as discovered (never assumed from a URL or a port).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum EngineKind {
    #[serde(
        rename = "llama.cpp",
        alias = "llamacpp",
        alias = "llama-cpp",
        alias = "llama-server"
    )]
    LlamaCpp,
    Vllm,
    Sglang,
    // Any other OpenAI-compatible server, or an engine not named (a plain comment: a documented
    // variant would change the schema's enum into a oneOf).
    #[default]
    Generic,
}

impl EngineKind {
    /// The engines that export Prometheus metrics under a family of their own, in the order a
    /// scrape is matched against them.
    pub const WITH_METRICS: [EngineKind; 3] =
        [EngineKind::Vllm, EngineKind::Sglang, EngineKind::LlamaCpp];

    /// The family of the engine's Prometheus metric names, their prefix before `:` (vLLM
    /// `vllm:generation_tokens_total`, SGLang `sglang:num_running_reqs`, llama.cpp `--metrics`
    /// `llamacpp:requests_processing`); `None` for a generic server.
    pub fn metrics_family(self) -> Option<&'static str> {
        match self {
            EngineKind::Vllm => Some("vllm"),
            EngineKind::Sglang => Some("sglang"),
            EngineKind::LlamaCpp => Some("llamacpp"),
            EngineKind::Generic => None,
        }
    }

    /// An engine named by an operator (a fleet file's `engine`, a plan's seat): case, `_`/`-`
    /// and llama.cpp's several spellings forgiven; anything unknown is `Generic`.
    pub fn parse(s: &str) -> Self {
        match s.trim().to_ascii_lowercase().replace('_', "-").as_str() {
            "vllm" => Self::Vllm,
            "sglang" => Self::Sglang,
            "llama.cpp" | "llamacpp" | "llama-cpp" | "llama-server" => Self::LlamaCpp,
            _ => Self::Generic,
        }
    }

    /// The short form used in slugs.
    pub fn slug_part(self) -> &'static str {
        match self {
            EngineKind::LlamaCpp => "llamacpp",
            EngineKind::Vllm => "vllm",
            EngineKind::Sglang => "sglang",
            EngineKind::Generic => "generic",
        }
    }
}

impl std::fmt::Display for EngineKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            EngineKind::LlamaCpp => "llama.cpp",
            EngineKind::Vllm => "vllm",
            EngineKind::Sglang => "sglang",
            EngineKind::Generic => "generic",
        })
    }
}

/// Where the context window came from. Suites that need a window refuse to guess when it is
/// `unknown`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum WindowSource {
    /// `--max-model-len N` given by the operator; wins over anything discovered.
    Hint,
    /// llama.cpp `/slots[].n_ctx`: the per-slot window (`-c` divided by `-np` unless `-kvu`).
    LlamacppSlots,
    /// llama.cpp `/props` `default_generation_settings.n_ctx` (when `/slots` is disabled).
    LlamacppProps,
    /// vLLM `/v1/models` `max_model_len`.
    VllmModels,
    /// SGLang `/v1/models` `max_model_len`.
    SglangModels,
    /// Any other server's `/v1/models` `max_model_len`.
    Models,
    Unknown,
}

impl WindowSource {
    /// The name the artifact stores (`hint`, `llamacpp-slots`, …): serde's, kebab-case.
    pub const fn as_str(self) -> &'static str {
        match self {
            WindowSource::Hint => "hint",
            WindowSource::LlamacppSlots => "llamacpp-slots",
            WindowSource::LlamacppProps => "llamacpp-props",
            WindowSource::VllmModels => "vllm-models",
            WindowSource::SglangModels => "sglang-models",
            WindowSource::Models => "models",
            WindowSource::Unknown => "unknown",
        }
    }
}

impl std::fmt::Display for WindowSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            WindowSource::Hint => "hint (--max-model-len)",
            WindowSource::LlamacppSlots => "llama.cpp /slots n_ctx",
            WindowSource::LlamacppProps => "llama.cpp /props n_ctx",
            WindowSource::VllmModels => "vLLM /v1/models max_model_len",
            WindowSource::SglangModels => "SGLang /v1/models max_model_len",
            WindowSource::Models => "/v1/models max_model_len",
            WindowSource::Unknown => "unknown",
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ContextWindow {
    pub tokens: Option<u64>,
    pub source: WindowSource,
}

impl ContextWindow {
    pub const UNKNOWN: ContextWindow = ContextWindow {
        tokens: None,
        source: WindowSource::Unknown,
    };
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ServedModel {
    pub id: String,
    /// `max_model_len` where the server gives it (vLLM, SGLang).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_model_len: Option<u64>,
}

/// How prompts can be counted in the served model's own tokens.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TokenizeSupport {
    pub works: bool,
    /// e.g. `llama.cpp POST /tokenize {content}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub route: Option<String>,
}

/// One control call made during discovery, kept as evidence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Probe {
    pub method: String,
    pub path: String,
    /// HTTP status, or none when the call failed before a response.
    pub status: Option<u16>,
    pub elapsed_ms: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ChatTemplateFact {
    #[serde(flatten)]
    pub fingerprint: TemplateFingerprint,
    /// Where the text came from, e.g. `llama.cpp /props chat_template`.
    pub source: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct EndpointFacts {
    pub engine: EngineKind,
    pub engine_version: Option<String>,
    pub models: Vec<ServedModel>,
    pub context_window: ContextWindow,
    /// The trained context (llama.cpp `n_ctx_train`): recorded, never used as the window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trained_context: Option<u64>,
    /// llama.cpp `/props` `total_slots`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_slots: Option<u64>,
    pub tokenize: TokenizeSupport,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chat_template: Option<ChatTemplateFact>,
    pub probes: Vec<Probe>,
    /// How the endpoint reacted to one prompt just past its window (the context suite's edge
    /// probe): an endpoint fact, never a model failure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overflow: Option<OverflowFact>,
    /// Whether the endpoint takes a request that offers tools (preflight's probe, sent when the
    /// `tool` suite is to run): absent when it was not probed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_calls: Option<ToolCallFact>,
    /// An `https://` endpoint's TLS: how its certificate was checked and what it says (one
    /// handshake before discovery's calls). Absent for `http://`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls: Option<TlsFact>,
}

/// An `https://` endpoint's TLS.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TlsFact {
    pub verification: TlsVerification,
    /// `--ca-cert` as given (a path), when one was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ca_cert: Option<String>,
    /// The certificate the endpoint presented; absent when no handshake succeeded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub certificate: Option<CertificateFact>,
    /// Why no handshake succeeded (an untrusted certificate names the fix).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// How the endpoint's certificate was checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum TlsVerification {
    /// Against the system's trust anchors.
    SystemRoots,
    /// Against the system's anchors and `--ca-cert FILE`.
    CaCert,
    /// Not verified: `--insecure` (any certificate, any name, accepted).
    Insecure,
}

/// What the endpoint's (leaf) certificate says.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CertificateFact {
    /// The subject's distinguished name, `CN=…,O=…`.
    pub subject: String,
    pub issuer: String,
    /// subjectAltName DNS names and IP addresses.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub names: Vec<String>,
    pub not_before: chrono::DateTime<chrono::Utc>,
    /// When it expires.
    pub not_after: chrono::DateTime<chrono::Utc>,
}

/// How the endpoint answered one request that offers a tool with `tool_choice: "auto"`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ToolCallFact {
    pub state: ToolCallState,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http_status: Option<u16>,
    /// The server's own words when it refused (escaped by every reporter: untrusted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_said: Option<String>,
    /// What to change on the server so it takes tool requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ToolCallState {
    /// The request was answered (whatever the model did with the tool).
    Accepted,
    /// The server refused the request because of its tools: tool calling is not configured.
    Refused,
    /// The probe could not tell (a timeout, a server error, a refusal about something else).
    Unknown,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct OverflowFact {
    /// `rejected-exceed-context-size`, `rejected-http-<status>`, `silent-truncation`,
    /// `accepted-beyond-window`, `connection-error`, `timeout`.
    pub behaviour: String,
    /// Prompt tokens sent, as the server's tokenizer counted them before sending.
    pub prompt_tokens_sent: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http_status: Option<u16>,
    /// `usage.prompt_tokens` when the server accepted the request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_prompt_tokens: Option<u64>,
}

impl EndpointFacts {
    /// The control calls the server refused for want of credentials, grouped by status:
    /// `401 on /props, /v1/models`. `None` when none was refused (401 or 403). Discovery's
    /// "generic engine, no model listed" is then no finding about the engine: it could not
    /// look.
    pub fn refused_text(&self) -> Option<String> {
        let mut groups: Vec<(u16, Vec<&str>)> = Vec::new();
        for p in &self.probes {
            let Some(s) = p.status.filter(|s| *s == 401 || *s == 403) else {
                continue;
            };
            match groups.iter_mut().find(|(g, _)| *g == s) {
                Some((_, paths)) => {
                    if !paths.contains(&p.path.as_str()) {
                        paths.push(&p.path)
                    }
                }
                None => groups.push((s, vec![&p.path])),
            }
        }
        (!groups.is_empty()).then(|| {
            groups
                .iter()
                .map(|(s, paths)| format!("{s} on {}", paths.join(", ")))
                .collect::<Vec<_>>()
                .join("; ")
        })
    }

    /// Was `/v1/models` refused (401/403)? Then "no model listed" says nothing.
    pub fn models_refused(&self) -> bool {
        self.probes
            .iter()
            .any(|p| p.path.ends_with("/models") && matches!(p.status, Some(401 | 403)))
    }
}

/// The endpoint as recorded: its URL with any credentials stripped, and its facts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct EndpointRecord {
    pub url: String,
    pub facts: Option<EndpointFacts>,
}

// Computed by `bakeoff_text::fingerprint` from the normalized text.
/// What identifies a chat template in an artifact or an audit table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TemplateFingerprint {
    /// sha256 of the normalized text, hex.
    pub sha256: String,
    /// The first 16 hex digits, as printed in tables.
    pub short: String,
    /// Line count of the normalized text.
    pub lines: usize,
}

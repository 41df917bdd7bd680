//! Discovery: what an endpoint is, from its own answers.
//!
//! Order: llama.cpp `/props`, SGLang `/server_info` (older `/get_server_info`), vLLM `/version`,
//! else `generic`. Then `/v1/models`, the window (with its source), whether tokenize works, and
//! the chat template. Every call is bounded and recorded as a [`Probe`]; none is a generation.

use std::time::{Duration, Instant};

use bakeoff_artifact::{
    ChatTemplateFact, ContextWindow, EndpointFacts, EngineKind, Probe, ServedModel,
    TokenizeSupport, WindowSource,
};
use serde_json::Value;
use url::Url;

use crate::dialect::{self, llamacpp, sglang, vllm};
use crate::{Client, EndpointUrl, Method, RequestError};

pub mod template;

#[derive(Debug, Clone)]
pub struct DiscoveryOptions {
    /// `--max-model-len N`: wins over anything discovered, recorded as source `hint`.
    pub max_model_len_hint: Option<u64>,
    /// Bound on each control call.
    pub probe_timeout: Duration,
    /// The whole discovery ends by then (the preflight's one budget): each call is bounded by
    /// what is left, and calls past it are not made.
    pub deadline: Option<Instant>,
}

impl Default for DiscoveryOptions {
    fn default() -> Self {
        Self {
            max_model_len_hint: None,
            probe_timeout: Duration::from_secs(10),
            deadline: None,
        }
    }
}

/// Facts plus what the caller needs but the artifact records elsewhere.
#[derive(Debug, Clone)]
pub struct Discovered {
    pub facts: EndpointFacts,
    /// The raw chat template, when exposed (hashed into `facts.chat_template`).
    pub chat_template: Option<String>,
    /// Quantization as the server states it (llama.cpp `model_ftype`).
    pub quantization: Option<String>,
    /// Set when no probe reached the server at all.
    pub unreachable: Option<RequestError>,
}

struct Prober<'a> {
    client: &'a Client,
    limit: Duration,
    deadline: Option<Instant>,
    probes: Vec<Probe>,
    connect_errors: Vec<RequestError>,
}

impl Prober<'_> {
    async fn call(
        &mut self,
        method: Method,
        url: Url,
        body: Option<&Value>,
    ) -> Option<(u16, Option<Value>)> {
        let path = url.path().to_string();
        let start = Instant::now();
        let limit = match self.deadline {
            Some(d) => self.limit.min(d.saturating_duration_since(start)),
            None => self.limit,
        };
        if limit.is_zero() {
            // The preflight's budget is spent: the call is not made (and not recorded).
            return None;
        }
        let res = self.client.control(method, url, body, limit).await;
        let elapsed_ms = start.elapsed().as_millis() as u64;
        let method_s = match method {
            Method::Get => "GET",
            Method::Post => "POST",
        };
        match res {
            Ok((status, v)) => {
                self.probes.push(Probe {
                    method: method_s.into(),
                    path,
                    status: Some(status),
                    elapsed_ms,
                    error: None,
                });
                Some((status, v))
            }
            Err(e) => {
                self.probes.push(Probe {
                    method: method_s.into(),
                    path,
                    status: None,
                    elapsed_ms,
                    error: Some(e.to_string()),
                });
                if e.is_unreachable() {
                    self.connect_errors.push(e);
                }
                None
            }
        }
    }

    /// The JSON body of a 2xx reply.
    async fn json_ok(&mut self, method: Method, url: Url, body: Option<&Value>) -> Option<Value> {
        match self.call(method, url, body).await {
            Some((s, Some(v))) if (200..300).contains(&s) => Some(v),
            _ => None,
        }
    }
}

/// Learn the endpoint's facts. Never fails: what could not be learned is recorded as unknown,
/// and `unreachable` is set when nothing answered.
pub async fn discover(client: &Client, opts: &DiscoveryOptions) -> Discovered {
    let mut p = Prober {
        client,
        limit: opts.probe_timeout,
        deadline: opts.deadline,
        probes: Vec::new(),
        connect_errors: Vec::new(),
    };
    let url = client.url().clone();
    let tls = tls_fact(client, &url, opts).await;

    let Identity {
        engine,
        version,
        props,
    } = identify(&mut p, &url).await;

    let models_body = if p.connect_errors.len() < p.probes.len() || p.probes.is_empty() {
        p.json_ok(Method::Get, url.v1_path("models"), None).await
    } else {
        None
    };
    let models = models_body.as_ref().map(parse_models).unwrap_or_default();

    let window = context_window(&mut p, &url, opts, engine, props.as_ref(), &models).await;
    // Still record llama.cpp's slots even when a hint won, so a wrong hint is visible.
    let trained_context = models_body.as_ref().and_then(llamacpp::trained_context);

    let tokenize = tokenize_support(&mut p, &url, engine, &models).await;

    let chat_template = props.as_ref().and_then(|pr| pr.chat_template.clone());
    let chat_template_fact = chat_template.as_ref().map(|t| ChatTemplateFact {
        fingerprint: bakeoff_text::fingerprint(t),
        source: "llama.cpp /props chat_template".into(),
    });
    let quantization = props
        .as_ref()
        .and_then(|pr| pr.model_ftype.as_deref())
        .and_then(llamacpp::quantization_from_ftype);

    let unreachable = if !p.probes.is_empty() && p.connect_errors.len() == p.probes.len() {
        p.connect_errors.first().cloned()
    } else {
        None
    };

    Discovered {
        facts: EndpointFacts {
            engine,
            engine_version: version,
            models,
            context_window: window,
            trained_context,
            total_slots: props.as_ref().and_then(|pr| pr.total_slots),
            tokenize,
            chat_template: chat_template_fact,
            probes: p.probes,
            overflow: None,
            tool_calls: None,
            tls,
        },
        chat_template,
        quantization,
        unreachable,
    }
}

/// An `https://` endpoint's certificate and how it was checked, from one handshake within the
/// probe limit (and the preflight's deadline); `None` for `http://`.
async fn tls_fact(
    client: &Client,
    url: &EndpointUrl,
    opts: &DiscoveryOptions,
) -> Option<bakeoff_artifact::TlsFact> {
    use bakeoff_artifact::{CertificateFact, TlsFact, TlsVerification};
    let root = url.root_path("");
    if root.scheme() != "https" {
        return None;
    }
    let tls = client.tls();
    let verification = if tls.insecure() {
        TlsVerification::Insecure
    } else if tls.ca_cert().is_some() {
        TlsVerification::CaCert
    } else {
        TlsVerification::SystemRoots
    };
    let mut limit = opts.probe_timeout;
    if let Some(d) = opts.deadline {
        limit = limit.min(d.saturating_duration_since(Instant::now()));
    }
    let read = crate::tls::peer_certificate(tls, &root, limit).await;
    Some(TlsFact {
        verification,
        ca_cert: tls.ca_cert().map(|p| p.display().to_string()),
        certificate: read.as_ref().ok().map(|c| CertificateFact {
            subject: c.subject.clone(),
            issuer: c.issuer.clone(),
            names: c.names.clone(),
            not_before: c.not_before,
            not_after: c.not_after,
        }),
        error: read.err().map(|e| e.to_string()),
    })
}

/// Which engine answers, its version, and llama.cpp's `/props` when it is llama.cpp.
struct Identity {
    engine: EngineKind,
    version: Option<String>,
    props: Option<llamacpp::Props>,
}

/// llama.cpp `/props`, then SGLang `/server_info` (older `/get_server_info`), then vLLM
/// `/version`; `generic` when none answers as expected. Once a probe could not connect, the
/// later engines are not asked.
async fn identify(p: &mut Prober<'_>, url: &EndpointUrl) -> Identity {
    let mut id = Identity {
        engine: EngineKind::Generic,
        version: None,
        props: None,
    };
    if let Some(v) = p.json_ok(Method::Get, url.root_path("props"), None).await
        && llamacpp::is_props(&v)
    {
        id.engine = EngineKind::LlamaCpp;
        let parsed = llamacpp::parse_props(&v);
        id.version = parsed.build_info.clone();
        id.props = Some(parsed);
    }
    if id.engine == EngineKind::Generic && p.connect_errors.is_empty() {
        for path in ["server_info", "get_server_info"] {
            if let Some(v) = p.json_ok(Method::Get, url.root_path(path), None).await
                && let Some(ver) = sglang::parse_server_info(&v)
            {
                id.engine = EngineKind::Sglang;
                id.version = Some(ver);
                break;
            }
        }
    }
    if id.engine == EngineKind::Generic
        && p.connect_errors.is_empty()
        && let Some(v) = p.json_ok(Method::Get, url.root_path("version"), None).await
        && let Some(ver) = vllm::parse_version(&v)
    {
        id.engine = EngineKind::Vllm;
        id.version = Some(ver);
    }
    id
}

/// The window, in order of trust. A hint always wins; llama.cpp's `/slots` is only asked when
/// there is no hint.
async fn context_window(
    p: &mut Prober<'_>,
    url: &EndpointUrl,
    opts: &DiscoveryOptions,
    engine: EngineKind,
    props: Option<&llamacpp::Props>,
    models: &[ServedModel],
) -> ContextWindow {
    let known = |tokens: u64, source: WindowSource| ContextWindow {
        tokens: Some(tokens),
        source,
    };
    if let Some(h) = opts.max_model_len_hint {
        return known(h, WindowSource::Hint);
    }
    if engine == EngineKind::LlamaCpp {
        if let Some(n) = p
            .json_ok(Method::Get, url.root_path("slots"), None)
            .await
            .and_then(|v| llamacpp::parse_slots_n_ctx(&v))
        {
            return known(n, WindowSource::LlamacppSlots);
        }
        return match props.and_then(|pr| pr.n_ctx) {
            Some(n) => known(n, WindowSource::LlamacppProps),
            None => ContextWindow::UNKNOWN,
        };
    }
    match models.iter().find_map(|m| m.max_model_len) {
        Some(n) => known(
            n,
            match engine {
                EngineKind::Vllm => WindowSource::VllmModels,
                EngineKind::Sglang => WindowSource::SglangModels,
                _ => WindowSource::Models,
            },
        ),
        None => ContextWindow::UNKNOWN,
    }
}

/// Whether the engine's tokenize route answers a small text with a non-empty token list.
async fn tokenize_support(
    p: &mut Prober<'_>,
    url: &EndpointUrl,
    engine: EngineKind,
    models: &[ServedModel],
) -> TokenizeSupport {
    let model_for_tokenize = models.first().map(|m| m.id.clone()).unwrap_or_default();
    match dialect::tokenize_call(engine, &model_for_tokenize, "Hello world") {
        Some(call) => {
            let ok = p
                .json_ok(Method::Post, url.root_path(call.path), Some(&call.body))
                .await
                .and_then(|v| dialect::parse_tokens(&v))
                .is_some_and(|t| !t.is_empty());
            TokenizeSupport {
                works: ok,
                route: ok.then(|| call.route.to_string()),
            }
        }
        None => TokenizeSupport {
            works: false,
            route: None,
        },
    }
}

/// `/v1/models` → served ids with `max_model_len` where given.
pub fn parse_models(body: &Value) -> Vec<ServedModel> {
    body.get("data")
        .and_then(Value::as_array)
        .map(|arr| {
            arr.iter()
                .filter_map(|m| {
                    Some(ServedModel {
                        id: m.get("id")?.as_str()?.to_string(),
                        max_model_len: m.get("max_model_len").and_then(Value::as_u64),
                    })
                })
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn vllm_models_carry_max_model_len() {
        // vllm/entrypoints/openai/protocol.py ModelCard.
        let v: Value = serde_json::from_str(r#"{"object":"list","data":[{"id":"Qwen/Qwen3-8B","object":"model","created":1,"owned_by":"vllm","root":"Qwen/Qwen3-8B","parent":null,"max_model_len":32768,"permission":[]}]}"#).unwrap();
        let m = parse_models(&v);
        assert_eq!(m[0].id, "Qwen/Qwen3-8B");
        assert_eq!(m[0].max_model_len, Some(32768));
    }

    #[test]
    fn garbage_models_body_is_empty_not_an_error() {
        assert!(parse_models(&serde_json::json!({"oops": 1})).is_empty());
        assert!(parse_models(&serde_json::json!({"data": [{"no_id": 1}]})).is_empty());
    }
}

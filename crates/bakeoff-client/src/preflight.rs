//! Preflight: is this endpoint fit to be measured? It lives with the client because readiness
//! is a client question (a real short completion), asked by the suites before they measure and
//! by the seat watchdog before it calls a seat ready — so seats never depend on suites.
//!
//! Ready means a real short completion came back with non-empty text. `/v1/models` or
//! `/health` answering never counts: in docs/field-cases.md B1 an engine wedged with
//! `/v1/models` up while every inference aborted.

use std::time::{Duration, Instant};

use crate::discovery::{Discovered, DiscoveryOptions, discover};
use crate::{Client, Exchange, RequestError, Timeouts};
use bakeoff_artifact::failure_table::remediation;
use bakeoff_artifact::{
    ErrorSeen, Evidence, Failure, FailureClass, FlagCode, FlagSeverity, InstrumentFlag,
    PreflightReport, ReadyCheck, ThinkingCheck,
};
use bakeoff_wire::{ChatRequest, Message};

#[derive(Debug, Clone)]
pub struct PreflightOptions {
    pub model: Option<String>,
    pub max_model_len: Option<u64>,
    /// How long to keep trying for a first good completion.
    pub ready_timeout: Duration,
    /// Once ready, send one request that offers a tool (`tool_probe`), so a server whose tool
    /// calling is not configured is known before the `tool` suite runs.
    pub probe_tools: bool,
}

impl Default for PreflightOptions {
    fn default() -> Self {
        Self {
            model: None,
            max_model_len: None,
            ready_timeout: Duration::from_secs(60),
            probe_tools: false,
        }
    }
}

/// Why an unfit endpoint is unfit, as a failure artifact would record it.
#[derive(Debug, Clone)]
pub struct Unfit {
    pub class: FailureClass,
    pub message: String,
    pub evidence: Vec<Evidence>,
    pub remediation: Option<String>,
}

impl Unfit {
    /// The failure an artifact records for this endpoint, `elapsed_ms` into the run: the one
    /// place an unfit preflight becomes a [`Failure`] (`eval run`, `eval damage`, `eval adapter`).
    pub fn failure(&self, elapsed_ms: u64) -> Failure {
        Failure {
            class: self.class,
            message: self.message.clone(),
            evidence: self.evidence.clone(),
            elapsed_ms,
            remediation: self.remediation.clone(),
        }
    }
}

#[derive(Debug, Clone)]
pub struct PreflightOutcome {
    pub report: PreflightReport,
    pub discovered: Discovered,
    pub unfit: Option<Unfit>,
}

const READY_PROMPT: &str = "Say hello.";
const READY_MAX_TOKENS: u32 = 8;
const THINKING_FIX: &str = "send chat_template_kwargs: {\"enable_thinking\": false} (bakeoff --thinking off), \
     or start the engine with thinking off (llama.cpp --reasoning off / --reasoning-budget 0; vLLM \
     --default-chat-template-kwargs '{\"enable_thinking\": false}')";

pub async fn run_preflight(client: &Client, opts: &PreflightOptions) -> PreflightOutcome {
    let start = Instant::now();
    // One budget for the whole preflight: discovery's control calls and the readiness wait
    // share --ready-timeout (a slow /tokenize must not add its own 10 s on top).
    let deadline = start + opts.ready_timeout;
    let discovered = discover(
        client,
        &DiscoveryOptions {
            max_model_len_hint: opts.max_model_len,
            deadline: Some(deadline),
            ..DiscoveryOptions::default()
        },
    )
    .await;
    let mut reasons = Vec::new();
    let mut flags = Vec::new();
    let tokenizer_route = tokenizer_route(&discovered);

    // Unfit before any completion is sent: nothing reachable, or a requested model it does not
    // serve. The report names the requested model.
    let picked = match &discovered.unreachable {
        // No TLS session: the message carries the fix (`--ca-cert FILE`, `--insecure`) where
        // the certificate was the reason; the class stays unreachable (no request got through).
        Some(e @ RequestError::Tls { message, .. }) => Err(Unfit {
            class: FailureClass::Unreachable,
            message: format!("endpoint refused over TLS: {e}"),
            evidence: probe_evidence(&discovered),
            remediation: Some(if crate::tls::is_certificate_problem(message) {
                crate::tls::FIX.to_string()
            } else {
                remediation(FailureClass::Unreachable).into()
            }),
        }),
        Some(e) => Err(Unfit {
            class: FailureClass::Unreachable,
            message: format!("endpoint unreachable: {e}"),
            evidence: probe_evidence(&discovered),
            remediation: Some(remediation(FailureClass::Unreachable).into()),
        }),
        None => pick_model(&discovered, opts.model.as_deref(), &mut flags),
    };
    let model = match picked {
        Ok(model) => model,
        Err(unfit) => {
            return unfit_before_ready(
                unfit,
                discovered,
                opts.model.clone(),
                tokenizer_route,
                flags,
                start,
            );
        }
    };
    let model_for_request = model.clone().unwrap_or_else(|| "default".into());

    let (ready, ready_exchange) = wait_ready(client, &model_for_request, deadline, start).await;
    let mut discovered = discovered;
    if opts.probe_tools && ready_exchange.is_some() {
        discovered.facts.tool_calls = Some(
            crate::tool_probe::probe(client, &model_for_request, discovered.facts.engine).await,
        );
    }
    let mut unfit = None;
    let mut thinking = None;
    if let Some(ex) = &ready_exchange {
        thinking = Some(thinking_check(ex, &mut flags));
    } else {
        let u = unready_unfit(&discovered, &ready, client, opts.ready_timeout);
        reasons.push(u.message.clone());
        unfit = Some(u);
    }

    PreflightOutcome {
        report: PreflightReport {
            fit: unfit.is_none(),
            reasons,
            model,
            ready,
            thinking,
            thinking_mode: None,
            tokenizer_route,
            flags,
            elapsed_ms: start.elapsed().as_millis() as u64,
        },
        discovered,
        unfit,
    }
}

/// How prompts will be tokenized for context sizing, as the report states it.
fn tokenizer_route(discovered: &Discovered) -> String {
    discovered
        .facts
        .tokenize
        .route
        .clone()
        .map(|r| format!("server ({r})"))
        .unwrap_or_else(|| "none (no server /tokenize; give --tokenizer for context sizing)".into())
}

/// Which model to ask for: the requested one when served (or when nothing is listed, or when
/// the engine ignores the field — flagged), else the first served one. A requested model the
/// endpoint does not serve makes it unfit. No model at all is flagged: requests name
/// `"default"`.
fn pick_model(
    discovered: &Discovered,
    requested: Option<&str>,
    flags: &mut Vec<InstrumentFlag>,
) -> Result<Option<String>, Unfit> {
    let facts = &discovered.facts;
    let served: Vec<&str> = facts.models.iter().map(|m| m.id.as_str()).collect();
    let model = match requested {
        Some(m) if served.is_empty() || served.contains(&m) => Some(m.to_string()),
        Some(m) if crate::dialect::ignores_model_field(facts.engine) => {
            // llama-server serves one model and ignores the field: not fatal, but say so.
            flags.push(InstrumentFlag {
                code: FlagCode::ModelIdIgnored,
                severity: FlagSeverity::Info,
                message: format!(
                    "llama.cpp serves {:?} and ignores the requested model id {m:?}",
                    served.join(", ")
                ),
                suite: None,
                count: None,
            });
            Some(m.to_string())
        }
        Some(m) => {
            let message = format!(
                "model {m:?} is not served here; served: {}",
                served.join(", ")
            );
            return Err(Unfit {
                class: FailureClass::ModelNotServed,
                message,
                evidence: probe_evidence(discovered),
                remediation: Some(format!(
                    "{}: {}",
                    remediation(FailureClass::ModelNotServed),
                    served.join(", ")
                )),
            });
        }
        None => served.first().map(|s| s.to_string()),
    };
    // A /v1/models that refused the credentials listed nothing because it could not: the
    // auth failure says so, not a model-unknown flag.
    if model.is_none() && !facts.models_refused() {
        flags.push(InstrumentFlag {
            code: FlagCode::ModelUnknown,
            severity: FlagSeverity::Warning,
            message: "/v1/models listed no model; requests name \"default\" (pass --model)".into(),
            suite: None,
            count: None,
        });
    }
    Ok(model)
}

/// What the good probe reply says about thinking; a reply that is all reasoning and no
/// content is flagged, with the fix.
fn thinking_check(ex: &Exchange, flags: &mut Vec<InstrumentFlag>) -> ThinkingCheck {
    let r = &ex.reply;
    let reasoning_only = r.content.trim().is_empty() && !r.reasoning.trim().is_empty();
    if reasoning_only {
        flags.push(InstrumentFlag {
            code: FlagCode::ThinkingDefaultReasoningOnly,
            severity: FlagSeverity::Warning,
            message: format!(
                "the probe reply had empty content and {} characters of reasoning: in its default mode \
                 this endpoint thinks, and content-scored suites will read empty answers; fix: {THINKING_FIX}",
                r.reasoning.chars().count()
            ),
            suite: None,
            count: None,
        });
    }
    ThinkingCheck {
        content_chars: r.content.chars().count() as u64,
        reasoning_chars: r.reasoning.chars().count() as u64,
        reasoning_only,
        fix: reasoning_only.then(|| THINKING_FIX.to_string()),
    }
}

/// No completion with text came back in time: why, with the control calls and the completion
/// errors as evidence.
fn unready_unfit(
    discovered: &Discovered,
    ready: &ReadyCheck,
    client: &Client,
    ready_timeout: Duration,
) -> Unfit {
    let (class, remediation) = unready_class(discovered, ready, client);
    let last = ready
        .errors
        .last()
        .map(|e| e.message.clone())
        .unwrap_or_else(|| "completions came back empty".into());
    let message = if class == FailureClass::AuthFailed {
        // Final at once: the first refusal ends the wait, so "within 60 s" would say a wait
        // that never happened. One wording for preflight, eval run and the artifact.
        auth_message(discovered, ready, client)
    } else {
        format!(
            "no completion with text within {} ({} attempts); last: {last}",
            crate::seconds(ready_timeout),
            ready.attempts
        )
    };
    let mut evidence = probe_evidence(discovered);
    evidence.extend(ready.errors.iter().map(|e| Evidence {
        what: format!("POST /v1/chat/completions ({}×)", e.times),
        detail: e.message.clone(),
    }));
    Unfit {
        class,
        message,
        evidence,
        remediation: Some(remediation),
    }
}

/// The credentials were refused: which calls answered 401/403, and whether a key was sent.
fn auth_message(discovered: &Discovered, ready: &ReadyCheck, client: &Client) -> String {
    let completion = ready
        .errors
        .iter()
        .find_map(|e| {
            e.kind
                .strip_prefix("http-")
                .filter(|s| *s == "401" || *s == "403")
        })
        .map(|s| format!("{s} on POST /v1/chat/completions"));
    let refused = [discovered.facts.refused_text(), completion]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join("; ");
    let sent = if client.sends_credentials() {
        "the key sent was refused"
    } else {
        "no key was sent"
    };
    format!("the server refused the credentials ({refused}): {sent}")
}

/// An endpoint found unfit before any completion was sent (nothing reachable, a model it does
/// not serve): the report says why, with no readiness attempt.
fn unfit_before_ready(
    unfit: Unfit,
    discovered: Discovered,
    model: Option<String>,
    tokenizer_route: String,
    flags: Vec<InstrumentFlag>,
    start: Instant,
) -> PreflightOutcome {
    let elapsed_ms = start.elapsed().as_millis() as u64;
    PreflightOutcome {
        report: PreflightReport {
            fit: false,
            reasons: vec![unfit.message.clone()],
            model,
            ready: ReadyCheck {
                ready: false,
                attempts: 0,
                elapsed_ms,
                reply_preview: None,
                errors: vec![],
            },
            thinking: None,
            thinking_mode: None,
            tokenizer_route,
            flags,
            elapsed_ms,
        },
        discovered,
        unfit: Some(unfit),
    }
}

fn probe_evidence(d: &Discovered) -> Vec<Evidence> {
    d.facts
        .probes
        .iter()
        .map(|p| Evidence {
            what: format!("{} {}", p.method, p.path),
            detail: match (&p.status, &p.error) {
                (Some(s), _) => format!("HTTP {s} in {} ms", p.elapsed_ms),
                (None, Some(e)) => format!("{e} after {} ms", p.elapsed_ms),
                (None, None) => "no answer".into(),
            },
        })
        .collect()
}

/// Every HTTP status the preflight saw, control calls then completions (a completion's status
/// is in its error kind, `http-503`). Shared with the seat watchdog's record of its probes.
pub fn http_statuses(d: &Discovered, ready: &ReadyCheck) -> Vec<u16> {
    d.facts
        .probes
        .iter()
        .filter_map(|p| p.status)
        .chain(
            ready
                .errors
                .iter()
                .filter_map(|e| e.kind.strip_prefix("http-")?.parse().ok()),
        )
        .collect()
}

/// Why no completion came back, from what was seen — never a guess: the control calls'
/// statuses and errors, and the kinds of the completion errors.
fn unready_class(d: &Discovered, ready: &ReadyCheck, client: &Client) -> (FailureClass, String) {
    let probes = &d.facts.probes;
    let kinds: Vec<&str> = ready.errors.iter().map(|e| e.kind.as_str()).collect();
    let statuses = http_statuses(d, ready);
    let not_http = probes
        .iter()
        .filter_map(|p| p.error.as_deref())
        .any(|e| e.contains("did not answer with HTTP"))
        || kinds.contains(&"not-http");
    let control_ok = probes
        .iter()
        .filter(|p| p.status.is_some_and(|s| (200..300).contains(&s)))
        .map(|p| format!("{} {}", p.method, p.path))
        .collect::<Vec<_>>();
    let all = |f: &dyn Fn(&str) -> bool| !kinds.is_empty() && kinds.iter().all(|k| f(k));
    let timeout = client.timeouts();
    if kinds.iter().any(|k| *k == "http-401" || *k == "http-403") {
        return observed(
            FailureClass::AuthFailed,
            "the server refused the credentials (HTTP 401/403)",
        );
    }
    if statuses.is_empty() && not_http {
        return observed(
            FailureClass::NotHttp,
            "something answers at this address but not with HTTP",
        );
    }
    if statuses.is_empty() && all(&|k| k == "connect" || k == "timeout-connect") {
        return observed(
            FailureClass::Unreachable,
            "nothing accepts connections there",
        );
    }
    if !statuses.is_empty() && statuses.iter().all(|s| *s >= 500) {
        // llama.cpp answers 503 "Loading model" on every path while it loads.
        if all(&|k| k == "http-503") {
            return observed(
                FailureClass::NotReady,
                "every call answered 503 (the server says it is still loading)",
            );
        }
        return observed(
            FailureClass::ServerError,
            &format!(
                "every call, control and completion, answered a server error ({})",
                distinct(&statuses)
            ),
        );
    }
    if all(&|k| k.starts_with("timeout")) {
        let seen = if control_ok.is_empty() {
            "no control endpoint answered 2xx either".to_string()
        } else {
            format!("{} answered", control_ok.join(", "))
        };
        return observed(
            FailureClass::InferenceHanging,
            &format!(
                "completions hang while the server accepts connections ({seen}; every completion \
                 timed out, first byte within {})",
                crate::seconds(timeout.first_byte)
            ),
        );
    }
    if all(&|k| k == "http-503" || k.starts_with("timeout") || k == "connect") {
        return observed(
            FailureClass::NotReady,
            "the server says it is still loading (503) or not yet serving",
        );
    }
    let seen = if control_ok.is_empty() {
        "no control endpoint answered 2xx".to_string()
    } else {
        format!("{} answered", control_ok.join(", "))
    };
    observed(
        FailureClass::InferenceFailing,
        &format!(
            "{seen}, but every completion failed ({})",
            distinct_strs(&kinds)
        ),
    )
}

/// A class and its remediation: what was observed, then the failure table's fix for the class.
fn observed(class: FailureClass, what: &str) -> (FailureClass, String) {
    (class, format!("{what}: {}", remediation(class)))
}

fn distinct(statuses: &[u16]) -> String {
    let mut v = statuses.to_vec();
    v.sort_unstable();
    v.dedup();
    v.iter().map(u16::to_string).collect::<Vec<_>>().join(", ")
}

fn distinct_strs(kinds: &[&str]) -> String {
    let mut v = kinds.to_vec();
    v.sort_unstable();
    v.dedup();
    if v.is_empty() {
        "empty replies".into()
    } else {
        v.join(", ")
    }
}

fn error_kind(e: &RequestError) -> String {
    match e {
        RequestError::Http { status, .. } => format!("http-{status}"),
        other => other.kind().to_string(),
    }
}

/// Keep sending a tiny completion until one comes back with text, or `deadline` passes (at
/// least one attempt is made). An authentication failure ends the wait at once: retrying the
/// same credentials cannot help.
async fn wait_ready(
    client: &Client,
    model: &str,
    deadline: Instant,
    start: Instant,
) -> (ReadyCheck, Option<Exchange>) {
    let mut attempts = 0u32;
    let mut errors: Vec<ErrorSeen> = Vec::new();
    let req = ChatRequest::new(
        model,
        vec![Message::user(READY_PROMPT)],
        READY_MAX_TOKENS,
        true,
    );
    loop {
        attempts += 1;
        let left = deadline
            .saturating_duration_since(Instant::now())
            .max(Duration::from_secs(1));
        let t = client.timeouts();
        let probe = client.with_timeouts(Timeouts {
            connect: t.connect.min(left),
            first_byte: t.first_byte.min(left),
            idle: t.idle.min(left),
            total: left,
        });
        let ex = probe.chat_stream(&req).await;
        let seen = match &ex.error {
            None if ex.reply.has_text() => {
                let preview: String = ex
                    .reply
                    .content
                    .chars()
                    .chain(ex.reply.reasoning.chars())
                    .take(120)
                    .collect();
                return (
                    ReadyCheck {
                        ready: true,
                        attempts,
                        elapsed_ms: start.elapsed().as_millis() as u64,
                        reply_preview: Some(preview),
                        errors,
                    },
                    Some(ex),
                );
            }
            None => (
                "empty-reply".to_string(),
                "completion returned no text".to_string(),
            ),
            Some(e) => (error_kind(e), e.to_string()),
        };
        match errors.last_mut() {
            Some(last) if last.kind == seen.0 && last.message == seen.1 => last.times += 1,
            _ => errors.push(ErrorSeen {
                kind: seen.0,
                message: seen.1,
                times: 1,
            }),
        }
        if errors.len() > 20 {
            errors.remove(0);
        }
        let auth_failed = ex.error.as_ref().is_some_and(RequestError::is_auth_failure);
        if auth_failed || Instant::now() + Duration::from_millis(500) >= deadline {
            return (
                ReadyCheck {
                    ready: false,
                    attempts,
                    elapsed_ms: start.elapsed().as_millis() as u64,
                    reply_preview: None,
                    errors,
                },
                None,
            );
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

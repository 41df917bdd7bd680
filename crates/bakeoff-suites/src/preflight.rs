//! Preflight: is this endpoint fit to be measured?
//!
//! Ready means a real short completion came back with non-empty text. `/v1/models` or
//! `/health` answering never counts: in the seeds an engine wedged with `/v1/models` up while
//! every inference aborted.

use std::time::{Duration, Instant};

use bakeoff_artifact::{
    ErrorSeen, Evidence, FailureClass, FlagSeverity, InstrumentFlag, PreflightReport, ReadyCheck,
    ThinkingCheck,
};
use bakeoff_client::discovery::{Discovered, DiscoveryOptions, discover};
use bakeoff_client::{Client, Exchange, RequestError, Timeouts};
use bakeoff_wire::{ChatRequest, Message};

#[derive(Debug, Clone)]
pub struct PreflightOptions {
    pub model: Option<String>,
    pub max_model_len: Option<u64>,
    /// How long to keep trying for a first good completion.
    pub ready_timeout: Duration,
}

impl Default for PreflightOptions {
    fn default() -> Self {
        Self {
            model: None,
            max_model_len: None,
            ready_timeout: Duration::from_secs(60),
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
    let discovered = discover(
        client,
        &DiscoveryOptions {
            max_model_len_hint: opts.max_model_len,
            ..DiscoveryOptions::default()
        },
    )
    .await;
    let facts = &discovered.facts;
    let mut reasons = Vec::new();
    let mut flags = Vec::new();
    let tokenizer_route = facts
        .tokenize
        .route
        .clone()
        .map(|r| format!("server ({r})"))
        .unwrap_or_else(|| {
            "none (no server /tokenize; give --tokenizer for context sizing)".into()
        });

    let not_ready = |attempts, errors| ReadyCheck {
        ready: false,
        attempts,
        elapsed_ms: start.elapsed().as_millis() as u64,
        reply_preview: None,
        errors,
    };

    if let Some(e) = &discovered.unreachable {
        let message = format!("endpoint unreachable: {e}");
        reasons.push(message.clone());
        return PreflightOutcome {
            report: PreflightReport {
                fit: false,
                reasons,
                model: opts.model.clone(),
                ready: not_ready(0, vec![]),
                thinking: None,
                thinking_mode: None,
                tokenizer_route,
                flags,
                elapsed_ms: start.elapsed().as_millis() as u64,
            },
            unfit: Some(Unfit {
                class: FailureClass::Unreachable,
                message,
                evidence: probe_evidence(&discovered),
                remediation: Some("check the address and port, and that the server is running (bakeoff seat status)".into()),
            }),
            discovered,
        };
    }

    // Which model to ask for.
    let served: Vec<&str> = facts.models.iter().map(|m| m.id.as_str()).collect();
    let model = match &opts.model {
        Some(m) if served.is_empty() || served.contains(&m.as_str()) => Some(m.clone()),
        Some(m) if bakeoff_client::dialect::ignores_model_field(facts.engine) => {
            // llama-server serves one model and ignores the field: not fatal, but say so.
            flags.push(InstrumentFlag {
                code: "model-id-ignored".into(),
                severity: FlagSeverity::Info,
                message: format!(
                    "llama.cpp serves {:?} and ignores the requested model id {m:?}",
                    served.join(", ")
                ),
                suite: None,
                count: None,
            });
            Some(m.clone())
        }
        Some(m) => {
            let message = format!(
                "model {m:?} is not served here; served: {}",
                served.join(", ")
            );
            reasons.push(message.clone());
            return PreflightOutcome {
                report: PreflightReport {
                    fit: false,
                    reasons,
                    model: Some(m.clone()),
                    ready: not_ready(0, vec![]),
                    thinking: None,
                    thinking_mode: None,
                    tokenizer_route,
                    flags,
                    elapsed_ms: start.elapsed().as_millis() as u64,
                },
                unfit: Some(Unfit {
                    class: FailureClass::ModelNotServed,
                    message,
                    evidence: probe_evidence(&discovered),
                    remediation: Some(format!("pass --model with one of: {}", served.join(", "))),
                }),
                discovered,
            };
        }
        None => served.first().map(|s| s.to_string()),
    };
    let model_for_request = model.clone().unwrap_or_else(|| "default".into());
    if model.is_none() {
        flags.push(InstrumentFlag {
            code: "model-unknown".into(),
            severity: FlagSeverity::Warning,
            message: "/v1/models listed no model; requests name \"default\" (pass --model)".into(),
            suite: None,
            count: None,
        });
    }

    let (ready, ready_exchange) =
        wait_ready(client, &model_for_request, opts.ready_timeout, start).await;
    let mut unfit = None;
    let mut thinking = None;
    if let Some(ex) = &ready_exchange {
        let r = &ex.reply;
        let reasoning_only = r.content.trim().is_empty() && !r.reasoning.trim().is_empty();
        thinking = Some(ThinkingCheck {
            content_chars: r.content.chars().count() as u64,
            reasoning_chars: r.reasoning.chars().count() as u64,
            reasoning_only,
            fix: reasoning_only.then(|| THINKING_FIX.to_string()),
        });
        if reasoning_only {
            flags.push(InstrumentFlag {
                code: "thinking-default-reasoning-only".into(),
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
    } else {
        let answered_control = facts
            .probes
            .iter()
            .any(|p| p.status.is_some_and(|s| (200..300).contains(&s)));
        let only_loading = !ready.errors.is_empty()
            && ready.errors.iter().all(|e| {
                e.kind == "http-503" || e.kind.starts_with("timeout") || e.kind == "connect"
            });
        let class = if !answered_control && ready.errors.iter().all(|e| e.kind == "connect") {
            FailureClass::Unreachable
        } else if only_loading {
            FailureClass::NotReady
        } else {
            FailureClass::InferenceFailing
        };
        let last = ready
            .errors
            .last()
            .map(|e| e.message.clone())
            .unwrap_or_else(|| "completions came back empty".into());
        let message = format!(
            "no completion with text within {:?} ({} attempts); last: {last}",
            opts.ready_timeout, ready.attempts
        );
        reasons.push(message.clone());
        let mut evidence = probe_evidence(&discovered);
        evidence.extend(ready.errors.iter().map(|e| Evidence {
            what: format!("POST /v1/chat/completions ({}×)", e.times),
            detail: e.message.clone(),
        }));
        unfit = Some(Unfit {
            class,
            message,
            evidence,
            remediation: Some(match class {
                FailureClass::NotReady => "the server is still loading: wait, or raise --ready-timeout".into(),
                FailureClass::Unreachable => "check that the server is running".into(),
                _ => "control endpoints answer but inference fails: read the engine log for the first error \
                      (an init wedge, a crashed engine core)"
                    .into(),
            }),
        });
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

fn error_kind(e: &RequestError) -> String {
    match e {
        RequestError::Http { status, .. } => format!("http-{status}"),
        other => other.kind().to_string(),
    }
}

/// Keep sending a tiny completion until one comes back with text, or the timeout passes.
async fn wait_ready(
    client: &Client,
    model: &str,
    limit: Duration,
    start: Instant,
) -> (ReadyCheck, Option<Exchange>) {
    let deadline = Instant::now() + limit;
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
        if Instant::now() + Duration::from_millis(500) >= deadline {
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

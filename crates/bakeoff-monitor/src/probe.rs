//! The probe of one tick: one real chat completion, streamed, within a timeout. Alive means
//! text came back — visible content **or reasoning alone**. A reasoning model asked for one
//! token (the `max_tokens: 1` health check LiteLLM users copy) spends it inside its thinking
//! and returns empty content; such a probe calls a serving seat dead. So the probe asks for
//! enough tokens that a thinking model shows text ([`DEFAULT_MAX_TOKENS`]) and counts a
//! reasoning-only reply as alive, marked as such.

use std::time::Duration;

use bakeoff_artifact::monitor::ProbeSample;
use bakeoff_client::{Client, ClientOptions, EndpointUrl, RequestError, Timeouts};
use bakeoff_wire::{ChatRequest, Message};

/// What the probe asks. Short, with one plain answer.
pub const PROMPT: &str = "Say hello.";

/// Enough for a thinking model to show some reasoning, short enough to cost well under a
/// second on a serving seat.
pub const DEFAULT_MAX_TOKENS: u32 = 32;

/// Why a seat has no probe client (recorded in the probe sample as its text).
#[derive(Debug, thiserror::Error)]
pub enum ProbeClientError {
    #[error("seat {url}: [seat.tls] {source}")]
    Tls {
        url: String,
        source: bakeoff_client::tls::TlsError,
    },
    #[error("seat URL {url}: {source}")]
    Url {
        url: String,
        source: bakeoff_client::UrlError,
    },
    #[error(transparent)]
    Build(#[from] bakeoff_client::ClientBuildError),
}

/// The client the probes of a seat use: the seat's key when it names one (`api_key_env`, as
/// `seat status --probe`), an `https://` seat trusted as its `[seat.tls]` says, every wait
/// bounded by `timeout`.
pub fn client(
    url: &str,
    timeout: Duration,
    api_key: Option<bakeoff_client::ApiKey>,
    tls: &bakeoff_client::tls::TlsOptions,
) -> Result<Client, ProbeClientError> {
    let tls = bakeoff_client::tls::Tls::new(tls).map_err(|source| ProbeClientError::Tls {
        url: url.to_string(),
        source,
    })?;
    let url = EndpointUrl::parse(url).map_err(|source| ProbeClientError::Url {
        url: url.to_string(),
        source,
    })?;
    Ok(Client::try_new(
        url,
        ClientOptions {
            timeouts: Timeouts {
                connect: timeout.min(Duration::from_secs(5)),
                first_byte: timeout,
                idle: timeout,
                total: timeout,
            },
            api_key,
            tls,
        },
    )?)
}

/// One probe of `model` (the seat's first served name; `default` when it names none).
pub async fn probe(client: &Client, model: &str, max_tokens: u32) -> ProbeSample {
    let req = ChatRequest::new(model, vec![Message::user(PROMPT)], max_tokens, true);
    let total = client.timeouts().total;
    // The client bounds every wait; this outer bound is the tick's guarantee whatever happens
    // inside (a server that trickles bytes forever within the idle timeout).
    let ex = match tokio::time::timeout(total + Duration::from_secs(1), client.chat_stream(&req))
        .await
    {
        Ok(ex) => ex,
        Err(_) => {
            return ProbeSample {
                model: model.to_string(),
                ok: false,
                latency_ms: ms(total),
                ttft_ms: None,
                content_chars: 0,
                reasoning_chars: 0,
                reasoning_only: false,
                error: Some(format!(
                    "timeout: no complete reply within {} s",
                    total.as_secs()
                )),
            };
        }
    };
    let r = &ex.reply;
    let content_chars = r.content.trim().chars().count() as u64;
    let reasoning_chars = r.reasoning.trim().chars().count() as u64;
    let has_text = r.has_text();
    let error = match &ex.error {
        Some(e) => Some(format!("{}: {e}", kind(e))),
        None if !has_text => Some("empty-reply: the completion returned no text".into()),
        None => None,
    };
    ProbeSample {
        model: model.to_string(),
        ok: error.is_none(),
        latency_ms: ms(r.e2e),
        ttft_ms: r.ttft.map(ms),
        content_chars,
        reasoning_chars,
        reasoning_only: error.is_none() && content_chars == 0 && reasoning_chars > 0,
        error,
    }
}

fn kind(e: &RequestError) -> String {
    match e {
        RequestError::Http { status, .. } => format!("http-{status}"),
        other => other.kind().to_string(),
    }
}

fn ms(d: Duration) -> f64 {
    (d.as_secs_f64() * 1000.0 * 10.0).round() / 10.0
}

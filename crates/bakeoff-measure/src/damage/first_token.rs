//! The first-token distribution of one prompt, as the endpoint serves it: a non-streamed chat
//! completion at temperature 0 with `max_tokens: 1`, `logprobs: true` and `top_logprobs: K`,
//! the chat template applied by the server. `eval damage` and `eval adapter` both ask this way.

use bakeoff_artifact::EngineKind;
use bakeoff_client::{Client, Exchange, RequestError, dialect};
use bakeoff_stats::SplitMix64;
use bakeoff_stats::{KlTerms, StatsError, kl_top_k};
use bakeoff_wire::{ChatRequest, Message};
use serde::{Deserialize, Serialize};

/// One listed token and its log probability: the shape the items' `extra` records.
pub use bakeoff_artifact::TokenProb;

/// The top-K of the first generated position, in the server's order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TopK {
    pub tokens: Vec<TokenProb>,
}

impl TopK {
    /// The most probable listed token (the first of equals).
    pub fn top1(&self) -> Option<&TokenProb> {
        self.tokens
            .iter()
            .reduce(|best, t| if t.logprob > best.logprob { t } else { best })
    }

    /// Probability mass the list covers.
    pub fn listed_mass(&self) -> f64 {
        self.tokens.iter().map(|t| t.logprob.min(0.0).exp()).sum()
    }

    fn keyed(&self) -> Vec<(Vec<u8>, f64)> {
        self.tokens.iter().map(|t| (t.key(), t.logprob)).collect()
    }
}

/// KL(reference ‖ candidate) of one prompt from the two top-K lists (the tail-bucket
/// estimator, docs/statistics.md).
pub fn kl(reference: &TopK, candidate: &TopK) -> Result<KlTerms, StatsError> {
    kl_top_k(&reference.keyed(), &candidate.keyed())
}

/// Whether two lists name the same top-1 token.
pub fn same_top1(a: &TopK, b: &TopK) -> bool {
    match (a.top1(), b.top1()) {
        (Some(x), Some(y)) => x.key() == y.key(),
        _ => false,
    }
}

/// Why a first-token distribution could not be read. The endpoint-level ones
/// ([`FirstTokenError::is_endpoint_gap`]) mean the endpoint cannot be measured this way at all.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FirstTokenError {
    #[error(transparent)]
    Request(RequestError),
    #[error(
        "the endpoint refused top_logprobs = {k} ({message}): lower --top-k (vLLM allows at \
         most its --max-logprobs, default 20)"
    )]
    TopKRefused { k: u32, message: String },
    /// This reply came without logprobs. An endpoint that serves them for other replies
    /// serves them: llama-server sends none for a first token that ends inside a multi-byte
    /// character (see [`super::native`]). Only when no item of a side has logprobs is the
    /// endpoint refused ([`FirstTokenError::endpoint_refusal`]).
    #[error("the reply came without logprobs for its first token")]
    NoLogprobs,
    #[error("the endpoint sent logprobs but no top_logprobs alternatives for top_logprobs = {k}")]
    NoAlternatives { k: u32 },
}

impl FirstTokenError {
    /// The endpoint cannot serve this measurement at all (K refused, no alternatives listed):
    /// one such answer ends the run instead of repeating on every prompt. A reply without
    /// logprobs is the item's gap, not the endpoint's (see [`FirstTokenError::NoLogprobs`]).
    pub fn is_endpoint_gap(&self) -> bool {
        !matches!(
            self,
            FirstTokenError::Request(_) | FirstTokenError::NoLogprobs
        )
    }

    /// The refusal of an endpoint none of whose replies came with logprobs.
    pub fn endpoint_refusal() -> String {
        "the endpoint answered without logprobs: it does not serve `logprobs`/`top_logprobs` on \
         /v1/chat/completions, which this measurement needs (no reply of this run carried them)"
            .to_string()
    }
}

/// A fresh marker that makes a prompt's text unique from its first user token on, so no
/// prompt cache can hold any of it (as the context suite's document headers do).
pub fn unique_prefix(rng: &mut SplitMix64) -> String {
    format!("[{:016x}]\n", rng.next_u64())
}

/// `messages` with `prefix` put in front of the first user message (a template that refuses
/// a system role still takes it; a set with no user message gets one).
pub fn with_prefix(messages: &[Message], prefix: &str) -> Vec<Message> {
    let mut out = messages.to_vec();
    match out.iter_mut().find(|m| m.role == "user") {
        Some(m) => {
            let text = m.content.take().unwrap_or_default();
            m.content = Some(format!("{prefix}{text}"));
        }
        None => out.insert(0, Message::user(prefix.trim_end())),
    }
    out
}

/// The request for the first-token distribution of `messages` behind `unique_prefix`:
/// temperature 0, one token, `top_k` alternatives, not streamed, and the engine's
/// no-prompt-cache fields under `cache_salt` ([`dialect::no_prompt_cache_extras`]; give every
/// request its own salt, so two requests of the same text never share a cache).
pub fn first_token_request(
    engine: EngineKind,
    model: &str,
    messages: &[Message],
    top_k: u32,
    unique_prefix: &str,
    cache_salt: &str,
) -> ChatRequest {
    let mut req = ChatRequest::new(model, with_prefix(messages, unique_prefix), 1, false);
    req.logprobs = Some(true);
    req.top_logprobs = Some(top_k);
    req.extra = dialect::no_prompt_cache_extras(engine, cache_salt);
    req
}

/// The reply's first-token top-K, or why there is none.
pub fn read_top_k(ex: &Exchange, k: u32) -> Result<TopK, FirstTokenError> {
    if let Some(e) = &ex.error {
        if let RequestError::Http { status, body } = e
            && (400..500).contains(status)
            && body.to_ascii_lowercase().contains("logprob")
        {
            return Err(FirstTokenError::TopKRefused {
                k,
                message: format!("HTTP {status}: {}", e_line(body)),
            });
        }
        return Err(FirstTokenError::Request(e.clone()));
    }
    let first = ex
        .reply
        .logprobs
        .first()
        .ok_or(FirstTokenError::NoLogprobs)?;
    if first.top_logprobs.is_empty() {
        return Err(FirstTokenError::NoAlternatives { k });
    }
    Ok(TopK {
        tokens: first
            .top_logprobs
            .iter()
            .map(|t| TokenProb {
                token: t.token.clone(),
                logprob: t.logprob,
                bytes: t
                    .bytes
                    .clone()
                    .filter(|b| b.as_slice() != t.token.as_bytes()),
            })
            .collect(),
    })
}

/// The first line of an error body, at most 200 characters.
pub(crate) fn e_line(body: &str) -> String {
    body.lines()
        .next()
        .unwrap_or("")
        .chars()
        .take(200)
        .collect()
}

/// One first-token request as sent and answered: the exchange (for the item record) and the
/// top-K read from it.
pub struct FirstToken {
    pub request: ChatRequest,
    pub exchange: Exchange,
    pub top: Result<TopK, FirstTokenError>,
    /// How the top-K was read when the chat reply carried none (llama.cpp's native route,
    /// [`super::native`]), or why that route gave none: the item's note.
    pub native: Option<String>,
}

/// Send `req` (built by [`first_token_request`], with any routing fields added, e.g. the
/// adapter's `lora`) and read its top-K.
pub async fn send(client: &Client, req: ChatRequest) -> FirstToken {
    let k = req.top_logprobs.unwrap_or(0);
    let exchange = client.chat(&req).await;
    let top = read_top_k(&exchange, k);
    FirstToken {
        request: req,
        exchange,
        top,
        native: None,
    }
}

/// The first-token distribution of `messages` on `client`, in one call: a fresh cache salt,
/// temperature 0, one token, `top_k` alternatives.
pub async fn first_token_distribution(
    client: &Client,
    engine: EngineKind,
    model: &str,
    messages: &[Message],
    top_k: u32,
    unique_prefix: &str,
    rng: &mut SplitMix64,
) -> Result<TopK, FirstTokenError> {
    let salt = format!("{:016x}", rng.next_u64());
    let req = first_token_request(engine, model, messages, top_k, unique_prefix, &salt);
    send(client, req).await.top
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use bakeoff_client::Reply;
    use bakeoff_wire::{TokenLogprob, TopLogprob};

    use super::*;

    fn reply_with(top: &[(&str, f64)]) -> Exchange {
        Exchange {
            reply: Reply {
                content: top[0].0.into(),
                logprobs: vec![TokenLogprob {
                    token: top[0].0.into(),
                    logprob: top[0].1,
                    bytes: None,
                    top_logprobs: top
                        .iter()
                        .map(|(t, l)| TopLogprob {
                            token: (*t).into(),
                            logprob: *l,
                            bytes: Some(t.as_bytes().to_vec()),
                        })
                        .collect(),
                }],
                ..Reply::default()
            },
            error: None,
        }
    }

    #[test]
    fn request_asks_for_one_token_at_temperature_zero_without_cache() {
        let r = first_token_request(
            EngineKind::LlamaCpp,
            "m",
            &[Message::system("be brief"), Message::user("Hi")],
            20,
            "[00000000000000ab]\n",
            "salt",
        );
        let v = serde_json::to_value(&r).unwrap();
        assert_eq!(v["max_tokens"], 1);
        assert_eq!(v["temperature"], 0.0);
        assert_eq!(v["logprobs"], true);
        assert_eq!(v["top_logprobs"], 20);
        assert_eq!(v["stream"], false);
        assert_eq!(v["cache_prompt"], false);
        // The prefix goes in front of the first user message; the system message is kept.
        assert_eq!(v["messages"][0]["content"], "be brief");
        assert_eq!(v["messages"][1]["content"], "[00000000000000ab]\nHi");
        let vllm = first_token_request(EngineKind::Vllm, "m", &[], 5, "[x]\n", "s1");
        let v = serde_json::to_value(&vllm).unwrap();
        assert_eq!(v["cache_salt"], "s1");
        assert_eq!(v["messages"][0]["content"], "[x]");
        let generic = first_token_request(EngineKind::Generic, "m", &[], 5, "p", "s");
        let v = serde_json::to_value(&generic).unwrap();
        assert!(v.get("cache_prompt").is_none() && v.get("cache_salt").is_none());
    }

    #[test]
    fn top_k_is_read_and_compared_by_bytes() {
        let a = read_top_k(&reply_with(&[("What", -0.5), ("<", -1.5)]), 2).unwrap();
        assert_eq!(a.top1().unwrap().token, "What");
        assert!(
            a.tokens.iter().all(|t| t.bytes.is_none()),
            "bytes equal to the text are not kept"
        );
        let b = read_top_k(&reply_with(&[("<", -0.4), ("What", -1.2)]), 2).unwrap();
        assert!(!same_top1(&a, &b));
        assert_eq!(kl(&a, &a).unwrap().kl, 0.0);
        assert!(kl(&a, &b).unwrap().kl > 0.0);
    }

    #[test]
    fn gaps_are_told_apart_from_request_failures() {
        let mut none = reply_with(&[("a", -0.1)]);
        none.reply.logprobs.clear();
        assert_eq!(read_top_k(&none, 20), Err(FirstTokenError::NoLogprobs));
        // One reply without logprobs does not refuse the endpoint.
        assert!(!FirstTokenError::NoLogprobs.is_endpoint_gap());
        // vLLM's answer to top_logprobs above --max-logprobs (a 400 naming logprobs).
        let refused = Exchange {
            reply: Reply::default(),
            error: Some(RequestError::Http {
                status: 400,
                body: r#"{"object":"error","message":"Requested sample logprobs of 50, which is greater than max allowed: 20","type":"BadRequestError","code":400}"#.into(),
            }),
        };
        let e = read_top_k(&refused, 50).unwrap_err();
        assert!(e.is_endpoint_gap());
        assert!(e.to_string().contains("--top-k"), "{e}");
        let down = Exchange {
            reply: Reply::default(),
            error: Some(RequestError::Http {
                status: 503,
                body: "loading".into(),
            }),
        };
        assert!(!read_top_k(&down, 5).unwrap_err().is_endpoint_gap());
    }
}

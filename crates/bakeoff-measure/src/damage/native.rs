//! The first-token distribution of a reply whose first token is an incomplete UTF-8 character,
//! read through llama.cpp's native routes.
//!
//! llama-server holds back a token that ends inside a multi-byte character: it is never added
//! to the slot's token probabilities, so a one-token chat reply carries its raw byte (serialized
//! as `\ufffd`) and no `logprobs` at all (llama.cpp b11434 tools/server/server-context.cpp
//! `process_token`: `incomplete = validate_utf8(generated_text) < generated_text.size()`, and
//! only a complete text reaches `slot.add_token`; server-task.cpp `to_json_oaicompat_chat`
//! writes `logprobs` only when `probs_output` is not empty). An emoji that opens a greeting
//! does this.
//!
//! The distribution is still the engine's: the native `/completion` reports, with
//! `return_tokens`, the id of the token it sampled even when its text is incomplete
//! (server-context.cpp pushes `generated_tokens` before the UTF-8 check; server-task.cpp
//! `to_json_non_oaicompat` `"tokens"`). Asked again with that id banned (`logit_bias: [[id,
//! false]]`), the greedy pick is the next token; when its text is complete, its entry in
//! `completion_probabilities` lists the top-`n_probs` of the same position from the raw logits
//! before any sampler (server-context.cpp `populate_token_probs` with `post_sampling_probs`
//! off reads `get_token_probabilities`, server-common.cpp, from `llama_get_logits_ith`; the
//! logit-bias sampler never touches them), so the banned token is listed with its own
//! probability, bytes and id. The prompt is the chat request's, rendered by the server's own
//! `/apply-template`.

use std::time::Duration;

use bakeoff_artifact::EngineKind;
use bakeoff_client::{Client, Method, RequestError};
use bakeoff_wire::ChatRequest;
use serde_json::{Value, json};

use super::first_token::{FirstToken, FirstTokenError, TokenProb, TopK};

/// At most this many incomplete first tokens are banned in turn (an emoji can open with a
/// one-byte token, then a two-byte one, …).
const MAX_BANNED: usize = 8;
/// Each native call's limit.
const LIMIT: Duration = Duration::from_secs(120);

/// Why the native route gave no distribution.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum NativeError {
    #[error("llama.cpp's native route failed: {0}")]
    Request(RequestError),
    #[error("llama.cpp's {route} answered HTTP {status}")]
    Status { route: &'static str, status: u16 },
    #[error("llama.cpp's {route} answered without {what}")]
    Shape {
        route: &'static str,
        what: &'static str,
    },
    #[error("the first {0} tokens the engine picked were all incomplete UTF-8 characters")]
    AllIncomplete(usize),
}

async fn post(
    client: &Client,
    route: &'static str,
    body: &Value,
    sent: &mut Vec<String>,
) -> Result<Value, NativeError> {
    sent.push(format!("POST /{route}"));
    let (status, v) = client
        .control(
            Method::Post,
            client.url().root_path(route),
            Some(body),
            LIMIT,
        )
        .await
        .map_err(NativeError::Request)?;
    if !(200..300).contains(&status) {
        return Err(NativeError::Status { route, status });
    }
    v.ok_or(NativeError::Shape {
        route,
        what: "a JSON body",
    })
}

/// [`send`], and for a llama.cpp reply that came without logprobs (its first token an
/// incomplete UTF-8 character), the same position's top-K through the engine's native routes
/// (this module).
pub async fn send_reading_native(
    client: &Client,
    engine: EngineKind,
    req: ChatRequest,
) -> FirstToken {
    let mut sent = super::first_token::send(client, req).await;
    if engine != EngineKind::LlamaCpp
        || sent.exchange.error.is_some()
        || sent.top != Err(FirstTokenError::NoLogprobs)
    {
        return sent;
    }
    let k = sent.request.top_logprobs.unwrap_or(0);
    let (top, calls) = first_token_top_k(client, &sent.request, k).await;
    let reply: String = sent.exchange.reply.content.chars().take(16).collect();
    let reply = format!("{reply:?}");
    match top {
        Ok(t) => {
            sent.top = Ok(t);
            sent.native = Some(format!(
                "the chat reply ({reply}) carried no logprobs (its first token ends inside a multi-byte character); the top-K of that position was read through llama.cpp's {}",
                calls.join(", ")
            ));
        }
        Err(e) => {
            sent.native = Some(format!(
                "the chat reply ({reply}) carried no logprobs, and {e}: instrument miss"
            ));
        }
    }
    sent
}

/// The top-K of `req`'s first position through `/apply-template` and `/completion`, and the
/// calls it took (`POST /apply-template`, `POST /completion` …) for the item's note.
pub async fn first_token_top_k(
    client: &Client,
    req: &ChatRequest,
    k: u32,
) -> (Result<TopK, NativeError>, Vec<String>) {
    let mut sent = Vec::new();
    let top = top_k_inner(client, req, k, &mut sent).await;
    (top, sent)
}

async fn top_k_inner(
    client: &Client,
    req: &ChatRequest,
    k: u32,
    sent: &mut Vec<String>,
) -> Result<TopK, NativeError> {
    let rendered = post(
        client,
        "apply-template",
        &json!({"messages": req.messages}),
        sent,
    )
    .await?;
    let prompt = rendered
        .get("prompt")
        .and_then(Value::as_str)
        .ok_or(NativeError::Shape {
            route: "/apply-template",
            what: "`prompt`",
        })?
        .to_string();
    let mut banned: Vec<Value> = Vec::new();
    for _ in 0..=MAX_BANNED {
        let mut body = json!({
            "prompt": prompt,
            "n_predict": 1,
            "n_probs": k,
            "temperature": 0.0,
            "return_tokens": true,
            "cache_prompt": false,
            "logit_bias": banned,
        });
        if let Some(m) = body.as_object_mut() {
            m.extend(
                req.extra
                    .iter()
                    .filter(|(key, _)| key.as_str() != "cache_prompt")
                    .map(|(key, v)| (key.clone(), v.clone())),
            );
        }
        let v = post(client, "completion", &body, sent).await?;
        if let Some(top) = read_native_top_k(&v) {
            return Ok(top);
        }
        let id = v
            .get("tokens")
            .and_then(Value::as_array)
            .and_then(|t| t.first())
            .and_then(Value::as_i64)
            .ok_or(NativeError::Shape {
                route: "/completion",
                what: "`completion_probabilities` or the sampled token's id (`tokens`)",
            })?;
        banned.push(json!([id, false]));
    }
    Err(NativeError::AllIncomplete(banned.len()))
}

/// `completion_probabilities[0].top_logprobs` of a native `/completion` reply (llama.cpp
/// server-task.cpp `probs_vector_to_json`: `id`, `token` cut to valid UTF-8, `bytes`,
/// `logprob`, and the same four for each alternative), or `None` when the reply has none.
pub fn read_native_top_k(v: &Value) -> Option<TopK> {
    let first = v.get("completion_probabilities")?.as_array()?.first()?;
    let alts = first.get("top_logprobs")?.as_array()?;
    let tokens: Vec<TokenProb> = alts
        .iter()
        .filter_map(|a| {
            let token = a.get("token")?.as_str()?.to_string();
            let logprob = a.get("logprob")?.as_f64()?;
            let bytes: Option<Vec<u8>> = a.get("bytes").and_then(Value::as_array).map(|b| {
                b.iter()
                    .filter_map(|x| x.as_u64().and_then(|x| u8::try_from(x).ok()))
                    .collect()
            });
            let bytes = bytes.filter(|b| b.as_slice() != token.as_bytes());
            Some(TokenProb {
                token,
                logprob,
                bytes,
            })
        })
        .collect();
    (!tokens.is_empty()).then_some(TopK { tokens })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn the_native_list_keeps_the_bytes_of_an_incomplete_token() {
        // The shape of server-task.cpp probs_vector_to_json (llama.cpp b11434).
        let v = json!({"content": "Hello", "tokens": [19556], "completion_probabilities": [{
        "id": 19556, "token": "Hello", "bytes": [72,101,108,108,111], "logprob": -1.2,
        "top_logprobs": [
            {"id": 9283, "token": "", "bytes": [240,159,145], "logprob": -0.4},
            {"id": 19556, "token": "Hello", "bytes": [72,101,108,108,111], "logprob": -1.2}
        ]}]});
        let top = read_native_top_k(&v).unwrap();
        assert_eq!(top.tokens.len(), 2);
        assert_eq!(top.tokens[0].bytes, Some(vec![240, 159, 145]));
        assert_eq!(top.tokens[1].bytes, None);
        assert_eq!(top.top1().unwrap().key(), vec![240, 159, 145]);
        assert!(read_native_top_k(&json!({"content": "\u{fffd}", "tokens": [9283]})).is_none());
    }
}

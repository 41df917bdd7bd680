//! A scripted vLLM serving a LoRA adapter as a model id of its own — a complement to the real
//! llama-server tests of `eval adapter`, for what no engine on this machine can show.
//!
//! What it copies:
//! - `GET /v1/models` (vllm/entrypoints/openai/serving_models.py `show_available_models`): the
//!   base's card (`root` = its path, `parent: null`, `max_model_len`) and, for each
//!   `--lora-modules NAME=PATH`, a card with `id` = NAME, `root` = PATH, `parent` = the base id,
//!   `max_model_len: null`;
//! - `GET /version` → `{"version": "0.24.0"}`;
//! - a chat completion names the adapter by `model`; with `logprobs: true, top_logprobs: K` the
//!   non-streamed reply carries `choices[0].logprobs.content[]` of `{token, logprob, bytes,
//!   top_logprobs[]}` (OpenAI's shape, vllm/entrypoints/openai/protocol.py
//!   `ChatCompletionLogProbs`);
//! - [`Lora::NoOp`]: the adapter's id answers exactly what the base answers — the finding
//!   of docs/field-cases.md F6 (vLLM 0.24.0's LoRA application was a silent no-op, whatever the
//!   quantization): the adapter is listed, requests to it succeed, and nothing changes.

use axum::Json;
use axum::Router;
use axum::http::StatusCode;
use axum::routing::{get, post};
use serde_json::{Value, json};

use crate::scripted::{chat_stream, json as reply};

pub const BASE: &str = "google/gemma-3-27b-it";
pub const ADAPTER: &str = "tuned";

/// What requests to the adapter's id get.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lora {
    /// The base's answers, unchanged (vLLM 0.24.0's silent no-op).
    NoOp,
    /// Answers of their own: another first-token distribution and another greedy text.
    Applied,
}

/// The first token's alternatives for a prompt, most likely first: the base's, or the
/// adapter's when it is applied (it moves mass from the base's first choice to its third).
fn alternatives(prompt: &str, adapted: bool) -> Vec<(String, f64)> {
    // A per-prompt spread, so prompts differ from each other as real ones do.
    let h = prompt
        .bytes()
        .fold(7u64, |a, b| a.wrapping_mul(31).wrapping_add(b as u64));
    let lead = 0.55 + (h % 20) as f64 / 100.0;
    let mut p = vec![
        ("The".to_string(), lead),
        ("Sure".to_string(), (1.0 - lead) * 0.5),
        ("Here".to_string(), (1.0 - lead) * 0.3),
        ("I".to_string(), (1.0 - lead) * 0.15),
    ];
    if adapted {
        p[0].1 = 0.2;
        p[2].1 = 0.6;
        p.sort_by(|a, b| b.1.total_cmp(&a.1));
    }
    p.into_iter().map(|(t, q)| (t, q.ln())).collect()
}

fn completion(body: Value, lora: Lora) -> axum::response::Response {
    let model = body.get("model").and_then(Value::as_str).unwrap_or("");
    if model != BASE && model != ADAPTER {
        // vLLM's wording for an unknown model (serving_engine.py `_check_model`).
        return reply(
            StatusCode::NOT_FOUND,
            json!({"object": "error", "message": format!("The model `{model}` does not exist."), "type": "NotFoundError", "param": null, "code": 404}),
        );
    }
    if body.get("stream").and_then(Value::as_bool) == Some(true) {
        return chat_stream(&["The", " answer"], &[], "stop", 2);
    }
    let prompt = body["messages"]
        .as_array()
        .and_then(|m| m.last())
        .and_then(|m| m.get("content"))
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let adapted = model == ADAPTER && lora == Lora::Applied;
    let alts = alternatives(&prompt, adapted);
    let k = body
        .get("top_logprobs")
        .and_then(Value::as_u64)
        .unwrap_or(0) as usize;
    let top: Vec<Value> = alts
        .iter()
        .take(k)
        .map(|(t, lp)| json!({"token": t, "logprob": lp, "bytes": t.as_bytes()}))
        .collect();
    let (first, first_lp) = alts[0].clone();
    let text = if adapted {
        format!("{first} adapted reply")
    } else {
        format!("{first} base reply")
    };
    let logprobs = body
        .get("logprobs")
        .and_then(Value::as_bool)
        .unwrap_or(false)
        .then(|| {
            json!({"content": [{"token": first, "logprob": first_lp, "bytes": first.as_bytes(), "top_logprobs": top}]})
        });
    reply(
        StatusCode::OK,
        json!({
            "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "logprobs": logprobs, "finish_reason": "length"}],
            "usage": {"prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15}
        }),
    )
}

/// vLLM 0.24.0 with `--enable-lora --lora-modules tuned=/loras/tuned`.
pub fn vllm_with_lora(lora: Lora) -> Router {
    Router::new()
        .route(
            "/version",
            get(|| async { reply(StatusCode::OK, json!({"version": "0.24.0"})) }),
        )
        .route(
            "/v1/models",
            get(|| async {
                reply(
                    StatusCode::OK,
                    json!({"object": "list", "data": [
                        {"id": BASE, "object": "model", "created": 1, "owned_by": "vllm", "root": "/models/gemma-3-27b-it", "parent": null, "max_model_len": 8192, "permission": []},
                        {"id": ADAPTER, "object": "model", "created": 1, "owned_by": "vllm", "root": "/loras/tuned", "parent": BASE, "max_model_len": null, "permission": []}
                    ]}),
                )
            }),
        )
        .route(
            "/tokenize",
            post(|| async {
                reply(
                    StatusCode::OK,
                    json!({"count": 2, "max_model_len": 8192, "tokens": [9707, 1879]}),
                )
            }),
        )
        .route(
            "/v1/chat/completions",
            post(move |Json(body): Json<Value>| async move { completion(body, lora) }),
        )
}

//! Counting in the served model's own tokens, through the server.
//!
//! Two questions, each answered by the engine's dialect:
//! - the tokens of a text, with the text of each token (so a prompt can be cut exactly on a
//!   token boundary without re-tokenizing in a loop);
//! - how many tokens the server will see for a whole chat request, chat template included.

use std::time::Duration;

use bakeoff_artifact::EngineKind;
use bakeoff_wire::Message;
use serde_json::{Value, json};

use crate::{Client, Method, RequestError};

/// The tokens of a text and the byte offset where each one ends in that text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pieces {
    pub ids: Vec<u32>,
    /// `ends[i]` is the byte offset in the source text where token `i` ends.
    pub ends: Vec<usize>,
}

#[derive(Debug, thiserror::Error)]
pub enum TokenizeError {
    #[error(
        "{engine} has no server tokenizer route bakeoff knows; give --tokenizer tokenizer.json"
    )]
    Unsupported { engine: EngineKind },
    #[error("tokenize call failed: {0}")]
    Request(#[from] RequestError),
    #[error("tokenize call returned HTTP {status}: {body}")]
    Status { status: u16, body: String },
    #[error("tokenize reply has an unexpected shape: {0}")]
    Shape(String),
    #[error(
        "the server's token pieces do not rebuild the text (at token {at}); this tokenizer cannot be cut on token boundaries through the server: give --tokenizer tokenizer.json"
    )]
    PiecesMismatch { at: usize },
}

const LIMIT: Duration = Duration::from_secs(120);

impl Client {
    async fn post_ok(&self, path: &str, body: &Value) -> Result<Value, TokenizeError> {
        let (status, v) = self
            .control(Method::Post, self.url().root_path(path), Some(body), LIMIT)
            .await?;
        match v {
            Some(v) if (200..300).contains(&status) => Ok(v),
            other => Err(TokenizeError::Status {
                status,
                body: other
                    .map(|v| v.to_string())
                    .unwrap_or_default()
                    .chars()
                    .take(300)
                    .collect(),
            }),
        }
    }

    /// Tokens of `text` (no special tokens) with each token's end offset.
    pub async fn tokenize_pieces(
        &self,
        engine: EngineKind,
        model: &str,
        text: &str,
    ) -> Result<Pieces, TokenizeError> {
        match engine {
            // llama.cpp: `with_pieces: true` returns `[{id, piece}]` (tools/server/README.md).
            EngineKind::LlamaCpp => {
                let v = self
                    .post_ok(
                        "tokenize",
                        &json!({"content": text, "add_special": false, "with_pieces": true}),
                    )
                    .await?;
                let arr = v
                    .get("tokens")
                    .and_then(Value::as_array)
                    .ok_or_else(|| TokenizeError::Shape("no tokens array".into()))?;
                let mut ids = Vec::with_capacity(arr.len());
                let mut pieces = Vec::with_capacity(arr.len());
                for t in arr {
                    let id = t
                        .get("id")
                        .and_then(Value::as_u64)
                        .and_then(|i| u32::try_from(i).ok());
                    let piece = t.get("piece").and_then(Value::as_str);
                    match (id, piece) {
                        (Some(id), Some(p)) => {
                            ids.push(id);
                            pieces.push(p.to_string());
                        }
                        _ => return Err(TokenizeError::Shape("token without id/piece".into())),
                    }
                }
                ends_from_pieces(text, ids, &pieces)
            }
            // vLLM and SGLang: `/tokenize {prompt, return_token_strs}`; `token_strs` when the
            // server supports it (vllm/entrypoints/openai/protocol.py TokenizeResponse).
            EngineKind::Vllm | EngineKind::Sglang => {
                let v = self
                    .post_ok(
                        "tokenize",
                        &json!({"model": model, "prompt": text, "add_special_tokens": false, "return_token_strs": true}),
                    )
                    .await?;
                let ids = crate::dialect::parse_tokens(&v)
                    .ok_or_else(|| TokenizeError::Shape("no tokens".into()))?;
                let strs: Option<Vec<String>> =
                    v.get("token_strs").and_then(Value::as_array).map(|a| {
                        a.iter()
                            .map(|s| s.as_str().unwrap_or_default().replace('\u{2581}', " "))
                            .collect()
                    });
                match strs {
                    Some(s) if s.len() == ids.len() => ends_from_pieces(text, ids, &s),
                    _ => Err(TokenizeError::Shape(
                        "server gave no token_strs; cannot cut on token boundaries (give --tokenizer)".into(),
                    )),
                }
            }
            EngineKind::Generic => Err(TokenizeError::Unsupported { engine }),
        }
    }

    /// Tokens the server will count for this chat request (template and special tokens
    /// included), when the engine can say without generating.
    pub async fn count_chat_tokens(
        &self,
        engine: EngineKind,
        model: &str,
        messages: &[Message],
    ) -> Result<u64, TokenizeError> {
        match engine {
            // llama.cpp: render with `/apply-template`, then tokenize what the server would
            // tokenize (BOS and special tokens parsed), as it does for a chat request.
            EngineKind::LlamaCpp => {
                let v = self
                    .post_ok("apply-template", &json!({"messages": messages}))
                    .await?;
                let prompt = v.get("prompt").and_then(Value::as_str).ok_or_else(|| {
                    TokenizeError::Shape("apply-template returned no prompt".into())
                })?;
                let t = self
                    .post_ok(
                        "tokenize",
                        &json!({"content": prompt, "add_special": true, "parse_special": true}),
                    )
                    .await?;
                crate::dialect::parse_tokens(&t)
                    .map(|t| t.len() as u64)
                    .ok_or_else(|| TokenizeError::Shape("no tokens".into()))
            }
            // vLLM: `/tokenize` with `messages` applies the chat template and returns `count`.
            EngineKind::Vllm | EngineKind::Sglang => {
                let v = self
                    .post_ok("tokenize", &json!({"model": model, "messages": messages, "add_generation_prompt": true}))
                    .await?;
                v.get("count")
                    .and_then(Value::as_u64)
                    .or_else(|| crate::dialect::parse_tokens(&v).map(|t| t.len() as u64))
                    .ok_or_else(|| TokenizeError::Shape("no count".into()))
            }
            EngineKind::Generic => Err(TokenizeError::Unsupported { engine }),
        }
    }
}

/// Turn token pieces into end offsets, checking that they rebuild the text exactly.
fn ends_from_pieces(text: &str, ids: Vec<u32>, pieces: &[String]) -> Result<Pieces, TokenizeError> {
    let mut ends = Vec::with_capacity(pieces.len());
    let mut pos = 0usize;
    for (i, p) in pieces.iter().enumerate() {
        if !text[pos..].starts_with(p.as_str()) {
            return Err(TokenizeError::PiecesMismatch { at: i });
        }
        pos += p.len();
        ends.push(pos);
    }
    if pos != text.len() {
        return Err(TokenizeError::PiecesMismatch { at: pieces.len() });
    }
    Ok(Pieces { ids, ends })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn pieces_rebuild_text() {
        let p = ends_from_pieces(
            "Hello world.",
            vec![1, 2, 3],
            &["Hello".into(), " world".into(), ".".into()],
        )
        .unwrap();
        assert_eq!(p.ends, vec![5, 11, 12]);
        assert!(ends_from_pieces("Hello", vec![1], &["Help".into()]).is_err());
        assert!(ends_from_pieces("Hello!", vec![1], &["Hello".into()]).is_err());
    }
}

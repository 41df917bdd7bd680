//! The chat shapes: what a request puts on the wire, and replies with the vendor extras real
//! engines send read without losing them.

use bakeoff_wire::{ChatRequest, Message, NonStreamResponse};
use serde_json::json;

#[test]
fn a_streamed_request_asks_for_usage_and_leaves_unset_fields_off_the_wire() {
    let r = ChatRequest::new(
        "m",
        vec![Message::system("s"), Message::user("hi")],
        16,
        true,
    );
    let v = serde_json::to_value(&r).unwrap();
    assert_eq!(
        v,
        json!({
            "model": "m",
            "messages": [
                {"role": "system", "content": "s"},
                {"role": "user", "content": "hi"}
            ],
            "max_tokens": 16,
            "temperature": 0.0,
            "stream": true,
            "stream_options": {"include_usage": true}
        })
    );
    let plain = serde_json::to_value(ChatRequest::new("m", vec![], 1, false)).unwrap();
    assert!(plain.get("stream_options").is_none(), "{plain}");
}

#[test]
fn engine_extras_are_sent_at_the_top_level() {
    let mut r = ChatRequest::new("m", vec![Message::user("hi")], 4, false);
    r.extra.insert("ignore_eos".into(), json!(true));
    let v = serde_json::to_value(&r).unwrap();
    assert_eq!(v["ignore_eos"], json!(true));
}

#[test]
fn a_llama_cpp_reply_keeps_reasoning_timings_and_logprobs() {
    // llama-server's non-streamed reply (tools/server/server-task.cpp), trimmed.
    let body = json!({
        "choices": [{
            "index": 0,
            "finish_reason": "length",
            "message": {"role": "assistant", "content": "4", "reasoning_content": "2+2"},
            "logprobs": {"content": [{
                "id": 19, "token": "4", "bytes": [52], "logprob": -0.01,
                "top_logprobs": [
                    {"id": 19, "token": "4", "bytes": [52], "logprob": -0.01},
                    {"id": 20, "token": "", "bytes": [240, 159], "logprob": -5.0}
                ]
            }]}
        }],
        "usage": {"prompt_tokens": 12, "completion_tokens": 1, "total_tokens": 13,
                  "prompt_tokens_details": {"cached_tokens": 8}},
        "timings": {"prompt_n": 4, "cache_n": 8, "predicted_n": 1, "predicted_ms": 9.5},
        "system_fingerprint": "b11434"
    });
    let r: NonStreamResponse = serde_json::from_value(body).unwrap();
    let c = &r.choices[0];
    let m = c.message.as_ref().unwrap();
    assert_eq!(m.content.as_deref(), Some("4"));
    assert_eq!(m.reasoning_content.as_deref(), Some("2+2"));
    let lp = &c.logprobs.as_ref().unwrap().content.as_ref().unwrap()[0];
    // An alternative cut inside a character is known by its bytes, not its empty text.
    assert_eq!(lp.top_logprobs[1].key(), vec![240, 159]);
    assert_eq!(lp.top_logprobs[0].key(), b"4".to_vec());
    let usage = r.usage.as_ref().unwrap();
    assert_eq!(usage.cached_tokens(), Some(8));
    assert_eq!(usage.reasoning_tokens(), None);
    assert_eq!(r.timings.as_ref().unwrap().cache_n, Some(8));
}

#[test]
fn a_reply_missing_every_optional_field_still_reads() {
    let r: NonStreamResponse = serde_json::from_value(json!({"choices": [{}]})).unwrap();
    assert_eq!(r.choices.len(), 1);
    assert!(r.choices[0].message.is_none() && r.usage.is_none());
}

//! Behaviour the 270M base model cannot show, from scripted servers. Each fixture copies a
//! documented engine behaviour:
//!
//! - parsed tool calls: the OpenAI streaming shape (`delta.tool_calls[].function.{name,
//!   arguments}` in pieces) that vLLM with `--enable-auto-tool-choice --tool-call-parser hermes`
//!   and llama.cpp with `--jinja` send (docs.vllm.ai features/tool_calling; llama.cpp
//!   tools/server/README.md);
//! - calls returned as text in `content`: vLLM without a working tool parser leaves the
//!   Hermes `<tool_call>{…}</tool_call>` block in content (tool calls are parsed only with
//!   `--enable-auto-tool-choice --tool-call-parser`: docs.vllm.ai features/tool_calling);
//! - reasoning-only replies: a reasoning model in default thinking mode behind vLLM's reasoning
//!   parser streams `delta.reasoning` and leaves content empty (docs.vllm.ai
//!   features/reasoning_outputs; docs/field-cases.md B3: valid JSON with an empty `content`);
//! - truncation inside reasoning: `finish_reason: "length"` while still in `reasoning`. Thinking
//!   tokens share `max_tokens` with the answer (vLLM docs features/reasoning_outputs), so a
//!   reasoning model on a short answer budget is cut off before it writes any content;
//! - llama.cpp's reasoning field: with `--reasoning-format deepseek` (what the llama.cpp dialect
//!   asks for per request) llama-server splits the `<think>` block into `reasoning_content`, not
//!   vLLM's `reasoning` (ggml-org/llama.cpp tools/server/README.md, `--reasoning-format`: the
//!   response field is `message.reasoning_content`).

use axum::Router;
use axum::http::StatusCode;
use axum::routing::{get, post};
use bakeoff_artifact::{ItemRecord, Outcome};
use bakeoff_suites::{SuiteName, SuiteOptions, ThinkingMode};
use bakeoff_testkit::scripted::{json, serve, sse};
use serde_json::json as j;

use crate::util::{client, connect, context, run_to_end};

fn models() -> Router {
    Router::new().route(
        "/v1/models",
        get(|| async {
            json(
                StatusCode::OK,
                j!({"data":[{"id":"qwen3","max_model_len":32768}]}),
            )
        }),
    )
}

fn ev(delta: serde_json::Value) -> String {
    j!({"choices":[{"index":0,"delta":delta}]}).to_string()
}

fn finish(reason: &str, reasoning_tokens: u64) -> Vec<String> {
    vec![
        j!({"choices":[{"index":0,"delta":{},"finish_reason":reason}]}).to_string(),
        j!({"choices":[],"usage":{"prompt_tokens":20,"completion_tokens":16,"completion_tokens_details":{"reasoning_tokens":reasoning_tokens}}}).to_string(),
    ]
}

async fn run(
    app: Router,
    suites: &[SuiteName],
    thinking: ThinkingMode,
) -> bakeoff_suites::RunOutcome {
    let s = serve(app).await;
    let (client, facts) = connect(&s.url()).await;
    let options = SuiteOptions {
        thinking,
        limit: Some(1),
        ..SuiteOptions::default()
    };
    let ctx = context(&client, "qwen3", &facts, &options);
    let mut sink = |_: &str, _: &ItemRecord| {};
    let out = run_to_end(&ctx, suites, &mut sink).await;
    drop(s);
    out
}

#[tokio::test]
async fn parsed_tool_calls_pass_the_checker() {
    let app = models().route(
        "/v1/chat/completions",
        post(|| async {
            let mut e = vec![
                ev(j!({"role":"assistant","content":null})),
                ev(j!({"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"get_weather","arguments":""}}]})),
                ev(j!({"tool_calls":[{"index":0,"function":{"arguments":"{\"city\": "}}]})),
                ev(j!({"tool_calls":[{"index":0,"function":{"arguments":"\"Paris\"}"}}]})),
            ];
            e.extend(finish("tool_calls", 0));
            sse(&e)
        }),
    );
    let out = run(app, &[SuiteName::Tool], ThinkingMode::Default).await;
    let t = &out.suites["tool"];
    assert_eq!(t.items[0].outcome, Outcome::Ok, "{:?}", t.items[0].check);
    assert_eq!(t.items[0].extra["landing"], "tool-calls");
    assert_eq!(t.summary.details["diagnosis"]["code"], "tool-calls-work");
}

#[tokio::test]
async fn calls_as_text_in_content_blame_the_server_parser() {
    // vLLM without a working tool parser: the Hermes block arrives as plain content.
    let app = models().route(
        "/v1/chat/completions",
        post(|| async {
            let mut e = vec![ev(j!({"role":"assistant"}))];
            for piece in [
                "<tool_call>\n{\"name\": \"get_weather\", ",
                "\"arguments\": {\"city\": \"Paris\"}}\n",
                "</tool_call>",
            ] {
                e.push(ev(j!({"content": piece})));
            }
            e.extend(finish("stop", 0));
            sse(&e)
        }),
    );
    let out = run(app, &[SuiteName::Tool], ThinkingMode::Default).await;
    let t = &out.suites["tool"];
    let it = &t.items[0];
    assert_eq!(it.outcome, Outcome::Wrong);
    assert_eq!(it.extra["landing"], "content-text");
    assert_eq!(it.extra["would_pass_if_parsed"], true);
    assert_eq!(
        t.summary.details["diagnosis"]["code"],
        "server-lacks-tool-parser"
    );
    assert!(
        t.summary
            .flags
            .iter()
            .any(|f| f.code == "tool-parser-missing")
    );
}

fn reasoning_only_app(finish_reason: &'static str) -> Router {
    models().route(
        "/v1/chat/completions",
        post(move || async move {
            let mut e = vec![
                ev(j!({"role":"assistant"})),
                ev(j!({"reasoning":"Let me work out "})),
                ev(j!({"reasoning":"the answer step by step: 714"})),
            ];
            e.extend(finish(finish_reason, 16));
            sse(&e)
        }),
    )
}

#[tokio::test]
async fn reasoning_only_replies_are_not_wrong_answers_and_never_scored_from_reasoning() {
    let out = run(
        reasoning_only_app("stop"),
        &[SuiteName::Intelligence, SuiteName::Tool],
        ThinkingMode::On,
    )
    .await;
    let intel = &out.suites["intelligence"];
    for it in &intel.items {
        assert_eq!(it.outcome, Outcome::EmptyContentReasoningOnly, "{}", it.id);
        assert_eq!(it.extra["extraction_failed"], false);
        assert_eq!(it.extra["reasoning_tokens"], 16);
        // thinking on was sent through the vLLM-style chat_template_kwargs.
        assert_eq!(it.request["chat_template_kwargs"]["enable_thinking"], true);
    }
    // arith-000's answer (714) sits in the reasoning: it must not be scored.
    assert_eq!(intel.summary.passed, 0);
    assert_eq!(
        out.suites["tool"].items[0].outcome,
        Outcome::EmptyContentReasoningOnly
    );
}

/// llama.cpp's streaming shape with `reasoning_format: "deepseek"`: the thinking arrives as
/// `delta.reasoning_content` (llama.cpp tools/server/README.md).
fn llamacpp_reasoning_content_app(finish_reason: &'static str) -> Router {
    models().route(
        "/v1/chat/completions",
        post(move || async move {
            let mut e = vec![
                ev(j!({"role":"assistant","content":null})),
                ev(j!({"reasoning_content":"The user asks for a sum. "})),
                ev(j!({"reasoning_content":"So the answer is 714."})),
            ];
            e.extend(finish(finish_reason, 12));
            sse(&e)
        }),
    )
}

#[tokio::test]
async fn llamacpp_reasoning_content_is_read_counted_and_never_scored() {
    let out = run(
        llamacpp_reasoning_content_app("stop"),
        &[SuiteName::Intelligence],
        ThinkingMode::On,
    )
    .await;
    let intel = &out.suites["intelligence"];
    assert_eq!(intel.items.len(), 6);
    for it in &intel.items {
        assert_eq!(it.outcome, Outcome::EmptyContentReasoningOnly, "{}", it.id);
        assert!(it.response.reasoning.contains("714"), "{}", it.id);
        assert_eq!(it.extra["extraction_failed"], false);
    }
    // arith-000 (the answer in the reasoning) is not scored from it.
    assert_eq!(intel.summary.passed, 0);
    // The suite says how much reasoning it spent, apart from the answers.
    let r = &intel.summary.details["reasoning"];
    assert_eq!(r["items_with_reasoning"], 6);
    assert_eq!(r["reasoning_tokens"], 6 * 12);
    // Every item ended inside the reasoning: flagged as such, not read as a weak model.
    let flag = intel
        .summary
        .flags
        .iter()
        .find(|f| f.code == "thinking-artifacts")
        .unwrap();
    assert_eq!(flag.count, Some(6));
    for f in intel.summary.details["families"].as_array().unwrap() {
        assert_eq!(f["thinking_artifacts"], 1, "{f}");
    }
    // --thinking on widened every answer budget for the reasoning.
    assert_eq!(
        intel.items[0].request["max_tokens"],
        bakeoff_suites::intelligence::MAX_TOKENS + bakeoff_suites::thinking::THINKING_ALLOWANCE
    );
}

#[tokio::test]
async fn a_tool_reply_cut_off_while_reasoning_does_not_blame_the_model() {
    let out = run(
        llamacpp_reasoning_content_app("length"),
        &[SuiteName::Tool],
        ThinkingMode::Default,
    )
    .await;
    let t = &out.suites["tool"];
    // One case per category; every reply ran out of budget inside the reasoning.
    assert_eq!(t.items.len(), 5);
    for it in &t.items {
        assert_eq!(it.outcome, Outcome::TruncatedInReasoning, "{}", it.id);
        assert_eq!(it.extra["landing"], "nowhere");
    }
    // The four cases expecting a call are counted apart from "nowhere" …
    assert_eq!(t.summary.details["landing"]["ended-in-reasoning"], 4);
    assert!(t.summary.details["landing"].get("nowhere").is_none());
    // … so the diagnosis blames neither the model nor the parser.
    assert_eq!(
        t.summary.details["diagnosis"]["code"],
        "replies-ended-in-reasoning"
    );
    assert!(
        !t.summary
            .flags
            .iter()
            .any(|f| f.code == "model-does-not-call-tools")
    );
    assert!(
        t.summary
            .flags
            .iter()
            .any(|f| f.code == "thinking-artifacts")
    );
}

#[tokio::test]
async fn truncation_inside_reasoning_is_its_own_class() {
    let out = run(
        reasoning_only_app("length"),
        &[SuiteName::Session],
        ThinkingMode::Default,
    )
    .await;
    let s = &out.suites["session"];
    assert!(
        s.items
            .iter()
            .all(|i| i.outcome == Outcome::TruncatedInReasoning)
    );
}

#[tokio::test]
async fn thinking_mode_check_says_when_off_did_not_take_effect() {
    let s = serve(reasoning_only_app("stop")).await;
    let client = client(&s.url());
    let engine = bakeoff_artifact::EngineKind::Vllm;
    let (off, flag) =
        bakeoff_suites::thinking::verify(&client, "qwen3", engine, ThinkingMode::Off).await;
    assert_eq!(off.took_effect, Some(false));
    assert_eq!(flag.unwrap().code, "thinking-mode-not-applied");
    let (on, flag) =
        bakeoff_suites::thinking::verify(&client, "qwen3", engine, ThinkingMode::On).await;
    assert_eq!(on.took_effect, Some(true));
    assert!(flag.is_none());
    assert_eq!(on.reasoning_tokens, Some(16));
}

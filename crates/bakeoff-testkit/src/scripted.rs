//! Scripted in-process OpenAI-compatible servers, for what the real small model cannot show.
//! Each route documents the engine behaviour it copies.

use std::net::SocketAddr;

use axum::Router;
use axum::body::Body;
use axum::http::{Response, StatusCode};
use axum::routing::{get, post};

/// A running scripted server; aborted on drop.
pub struct Scripted {
    pub addr: SocketAddr,
    task: tokio::task::JoinHandle<()>,
}

impl Scripted {
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }
}

impl Drop for Scripted {
    fn drop(&mut self) {
        self.task.abort();
    }
}

pub async fn serve(app: Router) -> Scripted {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    Scripted { addr, task }
}

/// An SSE body from `data:` payloads, ending with `[DONE]`.
pub fn sse(events: &[String]) -> Response<Body> {
    let mut body = String::new();
    for e in events {
        body.push_str("data: ");
        body.push_str(e);
        body.push_str("\n\n");
    }
    body.push_str("data: [DONE]\n\n");
    Response::builder()
        .header("content-type", "text/event-stream")
        .body(Body::from(body))
        .unwrap()
}

pub fn json(status: StatusCode, v: serde_json::Value) -> Response<Body> {
    Response::builder()
        .status(status)
        .header("content-type", "application/json")
        .body(Body::from(v.to_string()))
        .unwrap()
}

/// A streamed chat reply: one chunk per `content` piece, then `finish_reason`, then usage.
pub fn chat_stream(
    contents: &[&str],
    reasoning: &[&str],
    finish: &str,
    completion_tokens: u64,
) -> Response<Body> {
    let mut ev = vec![
        serde_json::json!({"choices":[{"index":0,"delta":{"role":"assistant","content":null}}]})
            .to_string(),
    ];
    for r in reasoning {
        ev.push(
            serde_json::json!({"choices":[{"index":0,"delta":{"reasoning_content": r}}]})
                .to_string(),
        );
    }
    for c in contents {
        ev.push(serde_json::json!({"choices":[{"index":0,"delta":{"content": c}}]}).to_string());
    }
    ev.push(
        serde_json::json!({"choices":[{"index":0,"delta":{},"finish_reason": finish}]}).to_string(),
    );
    ev.push(serde_json::json!({"choices":[],"usage":{"prompt_tokens":10,"completion_tokens":completion_tokens,"total_tokens":10+completion_tokens}}).to_string());
    sse(&ev)
}

/// vLLM: `/version` → `{"version": …}`, `/v1/models` with `max_model_len`
/// (vllm/entrypoints/openai/protocol.py `ModelCard`), `/tokenize` → `{count, max_model_len,
/// tokens}`, and a normal streamed reply.
pub fn vllm_like(max_model_len: u64) -> Router {
    Router::new()
        .route("/version", get(|| async { json(StatusCode::OK, serde_json::json!({"version":"0.11.0"})) }))
        .route(
            "/v1/models",
            get(move || async move {
                json(
                    StatusCode::OK,
                    serde_json::json!({"object":"list","data":[{"id":"Qwen/Qwen3-8B","object":"model","created":1,"owned_by":"vllm","root":"Qwen/Qwen3-8B","parent":null,"max_model_len":max_model_len,"permission":[]}]}),
                )
            }),
        )
        .route(
            "/tokenize",
            post(move || async move {
                json(StatusCode::OK, serde_json::json!({"count":2,"max_model_len":max_model_len,"tokens":[9707,1879]}))
            }),
        )
        .route(
            "/v1/chat/completions",
            post(|| async { chat_stream(&["Hello", " there"], &[], "stop", 2) }),
        )
}

/// A reasoning model in its default thinking mode behind vLLM's reasoning parser: `content`
/// stays empty and the text arrives in `reasoning` (docs.vllm.ai features/reasoning_outputs;
/// docs/field-cases.md B3: valid JSON with an empty `content`).
pub fn reasoning_only() -> Router {
    Router::new()
        .route("/version", get(|| async { json(StatusCode::OK, serde_json::json!({"version":"0.11.0"})) }))
        .route(
            "/v1/models",
            get(|| async { bare_models("qwen3", 32768) }),
        )
        .route(
            "/v1/chat/completions",
            post(|| async {
                let ev = vec![
                    serde_json::json!({"choices":[{"index":0,"delta":{"role":"assistant"}}]}).to_string(),
                    serde_json::json!({"choices":[{"index":0,"delta":{"reasoning":"Let me think about"}}]}).to_string(),
                    serde_json::json!({"choices":[{"index":0,"delta":{"reasoning":" this greeting."}}]}).to_string(),
                    serde_json::json!({"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}).to_string(),
                    serde_json::json!({"choices":[],"usage":{"prompt_tokens":9,"completion_tokens":8,"completion_tokens_details":{"reasoning_tokens":8}}}).to_string(),
                ];
                sse(&ev)
            }),
        )
}

/// The wedge of docs/field-cases.md B1: `/v1/models` answers (which fooled a naive readiness
/// probe) while every inference request dies with connection aborts — here the connection is
/// cut before any response.
pub fn models_up_completions_dropped() -> Router {
    Router::new()
        .route(
            "/v1/models",
            get(|| async { bare_models("nemotron", 131072) }),
        )
        .route(
            "/v1/chat/completions",
            post(|| async {
                // A body stream that errors immediately makes hyper abort the connection.
                let s = futures_error_stream();
                Response::builder()
                    .status(200)
                    .header("content-type", "text/event-stream")
                    .body(Body::from_stream(s))
                    .unwrap()
            }),
        )
}

fn futures_error_stream()
-> impl futures_util::Stream<Item = Result<axum::body::Bytes, std::io::Error>> + Send + 'static {
    futures_util::stream::once(async { Err(std::io::Error::other("engine core died")) })
}

/// Tokens of a scripted word-level tokenizer: each token is a run of whitespace followed by
/// the non-whitespace run after it (a trailing run of whitespace is a token of its own). Its
/// pieces rebuild the text exactly, as llama.cpp's `with_pieces` do.
pub fn word_pieces(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut in_word = false;
    for (i, c) in text.char_indices() {
        if c.is_whitespace() && in_word {
            out.push(&text[start..i]);
            start = i;
            in_word = false;
        } else if !c.is_whitespace() {
            in_word = true;
        }
    }
    if start < text.len() {
        out.push(&text[start..]);
    }
    out
}

/// Gemma 3's chat template for one user turn, as llama.cpp's `/apply-template` renders it.
fn gemma_prompt(body: &serde_json::Value) -> String {
    let content: String = body["messages"]
        .as_array()
        .map(|m| {
            m.iter()
                .filter_map(|m| m["content"].as_str())
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default();
    format!("<start_of_turn>user\n{content}<end_of_turn>\n<start_of_turn>model\n")
}

/// A model that always finds the needle: the UUID-shaped code of the prompt's "access code"
/// sentence, or "OK".
fn perfect_answer(prompt: &str) -> String {
    prompt
        .split_whitespace()
        .map(|w| w.trim_end_matches('.'))
        .find(|w| w.len() == 36 && w.matches('-').count() == 4)
        .unwrap_or("OK")
        .to_string()
}

/// A llama.cpp-shaped server with a word-level tokenizer whose chat replies report
/// `usage.prompt_tokens` off by `skew` tokens for prompts longer than `skew_above` tokens —
/// the drift of docs/field-cases.md B7 when a harness's count and the server's disagreed.
/// Everything else copies llama-server b11434 (tools/server/README.md):
/// `/props` with `build_info` and per-slot `default_generation_settings.n_ctx`, `/slots` with
/// each slot's `n_ctx`, `/tokenize {content, add_special, with_pieces}` (BOS only with
/// `add_special`), `/apply-template {messages}` → `{prompt}`, and HTTP 400
/// `exceed_context_size_error` past the window.
pub fn llamacpp_like(n_ctx: u64, skew: i64, skew_above: u64) -> Router {
    use axum::Json;
    const BOS: u64 = 2;
    let count = |prompt: &str| 1 + word_pieces(prompt).len() as u64;
    Router::new()
        .route(
            "/props",
            get(move || async move {
                json(
                    StatusCode::OK,
                    serde_json::json!({"build_info":"b11434-scripted","default_generation_settings":{"n_ctx":n_ctx},
                        "total_slots":1,"model_path":"/m/scripted-q4_k_m.gguf","model_ftype":"Q4_K - Medium",
                        "chat_template":"{{ bos_token }}{% for m in messages %}<start_of_turn>user\n{{ m.content }}<end_of_turn>\n{% endfor %}<start_of_turn>model\n"}),
                )
            }),
        )
        .route(
            "/slots",
            get(move || async move { json(StatusCode::OK, serde_json::json!([{"id":0,"n_ctx":n_ctx}])) }),
        )
        .route(
            "/v1/models",
            get(|| async { json(StatusCode::OK, serde_json::json!({"data":[{"id":"scripted-llama","meta":{"n_ctx_train":131072}}]})) }),
        )
        .route(
            "/tokenize",
            post(|Json(b): Json<serde_json::Value>| async move {
                let text = b["content"].as_str().unwrap_or_default();
                let mut tokens: Vec<serde_json::Value> = Vec::new();
                let pieces = b["with_pieces"].as_bool() == Some(true);
                if b["add_special"].as_bool() == Some(true) {
                    tokens.push(if pieces { serde_json::json!({"id": BOS, "piece": "<bos>"}) } else { serde_json::json!(BOS) });
                }
                for (i, p) in word_pieces(text).into_iter().enumerate() {
                    let id = 1000 + i as u64;
                    tokens.push(if pieces { serde_json::json!({"id": id, "piece": p}) } else { serde_json::json!(id) });
                }
                json(StatusCode::OK, serde_json::json!({"tokens": tokens}))
            }),
        )
        .route(
            "/apply-template",
            post(|Json(b): Json<serde_json::Value>| async move {
                json(StatusCode::OK, serde_json::json!({"prompt": gemma_prompt(&b)}))
            }),
        )
        .route(
            "/v1/chat/completions",
            post(move |Json(b): Json<serde_json::Value>| async move {
                let prompt = gemma_prompt(&b);
                let n = count(&prompt);
                if n > n_ctx {
                    return json(
                        StatusCode::BAD_REQUEST,
                        serde_json::json!({"error":{"code":400,"type":"exceed_context_size_error",
                            "message":format!("request ({n} tokens) exceeds the available context size ({n_ctx} tokens), try increasing it"),
                            "n_prompt_tokens":n,"n_ctx":n_ctx}}),
                    );
                }
                let reported = if n > skew_above { (n as i64 + skew).max(0) as u64 } else { n };
                let answer = perfect_answer(&prompt);
                let ev = vec![
                    serde_json::json!({"choices":[{"index":0,"delta":{"role":"assistant","content":null}}]}).to_string(),
                    serde_json::json!({"choices":[{"index":0,"delta":{"content": answer}}]}).to_string(),
                    serde_json::json!({"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}).to_string(),
                    serde_json::json!({"choices":[],"usage":{"prompt_tokens":reported,"completion_tokens":1,"total_tokens":reported+1}}).to_string(),
                ];
                sse(&ev)
            }),
        )
}

/// A gateway-shaped endpoint (LiteLLM in front of vLLM: `/v1/models` with `max_model_len`, no
/// `/props`, `/version` or `/tokenize`) whose engine counts `usage.prompt_tokens` with the
/// tokenizer.json at `tokenizer` over a ChatML rendering of the messages — what vLLM does with
/// the model's HF tokenizer. `calibrations` counts the `max_tokens: 1` requests it saw.
pub fn gateway_with_tokenizer(
    tokenizer: std::path::PathBuf,
    max_model_len: u64,
    calibrations: std::sync::Arc<std::sync::atomic::AtomicU64>,
) -> Router {
    use axum::Json;
    let tok = std::sync::Arc::new(bakeoff_text::LocalTokenizer::from_file(&tokenizer).unwrap());
    Router::new()
        .route(
            "/v1/models",
            get(move || async move {
                json(StatusCode::OK, serde_json::json!({"object":"list","data":[{"id":"gw-qwen","object":"model","max_model_len":max_model_len}]}))
            }),
        )
        .route(
            "/v1/chat/completions",
            post(move |Json(b): Json<serde_json::Value>| {
                let tok = tok.clone();
                let calibrations = calibrations.clone();
                async move {
                    let content = b["messages"][0]["content"].as_str().unwrap_or_default();
                    let prompt = format!("<|im_start|>user\n{content}<|im_end|>\n<|im_start|>assistant\n");
                    let n = tok.count(&prompt).unwrap() as u64;
                    if b["max_tokens"].as_u64() == Some(1) {
                        calibrations.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    }
                    let answer = perfect_answer(&prompt);
                    let ev = vec![
                        serde_json::json!({"choices":[{"index":0,"delta":{"role":"assistant"}}]}).to_string(),
                        serde_json::json!({"choices":[{"index":0,"delta":{"content": answer}}]}).to_string(),
                        serde_json::json!({"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}).to_string(),
                        serde_json::json!({"choices":[],"usage":{"prompt_tokens":n,"completion_tokens":1,"total_tokens":n+1}}).to_string(),
                    ];
                    sse(&ev)
                }
            }),
        )
}

/// An endpoint that answers the first `answered` chat requests at once and then holds every
/// later one open without a byte — what a real engine looks like while it works through a
/// long prompt on a slow machine (llama-server sends nothing until prefill ends). It makes
/// "Ctrl-C while a request is in flight" deterministic, which the small fast model cannot.
/// `seen` counts the chat requests received: a test waits on its receiver for the count it
/// needs.
pub fn answers_then_holds(
    answered: u64,
    seen: std::sync::Arc<tokio::sync::watch::Sender<u64>>,
) -> Router {
    Router::new()
        .route("/v1/models", get(|| async { bare_models("slow", 8192) }))
        .route(
            "/v1/chat/completions",
            post(move || {
                let mut before = 0;
                seen.send_modify(|n| {
                    before = *n;
                    *n += 1;
                });
                async move {
                    if before >= answered {
                        tokio::time::sleep(std::time::Duration::from_secs(600)).await;
                    }
                    chat_stream(&["Hello"], &[], "stop", 1)
                }
            }),
        )
}

/// The wedge of docs/field-cases.md B1: vLLM's control endpoints answer (`/version`,
/// `/v1/models`) while every inference never returns; its `/tokenize` hangs with the engine core
/// too.
pub fn completions_hang() -> Router {
    let hang = || async {
        tokio::time::sleep(std::time::Duration::from_secs(600)).await;
        json(StatusCode::OK, serde_json::json!({}))
    };
    Router::new()
        .route(
            "/version",
            get(|| async { json(StatusCode::OK, serde_json::json!({"version":"0.19.0"})) }),
        )
        .route(
            "/v1/models",
            get(|| async { models("nemotron", Some(131072)) }),
        )
        .route("/tokenize", post(hang))
        .route("/v1/chat/completions", post(hang))
}

/// A server answering 500 on every path: an engine (or a gateway in front of it) whose every
/// handler fails, e.g. LiteLLM's proxy with its backend gone (`500 Internal Server Error`).
pub fn all_500() -> Router {
    Router::new().fallback(|| async {
        json(
            StatusCode::INTERNAL_SERVER_ERROR,
            serde_json::json!({"error":{"message":"Internal Server Error","code":500}}),
        )
    })
}

/// llama-server started with `--api-key`: completions answer 401 `{"error":{"code":401,
/// "message":"Invalid API Key","type":"authentication_error"}}` to a missing or wrong key
/// (tools/server/server.cpp middleware); `/v1/models` stays public.
pub fn unauthorized() -> Router {
    Router::new()
        .route("/v1/models", get(|| async { models("locked", None) }))
        .route(
            "/v1/chat/completions",
            post(|| async {
                json(
                    StatusCode::UNAUTHORIZED,
                    serde_json::json!({"error":{"code":401,"message":"Invalid API Key","type":"authentication_error"}}),
                )
            }),
        )
}

/// The readiness probe (`Say hello.`) is answered; every other completion gets `bad`: a
/// server that breaks once the suites start.
pub fn breaks_after_ready(bad: fn() -> Response<Body>) -> Router {
    Router::new()
        .route("/v1/models", get(|| async { models("flaky", Some(4096)) }))
        .route(
            "/v1/chat/completions",
            post(move |body: String| async move {
                if body.contains("Say hello.") {
                    chat_stream(&["Hello"], &[], "stop", 1)
                } else {
                    bad()
                }
            }),
        )
}

/// A stream the server cut inside an event: the `data:` line stops mid-JSON and the body ends
/// (an engine process that died while writing, behind a proxy that closed the response).
pub fn cut_mid_event() -> Response<Body> {
    Response::builder()
        .header("content-type", "text/event-stream")
        .body(Body::from(
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Par\"}}]}\n\ndata: {\"choices\":[{\"index\":0,\"delt",
        ))
        .unwrap()
}

/// A 200 HTML page where an event stream was asked for (a gateway's login or error page).
pub fn html_200() -> Response<Body> {
    Response::builder()
        .header("content-type", "text/html")
        .body(Body::from(
            "<!DOCTYPE html><html><head><title>Sign in</title></head><body>gateway</body></html>",
        ))
        .unwrap()
}

/// `/v1/models` as `{"data":[{"id","max_model_len"}]}` alone, without the `object` fields.
fn bare_models(id: &str, max_model_len: u64) -> Response<Body> {
    json(
        StatusCode::OK,
        serde_json::json!({"data":[{"id": id, "max_model_len": max_model_len}]}),
    )
}

/// `/v1/models` listing one id, with vLLM's `max_model_len` when given.
fn models(id: &str, max_model_len: Option<u64>) -> Response<Body> {
    let mut m = serde_json::json!({"id": id, "object": "model"});
    if let Some(n) = max_model_len {
        m["max_model_len"] = n.into();
    }
    json(
        StatusCode::OK,
        serde_json::json!({"object": "list", "data": [m]}),
    )
}

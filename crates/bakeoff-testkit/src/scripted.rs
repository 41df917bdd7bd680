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
/// the seeds' "valid JSON, empty content").
pub fn reasoning_only() -> Router {
    Router::new()
        .route("/version", get(|| async { json(StatusCode::OK, serde_json::json!({"version":"0.11.0"})) }))
        .route(
            "/v1/models",
            get(|| async { json(StatusCode::OK, serde_json::json!({"data":[{"id":"qwen3","max_model_len":32768}]})) }),
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

/// The seeds' wedge: `/v1/models` answers (which fooled a naive readiness probe) while every
/// inference request dies — here the connection is cut before any response
/// (seeds/000 §1: "every inference request dies with connection aborts").
pub fn models_up_completions_dropped() -> Router {
    Router::new()
        .route(
            "/v1/models",
            get(|| async {
                json(
                    StatusCode::OK,
                    serde_json::json!({"data":[{"id":"nemotron","max_model_len":131072}]}),
                )
            }),
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

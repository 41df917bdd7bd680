//! The client against scripted servers for behaviour no real engine shows on demand: a stream
//! that stalls mid-way, a server that never sends a first byte, non-JSON replies, 4xx/5xx with
//! a body, a dead port. Each must end in a classified error, never a panic or a hang.

use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::http::{Response, StatusCode};
use axum::routing::{MethodRouter, post};
use bakeoff_client::{Client, ClientOptions, EndpointUrl, Exchange, RequestError, Timeouts};
use bakeoff_wire::{ChatRequest, Message};

async fn serve(app: Router) -> (String, tokio::task::JoinHandle<()>) {
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    let h = tokio::spawn(async move {
        let _ = axum::serve(l, app).await;
    });
    (format!("http://{addr}"), h)
}

fn client(url: &str, t: Timeouts) -> Client {
    Client::new(
        EndpointUrl::parse(url).unwrap(),
        ClientOptions {
            timeouts: t,
            api_key: None,
            ..Default::default()
        },
    )
}

fn short() -> Timeouts {
    Timeouts {
        connect: Duration::from_secs(2),
        first_byte: Duration::from_millis(800),
        idle: Duration::from_millis(500),
        total: Duration::from_secs(5),
    }
}

fn req() -> ChatRequest {
    ChatRequest::new("m", vec![Message::user("hi")], 8, true)
}

fn chunk(content: &str) -> String {
    format!("data: {{\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"{content}\"}}}}]}}\n\n")
}

/// `ex.error` is `Some` of the given pattern.
macro_rules! assert_error {
    ($ex:expr, $pat:pat) => {
        assert!(matches!($ex.error, Some($pat)), "{:?}", $ex.error)
    };
}

/// A port nothing listens on: bind, read the port, close.
fn dead_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

/// A server-sent-events reply with `body`.
fn sse(body: Body) -> Response<Body> {
    Response::builder()
        .header("content-type", "text/event-stream")
        .body(body)
        .unwrap()
}

/// A server answering `/v1/chat/completions` with `route`.
fn chat(route: MethodRouter) -> Router {
    Router::new().route("/v1/chat/completions", route)
}

/// Serve `app` and send it one streamed chat request with [`short`] timeouts.
async fn stream_from(app: Router) -> Exchange {
    let (url, _h) = serve(app).await;
    client(&url, short()).chat_stream(&req()).await
}

#[tokio::test]
async fn stall_mid_stream_is_an_idle_timeout_with_the_partial_reply_kept() {
    let ex = stream_from(chat(post(|| async {
        let s = async_stream(vec![chunk("Hel"), chunk("lo")], Duration::from_secs(30));
        sse(Body::from_stream(s))
    })))
    .await;
    assert_error!(ex, RequestError::IdleTimeout { .. });
    assert_eq!(ex.reply.content, "Hello");
    assert_eq!(ex.reply.chunks.len(), 2);
    assert!(ex.reply.e2e < Duration::from_secs(3));
}

#[tokio::test]
async fn no_first_byte_is_a_first_byte_timeout() {
    let ex = stream_from(chat(post(|| async {
        tokio::time::sleep(Duration::from_secs(30)).await;
        "never"
    })))
    .await;
    assert_error!(ex, RequestError::FirstByteTimeout { .. });
}

#[tokio::test]
async fn http_error_keeps_status_and_body() {
    // llama.cpp's context overflow: HTTP 400, plain JSON even when stream is true
    // (llama-server b11434, tools/server/server-task.cpp; measured).
    let body = r#"{"error":{"code":400,"message":"request (39759 tokens) exceeds the available context size (4096 tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":39759,"n_ctx":4096}}"#;
    let ex = stream_from(chat(post(move || async move {
        (StatusCode::BAD_REQUEST, body)
    })))
    .await;
    match ex.error {
        Some(RequestError::Http { status, body: b }) => {
            assert_eq!(status, 400);
            assert!(b.contains("exceed_context_size_error"));
        }
        other => panic!("{other:?}"),
    }
    let e = RequestError::Http {
        status: 500,
        body: "<html>\n<body>Internal\nServer Error</body>".into(),
    };
    assert!(!e.to_string().contains('\n'));
}

#[tokio::test]
async fn non_json_events_are_decode_errors() {
    let ex = stream_from(chat(post(|| async {
        sse(Body::from("data: <html>oops</html>\n\n"))
    })))
    .await;
    assert_error!(ex, RequestError::Decode { .. });
    // Non-streamed: a non-JSON body with 200 is a decode error too.
    let app = chat(post(|| async { "plain text" }));
    let (url, _h2) = serve(app).await;
    let ex = client(&url, short())
        .chat(&ChatRequest::new("m", vec![Message::user("hi")], 8, false))
        .await;
    assert_error!(ex, RequestError::Decode { .. });
}

#[tokio::test]
async fn event_error_mid_stream_is_a_server_error() {
    let ex = stream_from(chat(post(|| async {
        let body = format!(
            "{}event: error\ndata: {{\"error\":{{\"message\":\"engine dead\"}}}}\n\n",
            chunk("a")
        );
        sse(Body::from(body))
    })))
    .await;
    assert_error!(ex, RequestError::ServerErrorEvent { .. });
    assert_eq!(ex.reply.content, "a");
}

#[tokio::test]
async fn stream_cut_before_finish_is_a_stream_error() {
    let ex = stream_from(chat(post(|| async { sse(Body::from(chunk("partial"))) }))).await;
    assert_error!(ex, RequestError::Stream { .. });
}

#[tokio::test]
async fn dead_port_is_a_connect_error() {
    let port = dead_port();
    let ex = client(&format!("http://127.0.0.1:{port}"), short())
        .chat_stream(&req())
        .await;
    assert!(
        ex.error.as_ref().is_some_and(|e| e.is_unreachable()),
        "{:?}",
        ex.error
    );
}

#[tokio::test]
async fn chunk_stamps_are_taken_per_arrival() {
    let ex = stream_from(chat(post(|| async {
            let mut parts = vec![chunk("a"), chunk("b")];
            parts.push("data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: {\"choices\":[],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":2}}\n\ndata: [DONE]\n\n".into());
            let s = async_stream_gaps(parts, Duration::from_millis(120));
            sse(Body::from_stream(s))
        }))).await;
    assert!(ex.error.is_none(), "{:?}", ex.error);
    let c = &ex.reply.chunks;
    assert_eq!(c.len(), 2);
    // The gap between the two content chunks reflects the server's pacing (tolerant: timers).
    assert!(c[1].at > c[0].at + Duration::from_millis(60), "{c:?}");
    assert_eq!(ex.reply.completion_tokens(), Some(2));
    assert_eq!(ex.reply.finish_reason.as_deref(), Some("stop"));
    assert!(ex.reply.ttft.is_some() && ex.reply.ttfot == ex.reply.ttft);
}

/// Send `parts` immediately, then hang for `hang`.
fn async_stream(
    parts: Vec<String>,
    hang: Duration,
) -> impl futures_util::Stream<Item = Result<String, std::io::Error>> + Send {
    futures_util::stream::unfold(
        (parts.into_iter(), false),
        move |(mut it, hung)| async move {
            match it.next() {
                Some(p) => Some((Ok(p), (it, hung))),
                None if !hung => {
                    tokio::time::sleep(hang).await;
                    None
                }
                None => None,
            }
        },
    )
}

/// Send `parts` with `gap` before each one after the first.
fn async_stream_gaps(
    parts: Vec<String>,
    gap: Duration,
) -> impl futures_util::Stream<Item = Result<String, std::io::Error>> + Send {
    futures_util::stream::unfold(
        (parts.into_iter(), true),
        move |(mut it, first)| async move {
            let p = it.next()?;
            if !first {
                tokio::time::sleep(gap).await;
            }
            Some((Ok(p), (it, false)))
        },
    )
}

#[tokio::test]
async fn a_stream_that_keeps_trickling_ends_at_the_total_timeout() {
    // A chunk every 300 ms never trips the 500 ms idle timeout; the 1.5 s total must end it.
    let app = chat(post(|| async {
        let parts: Vec<String> = (0..100).map(|_| chunk("x")).collect();
        let s = async_stream_gaps(parts, Duration::from_millis(300));
        sse(Body::from_stream(s))
    }));
    let (url, _h) = serve(app).await;
    let t = Timeouts {
        total: Duration::from_millis(1500),
        ..short()
    };
    let ex = client(&url, t).chat_stream(&req()).await;
    assert_error!(ex, RequestError::TotalTimeout { .. });
    assert!(!ex.reply.content.is_empty(), "the partial reply is kept");
    assert!(ex.reply.e2e < Duration::from_secs(10));
}

#[tokio::test]
async fn a_listener_that_never_accepts_is_a_connect_timeout() {
    // A loopback listener with a backlog of 0 whose queue is already full: the kernel drops
    // further SYNs, so a connect neither succeeds nor fails — only the connect timeout ends it.
    let sock = tokio::net::TcpSocket::new_v4().unwrap();
    sock.bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let listener = sock.listen(0).unwrap();
    let addr = listener.local_addr().unwrap();
    let mut held = Vec::new();
    for _ in 0..8 {
        if let Ok(s) = std::net::TcpStream::connect_timeout(&addr, Duration::from_millis(200)) {
            held.push(s);
        }
    }
    let t = Timeouts {
        connect: Duration::from_millis(500),
        first_byte: Duration::from_secs(5),
        ..short()
    };
    let ex = client(&format!("http://{addr}"), t)
        .chat_stream(&req())
        .await;
    assert_error!(ex, RequestError::ConnectTimeout { .. });
    assert_eq!(ex.error.as_ref().unwrap().kind(), "timeout-connect");
    assert!(ex.error.as_ref().unwrap().is_unreachable());
    drop(listener);
}

#[tokio::test]
async fn a_failed_generation_is_sent_once_never_retried() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU64, Ordering};
    let hits = Arc::new(AtomicU64::new(0));
    let h = hits.clone();
    let app = chat(post(move || {
        let h = h.clone();
        async move {
            h.fetch_add(1, Ordering::SeqCst);
            Response::builder()
                .status(StatusCode::INTERNAL_SERVER_ERROR)
                .body(Body::from("{\"error\":{\"message\":\"engine core died\"}}"))
                .unwrap()
        }
    }));
    let (url, _h) = serve(app).await;
    let c = client(&url, short());
    let ex = c.chat_stream(&req()).await;
    assert!(matches!(
        ex.error,
        Some(RequestError::Http { status: 500, .. })
    ));
    assert_eq!(hits.load(Ordering::SeqCst), 1);
    let ex = c.chat(&req()).await;
    assert!(ex.error.is_some());
    assert_eq!(hits.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn a_tool_call_index_past_the_cap_is_a_decode_error_not_an_allocation() {
    let ex = stream_from(chat(post(|| async {
            let body = "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":4000000000,\"function\":{\"name\":\"f\"}}]}}]}\n\ndata: [DONE]\n\n";
            sse(Body::from(body))
        }))).await;
    assert_error!(ex, RequestError::Decode { .. });
    assert!(ex.reply.tool_calls.is_empty());
}

#[tokio::test]
async fn skipped_tool_call_indices_leave_no_empty_calls() {
    let ex = stream_from(chat(post(|| async {
            let body = "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":2,\"id\":\"c\",\"function\":{\"name\":\"f\",\"arguments\":\"{}\"}}]}}]}\n\ndata: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\ndata: [DONE]\n\n";
            sse(Body::from(body))
        }))).await;
    assert!(ex.error.is_none(), "{:?}", ex.error);
    assert_eq!(ex.reply.tool_calls.len(), 1);
    assert_eq!(ex.reply.tool_calls[0].function.name, "f");
}

/// A raw HTTP/1.1 server that answers one request with `response`, written `step` bytes at a
/// time, and returns the request head it read.
async fn raw_server(response: Vec<u8>, step: usize) -> (String, tokio::task::JoinHandle<String>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    let h = tokio::spawn(async move {
        let (mut s, _) = l.accept().await.unwrap();
        let mut got = Vec::new();
        let mut buf = [0u8; 4096];
        // Read the head and the Content-Length body.
        loop {
            let n = s.read(&mut buf).await.unwrap();
            got.extend_from_slice(&buf[..n]);
            let text = String::from_utf8_lossy(&got).to_string();
            if let Some(end) = text.find("\r\n\r\n") {
                let len: usize = text
                    .lines()
                    .find_map(|l| l.strip_prefix("Content-Length: "))
                    .unwrap()
                    .trim()
                    .parse()
                    .unwrap();
                if got.len() >= end + 4 + len {
                    break;
                }
            }
        }
        for part in response.chunks(step) {
            s.write_all(part).await.unwrap();
            s.flush().await.unwrap();
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        String::from_utf8_lossy(&got).to_string()
    });
    (format!("http://{addr}"), h)
}

/// Chunked framing (RFC 9112 §7.1) as cpp-httplib and uvicorn send an SSE body, delivered 7
/// bytes per write so the head, the chunk-size lines and the events all straddle reads; with
/// credentials in the URL, which must arrive as Basic auth.
#[tokio::test]
async fn a_chunked_stream_split_across_reads_decodes_whole() {
    let events = [
        chunk("Hel"),
        chunk("lo"),
        "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n".into(),
        "data: [DONE]\n\n".to_string(),
    ];
    let mut resp =
        b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
            .to_vec();
    for e in &events {
        resp.extend_from_slice(format!("{:x}\r\n{e}\r\n", e.len()).as_bytes());
    }
    resp.extend_from_slice(b"0\r\n\r\n");
    let (url, h) = raw_server(resp, 7).await;
    let url = url.replace("http://", "http://ops:s3cret@");
    let ex = client(&url, short()).chat_stream(&req()).await;
    assert!(ex.error.is_none(), "{:?}", ex.error);
    assert_eq!(ex.reply.content, "Hello");
    assert_eq!(ex.reply.status, Some(200));
    assert!(ex.reply.saw_done);
    let head = h.await.unwrap();
    assert!(
        head.starts_with("POST /v1/chat/completions HTTP/1.1\r\n"),
        "{head}"
    );
    // base64("ops:s3cret")
    assert!(
        head.contains("Authorization: Basic b3BzOnMzY3JldA==\r\n"),
        "{head}"
    );
}

/// A body cut inside a chunk (the server died mid-stream) is a stream error, the partial reply
/// kept; an error status whose body has a `Content-Length` keeps that body as evidence.
#[tokio::test]
async fn a_cut_chunked_body_and_a_length_delimited_error() {
    let mut resp = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
    let e = chunk("par");
    resp.extend_from_slice(format!("{:x}\r\n{e}\r\n", e.len()).as_bytes());
    resp.extend_from_slice(b"40\r\ndata: {\"cho");
    let (url, _h) = raw_server(resp, 64).await;
    let ex = client(&url, short()).chat_stream(&req()).await;
    match &ex.error {
        Some(RequestError::Stream { message }) => {
            assert!(
                message.contains("before the response body ended"),
                "{message}"
            )
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(ex.reply.content, "par");

    let body = r#"{"error":{"message":"the request exceeds the available context size","type":"exceed_context_size_error"}}"#;
    let resp = format!(
        "HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    let (url, _h) = raw_server(resp.into_bytes(), 5).await;
    let ex = client(&url, short()).chat_stream(&req()).await;
    match &ex.error {
        Some(RequestError::Http {
            status: 400,
            body: b,
        }) => assert_eq!(b, body),
        other => panic!("{other:?}"),
    }
}

/// A key with a line break in it (a pasted value) is refused before anything is sent: it must
/// never reach the request head, where it would add headers of its own.
#[tokio::test]
async fn a_key_with_a_line_break_is_refused_not_sent() {
    let port = dead_port();
    let c = Client::new(
        EndpointUrl::parse(&format!("http://127.0.0.1:{port}")).unwrap(),
        ClientOptions {
            timeouts: short(),
            api_key: bakeoff_client::ApiKey::new("sk-1\r\nX-Injected: 1".into()),
            ..Default::default()
        },
    );
    match c.chat_stream(&req()).await.error {
        Some(RequestError::Stream { message }) => {
            assert!(message.contains("Authorization"), "{message}");
            assert!(!message.contains("sk-1"), "the key leaked: {message}");
        }
        other => panic!("{other:?}"),
    }
}

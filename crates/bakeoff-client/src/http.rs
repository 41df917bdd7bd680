//! The HTTP client and its timeouts.

use std::time::{Duration, Instant};

use bakeoff_wire::{ChatRequest, NonStreamResponse};
use serde_json::Value;
use tokio::net::TcpStream;
use tokio::time::timeout;
use url::Url;

use crate::error::truncate_body;
use crate::h1;
use crate::{EndpointUrl, Exchange, Reply, RequestError};

mod stream;
mod timeouts;
mod transport;

use stream::{Deadlines, Flow, StreamState};
pub use timeouts::Timeouts;
use transport::Transport;

/// A bearer token. It has no `Display`, its `Debug` is redacted and it is not serializable, so it
/// can only ever reach the `Authorization` header.
#[derive(Clone)]
pub struct ApiKey(String);

impl ApiKey {
    pub fn new(secret: String) -> Option<Self> {
        let s = secret.trim().to_string();
        (!s.is_empty()).then_some(Self(s))
    }
}

impl std::fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ApiKey(<redacted>)")
    }
}

#[derive(Debug, Clone, Default)]
pub struct ClientOptions {
    pub timeouts: Timeouts,
    pub api_key: Option<ApiKey>,
    /// How `https://` endpoints are trusted (the system's roots by default; `--ca-cert`,
    /// `--insecure`).
    pub tls: crate::tls::Tls,
}

/// One endpoint.
#[derive(Debug, Clone)]
pub struct Client {
    http: reqwest::Client,
    url: EndpointUrl,
    key: Option<ApiKey>,
    timeouts: Timeouts,
    tls: crate::tls::Tls,
}

/// The HTTP stack could not be set up (reqwest's builder failed).
#[derive(Debug, Clone, thiserror::Error)]
#[error("cannot set up the HTTP client: {0}")]
pub struct ClientBuildError(String);

impl Client {
    /// A client, or the error that kept it from being built — never a silently weaker one.
    pub fn try_new(url: EndpointUrl, opts: ClientOptions) -> Result<Self, ClientBuildError> {
        // No proxy: a fleet endpoint on loopback or a LAN must never be routed through whatever
        // HTTP_PROXY the shell happens to carry. No retries exist in reqwest, and we add none.
        //
        // No idle connection is reused: llama.cpp's HTTP server (cpp-httplib) closes a keep-alive
        // connection after a few requests or seconds, and a request written onto a pooled
        // connection the server has just closed dies at once with "connection closed before
        // message completed" — measured on the H200 pass as ~10 % of requests at every
        // concurrency (docs/performance.md). Since a generation request is never retried, every
        // request gets a fresh connection; on loopback or a LAN that costs a TCP handshake
        // (tens of microseconds), which the latency records include in TTFT like any client.
        // Streamed chat completions do not go through reqwest at all (see `crate::h1`); they
        // follow the same rules: no proxy, no retry, a fresh connection, TCP_NODELAY.
        // TLS: the command's rustls configuration (crate::tls), the same for both paths.
        let config = opts
            .tls
            .config()
            .map_err(|e| ClientBuildError(e.to_string()))?;
        let http = reqwest::Client::builder()
            .no_proxy()
            .pool_max_idle_per_host(0)
            .tcp_nodelay(true)
            .connect_timeout(opts.timeouts.connect)
            .tls_backend_preconfigured(rustls::ClientConfig::clone(&config))
            .build()
            .map_err(|e| ClientBuildError(root_cause(&e)))?;
        Ok(Self {
            http,
            url,
            key: opts.api_key,
            timeouts: opts.timeouts,
            tls: opts.tls,
        })
    }

    /// [`Client::try_new`] for callers that cannot fail. reqwest's builder fails only where
    /// its TLS set-up does (ours is built once, with ring's provider: crate::tls); should it
    /// fail anyway, the fallback client is reqwest's default with ring installed as the
    /// process's provider, and every wait stays bounded, since each request runs under the
    /// first-byte, idle and total deadlines (connect is inside the first-byte wait).
    pub fn new(url: EndpointUrl, opts: ClientOptions) -> Self {
        match Self::try_new(url.clone(), opts.clone()) {
            Ok(c) => c,
            Err(_) => {
                crate::tls::install_process_provider();
                Self {
                    http: reqwest::Client::builder()
                        .no_proxy()
                        .build()
                        .unwrap_or_default(),
                    url,
                    key: opts.api_key,
                    timeouts: opts.timeouts,
                    tls: opts.tls,
                }
            }
        }
    }

    /// How this client trusts `https://` endpoints.
    pub fn tls(&self) -> &crate::tls::Tls {
        &self.tls
    }

    pub fn url(&self) -> &EndpointUrl {
        &self.url
    }

    pub fn timeouts(&self) -> Timeouts {
        self.timeouts
    }

    /// The same endpoint and connection pool with other timeouts (readiness probes use short
    /// ones).
    pub fn with_timeouts(&self, timeouts: Timeouts) -> Client {
        Client {
            timeouts,
            ..self.clone()
        }
    }

    /// The reqwest calls send the same `Authorization` as the streamed path. A value that is
    /// not a valid header (a control character in the key) fails the request at `send`.
    fn authorize(&self, rb: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        match self.authorization() {
            Some(v) => match reqwest::header::HeaderValue::from_str(&v) {
                Ok(mut value) => {
                    value.set_sensitive(true);
                    rb.header(reqwest::header::AUTHORIZATION, value)
                }
                Err(_) => rb.header(reqwest::header::AUTHORIZATION, v),
            },
            None => rb,
        }
    }

    fn map_send_error(&self, e: reqwest::Error) -> RequestError {
        let addr = self.url.host_port();
        let cause = root_cause(&e);
        if crate::tls::is_tls_failure(&cause) {
            return RequestError::Tls {
                addr,
                message: crate::tls::refusal(&cause),
            };
        }
        if e.is_connect() && e.is_timeout() {
            RequestError::ConnectTimeout {
                addr,
                after: self.timeouts.connect,
            }
        } else if e.is_connect() {
            RequestError::Connect {
                addr,
                message: root_cause(&e),
            }
        } else {
            let message = root_cause(&e);
            // hyper's parse errors: the other end does not speak HTTP.
            if message.contains("invalid HTTP") || message.contains("message head is too large") {
                RequestError::NotHttp { addr, message }
            } else {
                RequestError::Stream { message }
            }
        }
    }

    /// Streamed chat completion over the lean HTTP/1.1 transport ([`crate::h1`]). Each network
    /// read is stamped on arrival, then de-chunked and parsed. Never retried.
    pub async fn chat_stream(&self, req: &ChatRequest) -> Exchange {
        self.chat_stream_abort_after(req, None).await.0
    }

    /// [`Client::chat_stream`] that aborts the request mid-stream once `abort_after`
    /// text-bearing chunks have arrived (`bench run --cancel-rate`): the connection is dropped
    /// there, as a client that gives up would, and the reply holds what came before. `true`
    /// when it aborted; a stream that ended first is an ordinary exchange.
    pub async fn chat_stream_abort_after(
        &self,
        req: &ChatRequest,
        abort_after: Option<u64>,
    ) -> (Exchange, bool) {
        let mut reply = Reply::default();
        let sent = Instant::now();
        let mut aborted = false;
        let error = self
            .stream_into(req, sent, &mut reply, abort_after)
            .await
            .map(|a| aborted = a)
            .err()
            .map(|e| match e {
                RequestError::NotHttp { addr, message } if addr.is_empty() => {
                    RequestError::NotHttp {
                        addr: self.url.host_port(),
                        message,
                    }
                }
                e => e,
            });
        reply.settle();
        reply.e2e = sent.elapsed();
        (Exchange { reply, error }, aborted)
    }

    /// Does every call carry credentials (an API key, or a user in the URL)?
    pub fn sends_credentials(&self) -> bool {
        self.authorization().is_some()
    }

    /// The `Authorization` value of every call: the API key, else the URL's credentials as
    /// Basic auth.
    fn authorization(&self) -> Option<String> {
        use base64::Engine as _;
        if let Some(k) = &self.key {
            return Some(format!("Bearer {}", k.0));
        }
        self.url.credentials().map(|(user, pass)| {
            let pair = format!("{user}:{}", pass.unwrap_or_default());
            format!(
                "Basic {}",
                base64::engine::general_purpose::STANDARD.encode(pair)
            )
        })
    }

    /// The streamed request over the lean HTTP/1.1 transport ([`crate::h1`]): connect, write
    /// the request, then read — each read stamped before it is decoded and parsed.
    async fn stream_into(
        &self,
        req: &ChatRequest,
        sent: Instant,
        reply: &mut Reply,
        abort_after: Option<u64>,
    ) -> Result<bool, RequestError> {
        let t = self.timeouts;
        let deadlines = Deadlines::new(sent, t);
        let url = self.url.v1_path("chat/completions");
        let wire = self.stream_request_bytes(req, &url)?;
        let tcp = self.connect_stream(&url, sent, deadlines).await?;
        let mut stream = self.send_on(&url, tcp, &wire, sent, deadlines).await?;
        drop(wire);

        let mut state = StreamState::new(sent, t, deadlines);
        loop {
            // Bytes TLS has decrypted already are read without waiting on the socket.
            if !stream.buffered() {
                let wait_until = state.wait_until(reply);
                let ready =
                    tokio::time::timeout_at(wait_until.into(), stream.socket().readable()).await;
                state.check_ready(ready, reply)?;
            }
            match state.read_once(&mut stream, reply)? {
                // Dropping the stream on return closes the connection: the server sees the
                // client go.
                Flow::More if abort_after.is_some_and(|n| reply.chunks.len() as u64 >= n) => {
                    return Ok(true);
                }
                Flow::More => {}
                Flow::Done => return Ok(false),
                Flow::Ended => break,
            }
        }
        state.finish(reply).map(|()| false)
    }

    /// The whole request as written on the wire: head, then the JSON body.
    fn stream_request_bytes(&self, req: &ChatRequest, url: &Url) -> Result<Vec<u8>, RequestError> {
        let body = serde_json::to_vec(req).map_err(|e| RequestError::Decode {
            message: format!("cannot encode the request: {e}"),
            snippet: String::new(),
        })?;
        let authorization = self.authorization();
        if let Some(v) = &authorization
            && let Err(e) = reqwest::header::HeaderValue::from_str(v)
        {
            // As reqwest refuses the same value at `send`: never written into the head, where a
            // line break would smuggle in headers of its own.
            return Err(RequestError::Stream {
                message: format!("cannot send the Authorization header: {e}"),
            });
        }
        let mut wire = h1::post_head(url, authorization.as_deref(), body.len());
        wire.extend_from_slice(&body);
        Ok(wire)
    }

    /// A fresh connection, within the connect timeout and the first-byte deadline.
    async fn connect_stream(
        &self,
        url: &Url,
        sent: Instant,
        deadlines: Deadlines,
    ) -> Result<TcpStream, RequestError> {
        let t = self.timeouts;
        let connect_deadline = (sent + t.connect).min(deadlines.first_byte);
        match tokio::time::timeout_at(connect_deadline.into(), h1::connect(url)).await {
            Err(_) if sent + t.connect <= deadlines.first_byte => {
                Err(RequestError::ConnectTimeout {
                    addr: self.url.host_port(),
                    after: t.connect,
                })
            }
            Err(_) => Err(first_byte_or_total(t, sent)),
            Ok(Err(e)) => Err(RequestError::Connect {
                addr: self.url.host_port(),
                message: e.to_string(),
            }),
            Ok(Ok(s)) => Ok(s),
        }
    }

    /// Write the request on `tcp` — for `https://`, after a TLS handshake within the connect
    /// timeout — within the first-byte deadline.
    async fn send_on(
        &self,
        url: &Url,
        tcp: TcpStream,
        wire: &[u8],
        sent: Instant,
        deadlines: Deadlines,
    ) -> Result<Transport, RequestError> {
        let t = self.timeouts;
        let sending = |e: std::io::Error| RequestError::Stream {
            message: format!("sending the request: {e}"),
        };
        if url.scheme() != "https" {
            return match tokio::time::timeout_at(
                deadlines.first_byte.into(),
                Transport::plain(tcp, wire),
            )
            .await
            {
                Err(_) => Err(first_byte_or_total(t, sent)),
                Ok(r) => r.map_err(sending),
            };
        }
        let connect_deadline = (sent + t.connect).min(deadlines.first_byte);
        let session = match tokio::time::timeout_at(
            connect_deadline.into(),
            self.tls.connect(url, tcp),
        )
        .await
        {
            Err(_) if sent + t.connect <= deadlines.first_byte => {
                return Err(RequestError::ConnectTimeout {
                    addr: self.url.host_port(),
                    after: t.connect,
                });
            }
            Err(_) => return Err(first_byte_or_total(t, sent)),
            Ok(Err(e)) => {
                return Err(RequestError::Tls {
                    addr: self.url.host_port(),
                    message: crate::tls::refusal(&e.to_string()),
                });
            }
            Ok(Ok(s)) => s,
        };
        match tokio::time::timeout_at(deadlines.first_byte.into(), Transport::tls(session, wire))
            .await
        {
            Err(_) => Err(first_byte_or_total(t, sent)),
            Ok(r) => r.map_err(sending),
        }
    }

    /// Non-streamed chat completion (same timeouts; first byte = the whole body here).
    pub async fn chat(&self, req: &ChatRequest) -> Exchange {
        let mut reply = Reply::default();
        let sent = Instant::now();
        let error = self.chat_into(req, sent, &mut reply).await.err();
        reply.e2e = sent.elapsed();
        Exchange { reply, error }
    }

    async fn chat_into(
        &self,
        req: &ChatRequest,
        sent: Instant,
        reply: &mut Reply,
    ) -> Result<(), RequestError> {
        let t = self.timeouts;
        let rb = self
            .authorize(self.http.post(self.url.v1_path("chat/completions")))
            .json(req);
        let resp = match timeout(t.first_byte.min(t.total), rb.send()).await {
            Err(_) => return Err(first_byte_or_total(t, sent)),
            Ok(Err(e)) => return Err(self.map_send_error(e)),
            Ok(Ok(r)) => r,
        };
        let status = resp.status().as_u16();
        reply.status = Some(status);
        let remaining = t.total.saturating_sub(sent.elapsed());
        let bytes = match timeout(remaining, resp.bytes()).await {
            Err(_) => return Err(RequestError::TotalTimeout { after: t.total }),
            Ok(Err(e)) => {
                return Err(RequestError::Stream {
                    message: root_cause(&e),
                });
            }
            Ok(Ok(b)) => b,
        };
        reply.first_byte = Some(sent.elapsed());
        let text = String::from_utf8_lossy(&bytes);
        if !(200..300).contains(&status) {
            return Err(RequestError::Http {
                status,
                body: truncate_body(&text),
            });
        }
        let body: NonStreamResponse =
            serde_json::from_str(&text).map_err(|e| RequestError::Decode {
                message: e.to_string(),
                snippet: text.chars().take(120).collect(),
            })?;
        reply.apply_body(body);
        let at = sent.elapsed();
        if !reply.content.is_empty() {
            reply.ttfot = Some(at);
        }
        if reply.has_text() {
            reply.ttft = Some(at);
        }
        Ok(())
    }

    /// A control call: GET or POST a JSON path, bounded by `limit`. Returns the status and the
    /// body when it is JSON (a 404 HTML page is `None`, not an error).
    pub async fn control(
        &self,
        method: Method,
        url: Url,
        body: Option<&Value>,
        limit: Duration,
    ) -> Result<(u16, Option<Value>), RequestError> {
        let rb = match method {
            Method::Get => self.http.get(url),
            Method::Post => self.http.post(url),
        };
        let rb = self.authorize(rb);
        let rb = match body {
            Some(b) => rb.json(b),
            None => rb,
        };
        let sent = Instant::now();
        let resp = match timeout(limit, rb.send()).await {
            Err(_) => return Err(RequestError::TotalTimeout { after: limit }),
            Ok(Err(e)) => return Err(self.map_send_error(e)),
            Ok(Ok(r)) => r,
        };
        let status = resp.status().as_u16();
        let remaining = limit.saturating_sub(sent.elapsed());
        let bytes = match timeout(remaining, resp.bytes()).await {
            Err(_) => return Err(RequestError::TotalTimeout { after: limit }),
            Ok(Err(e)) => {
                return Err(RequestError::Stream {
                    message: root_cause(&e),
                });
            }
            Ok(Ok(b)) => b,
        };
        Ok((status, serde_json::from_slice(&bytes).ok()))
    }

    /// Raw text of a GET (for `/metrics`).
    pub async fn get_text(&self, url: Url, limit: Duration) -> Result<(u16, String), RequestError> {
        let sent = Instant::now();
        let resp = match timeout(limit, self.authorize(self.http.get(url)).send()).await {
            Err(_) => return Err(RequestError::TotalTimeout { after: limit }),
            Ok(Err(e)) => return Err(self.map_send_error(e)),
            Ok(Ok(r)) => r,
        };
        let status = resp.status().as_u16();
        let remaining = limit.saturating_sub(sent.elapsed());
        match timeout(remaining, resp.text()).await {
            Err(_) => Err(RequestError::TotalTimeout { after: limit }),
            Ok(Err(e)) => Err(RequestError::Stream {
                message: root_cause(&e),
            }),
            Ok(Ok(t)) => Ok((status, t)),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    Get,
    Post,
}

fn first_byte_or_total(t: Timeouts, sent: Instant) -> RequestError {
    if sent.elapsed() >= t.total {
        RequestError::TotalTimeout { after: t.total }
    } else {
        RequestError::FirstByteTimeout {
            after: t.first_byte,
        }
    }
}

/// reqwest's top-level message ("error sending request for url …") hides the useful part
/// ("Connection refused"); walk to the innermost cause.
fn root_cause(e: &(dyn std::error::Error + 'static)) -> String {
    let mut msg = e.to_string();
    let mut cur = e.source();
    while let Some(s) = cur {
        msg = s.to_string();
        cur = s.source();
    }
    msg
}

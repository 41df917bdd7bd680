//! The built-in loopback calibration target, and the harness-ceiling measurement.
//!
//! The target is a minimal HTTP/1.1 server on raw tokio sockets (keep-alive, chunked
//! transfer) that answers `POST /v1/chat/completions` with an OpenAI-shaped SSE stream of
//! `max_tokens` one-token events, as fast as it can — llama.cpp's framing (one token per event,
//! a finish chunk, a usage chunk with `choices: []`, `[DONE]`; measured on llama-server
//! b11434). No framework sits in the way, so what limits a run against it is the client.
//!
//! Request extras it reads: `calibration_pace_ms` (sleep between tokens: holds streams open to
//! count concurrent streams), `calibration_batch` (events per write, default 16).

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bakeoff_artifact::HarnessCeiling;
use bakeoff_client::{Client, ClientOptions, EndpointUrl, Timeouts};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpListener;

use crate::LoadError;
use crate::lengths::LengthSpec;
use crate::plan::{LoadPlan, Mode, StepBound};
use crate::runner::{self, NoProgress};

/// A running target; stopped when dropped.
pub struct CalibrationTarget {
    pub addr: SocketAddr,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for CalibrationTarget {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl CalibrationTarget {
    /// Bind `127.0.0.1:0` and serve on the current runtime.
    pub async fn start() -> std::io::Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let task = tokio::spawn(serve(listener));
        Ok(Self { addr, task })
    }

    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The same target over TLS, with a throwaway CA and certificate made in memory: the
    /// target, its `https://` URL, and the client TLS that trusts that CA alone.
    pub async fn start_tls() -> std::io::Result<(Self, String, bakeoff_client::tls::Tls)> {
        let (acceptor, tls) = throwaway_tls().map_err(std::io::Error::other)?;
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let task = tokio::spawn(serve_tls(listener, acceptor));
        Ok((Self { addr, task }, format!("https://{addr}"), tls))
    }
}

/// Why a TLS acceptor (or the calibration target's throwaway certificate) could not be made.
#[derive(Debug, thiserror::Error)]
pub enum CertError {
    #[error("the calibration certificate: {0}")]
    Generate(#[source] rcgen::Error),
    /// A PEM file that cannot be read or holds no certificate or key.
    #[error("{path}: {source}")]
    Pem {
        path: std::path::PathBuf,
        source: rustls::pki_types::pem::Error,
    },
    #[error(transparent)]
    Rustls(#[from] rustls::Error),
    #[error(transparent)]
    Trust(#[from] bakeoff_client::tls::TlsError),
}

/// A CA and a certificate it signs for 127.0.0.1 (ECDSA P-256, rcgen 0.14), never written to
/// disk: the server's acceptor and the client's trust. A handshake against it costs what one
/// against a gateway's CA-signed certificate costs (chain verification included).
fn throwaway_tls() -> Result<(tokio_rustls::TlsAcceptor, bakeoff_client::tls::Tls), CertError> {
    use rustls::pki_types::{PrivateKeyDer, PrivatePkcs8KeyDer};
    let e = CertError::Generate;
    let ca_key = rcgen::KeyPair::generate().map_err(e)?;
    let mut ca = rcgen::CertificateParams::new(Vec::<String>::new()).map_err(e)?;
    ca.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    let ca_cert = ca.self_signed(&ca_key).map_err(e)?;
    let issuer = rcgen::Issuer::new(ca, ca_key);
    let leaf_key = rcgen::KeyPair::generate().map_err(e)?;
    let leaf = rcgen::CertificateParams::new(vec!["127.0.0.1".to_string()])
        .map_err(e)?
        .signed_by(&leaf_key, &issuer)
        .map_err(e)?;
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(leaf_key.serialize_der()));
    let config = rustls::ServerConfig::builder_with_provider(std::sync::Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()?
    .with_no_client_auth()
    .with_single_cert(vec![leaf.der().clone()], key)?;
    let tls = bakeoff_client::tls::Tls::trusting(ca_cert.der().clone())?;
    Ok((
        tokio_rustls::TlsAcceptor::from(std::sync::Arc::new(config)),
        tls,
    ))
}

/// Accept forever (the caller aborts the task).
pub async fn serve(listener: TcpListener) {
    loop {
        if let Ok((s, _)) = listener.accept().await {
            tokio::spawn(async move {
                if s.set_nodelay(true).is_ok() {
                    let _ = connection(s).await;
                }
            });
        }
    }
}

/// The same target over TLS (harness-bench's TLS cost figure, docs/performance.md "TLS"):
/// each accepted connection's handshake, then the same answers.
pub async fn serve_tls(listener: TcpListener, acceptor: tokio_rustls::TlsAcceptor) {
    loop {
        if let Ok((s, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                if s.set_nodelay(true).is_err() {
                    return;
                }
                if let Ok(t) = acceptor.accept(s).await {
                    let _ = connection(t).await;
                }
            });
        }
    }
}

/// A TLS acceptor for `cert` (PEM chain) and `key` (PEM private key), rustls with ring.
pub fn tls_acceptor(
    cert: &std::path::Path,
    key: &std::path::Path,
) -> Result<tokio_rustls::TlsAcceptor, CertError> {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    let pem = |path: &std::path::Path| {
        let path = path.to_path_buf();
        move |source| CertError::Pem { path, source }
    };
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(cert)
        .map_err(pem(cert))?
        .collect::<Result<_, _>>()
        .map_err(pem(cert))?;
    let key = PrivateKeyDer::from_pem_file(key).map_err(pem(key))?;
    let config = rustls::ServerConfig::builder_with_provider(std::sync::Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()?
    .with_no_client_auth()
    .with_single_cert(certs, key)?;
    Ok(tokio_rustls::TlsAcceptor::from(std::sync::Arc::new(config)))
}

const MODEL_ID: &str = "bakeoff-calibration";
// Each event names its object as OpenAI's streamed chat does: clients that check it (AIPerf
// 0.13.0 parses only `chat.completion.chunk` events as chat deltas) read the target's stream.
const TOKEN_EVENT: &[u8] = b"data: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\" tok\"}}]}\n\n";

async fn connection<S: AsyncRead + AsyncWrite + Unpin>(mut s: S) -> std::io::Result<()> {
    let mut buf: Vec<u8> = Vec::with_capacity(4096);
    let mut out: Vec<u8> = Vec::with_capacity(16 * 1024);
    loop {
        let head_end = loop {
            if let Some(p) = memchr::memmem::find(&buf, b"\r\n\r\n") {
                break p + 4;
            }
            if buf.len() > 64 * 1024 {
                return Ok(());
            }
            if s.read_buf(&mut buf).await? == 0 {
                return Ok(());
            }
        };
        let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
        let mut lines = head.split("\r\n");
        let first = lines.next().unwrap_or("");
        let mut parts = first.split(' ');
        let method = parts.next().unwrap_or("").to_string();
        let path = parts.next().unwrap_or("").to_string();
        let content_length = lines
            .filter_map(|l| l.split_once(':'))
            .find(|(k, _)| k.trim().eq_ignore_ascii_case("content-length"))
            .and_then(|(_, v)| v.trim().parse::<usize>().ok())
            .unwrap_or(0);
        while buf.len() < head_end + content_length {
            if s.read_buf(&mut buf).await? == 0 {
                return Ok(());
            }
        }
        let body: Vec<u8> = buf[head_end..head_end + content_length].to_vec();
        buf.drain(..head_end + content_length);
        match (method.as_str(), path.as_str()) {
            ("POST", "/v1/chat/completions") => chat(&mut s, &body, &mut out).await?,
            ("GET", "/v1/models") => {
                let b = format!(
                    "{{\"object\":\"list\",\"data\":[{{\"id\":\"{MODEL_ID}\",\"object\":\"model\"}}]}}"
                );
                plain(&mut s, 200, "application/json", &b).await?
            }
            ("GET", "/health") => {
                plain(&mut s, 200, "application/json", "{\"status\":\"ok\"}").await?
            }
            _ => {
                plain(
                    &mut s,
                    404,
                    "application/json",
                    "{\"error\":{\"message\":\"not found\"}}",
                )
                .await?
            }
        }
    }
}

async fn plain<S: AsyncWrite + Unpin>(
    s: &mut S,
    status: u16,
    ctype: &str,
    body: &str,
) -> std::io::Result<()> {
    let reason = if status == 200 { "OK" } else { "Not Found" };
    let msg = format!(
        "HTTP/1.1 {status} {reason}\r\ncontent-type: {ctype}\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    );
    s.write_all(msg.as_bytes()).await?;
    s.flush().await
}

fn push_chunk(out: &mut Vec<u8>, payload: &[u8]) {
    out.extend_from_slice(format!("{:x}\r\n", payload.len()).as_bytes());
    out.extend_from_slice(payload);
    out.extend_from_slice(b"\r\n");
}

async fn chat<S: AsyncWrite + Unpin>(
    s: &mut S,
    body: &[u8],
    out: &mut Vec<u8>,
) -> std::io::Result<()> {
    let v: serde_json::Value = serde_json::from_slice(body).unwrap_or(serde_json::Value::Null);
    let n = v
        .get("max_tokens")
        .and_then(serde_json::Value::as_u64)
        .unwrap_or(16);
    let pace = v
        .get("calibration_pace_ms")
        .and_then(serde_json::Value::as_u64)
        .map(Duration::from_millis);
    let batch = v
        .get("calibration_batch")
        .and_then(serde_json::Value::as_u64)
        .unwrap_or(16)
        .max(1);
    let prompt_tokens = 8u64;
    if v.get("stream").and_then(serde_json::Value::as_bool) != Some(true) {
        let b = format!(
            "{{\"choices\":[{{\"index\":0,\"message\":{{\"role\":\"assistant\",\"content\":\"{}\"}},\"finish_reason\":\"length\"}}],\"usage\":{{\"prompt_tokens\":{prompt_tokens},\"completion_tokens\":{n},\"total_tokens\":{}}}}}",
            " tok".repeat(n as usize),
            n + prompt_tokens
        );
        return plain(s, 200, "application/json", &b).await;
    }
    out.clear();
    out.extend_from_slice(
        b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n",
    );
    push_chunk(out, b"data: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":null}}]}\n\n");
    let per_write = if pace.is_some() { 1 } else { batch };
    let mut sent = 0u64;
    let mut payload = Vec::with_capacity(TOKEN_EVENT.len() * per_write as usize);
    while sent < n {
        let k = per_write.min(n - sent);
        payload.clear();
        for _ in 0..k {
            payload.extend_from_slice(TOKEN_EVENT);
        }
        push_chunk(out, &payload);
        s.write_all(out).await?;
        // A no-op on TCP; over TLS it sends the record now.
        s.flush().await?;
        out.clear();
        sent += k;
        if let Some(p) = pace {
            tokio::time::sleep(p).await;
        }
    }
    push_chunk(
        out,
        b"data: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"length\"}]}\n\n",
    );
    let usage = format!(
        "data: {{\"object\":\"chat.completion.chunk\",\"choices\":[],\"usage\":{{\"prompt_tokens\":{prompt_tokens},\"completion_tokens\":{n},\"total_tokens\":{}}}}}\n\ndata: [DONE]\n\n",
        n + prompt_tokens
    );
    push_chunk(out, usage.as_bytes());
    out.extend_from_slice(b"0\r\n\r\n");
    s.write_all(out).await?;
    s.flush().await
}

/// How hard to push during calibration.
#[derive(Debug, Clone, Copy)]
pub struct CalibrationOptions {
    pub rps_concurrency: u32,
    pub tokens_concurrency: u32,
    pub tokens_per_request: u32,
    /// Streams opened at once for the concurrent-streams figure.
    pub streams: u32,
    pub phase: Duration,
}

impl Default for CalibrationOptions {
    fn default() -> Self {
        Self {
            rps_concurrency: 32,
            tokens_concurrency: 16,
            tokens_per_request: 1024,
            streams: 2000,
            phase: Duration::from_secs(2),
        }
    }
}

/// Peak resident set of this process, MiB (Linux `VmHWM`).
pub fn peak_rss_mib() -> Option<f64> {
    Some(bakeoff_host::proc::own_peak_rss_bytes()? as f64 / (1024.0 * 1024.0))
}

/// The most streams open at one instant, from send times and durations (a sweep line).
pub fn peak_overlap(intervals: &[(f64, f64)]) -> u64 {
    let mut ev: Vec<(f64, i64)> = Vec::with_capacity(intervals.len() * 2);
    for (a, b) in intervals {
        ev.push((*a, 1));
        ev.push((*b, -1));
    }
    // Ends before starts at the same instant: touching intervals do not overlap.
    ev.sort_by(|x, y| x.0.total_cmp(&y.0).then(x.1.cmp(&y.1)));
    let (mut cur, mut best) = (0i64, 0i64);
    for (_, d) in ev {
        cur += d;
        best = best.max(cur);
    }
    best.max(0) as u64
}

pub(crate) fn calib_client(url: &str, tls: bakeoff_client::tls::Tls) -> Result<Client, LoadError> {
    let url = EndpointUrl::parse(url)?;
    Ok(Client::new(
        url,
        ClientOptions {
            timeouts: Timeouts {
                connect: Duration::from_secs(10),
                first_byte: Duration::from_secs(60),
                idle: Duration::from_secs(30),
                total: Duration::from_secs(120),
            },
            api_key: None,
            tls,
        },
    ))
}

/// A closed-loop plan against the calibration target: 8-token prompts, `tokens` out, no
/// `/metrics` (the target has none).
pub fn calib_plan(concurrency: u32, tokens: u32, bound: StepBound) -> LoadPlan {
    let mut p = LoadPlan::new(MODEL_ID);
    p.mode = Mode::Closed {
        concurrency: vec![concurrency],
    };
    p.bound = bound;
    p.warmup_requests = 0;
    // The loopback target keeps no queue between steps.
    p.step_warmup = 0;
    p.prompt_tokens = LengthSpec::Fixed(8);
    p.output_tokens = LengthSpec::Fixed(tokens);
    p.scrape_metrics = false;
    p.gauge_interval = None;
    p
}

/// Measure this machine's harness ceiling against a target at `url` (normally a fresh
/// [`CalibrationTarget`]).
pub async fn measure_ceiling(
    url: &str,
    o: CalibrationOptions,
) -> Result<HarnessCeiling, LoadError> {
    measure_ceiling_with(url, o, bakeoff_client::tls::Tls::default()).await
}

/// [`measure_ceiling`] with the client's TLS (the TLS target's: [`CalibrationTarget::start_tls`]).
pub async fn measure_ceiling_with(
    url: &str,
    o: CalibrationOptions,
    tls: bakeoff_client::tls::Tls,
) -> Result<HarnessCeiling, LoadError> {
    let over_tls = url.starts_with("https://");
    let client = calib_client(url, tls.clone())?;
    let (_tx, rx) = tokio::sync::watch::channel(false);
    let progress = Arc::new(NoProgress);
    let timed = StepBound {
        requests: None,
        duration: Some(o.phase),
        completed: None,
    };

    let r = runner::run(
        &client,
        &calib_plan(o.rps_concurrency, 1, timed),
        progress.clone(),
        rx.clone(),
    )
    .await?;
    let rps = r
        .steps
        .first()
        .and_then(|s| s.requests_per_second)
        .unwrap_or(0.0);

    let mut p = calib_plan(o.tokens_concurrency, o.tokens_per_request, timed);
    p.keep_requests = false;
    let r = runner::run(&client, &p, progress.clone(), rx.clone()).await?;
    let tps = r
        .steps
        .first()
        .and_then(|s| s.output_tokens_per_second)
        .unwrap_or(0.0);

    let streams = concurrent_streams_with(url, o.streams, rx, tls).await?;
    if rps <= 0.0 || tps <= 0.0 {
        return Err(LoadError::Internal(
            "calibration measured nothing: every request to the loopback target failed".into(),
        ));
    }
    Ok(HarnessCeiling {
        requests_per_second: rps,
        streamed_tokens_per_second: tps,
        concurrent_streams: streams,
        peak_rss_mib: peak_rss_mib(),
        source: if over_tls {
            "measured against the built-in loopback target over TLS (the endpoint is https://)"
                .into()
        } else {
            "measured against the built-in loopback target".into()
        },
    })
}

/// Open `n` paced streams at once (a token every 100 ms for 3 s) and count how many were open
/// together and finished without error.
pub async fn concurrent_streams(
    url: &str,
    n: u32,
    cancel: tokio::sync::watch::Receiver<bool>,
) -> Result<u64, LoadError> {
    concurrent_streams_with(url, n, cancel, bakeoff_client::tls::Tls::default()).await
}

/// [`concurrent_streams`] with the client's TLS.
pub async fn concurrent_streams_with(
    url: &str,
    n: u32,
    cancel: tokio::sync::watch::Receiver<bool>,
    tls: bakeoff_client::tls::Tls,
) -> Result<u64, LoadError> {
    let client = calib_client(url, tls)?;
    let mut p = calib_plan(
        n,
        30,
        StepBound {
            requests: Some(u64::from(n)),
            duration: None,
            completed: None,
        },
    );
    p.extra
        .insert("calibration_pace_ms".into(), serde_json::json!(100));
    let r = runner::run(&client, &p, Arc::new(NoProgress), cancel).await?;
    let Some(step) = r.steps.first() else {
        return Ok(0);
    };
    let ok: Vec<(f64, f64)> = step
        .requests
        .iter()
        .filter(|q| q.error.is_none())
        .map(|q| (q.sent_ms, q.sent_ms + q.e2e_ms))
        .collect();
    Ok(peak_overlap(&ok))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlap_by_hand() {
        // [0,10) [5,15) [10,20): at most two at once; touching ends do not count.
        assert_eq!(peak_overlap(&[(0.0, 10.0), (5.0, 15.0), (10.0, 20.0)]), 2);
        assert_eq!(peak_overlap(&[]), 0);
        assert_eq!(peak_overlap(&[(0.0, 1.0), (0.0, 1.0), (0.0, 1.0)]), 3);
    }
}

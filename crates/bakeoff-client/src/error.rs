//! Why a request produced no (complete) reply. Each variant says which wait ran out or what the
//! server said, so an item record can classify it without parsing strings.

use std::time::Duration;

/// A wait as an operator reads it: `30 s`, `2.5 s` (never Rust's `Debug` of a `Duration`).
pub fn seconds(d: Duration) -> String {
    if d.subsec_millis() == 0 {
        format!("{} s", d.as_secs())
    } else {
        format!("{:.1} s", d.as_secs_f64())
    }
}

#[derive(Debug, Clone, thiserror::Error, PartialEq)]
pub enum RequestError {
    #[error("cannot connect to {addr}: {message}")]
    Connect { addr: String, message: String },
    #[error("no connection to {addr} within {} (connect timeout)", seconds(*.after))]
    ConnectTimeout { addr: String, after: Duration },
    #[error("no first byte within {} (first-byte timeout)", seconds(*.after))]
    FirstByteTimeout { after: Duration },
    #[error("stream went silent for {} (idle timeout)", seconds(*.after))]
    IdleTimeout { after: Duration },
    #[error("request exceeded the total timeout of {}", seconds(*.after))]
    TotalTimeout { after: Duration },
    #[error("HTTP {status}: {}", first_line(body))]
    Http { status: u16, body: String },
    #[error("connection dropped mid-stream: {message}")]
    Stream { message: String },
    #[error("server reported an error mid-stream: {}", first_line(body))]
    ServerErrorEvent { body: String },
    #[error("reply is not valid JSON: {message} (starts {snippet:?})")]
    Decode { message: String, snippet: String },
    /// Something answered at the address, but not with HTTP (another protocol on the port).
    #[error("the server at {addr} did not answer with HTTP: {message}")]
    NotHttp { addr: String, message: String },
    /// The TLS handshake failed: the certificate is not trusted (the message names the fix:
    /// `--ca-cert FILE` or `--insecure`), or the two ends share no protocol.
    #[error("TLS with {addr}: {message}")]
    Tls { addr: String, message: String },
}

impl RequestError {
    /// Short machine kind, as recorded in item records.
    pub fn kind(&self) -> &'static str {
        match self {
            RequestError::Connect { .. } => "connect",
            RequestError::ConnectTimeout { .. } => "timeout-connect",
            RequestError::FirstByteTimeout { .. } => "timeout-first-byte",
            RequestError::IdleTimeout { .. } => "timeout-idle",
            RequestError::TotalTimeout { .. } => "timeout-total",
            RequestError::Http { .. } => "http",
            RequestError::Stream { .. } => "stream",
            RequestError::ServerErrorEvent { .. } => "server-error-event",
            RequestError::Decode { .. } => "decode",
            RequestError::NotHttp { .. } => "not-http",
            RequestError::Tls { .. } => "tls",
        }
    }

    pub fn is_timeout(&self) -> bool {
        matches!(
            self,
            RequestError::ConnectTimeout { .. }
                | RequestError::FirstByteTimeout { .. }
                | RequestError::IdleTimeout { .. }
                | RequestError::TotalTimeout { .. }
        )
    }

    /// Nothing is listening (or reachable) at the address, or no TLS session could be had
    /// with it: no request can get through.
    pub fn is_unreachable(&self) -> bool {
        matches!(
            self,
            RequestError::Connect { .. }
                | RequestError::ConnectTimeout { .. }
                | RequestError::Tls { .. }
        )
    }

    /// The server refused the credentials (HTTP 401 or 403): trying again cannot help.
    pub fn is_auth_failure(&self) -> bool {
        matches!(
            self,
            RequestError::Http {
                status: 401 | 403,
                ..
            }
        )
    }

    pub fn http_body(&self) -> Option<&str> {
        match self {
            RequestError::Http { body, .. } | RequestError::ServerErrorEvent { body } => Some(body),
            _ => None,
        }
    }
}

/// Bodies can be multi-line HTML; an error message stays one line.
fn first_line(body: &str) -> String {
    let line = body
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim();
    let mut s: String = line.chars().take(300).collect();
    if line.chars().count() > 300 {
        s.push('…');
    }
    s
}

/// Keep at most this much of an error body as evidence.
pub(crate) const MAX_ERROR_BODY: usize = 8 * 1024;

/// An error body cut to [`MAX_ERROR_BODY`] bytes (on a char boundary), marked `…` when cut.
pub(crate) fn truncate_body(s: &str) -> String {
    if s.len() <= MAX_ERROR_BODY {
        return s.to_string();
    }
    let mut end = MAX_ERROR_BODY;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

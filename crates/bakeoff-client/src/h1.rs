//! A lean HTTP/1.1 transport for the one hot path: streamed chat completions.
//!
//! Why not reqwest here, when every other call uses it: a streamed request through reqwest holds
//! a hyper connection with an 8 KiB read buffer and an 8 KiB write buffer, a dispatch task and
//! pool bookkeeping for as long as the stream lasts. Measured with `harness-bench` (10,000 paced
//! streams held open at once), that came to ≈26 KiB per stream and a 288 MiB peak RSS, past the
//! harness's 256 MB budget (docs/performance.md). Here a stream holds its socket, the SSE
//! parser's partial line and its reply: the bytes are read with `try_read` into one scratch
//! buffer per runtime thread, stamped, and parsed before the next await, so no per-stream read
//! buffer exists. `httparse` (hyper's own parser) reads the response head; the body framing
//! (chunked, `Content-Length`, or until close) is decoded here. `https://` runs the same
//! reader over a rustls session (`crate::http::transport`). Every request says
//! `Connection: close`: a generation request is never sent on a reused connection (see
//! `Client::try_new` for why).

use std::cell::Cell;
use std::io;

use tokio::net::TcpStream;
use url::{Host, Position, Url};

/// Most bytes a response head (status line and headers) may take.
const MAX_HEAD: usize = 64 * 1024;
/// Most headers a response may carry.
const MAX_HEADERS: usize = 100;
/// Longest chunk-size line, extensions included.
const MAX_CHUNK_LINE: usize = 4096;
/// One read's scratch space, one per runtime thread.
const SCRATCH: usize = 64 * 1024;

thread_local! {
    static SCRATCH_BUF: Cell<Option<Box<[u8]>>> = const { Cell::new(None) };
}

/// Run `f` with this thread's scratch buffer. `f` must not await (it cannot: it is a plain
/// closure), so the buffer is never held by two streams at once.
pub(crate) fn with_scratch<R>(f: impl FnOnce(&mut [u8]) -> R) -> R {
    SCRATCH_BUF.with(|cell| {
        let mut buf = cell
            .take()
            .unwrap_or_else(|| vec![0u8; SCRATCH].into_boxed_slice());
        let r = f(&mut buf);
        cell.set(Some(buf));
        r
    })
}

/// The request line and headers of a JSON POST to `url`.
pub(crate) fn post_head(url: &Url, authorization: Option<&str>, body_len: usize) -> Vec<u8> {
    let target = &url[Position::BeforePath..Position::AfterQuery];
    let target = if target.is_empty() { "/" } else { target };
    let host = match url.port() {
        Some(p) => format!("{}:{p}", url.host_str().unwrap_or("")),
        None => url.host_str().unwrap_or("").to_string(),
    };
    let mut head = format!(
        "POST {target} HTTP/1.1\r\nHost: {host}\r\nUser-Agent: bakeoff/{}\r\n\
         Accept: */*\r\nContent-Type: application/json\r\nContent-Length: {body_len}\r\n\
         Connection: close\r\n",
        env!("CARGO_PKG_VERSION")
    );
    if let Some(a) = authorization {
        head.push_str("Authorization: ");
        head.push_str(a);
        head.push_str("\r\n");
    }
    head.push_str("\r\n");
    head.into_bytes()
}

/// Open a TCP connection to the URL's host and port (every address a name resolves to is tried
/// in turn, as the system resolver orders them).
pub(crate) async fn connect(url: &Url) -> io::Result<TcpStream> {
    let port = url.port_or_known_default().unwrap_or(80);
    let stream = match url.host() {
        Some(Host::Ipv4(a)) => TcpStream::connect((a, port)).await?,
        Some(Host::Ipv6(a)) => TcpStream::connect((a, port)).await?,
        Some(Host::Domain(d)) => TcpStream::connect((d, port)).await?,
        None => {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "the endpoint URL has no host",
            ));
        }
    };
    stream.set_nodelay(true)?;
    Ok(stream)
}

/// Why a response could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum H1Error {
    #[error("malformed response head: {0}")]
    Head(String),
    #[error("response head is larger than {MAX_HEAD} bytes")]
    HeadTooLarge,
    #[error("malformed chunked body: {0}")]
    Chunk(&'static str),
}

impl From<H1Error> for crate::RequestError {
    /// A response that is not well-formed HTTP/1.1 broke the exchange like a dropped connection.
    /// A head that does not parse means the other end does not speak HTTP at all.
    fn from(e: H1Error) -> Self {
        match e {
            H1Error::Head(_) => crate::RequestError::NotHttp {
                addr: String::new(),
                message: e.to_string(),
            },
            e => crate::RequestError::Stream {
                message: e.to_string(),
            },
        }
    }
}

/// How the body ends.
#[derive(Debug)]
enum Framing {
    Chunked(Chunked),
    Length(u64),
    UntilClose,
}

/// What the reader knows after some bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Progress {
    /// The final status, once the head is read.
    pub status: Option<u16>,
    /// The body has ended by its framing (the terminal chunk, or `Content-Length` reached).
    pub complete: bool,
}

/// An HTTP/1.1 response read incrementally: feed it bytes as they arrive, get body bytes out.
#[derive(Debug, Default)]
pub(crate) struct ResponseReader {
    /// Head bytes held across reads (only when a head arrives split).
    pending_head: Vec<u8>,
    status: Option<u16>,
    framing: Option<Framing>,
    complete: bool,
}

impl ResponseReader {
    /// Take `input`; hand each piece of decoded body, with the response's status, to `body`,
    /// which may refuse it (its error is returned as is).
    pub fn feed<E: From<H1Error>>(
        &mut self,
        input: &[u8],
        body: &mut impl FnMut(u16, &[u8]) -> Result<(), E>,
    ) -> Result<Progress, E> {
        if self.framing.is_some() {
            self.decode(input, body)?;
            return Ok(self.progress());
        }
        // The head is not read yet. It nearly always arrives whole in one read, so it is parsed
        // straight from `input`; only a head split across reads is copied and held.
        let held;
        let mut buf: &[u8] = if self.pending_head.is_empty() {
            input
        } else {
            self.pending_head.extend_from_slice(input);
            held = std::mem::take(&mut self.pending_head);
            &held
        };
        loop {
            match parse_head(buf)? {
                None => {
                    if buf.len() > MAX_HEAD {
                        return Err(H1Error::HeadTooLarge.into());
                    }
                    self.pending_head = buf.to_vec();
                    return Ok(self.progress());
                }
                Some((len, status, framing)) => {
                    buf = &buf[len..];
                    if (100..200).contains(&status) {
                        // An interim response (100 Continue, 103 Early Hints): the real one
                        // follows.
                        continue;
                    }
                    self.status = Some(status);
                    self.framing = Some(framing);
                    self.decode(buf, body)?;
                    return Ok(self.progress());
                }
            }
        }
    }

    fn progress(&self) -> Progress {
        Progress {
            status: self.status,
            complete: self.complete,
        }
    }

    fn decode<E: From<H1Error>>(
        &mut self,
        input: &[u8],
        body: &mut impl FnMut(u16, &[u8]) -> Result<(), E>,
    ) -> Result<(), E> {
        if input.is_empty() || self.complete {
            return Ok(());
        }
        let status = self.status.unwrap_or(0);
        let body = &mut |data: &[u8]| body(status, data);
        match &mut self.framing {
            None => Ok(()),
            Some(Framing::UntilClose) => body(input),
            Some(Framing::Length(left)) => {
                let take = usize::try_from(*left).map_or(input.len(), |l| l.min(input.len()));
                *left -= take as u64;
                if *left == 0 {
                    self.complete = true;
                }
                body(&input[..take])
            }
            Some(Framing::Chunked(c)) => {
                let done = c.decode(input, body)?;
                self.complete = done;
                Ok(())
            }
        }
    }

    /// The connection closed. `Ok` when the body had ended (or ends with the connection);
    /// otherwise the reason it is cut short.
    pub fn at_eof(&self) -> Result<(), &'static str> {
        match (&self.framing, self.complete) {
            (None, _) if self.pending_head.is_empty() => {
                Err("server closed the connection without sending a response")
            }
            (None, _) => Err("connection closed in the middle of the response head"),
            (Some(Framing::UntilClose), _) | (_, true) => Ok(()),
            (Some(_), false) => Err("connection closed before the response body ended"),
        }
    }
}

/// `None` when more bytes are needed; the head's length, final status and framing otherwise.
fn parse_head(buf: &[u8]) -> Result<Option<(usize, u16, Framing)>, H1Error> {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut resp = httparse::Response::new(&mut headers);
    let len = match resp.parse(buf) {
        Ok(httparse::Status::Partial) => return Ok(None),
        Ok(httparse::Status::Complete(len)) => len,
        Err(e) => return Err(H1Error::Head(e.to_string())),
    };
    let status = resp.code.unwrap_or(0);
    let mut chunked = false;
    let mut length = None;
    for h in resp.headers.iter() {
        if h.name.eq_ignore_ascii_case("transfer-encoding") {
            // The last coding decides; anything but chunked last is read until close.
            chunked = String::from_utf8_lossy(h.value)
                .rsplit(',')
                .next()
                .is_some_and(|c| c.trim().eq_ignore_ascii_case("chunked"));
        } else if h.name.eq_ignore_ascii_case("content-length") {
            let v = std::str::from_utf8(h.value)
                .ok()
                .and_then(|s| s.trim().parse::<u64>().ok())
                .ok_or_else(|| H1Error::Head("Content-Length is not a number".into()))?;
            length = Some(v);
        }
    }
    let framing = if chunked {
        Framing::Chunked(Chunked::default())
    } else {
        match length {
            Some(n) => Framing::Length(n),
            None => Framing::UntilClose,
        }
    };
    Ok(Some((len, status, framing)))
}

/// Where the chunked decoder stands.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum ChunkState {
    #[default]
    Size,
    Extension,
    SizeLf,
    Data,
    DataCr,
    DataLf,
    Done,
}

/// A `Transfer-Encoding: chunked` decoder that keeps a few integers of state, never a buffer.
#[derive(Debug, Default)]
struct Chunked {
    state: ChunkState,
    size: u64,
    digits: u32,
    line: usize,
}

impl Chunked {
    /// Decode `input`, handing data to `body`; `true` once the terminal chunk is read (trailers
    /// after it are ignored: the connection closes).
    fn decode<E: From<H1Error>>(
        &mut self,
        input: &[u8],
        body: &mut impl FnMut(&[u8]) -> Result<(), E>,
    ) -> Result<bool, E> {
        let mut i = 0;
        while i < input.len() {
            match self.state {
                ChunkState::Done => return Ok(true),
                ChunkState::Data => {
                    let avail = input.len() - i;
                    let take = usize::try_from(self.size).map_or(avail, |s| s.min(avail));
                    body(&input[i..i + take])?;
                    i += take;
                    self.size -= take as u64;
                    if self.size == 0 {
                        self.state = ChunkState::DataCr;
                    }
                    continue;
                }
                _ => {}
            }
            let b = input[i];
            i += 1;
            self.state = match self.state {
                ChunkState::Size => {
                    self.line += 1;
                    match (b as char).to_digit(16) {
                        Some(d) => {
                            if self.digits >= 15 {
                                return Err(H1Error::Chunk("chunk size too large").into());
                            }
                            self.size = self.size * 16 + u64::from(d);
                            self.digits += 1;
                            ChunkState::Size
                        }
                        None if self.digits == 0 => {
                            return Err(H1Error::Chunk("chunk size is not hexadecimal").into());
                        }
                        None if b == b'\r' => ChunkState::SizeLf,
                        None if b == b';' || b == b' ' || b == b'\t' => ChunkState::Extension,
                        None => {
                            return Err(H1Error::Chunk("chunk size is not hexadecimal").into());
                        }
                    }
                }
                ChunkState::Extension => {
                    self.line += 1;
                    if self.line > MAX_CHUNK_LINE {
                        return Err(H1Error::Chunk("chunk-size line too long").into());
                    }
                    if b == b'\r' {
                        ChunkState::SizeLf
                    } else {
                        ChunkState::Extension
                    }
                }
                ChunkState::SizeLf => {
                    if b != b'\n' {
                        return Err(H1Error::Chunk("chunk-size line not ended by CRLF").into());
                    }
                    self.line = 0;
                    self.digits = 0;
                    if self.size == 0 {
                        ChunkState::Done
                    } else {
                        ChunkState::Data
                    }
                }
                ChunkState::DataCr if b == b'\r' => ChunkState::DataLf,
                ChunkState::DataLf if b == b'\n' => ChunkState::Size,
                ChunkState::DataCr | ChunkState::DataLf => {
                    return Err(H1Error::Chunk("chunk data not followed by CRLF").into());
                }
                ChunkState::Data | ChunkState::Done => self.state,
            };
        }
        Ok(self.state == ChunkState::Done)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn read_all(parts: &[&[u8]]) -> (Result<Progress, H1Error>, Vec<u8>) {
        let mut r = ResponseReader::default();
        let mut out = Vec::new();
        let mut last = Ok(r.progress());
        for p in parts {
            last = r.feed(p, &mut |_, b: &[u8]| {
                out.extend_from_slice(b);
                Ok::<(), H1Error>(())
            });
            if last.is_err() {
                break;
            }
        }
        (last, out)
    }

    const CHUNKED: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\
        Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n7;ext=1\r\n, world\r\n0\r\n\r\n";

    #[test]
    fn a_chunked_body_split_at_every_byte_decodes_the_same() {
        for cut in 0..=CHUNKED.len() {
            for cut2 in cut..=CHUNKED.len() {
                let (p, body) = read_all(&[&CHUNKED[..cut], &CHUNKED[cut..cut2], &CHUNKED[cut2..]]);
                let p = p.unwrap();
                assert_eq!(body, b"hello, world", "cut at {cut}/{cut2}");
                assert_eq!(p.status, Some(200));
                assert!(p.complete, "cut at {cut}/{cut2}");
            }
        }
    }

    #[test]
    fn content_length_and_until_close_bodies() {
        let (p, body) = read_all(&[b"HTTP/1.1 400 Bad Request\r\nContent-Length: 3\r\n\r\nabcdef"]);
        assert_eq!(body, b"abc");
        assert_eq!(
            p.unwrap(),
            Progress {
                status: Some(400),
                complete: true
            }
        );
        let mut r = ResponseReader::default();
        let p = r
            .feed(b"HTTP/1.0 200 OK\r\n\r\nxy", &mut |_, _: &[u8]| {
                Ok::<(), H1Error>(())
            })
            .unwrap();
        assert!(!p.complete);
        assert_eq!(r.at_eof(), Ok(()));
    }

    #[test]
    fn an_interim_response_is_skipped() {
        let (p, body) = read_all(&[
            b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 20",
            b"0 OK\r\nContent-Length: 2\r\n\r\nok",
        ]);
        assert_eq!(p.unwrap().status, Some(200));
        assert_eq!(body, b"ok");
    }

    #[test]
    fn a_cut_body_and_bad_framing_are_errors() {
        let mut r = ResponseReader::default();
        assert!(r.at_eof().unwrap_err().contains("without sending"));
        r.feed(
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel",
            &mut |_, _: &[u8]| Ok::<(), H1Error>(()),
        )
        .unwrap();
        assert!(
            r.at_eof()
                .unwrap_err()
                .contains("before the response body ended")
        );
        let (p, _) = read_all(&[b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"]);
        assert_eq!(
            p.unwrap_err(),
            H1Error::Chunk("chunk size is not hexadecimal")
        );
        let (p, _) = read_all(&[b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nab"]);
        assert_eq!(
            p.unwrap_err(),
            H1Error::Chunk("chunk data not followed by CRLF")
        );
        let (p, _) = read_all(&[
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nfffffffffffffffff\r\n",
        ]);
        assert_eq!(p.unwrap_err(), H1Error::Chunk("chunk size too large"));
        let (p, _) = read_all(&[b"SSH-2.0-OpenSSH\r\n\r\n"]);
        assert!(matches!(p.unwrap_err(), H1Error::Head(_)));
        let big = vec![b'x'; MAX_HEAD + 10];
        let (p, _) = read_all(&[b"HTTP/1.1 200 OK\r\nX: ", &big]);
        assert!(matches!(
            p.unwrap_err(),
            H1Error::HeadTooLarge | H1Error::Head(_)
        ));
    }

    #[test]
    fn the_request_head_names_host_target_length_and_auth() {
        let u = Url::parse("http://127.0.0.1:8080/gw/v1/chat/completions?x=1").unwrap();
        let h = String::from_utf8(post_head(&u, Some("Bearer k"), 42)).unwrap();
        assert!(
            h.starts_with("POST /gw/v1/chat/completions?x=1 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n")
        );
        assert!(h.contains("Content-Length: 42\r\n") && h.contains("Authorization: Bearer k\r\n"));
        assert!(h.contains("Connection: close\r\n") && h.ends_with("\r\n\r\n"));
        let u = Url::parse("http://[::1]/v1/chat/completions").unwrap();
        let h = String::from_utf8(post_head(&u, None, 0)).unwrap();
        assert!(h.contains("Host: [::1]\r\n") && !h.contains("Authorization"));
    }
}

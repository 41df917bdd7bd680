//! The streamed chat completion's read loop, as a small state machine: wait for the socket,
//! read into the thread's scratch buffer, stamp, de-chunk, parse the events, and settle how the
//! stream ended. Everything here runs per network read: nothing allocates per read, and no
//! buffer is copied beyond the capped evidence (the first body bytes, an error body).

use std::time::{Duration, Instant};

use super::timeouts::Timeouts;
use super::transport::Transport;
use crate::error::{MAX_ERROR_BODY, truncate_body};
use crate::h1;
use crate::{Reply, RequestError};
use bakeoff_wire::{SseEvent, SseParser, StreamChunk};

/// How much of a 2xx body is kept for the error when it turns out not to be an event stream.
const BODY_HEAD: usize = 120;

/// The two absolute deadlines of a streamed request.
#[derive(Debug, Clone, Copy)]
pub(super) struct Deadlines {
    /// The whole request.
    pub(super) total: Instant,
    /// The first body byte (never later than `total`).
    pub(super) first_byte: Instant,
}

impl Deadlines {
    pub(super) fn new(sent: Instant, t: Timeouts) -> Self {
        Self {
            total: sent + t.total,
            first_byte: sent + t.first_byte.min(t.total),
        }
    }
}

/// What one read of the streamed response gave.
enum ReadStep {
    /// A spurious wake-up: nothing to read yet.
    Again,
    /// The server closed the connection.
    Eof,
    /// Bytes, decoded; with the arrival stamp.
    Read(h1::Progress, Duration),
}

/// Where the read loop goes after one read.
pub(super) enum Flow {
    /// Wait for the next read.
    More,
    /// `[DONE]` arrived: the exchange is complete.
    Done,
    /// The body ended (by its framing, or the server closed it): settle the stream.
    Ended,
}

/// Where decoded body bytes go: the event parser, or — for a non-2xx reply — the capped error
/// body kept as evidence.
struct BodySink {
    parser: SseParser,
    events: Vec<SseEvent>,
    /// 2xx body bytes seen.
    wire_bytes: usize,
    /// The first [`BODY_HEAD`] bytes of a 2xx body.
    body_head: Vec<u8>,
    /// A non-2xx body, up to [`MAX_ERROR_BODY`] bytes.
    error_body: Vec<u8>,
}

impl BodySink {
    /// One piece of decoded body, stamped `at`: parsed into events, which are applied to the
    /// reply at once.
    #[inline]
    fn on_body(
        &mut self,
        status: u16,
        data: &[u8],
        at: Duration,
        reply: &mut Reply,
    ) -> Result<(), RequestError> {
        if !(200..300).contains(&status) {
            let room = MAX_ERROR_BODY.saturating_sub(self.error_body.len());
            self.error_body
                .extend_from_slice(&data[..data.len().min(room)]);
            return Ok(());
        }
        if data.is_empty() {
            return Ok(());
        }
        reply.first_byte.get_or_insert(at);
        // The first bytes of the body, for the error when it is not an event stream
        // (an HTML page, plain JSON): one branch per read, nothing after 120 bytes.
        if self.body_head.len() < BODY_HEAD {
            let room = BODY_HEAD - self.body_head.len();
            self.body_head
                .extend_from_slice(&data[..data.len().min(room)]);
        }
        self.wire_bytes += data.len();
        self.parser
            .push(data, &mut self.events)
            .map_err(|e| RequestError::Stream {
                message: e.to_string(),
            })?;
        drain_events(&mut self.events, at, reply)
    }
}

/// The read side of one streamed request.
pub(super) struct StreamState {
    sent: Instant,
    timeouts: Timeouts,
    deadlines: Deadlines,
    response: h1::ResponseReader,
    sink: BodySink,
    /// A non-2xx reply: its status, and until when its body (capped, kept as evidence) is
    /// read — at most 10 s more.
    failing: Option<(u16, Instant)>,
}

impl StreamState {
    pub(super) fn new(sent: Instant, timeouts: Timeouts, deadlines: Deadlines) -> Self {
        Self {
            sent,
            timeouts,
            deadlines,
            response: h1::ResponseReader::default(),
            sink: BodySink {
                parser: SseParser::new(),
                events: Vec::with_capacity(4),
                wire_bytes: 0,
                body_head: Vec::new(),
                error_body: Vec::new(),
            },
            failing: None,
        }
    }

    /// Until when the next read may be waited for: the error body's grace, the first-byte
    /// deadline, or the idle limit (never past the total deadline).
    #[inline]
    pub(super) fn wait_until(&self, reply: &Reply) -> Instant {
        if let Some((_, until)) = self.failing {
            until
        } else if reply.first_byte.is_none() {
            self.deadlines.first_byte
        } else {
            (Instant::now() + self.timeouts.idle).min(self.deadlines.total)
        }
    }

    /// The outcome of waiting for the socket: a failing reply ends with its HTTP error as soon
    /// as the wait does not succeed; otherwise a timeout is named by the deadline it hit.
    #[inline]
    pub(super) fn check_ready(
        &self,
        ready: Result<std::io::Result<()>, tokio::time::error::Elapsed>,
        reply: &Reply,
    ) -> Result<(), RequestError> {
        if let Some((status, _)) = self.failing
            && !matches!(ready, Ok(Ok(())))
        {
            return Err(http_error(status, &self.sink.error_body));
        }
        match ready {
            Err(_) => Err(self.timeout_error(reply)),
            Ok(Err(e)) => Err(RequestError::Stream {
                message: e.to_string(),
            }),
            Ok(Ok(())) => Ok(()),
        }
    }

    #[cold]
    fn timeout_error(&self, reply: &Reply) -> RequestError {
        let t = self.timeouts;
        if Instant::now() >= self.deadlines.total {
            RequestError::TotalTimeout { after: t.total }
        } else if reply.first_byte.is_none() {
            RequestError::FirstByteTimeout {
                after: t.first_byte,
            }
        } else {
            RequestError::IdleTimeout { after: t.idle }
        }
    }

    /// One read (the socket said it is readable), decoded and applied to the reply.
    pub(super) fn read_once(
        &mut self,
        stream: &mut Transport,
        reply: &mut Reply,
    ) -> Result<Flow, RequestError> {
        // Read, stamp and decode without an await in between, so the scratch buffer is
        // this thread's alone for the whole step.
        let step = h1::with_scratch(|buf| self.read_into(stream, buf, reply))?;
        let progress = match step {
            ReadStep::Again => return Ok(Flow::More),
            ReadStep::Eof => {
                self.at_eof()?;
                return Ok(Flow::Ended);
            }
            ReadStep::Read(p, at) => {
                self.note_status(p, at, reply);
                p
            }
        };
        if let Some((status, _)) = self.failing
            && (progress.complete || self.sink.error_body.len() >= MAX_ERROR_BODY)
        {
            return Err(http_error(status, &self.sink.error_body));
        }
        if reply.saw_done {
            return Ok(Flow::Done);
        }
        if progress.complete {
            return Ok(Flow::Ended);
        }
        Ok(Flow::More)
    }

    /// `try_read` into `buf`, stamp the arrival, then de-chunk and parse what came.
    #[inline]
    fn read_into(
        &mut self,
        stream: &mut Transport,
        buf: &mut [u8],
        reply: &mut Reply,
    ) -> Result<ReadStep, RequestError> {
        let n = match stream.try_read(buf) {
            Ok(0) => return Ok(ReadStep::Eof),
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                return Ok(ReadStep::Again);
            }
            Err(e) => {
                return Err(RequestError::Stream {
                    message: e.to_string(),
                });
            }
        };
        // The stamp is taken before any parsing: parse cost must not count as latency.
        let at = self.sent.elapsed();
        let sink = &mut self.sink;
        let progress = self
            .response
            .feed(&buf[..n], &mut |status: u16, data: &[u8]| {
                sink.on_body(status, data, at, reply)
            })?;
        Ok(ReadStep::Read(progress, at))
    }

    /// The status, once the head is read: a non-2xx one starts the error body's grace.
    #[inline]
    fn note_status(&mut self, p: h1::Progress, at: Duration, reply: &mut Reply) {
        if reply.status.is_none()
            && let Some(status) = p.status
        {
            reply.status = Some(status);
            if !(200..300).contains(&status) {
                reply.first_byte.get_or_insert(at);
                let until = (Instant::now() + Duration::from_secs(10)).min(self.deadlines.total);
                self.failing = Some((status, until));
            }
        }
    }

    /// The server closed the connection: fine only where the framing allows it.
    fn at_eof(&self) -> Result<(), RequestError> {
        if let Some((status, _)) = self.failing {
            return Err(http_error(status, &self.sink.error_body));
        }
        self.response.at_eof().map_err(|why| RequestError::Stream {
            message: why.to_string(),
        })
    }

    /// The body has ended without `[DONE]`: the last event (if any) is parsed, and a stream
    /// with no event, or with neither a finish_reason nor `[DONE]`, is an error.
    pub(super) fn finish(mut self, reply: &mut Reply) -> Result<(), RequestError> {
        let sink = &mut self.sink;
        let had_partial_event = sink.parser.has_partial_event();
        sink.parser.finish(&mut sink.events);
        let at = self.sent.elapsed();
        drain_events(&mut sink.events, at, reply).map_err(|e| match e {
            // The last event came without its blank line and does not parse: the server
            // closed the connection in the middle of it. A cut stream, not a bad reply.
            RequestError::Decode { snippet, .. } if had_partial_event => RequestError::Stream {
                message: format!(
                    "the stream ended in the middle of an event (its data starts {snippet:?})"
                ),
            },
            e => e,
        })?;
        if reply.events == 0 {
            let wire_bytes = sink.wire_bytes;
            return Err(if wire_bytes == 0 {
                RequestError::Stream {
                    message: "server closed the stream without sending any event".into(),
                }
            } else {
                RequestError::Decode {
                    message: format!("body is not a server-sent-event stream ({wire_bytes} bytes)"),
                    snippet: String::from_utf8_lossy(&sink.body_head).into_owned(),
                }
            });
        }
        if !reply.saw_done && reply.finish_reason.is_none() {
            return Err(RequestError::Stream {
                message: "stream ended before a finish_reason or [DONE]".into(),
            });
        }
        Ok(())
    }
}

/// Apply parsed events to the reply, stamped `at`; `[DONE]` is noted, an error event or a
/// chunk with an `error` ends the exchange.
fn drain_events(
    events: &mut Vec<SseEvent>,
    at: Duration,
    reply: &mut Reply,
) -> Result<(), RequestError> {
    for ev in events.drain(..) {
        if ev.is_done() {
            reply.saw_done = true;
            continue;
        }
        if ev.is_error() {
            return Err(RequestError::ServerErrorEvent {
                body: truncate_body(&ev.data),
            });
        }
        let chunk: StreamChunk =
            serde_json::from_str(&ev.data).map_err(|e| RequestError::Decode {
                message: e.to_string(),
                snippet: ev.data.chars().take(120).collect(),
            })?;
        if let Some(err) = &chunk.error {
            return Err(RequestError::ServerErrorEvent {
                body: truncate_body(&err.to_string()),
            });
        }
        reply.apply_chunk(chunk, at)?;
    }
    Ok(())
}

/// A non-2xx reply with the part of its body that was kept.
fn http_error(status: u16, body: &[u8]) -> RequestError {
    RequestError::Http {
        status,
        body: truncate_body(&String::from_utf8_lossy(body)),
    }
}

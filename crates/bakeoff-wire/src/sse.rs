//! Server-sent-events framing (the WHATWG `text/event-stream` rules that OpenAI-compatible
//! servers follow): lines end in `\n`, `\r\n` or a lone `\r`; a line starting with `:` is a
//! comment (keep-alive); `data:` lines accumulate, joined by `\n`; a blank line dispatches the
//! event; `event:` names it (`event: error` is how some servers report a failure mid-stream).
//!
//! Network chunks split anywhere — inside a line, between `\r` and `\n`, inside a UTF-8
//! sequence — so the parser keeps the unfinished line across [`SseParser::push`] calls.
//! We wrote this instead of using `eventsource-stream` because that crate hides which network
//! chunk completed an event, and per-chunk arrival time is the measurement.

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event:` field, when the server named the event.
    pub event: Option<String>,
    /// The `data:` lines joined with `\n`.
    pub data: String,
}

impl SseEvent {
    /// OpenAI's end-of-stream sentinel, `data: [DONE]`.
    pub fn is_done(&self) -> bool {
        self.data.trim() == "[DONE]"
    }

    /// `event: error`, the mid-stream error form used by vLLM and others.
    pub fn is_error(&self) -> bool {
        self.event.as_deref() == Some("error")
    }
}

/// A line longer than this is a protocol violation (or a hostile server), not a token.
pub const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;
/// An event whose `data:` lines add up past this without a blank line to end it is one too.
pub const MAX_EVENT_BYTES: usize = 16 * 1024 * 1024;

/// The stream broke the framing rules.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SseError {
    /// A single line grew past [`MAX_LINE_BYTES`] without a line ending.
    LineTooLong,
    /// `data:` lines piled up past [`MAX_EVENT_BYTES`] without the blank line that ends an event.
    EventTooLarge,
}

impl std::fmt::Display for SseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SseError::LineTooLong => write!(
                f,
                "server-sent event line longer than {MAX_LINE_BYTES} bytes without a line ending"
            ),
            SseError::EventTooLarge => write!(
                f,
                "server-sent event data longer than {MAX_EVENT_BYTES} bytes without a blank line to end it"
            ),
        }
    }
}

impl std::error::Error for SseError {}

/// Incremental parser: feed it network chunks in order, collect the events each completes.
#[derive(Debug, Default)]
pub struct SseParser {
    line: Vec<u8>,
    data: String,
    has_data: bool,
    event: Option<String>,
    /// The previous chunk ended in `\r`; a `\n` opening the next chunk belongs to it.
    pending_cr: bool,
}

impl SseParser {
    pub fn new() -> Self {
        Self::default()
    }

    /// Feed one network chunk; completed events are appended to `out`.
    pub fn push(&mut self, mut bytes: &[u8], out: &mut Vec<SseEvent>) -> Result<(), SseError> {
        // An empty chunk says nothing about whether a `\n` follows a pending `\r`.
        if bytes.is_empty() {
            return Ok(());
        }
        if self.pending_cr {
            self.pending_cr = false;
            if let Some(rest) = bytes.strip_prefix(b"\n") {
                bytes = rest;
            }
        }
        while let Some(pos) = memchr::memchr2(b'\n', b'\r', bytes) {
            self.line.extend_from_slice(&bytes[..pos]);
            let ending = bytes[pos];
            bytes = &bytes[pos + 1..];
            if ending == b'\r' {
                if bytes.is_empty() {
                    self.pending_cr = true;
                } else if bytes[0] == b'\n' {
                    bytes = &bytes[1..];
                }
            }
            self.finish_line(out)?;
        }
        if self.line.len() + bytes.len() > MAX_LINE_BYTES {
            return Err(SseError::LineTooLong);
        }
        self.line.extend_from_slice(bytes);
        Ok(())
    }

    /// Bytes of an event are held that no blank line has ended yet (a line in progress, or
    /// `data:` lines waiting for their blank line): at the end of the stream, the server closed
    /// the connection inside an event.
    pub fn has_partial_event(&self) -> bool {
        !self.line.is_empty() || self.has_data
    }

    /// End of the byte stream: a final event without its blank line is still dispatched,
    /// since servers that close right after the last `data:` line exist.
    pub fn finish(&mut self, out: &mut Vec<SseEvent>) {
        // At the end of the stream an oversized last line is simply dropped: nothing follows it.
        if !self.line.is_empty() && self.finish_line(out).is_err() {
            self.data.clear();
            self.has_data = false;
        }
        self.dispatch(out);
    }

    fn finish_line(&mut self, out: &mut Vec<SseEvent>) -> Result<(), SseError> {
        let line = std::mem::take(&mut self.line);
        if line.is_empty() {
            self.dispatch(out);
        } else if line[0] != b':' {
            let text = String::from_utf8_lossy(&line);
            let (field, value) = match text.find(':') {
                Some(i) => {
                    let v = &text[i + 1..];
                    (&text[..i], v.strip_prefix(' ').unwrap_or(v))
                }
                None => (&text[..], ""),
            };
            match field {
                "data" => {
                    if self.data.len() + value.len() + 1 > MAX_EVENT_BYTES {
                        return Err(SseError::EventTooLarge);
                    }
                    if self.has_data {
                        self.data.push('\n');
                    }
                    self.data.push_str(value);
                    self.has_data = true;
                }
                "event" => self.event = Some(value.to_string()),
                // `id` and `retry` matter to reconnecting browsers; a benchmark never reconnects.
                _ => {}
            }
        }
        // Reuse the allocation for the next line.
        self.line = line;
        self.line.clear();
        Ok(())
    }

    fn dispatch(&mut self, out: &mut Vec<SseEvent>) {
        if self.has_data {
            out.push(SseEvent {
                event: self.event.take(),
                data: std::mem::take(&mut self.data),
            });
        }
        self.has_data = false;
        self.event = None;
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn parse_all(chunks: &[&[u8]]) -> Vec<SseEvent> {
        let mut p = SseParser::new();
        let mut out = Vec::new();
        for c in chunks {
            p.push(c, &mut out).unwrap();
        }
        p.finish(&mut out);
        out
    }

    const LLAMA_STREAM: &str = "data: {\"a\":1}\n\ndata: {\"b\":2}\n\ndata: [DONE]\n\n";

    #[test]
    fn whole_stream() {
        let ev = parse_all(&[LLAMA_STREAM.as_bytes()]);
        assert_eq!(ev.len(), 3);
        assert_eq!(ev[0].data, "{\"a\":1}");
        assert!(ev[2].is_done());
    }

    #[test]
    fn split_at_every_byte_boundary_gives_the_same_events() {
        let whole = parse_all(&[LLAMA_STREAM.as_bytes()]);
        let bytes = LLAMA_STREAM.as_bytes();
        for i in 0..bytes.len() {
            for j in i..bytes.len() {
                let got = parse_all(&[&bytes[..i], &bytes[i..j], &bytes[j..]]);
                assert_eq!(got, whole, "split at {i},{j}");
            }
        }
    }

    #[test]
    fn crlf_and_lone_cr_line_endings() {
        let crlf = "data: x\r\n\r\ndata: y\r\n\r\n";
        let cr = "data: x\r\rdata: y\r\r";
        for s in [crlf, cr] {
            let bytes = s.as_bytes();
            for i in 0..=bytes.len() {
                let ev = parse_all(&[&bytes[..i], &bytes[i..]]);
                let data: Vec<_> = ev.iter().map(|e| e.data.as_str()).collect();
                assert_eq!(data, vec!["x", "y"], "{s:?} split at {i}");
            }
        }
    }

    #[test]
    fn comments_are_keepalives_not_events() {
        let ev = parse_all(&[b": ping\n\n: another\ndata: z\n\n"]);
        assert_eq!(ev.len(), 1);
        assert_eq!(ev[0].data, "z");
    }

    #[test]
    fn multi_line_data_joined_with_newline() {
        let ev = parse_all(&[b"data: a\ndata: b\n\n"]);
        assert_eq!(ev[0].data, "a\nb");
    }

    #[test]
    fn named_error_event() {
        // vLLM streams errors as a data event; some servers name it `event: error`.
        let ev = parse_all(&[b"event: error\ndata: {\"error\":{\"message\":\"boom\"}}\n\n"]);
        assert!(ev[0].is_error());
        assert!(!ev[0].is_done());
    }

    #[test]
    fn no_space_after_colon_and_field_without_value() {
        let ev = parse_all(&[b"data:tight\n\ndata\n\n"]);
        assert_eq!(ev[0].data, "tight");
        assert_eq!(ev[1].data, "");
    }

    #[test]
    fn trailing_event_without_blank_line_is_flushed_at_finish() {
        let ev = parse_all(&[b"data: last"]);
        assert_eq!(ev[0].data, "last");
    }

    #[test]
    fn utf8_split_inside_a_character() {
        let s = "data: héllo\n\n".as_bytes();
        let ev = parse_all(&[&s[..8], &s[8..]]);
        assert_eq!(ev[0].data, "héllo");
    }

    #[test]
    fn an_empty_chunk_between_cr_and_lf_keeps_one_line_ending() {
        // `\r` | empty | `\n` is one CRLF: the event must not be cut in two.
        let ev = parse_all(&[b"data: a\r", b"", b"\ndata: b\r\n\r\n"]);
        assert_eq!(ev.len(), 1, "{ev:?}");
        assert_eq!(ev[0].data, "a\nb");
    }

    #[test]
    fn data_lines_without_a_blank_line_are_bounded() {
        let mut p = SseParser::new();
        let mut out = Vec::new();
        let line = format!("data: {}\n", "x".repeat(1024 * 1024));
        let mut failed = None;
        for _ in 0..20 {
            if let Err(e) = p.push(line.as_bytes(), &mut out) {
                failed = Some(e);
                break;
            }
        }
        assert_eq!(failed, Some(SseError::EventTooLarge));
        assert!(out.is_empty());
    }

    #[test]
    fn runaway_line_is_an_error_not_unbounded_memory() {
        let mut p = SseParser::new();
        let mut out = Vec::new();
        let big = vec![b'a'; 1024 * 1024];
        let mut failed = false;
        for _ in 0..20 {
            if p.push(&big, &mut out).is_err() {
                failed = true;
                break;
            }
        }
        assert!(failed);
    }
}

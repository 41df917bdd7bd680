//! A streamed reply as a server writes it — LF, CRLF and lone-CR line endings, a keep-alive
//! comment, a `data:` event of two lines, an emoji whose bytes any cut may split, an `event:
//! error` — gives the same events however the network cuts it.

use bakeoff_wire::sse::{MAX_LINE_BYTES, SseError};
use bakeoff_wire::{SseEvent, SseParser, StreamChunk};

const STREAM: &str = concat!(
    ": keep-alive\n\n",
    "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":null}}]}\r\n\r\n",
    "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hello \u{1F44B}\"}}]}\n\n",
    "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\" world\"},\"finish_reason\":\"stop\"}]}\r\r",
    "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":7,\"completion_tokens\":3,\"total_tokens\":10},\n",
    "data: \"timings\":{\"prompt_n\":7,\"predicted_n\":3}}\n\n",
    "event: error\ndata: {\"error\":{\"message\":\"late\"}}\n\n",
    "data: [DONE]\n\n",
);

/// Every event of `chunks`, fed in order, then the end of the stream.
fn parse(chunks: &[&[u8]]) -> Vec<SseEvent> {
    let mut p = SseParser::new();
    let mut out = Vec::new();
    for c in chunks {
        p.push(c, &mut out).unwrap();
    }
    assert!(!p.has_partial_event());
    p.finish(&mut out);
    out
}

#[test]
fn the_stream_whole_has_its_events() {
    let ev = parse(&[STREAM.as_bytes()]);
    assert_eq!(ev.len(), 6, "{ev:#?}");
    // The comment is no event; the two `data:` lines of one event are joined by `\n`.
    assert!(
        ev[3].data.contains("\"total_tokens\":10},\n\"timings\""),
        "{}",
        ev[3].data
    );
    assert!(ev[4].is_error() && !ev[4].is_done());
    assert!(ev[5].is_done());
    assert!(ev.iter().take(4).all(|e| e.event.is_none()));
}

#[test]
fn a_cut_at_every_byte_gives_the_same_events() {
    let bytes = STREAM.as_bytes();
    let whole = parse(&[bytes]);
    for i in 0..=bytes.len() {
        let (a, b) = bytes.split_at(i);
        assert_eq!(parse(&[a, b]), whole, "cut at byte {i}");
    }
    // Two cuts: the second lands between every `\r` and `\n` and inside the emoji too.
    for i in (0..bytes.len()).step_by(7) {
        for j in i..=bytes.len() {
            let chunks = [&bytes[..i], &bytes[i..j], &bytes[j..]];
            assert_eq!(parse(&chunks), whole, "cuts at {i} and {j}");
        }
    }
}

#[test]
fn one_byte_at_a_time_and_empty_chunks_change_nothing() {
    let bytes = STREAM.as_bytes();
    let whole = parse(&[bytes]);
    let mut chunks: Vec<&[u8]> = Vec::new();
    for k in 0..bytes.len() {
        chunks.push(&bytes[k..k + 1]);
        chunks.push(&[]);
    }
    assert_eq!(parse(&chunks), whole);
}

#[test]
fn the_events_read_as_the_reply_the_server_sent() {
    let ev = parse(&[STREAM.as_bytes()]);
    let chunks: Vec<StreamChunk> = ev
        .iter()
        .filter(|e| !e.is_done())
        .map(|e| serde_json::from_str(&e.data).unwrap())
        .collect();
    let text: String = chunks
        .iter()
        .flat_map(|c| &c.choices)
        .filter_map(|c| c.delta.content.as_deref())
        .collect();
    assert_eq!(text, "Hello \u{1F44B} world");
    assert_eq!(
        chunks[0].choices[0].delta.role.as_deref(),
        Some("assistant")
    );
    assert_eq!(chunks[2].choices[0].finish_reason.as_deref(), Some("stop"));
    let usage = chunks[3].usage.as_ref().unwrap();
    assert_eq!(
        (usage.prompt_tokens, usage.completion_tokens),
        (Some(7), Some(3))
    );
    assert_eq!(chunks[3].timings.as_ref().unwrap().predicted_n, Some(3));
    assert!(chunks[4].error.is_some());
}

#[test]
fn a_stream_cut_inside_an_event_is_told_and_its_last_event_kept() {
    let mut p = SseParser::new();
    let mut out = Vec::new();
    p.push(b"data: {\"a\":1}\n\ndata: {\"b\"", &mut out)
        .unwrap();
    assert_eq!(out.len(), 1);
    assert!(p.has_partial_event());
    p.push(b":2}\n", &mut out).unwrap();
    assert!(p.has_partial_event(), "data without its blank line");
    // A server that closes right after its last `data:` line: the event still counts.
    p.finish(&mut out);
    assert_eq!(out.len(), 2);
    assert_eq!(out[1].data, "{\"b\":2}");
}

#[test]
fn a_line_without_an_end_past_the_limit_is_refused() {
    let mut p = SseParser::new();
    let mut out = Vec::new();
    let half = vec![b'x'; MAX_LINE_BYTES / 2 + 1];
    p.push(b"data: ", &mut out).unwrap();
    p.push(&half, &mut out).unwrap();
    assert_eq!(p.push(&half, &mut out), Err(SseError::LineTooLong));
    assert!(out.is_empty());
}

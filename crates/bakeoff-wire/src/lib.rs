//! OpenAI-compatible chat-completion wire types, with the vendor extras that real engines send
//! (`reasoning_content` from llama.cpp and older vLLM, `reasoning` from newer vLLM, llama.cpp's
//! `timings`, `completion_tokens_details`), and the server-sent-events frame parser.
//!
//! This crate owns the shape of bytes on the wire and nothing else: it never does I/O, never
//! reads a clock and never decides what a reply means. Callers stamp the arrival time of each
//! network chunk *before* handing its bytes to [`sse::SseParser`], so parsing cost never leaks
//! into latency.
//!
//! It also holds the one terminal escaper ([`escape::for_terminal`]): text that came off the
//! wire (model output, server errors) is stripped of control characters before it reaches an
//! operator's terminal, by the seats' renderings and the reporters alike; and the one terminal
//! width rule ([`term::width_with`]: `COLUMNS`, the terminal, else 120) with
//! [`term::shorten_middle`] for names that must not break.

pub mod chat;
pub mod escape;
pub mod sse;
pub mod term;

pub use chat::{
    ChatRequest, ChoiceLogprobs, ChunkChoice, ChunkDelta, CompletionTokensDetails, FunctionCall,
    FunctionCallDelta, Message, NonStreamChoice, NonStreamResponse, StreamChunk, StreamOptions,
    Timings, TokenLogprob, Tool, ToolCall, ToolCallDelta, ToolFunction, TopLogprob, Usage,
};
pub use sse::{SseEvent, SseParser};

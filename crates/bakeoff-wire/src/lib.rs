//! OpenAI-compatible chat-completion wire types, with the vendor extras that real engines send
//! (`reasoning_content` from llama.cpp and older vLLM, `reasoning` from newer vLLM, llama.cpp's
//! `timings`, `completion_tokens_details`), and the server-sent-events frame parser.
//!
//! This crate owns the shape of bytes on the wire and nothing else: it never does I/O, never
//! reads a clock and never decides what a reply means. Callers stamp the arrival time of each
//! network chunk *before* handing its bytes to [`sse::SseParser`], so parsing cost never leaks
//! into latency.
//!
//! What reaches an operator's terminal (the escaper of text that came off the wire, the tables'
//! layout and width) is `bakeoff-term`'s: the crates that print depend on it, not on this one.

pub mod chat;
pub mod sse;

pub use chat::{
    ChatRequest, ChoiceLogprobs, ChunkChoice, ChunkDelta, CompletionTokensDetails, FunctionCall,
    FunctionCallDelta, Message, NonStreamChoice, NonStreamResponse, StreamChunk, StreamOptions,
    Timings, TokenLogprob, Tool, ToolCall, ToolCallDelta, ToolFunction, TopLogprob, Usage,
};
pub use sse::{SseEvent, SseParser};

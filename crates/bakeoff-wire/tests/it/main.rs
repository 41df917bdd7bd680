//! `bakeoff-wire`'s public API: the SSE parser fed a stream as the network may cut it (at every
//! byte, one byte at a time), and the chat shapes real engines send, read into the types.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod chat;
mod sse;

//! `bakeoff-testkit`'s helpers, checked with the project's own client: each scripted server
//! answers as the engine behaviour it copies, the scripted tokenizer's pieces rebuild their
//! text, and the screen checks fail where a terminal would be overrun.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod screen;
mod scripted;

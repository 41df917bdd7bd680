//! Everything bakeoff says to an endpoint over HTTP.
//!
//! - [`Client`]: one OpenAI-compatible endpoint. Streamed chat completions stamp each network
//!   chunk with a monotonic [`std::time::Instant`] the moment its bytes arrive, *before* any
//!   parsing; connect, first-byte, idle and total timeouts bound every wait; a generation request
//!   is never retried (a retry would hide a failure and distort latency).
//! - [`dialect`]: what is engine-specific (llama.cpp, vLLM, SGLang, generic) — endpoints, field
//!   names, request extras. An engine quirk lives there, never as an `if` in a suite.
//! - [`discovery`]: endpoint facts (engine and version, served ids, the context window with its
//!   source, tokenize support, chat template).
//!
//! - [`prometheus`]: an engine's `/metrics` text (what a load step differences, the gauges the
//!   load engine, the seat monitor and a campaign's idle probe read), one parser for them all.
//!
//! - [`tls`]: `https://` endpoints (rustls, the system's roots, `--ca-cert`, `--insecure`).
//!
//! API keys travel only in the `Authorization` header; [`ApiKey`] cannot be printed or
//! serialized, so a key never reaches an artifact or a log.

pub mod adapter;
pub mod dialect;
pub mod discovery;
mod error;
mod h1;
mod http;
pub mod preflight;
pub mod prometheus;
mod reply;
pub mod tls;
pub mod tokenize;
pub mod tool_probe;
mod url_util;

pub use error::{RequestError, seconds};
pub use http::{ApiKey, Client, ClientBuildError, ClientOptions, Method, Timeouts};
pub use reply::{ChunkStamp, Exchange, Reply};
pub use url_util::{EndpointUrl, UrlError};

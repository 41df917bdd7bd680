//! Seats — named serving slots — and their backends. Today this crate holds the embedded
//! default: provisioning of the pinned llama.cpp build and test model (the project's own
//! `scripts/provision.sh`, compiled in so the binary works from any directory), and a local
//! `llama-server` process on a free loopback port that is always stopped when its handle drops.
//!
//! It must never stop or start anything it did not start itself without the operator's say.

pub mod local;
pub mod provision;

pub use local::{LlamaServer, LlamaServerSpec, SeatError};
pub use provision::{LocalEngine, cache_dir, provision};

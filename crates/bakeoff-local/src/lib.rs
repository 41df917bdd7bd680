//! The embedded default: provision the pinned llama.cpp build and the test model into bakeoff's
//! cache (`provision.sh` in this crate, embedded; `scripts/provision.sh` runs it), and run a local
//! `llama-server` that is ready when a real completion succeeds. The README's main job uses it with
//! no fleet file; the tests use it as their real engine. It knows nothing of seats or suites, so a
//! crate's tests can start the real engine without pulling either in. It must never leave a server
//! behind (the handle kills it on drop) nor bind anything but loopback.

pub mod embedded;
mod provision;
mod server;

pub use provision::{LocalEngine, cache_dir, provision};
pub use server::{LlamaServer, LlamaServerSpec, LocalError};

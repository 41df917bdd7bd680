//! Model download caches on disk: the Hugging Face hub layout (`HF_HOME/hub/models--ORG--NAME`,
//! also where newer llama.cpp `-hf` downloads land) and llama.cpp's own `LLAMA_CACHE`. It owns
//! scanning them (snapshots, sizes on disk, `.incomplete` blobs and partial files), naming who
//! holds a download lock (`/proc/locks` plus an `flock` probe), and the audit verdict with a fix
//! per problem.
//!
//! This crate only reads and probes: it never deletes, kills or downloads anything — the fixes
//! are words for the operator. The probe takes a lock for an instant only when nobody holds it.

pub mod audit;
pub mod error;
pub mod hub;
pub mod llamacpp;
pub mod locks;
pub mod redact;
pub mod render;
pub mod usage;

pub use audit::{AuditOptions, CacheAudit, SCHEMA_VERSION, audit_paths};
pub use error::CacheError;
pub use usage::{HeldLock, held_locks, tree_bytes};

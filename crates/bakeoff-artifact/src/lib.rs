//! The vocabulary, a leaf. The artifacts bakeoff writes — `<slug>.bakeoff.json` and
//! `<slug>.failure.json` — are its public interface. This crate owns their types (schema
//! version 1) and the generated JSON Schema checked in at `schemas/artifact.v1.schema.json`; the
//! words every other crate uses about them: the one [`EngineKind`], [`TemplateFingerprint`],
//! [`FailureClass`] and the one failure table ([`failure_table`]: seat and endpoint classes,
//! each with its signatures, source and remediation), the instrument-flag codes ([`FlagCode`]),
//! the verdict and retraction records ([`evidence`]); the JSONL journal that records each item
//! as it finishes; and the one versioned reader ([`read_versioned`]) and writers
//! ([`write_atomic`], [`write_new`]) of every JSON file bakeoff writes.
//!
//! It depends on serde, schemars and the wire/stats types it serializes, never on text, model,
//! client or tokenizers, so anything may read what bakeoff wrote.
//!
//! It must never do network I/O or print, and a change to any type here is a change to a public
//! format: bump [`SCHEMA_VERSION`] when a change is not purely additive, and regenerate the
//! schema (`BAKEOFF_UPDATE_SCHEMA=1 cargo test -p bakeoff-artifact`).

pub mod adapter;
pub mod campaign;
pub mod conditions;
pub mod damage;
pub mod details;
pub mod evidence;
pub mod facts;
pub mod failure;
pub mod failure_table;
pub mod gpu_telemetry;
pub mod item;
pub mod load;
pub mod load_sessions;
pub mod load_shapes;
pub mod monitor;
pub mod page_cache;
pub mod run_record;
mod schema;
pub mod seat;
pub mod slug;
pub mod store;
pub mod types;
pub mod versioned;

pub use adapter::*;
pub use conditions::*;
pub use damage::*;
pub use details::*;
pub use facts::*;
pub use failure::*;
pub use gpu_telemetry::*;
pub use item::*;
pub use load::*;
pub use load_sessions::*;
pub use load_shapes::*;
pub use page_cache::*;
pub use run_record::RunRecord;
pub use schema::json_schema;
pub use seat::*;
pub use store::{
    Journal, RunFiles, StoreError, artifact_path, journal_of, read_artifact, run_id_now,
    write_atomic, write_new,
};
pub use types::*;
pub use versioned::{Versioned, read_versioned};

/// Version of the artifact format. Readers refuse versions they do not know.
pub const SCHEMA_VERSION: u32 = 1;

//! The artifacts bakeoff writes — `<slug>.bakeoff.json` and `<slug>.failure.json` — are its
//! public interface. This crate owns their types (schema version 1), the generated JSON Schema
//! that is checked in at `schemas/artifact.v1.schema.json`, the JSONL journal that records each
//! item as it finishes, and the atomic write of the final file.
//!
//! It must never do network I/O or print, and a change to any type here is a change to a public
//! format: bump [`SCHEMA_VERSION`] when a change is not purely additive, and regenerate the
//! schema (`BAKEOFF_UPDATE_SCHEMA=1 cargo test -p bakeoff-artifact`).

pub mod facts;
pub mod failure;
pub mod item;
pub mod load;
pub mod seat;
pub mod slug;
pub mod store;
pub mod types;

pub use facts::*;
pub use failure::*;
pub use item::*;
pub use load::*;
pub use seat::*;
pub use store::{
    Journal, RunFiles, StoreError, artifact_path, journal_of, read_artifact, run_id_now,
    write_atomic, write_new,
};
pub use types::*;

/// Version of the artifact format. Readers refuse versions they do not know.
pub const SCHEMA_VERSION: u32 = 1;

/// The JSON Schema of [`Artifact`], as checked in.
pub fn json_schema() -> serde_json::Value {
    serde_json::to_value(schemars::schema_for!(Artifact)).unwrap_or(serde_json::Value::Null)
}

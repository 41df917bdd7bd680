//! The artifact's JSON Schema, generated from its types.

use crate::details;
use crate::types::Artifact;

/// The JSON Schema of [`Artifact`], as checked in, with each suite's details shape added to its
/// definitions after the artifact's own (`details`).
pub fn json_schema() -> serde_json::Value {
    let mut schema =
        serde_json::to_value(schemars::schema_for!(Artifact)).unwrap_or(serde_json::Value::Null);
    let mut generator = schemars::SchemaGenerator::default();
    details::define_details(&mut generator);
    if let Some(defs) = schema.get_mut("$defs").and_then(|d| d.as_object_mut()) {
        for (name, def) in generator.definitions() {
            if !defs.contains_key(name) {
                defs.insert(name.clone(), def.clone());
            }
        }
    }
    schema
}

//! The checked-in JSON Schema must match the types. To regenerate after a deliberate change:
//! `BAKEOFF_UPDATE_SCHEMA=1 cargo test -p bakeoff-artifact --test it schema::`.

use std::path::PathBuf;

fn schema_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../schemas/artifact.v1.schema.json")
}

#[test]
fn checked_in_schema_matches_the_types() {
    let generated = serde_json::to_string_pretty(&bakeoff_artifact::json_schema()).unwrap() + "\n";
    let path = schema_path();
    if std::env::var_os("BAKEOFF_UPDATE_SCHEMA").is_some() {
        std::fs::write(&path, &generated).unwrap();
    }
    let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        on_disk == generated,
        "schemas/artifact.v1.schema.json is out of date with the artifact types; \
         regenerate with BAKEOFF_UPDATE_SCHEMA=1 cargo test -p bakeoff-artifact --test it schema::"
    );
}

#[test]
fn schema_compiles_as_a_validator() {
    let schema = bakeoff_artifact::json_schema();
    assert!(jsonschema::validator_for(&schema).is_ok());
}

use super::*;

#[test]
fn checked_in_schema_matches_the_types() {
    let generated = serde_json::to_string_pretty(&json_schema()).unwrap() + "\n";
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../schemas/cache-audit.v1.schema.json");
    if std::env::var_os("BAKEOFF_UPDATE_SCHEMA").is_some() {
        std::fs::write(&path, &generated).unwrap();
    }
    let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        on_disk == generated,
        "schemas/cache-audit.v1.schema.json is out of date; regenerate with \
         BAKEOFF_UPDATE_SCHEMA=1 cargo test -p bakeoff-cache --lib schema"
    );
}

/// An empty cache is a cache with no repositories: a fresh HF_HOME's empty `hub/`, and an
/// empty llama.cpp cache given beside a full one.
#[test]
fn an_empty_cache_is_a_cache_with_no_repositories() {
    let dir = tempfile::tempdir().unwrap();
    let hub = dir.path().join("hub");
    std::fs::create_dir(&hub).unwrap();
    let a = audit_paths(std::slice::from_ref(&hub), &AuditOptions::default()).unwrap();
    assert_eq!(a.caches.len(), 1);
    let full = dir.path().join("full");
    std::fs::create_dir(&full).unwrap();
    std::fs::write(full.join("m.gguf"), b"GGUF").unwrap();
    let empty = dir.path().join("llama.cpp");
    std::fs::create_dir(&empty).unwrap();
    let a = audit_paths(&[full, empty], &AuditOptions::default()).unwrap();
    assert_eq!(a.caches.len(), 2);
}

#[test]
fn a_path_that_is_no_cache_is_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "x").unwrap();
    let err = audit_paths(&[dir.path().to_path_buf()], &AuditOptions::default())
        .unwrap_err()
        .to_string();
    assert!(err.contains(&dir.path().display().to_string()), "{err}");
    assert!(err.contains("not a model cache"), "{err}");
    let gone = dir.path().join("nope");
    let err = audit_paths(std::slice::from_ref(&gone), &AuditOptions::default())
        .unwrap_err()
        .to_string();
    assert!(err.contains("does not exist"), "{err}");
}

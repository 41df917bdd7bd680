//! What the model tests share.

use std::path::PathBuf;

/// `crates/bakeoff-model/tests/fixtures` (configs, checkpoints, logs; sources in its
/// README.md).
pub fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// `$BAKEOFF_CACHE/models/…`, else `~/.cache/bakeoff/models/…` (scripts/provision.sh).
pub fn real_model() -> PathBuf {
    let cache = std::env::var_os("BAKEOFF_CACHE")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/bakeoff")))
        .unwrap();
    let path = cache.join("models/gemma-3-270m-q4_k_m.gguf");
    // A skipped real-part test is a test that measured nothing: fail with the fix instead.
    assert!(
        path.is_file(),
        "the real test model {} is not provisioned: run scripts/provision.sh",
        path.display()
    );
    path
}

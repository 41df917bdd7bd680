//! The pinned parts' places in a cache, and provisioning as a no-op when they are there.

use std::path::Path;

use bakeoff_local::embedded::{self, Embedded};
use bakeoff_local::{LocalEngine, provision};

/// A cache laid out as the script leaves it: the build's binaries, its `BUILD_OK`, the model.
fn provisioned(cache: &Path) -> LocalEngine {
    let e = LocalEngine::in_cache(cache);
    for f in [&e.llama_server, &e.llama_bench, &e.model] {
        std::fs::create_dir_all(f.parent().unwrap()).unwrap();
        std::fs::write(f, "stand-in").unwrap();
    }
    std::fs::write(
        e.llama_server
            .parent()
            .unwrap()
            .parent()
            .unwrap()
            .join("BUILD_OK"),
        "",
    )
    .unwrap();
    e
}

#[test]
fn the_pinned_build_and_model_have_fixed_places_in_the_cache() {
    let e = LocalEngine::in_cache(Path::new("/c"));
    assert_eq!(e.build, "b11434");
    assert_eq!(
        e.llama_server,
        Path::new("/c/llama.cpp-b11434/bin/llama-server")
    );
    assert_eq!(
        e.llama_bench,
        Path::new("/c/llama.cpp-b11434/bin/llama-bench")
    );
    assert_eq!(e.model, Path::new("/c/models/gemma-3-270m-q4_k_m.gguf"));
    assert_eq!(embedded::ALIAS, "gemma-3-270m-q4_k_m");
}

#[test]
fn a_cache_counts_as_provisioned_only_with_a_finished_build_and_the_model() {
    let dir = tempfile::tempdir().unwrap();
    assert!(!LocalEngine::in_cache(dir.path()).is_present());
    let e = provisioned(dir.path());
    assert!(e.is_present());
    // A build interrupted before its marker was written is not a build.
    std::fs::remove_file(dir.path().join("llama.cpp-b11434/BUILD_OK")).unwrap();
    assert!(!e.is_present());
    let e = provisioned(dir.path());
    std::fs::remove_file(&e.model).unwrap();
    assert!(!e.is_present());
}

#[tokio::test]
async fn provisioning_a_provisioned_cache_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let e = provisioned(dir.path());
    let before = std::fs::read_dir(dir.path()).unwrap().count();
    assert_eq!(provision(dir.path()).await.unwrap(), e);
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), before);
    assert_eq!(std::fs::read_to_string(&e.model).unwrap(), "stand-in");
}

#[tokio::test]
async fn an_endpoint_given_starts_nothing() {
    let url = bakeoff_client::EndpointUrl::parse("http://127.0.0.1:9").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let local = Embedded {
        ctx: 4096,
        parallel: 2,
    };
    let started = embedded::start_unless(Some(&url), dir.path(), local)
        .await
        .unwrap();
    assert!(started.is_none());
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    embedded::stop(started).await;
}

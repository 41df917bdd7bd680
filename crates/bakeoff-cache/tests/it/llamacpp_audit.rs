//! llama.cpp's own cache: finished files with their etag sidecar, and a partial download.

use std::path::PathBuf;
use std::time::Duration;

use bakeoff_cache::audit::{Activity, Layout, Severity};

use crate::common::{audit, set_age};

fn llama_cache() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let done = dir
        .path()
        .join("ggml-org_gemma-3-270m-GGUF_gemma-3-270m-Q8_0.gguf");
    std::fs::write(&done, vec![3u8; 8192]).unwrap();
    std::fs::write(
        dir.path()
            .join("ggml-org_gemma-3-270m-GGUF_gemma-3-270m-Q8_0.gguf.etag"),
        "\"abc\"",
    )
    .unwrap();
    std::fs::write(
        dir.path()
            .join("manifest=ggml-org=gemma-3-270m-GGUF=latest.json"),
        "{}",
    )
    .unwrap();
    (dir, done)
}

#[test]
fn finished_files_alone_are_ok() {
    let (dir, done) = llama_cache();
    let report = audit(&[dir.path().to_path_buf()]);
    assert!(report.ok, "{:#?}", report.findings);
    let cache = &report.caches[0];
    assert_eq!(cache.layout, Layout::LlamaCpp);
    let llama = cache.llama.as_ref().unwrap();
    assert_eq!(llama.files[0].path, done);
    assert!(llama.files[0].has_etag);
    assert!(llama.files[0].size_on_disk >= 8192);
    assert_eq!(llama.manifests.len(), 1);
}

#[test]
fn a_partial_download_nobody_writes_is_a_problem_with_size_and_age() {
    let (dir, _) = llama_cache();
    let partial = dir
        .path()
        .join("unsloth_Qwen3-8B-GGUF_Qwen3-8B-Q4_K_M.gguf.downloadInProgress");
    std::fs::write(&partial, vec![0u8; 5000]).unwrap();
    set_age(&partial, Duration::from_secs(3600));
    let report = audit(&[dir.path().to_path_buf()]);
    assert!(!report.ok);
    let d = &report.downloads[0];
    assert_eq!(d.path, partial);
    assert_eq!(d.bytes, 5000);
    assert!(d.age_secs >= 3599);
    assert_eq!(d.activity, Activity::Interrupted);
    let f = report
        .findings
        .iter()
        .find(|f| f.code == "partial_download")
        .unwrap();
    assert_eq!(f.severity, Severity::Problem);
    assert!(
        f.fix
            .as_deref()
            .unwrap()
            .contains(&format!("rm '{}'", partial.display()))
    );
}

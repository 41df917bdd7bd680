use std::path::PathBuf;

use super::*;
use crate::audit::{CacheReport, DownloadReport, Layout, LockReport};
use crate::hub::{HubRepo, MissingTarget, Snapshot};
use crate::llamacpp::{LlamaCache, LlamaFile};

fn finding(code: &str, severity: Severity, message: &str, fix: Option<&str>) -> CacheFinding {
    CacheFinding {
        code: code.into(),
        severity,
        path: PathBuf::from("/cache/hub/models--org--model/blobs/abc.incomplete"),
        message: message.into(),
        fix: fix.map(Into::into),
        pids: vec![],
    }
}

/// A hub cache with one complete and one broken repository, a llama.cpp cache, a stalled
/// download under a held lock, a stale lock, and a problem and a note.
fn troubled() -> CacheAudit {
    let hub = CacheReport {
        path: PathBuf::from("/cache"),
        layout: Layout::HfHub,
        hub_dir: Some(PathBuf::from("/cache/hub")),
        repos: vec![
            HubRepo {
                kind: "model".into(),
                id: "org/model".into(),
                path: PathBuf::from("/cache/hub/models--org--model"),
                size_on_disk: 5 * 1024 * 1024 * 1024 + 300 * 1024 * 1024,
                snapshots: vec![Snapshot {
                    commit: "0123456789abcdef0123456789abcdef01234567".into(),
                    refs: vec!["main".into(), "pr/1".into()],
                    files: vec!["config.json".into(), "model.safetensors".into()],
                    missing: vec![MissingTarget {
                        file: "model.safetensors".into(),
                        target: PathBuf::from("../../blobs/abc"),
                    }],
                }],
                incomplete_blobs: vec![],
                complete: false,
            },
            HubRepo {
                kind: "dataset".into(),
                // Untrusted: a directory name with an escape sequence in it.
                id: "org/\u{1b}[31mred".into(),
                path: PathBuf::from("/cache/hub/datasets--org--red"),
                size_on_disk: 512,
                snapshots: vec![],
                incomplete_blobs: vec![],
                complete: true,
            },
        ],
        llama: None,
    };
    let llama = CacheReport {
        path: PathBuf::from("/llama"),
        layout: Layout::LlamaCpp,
        hub_dir: None,
        repos: vec![],
        llama: Some(LlamaCache {
            files: vec![LlamaFile {
                path: PathBuf::from("/llama/org_model_q4_k_m.gguf"),
                size_on_disk: 4_200_000_000,
                has_etag: false,
            }],
            partials: vec![],
            manifests: vec![],
        }),
    };
    CacheAudit {
        schema_version: crate::SCHEMA_VERSION,
        sample_interval_ms: 1500,
        caches: vec![hub, llama],
        downloads: vec![DownloadReport {
            path: PathBuf::from("/cache/hub/models--org--model/blobs/abc.incomplete"),
            repo: Some("org/model".into()),
            bytes: 1_234_567_890,
            age_secs: 5400,
            grew_bytes: 0,
            lock: Some(PathBuf::from(
                "/cache/hub/.locks/models--org--model/abc.lock",
            )),
            holders: vec![LockHolder {
                pid: 4242,
                cmdline: "hf download org/model".into(),
            }],
            activity: Activity::Stalled,
        }],
        locks: vec![
            LockReport {
                path: PathBuf::from("/cache/hub/.locks/models--org--model/abc.lock"),
                repo: Some("org/model".into()),
                blob: Some(PathBuf::from("/cache/hub/models--org--model/blobs/abc")),
                state: LockState::Held {
                    holders: vec![LockHolder {
                        pid: 4242,
                        cmdline: "hf download org/model".into(),
                    }],
                },
                progressing: false,
            },
            LockReport {
                path: PathBuf::from("/cache/hub/.locks/models--org--model/def.lock"),
                repo: Some("org/model".into()),
                blob: None,
                state: LockState::Stale,
                progressing: false,
            },
        ],
        findings: vec![
            finding(
                "stalled_download",
                Severity::Problem,
                "org/model: 1.15 GiB written, no growth in 1500 ms, held by pid 4242",
                Some("kill 4242, then run the download again"),
            ),
            finding("stale_lock", Severity::Note, "a lock nobody holds", None),
        ],
        ok: false,
    }
}

#[test]
fn troubled_cache() {
    insta::assert_snapshot!(lines(&troubled(), 120).join("\n"));
}

/// Below 80 columns the tables fold; the verdict and findings do not change.
#[test]
fn troubled_cache_narrow() {
    insta::assert_snapshot!(lines(&troubled(), 60).join("\n"));
}

#[test]
fn empty_cache_is_ok() {
    let audit = CacheAudit {
        schema_version: crate::SCHEMA_VERSION,
        sample_interval_ms: 1500,
        caches: vec![CacheReport {
            path: PathBuf::from("/empty"),
            layout: Layout::HfHub,
            hub_dir: Some(PathBuf::from("/empty/hub")),
            repos: vec![],
            llama: None,
        }],
        downloads: vec![],
        locks: vec![],
        findings: vec![],
        ok: true,
    };
    insta::assert_snapshot!(lines(&audit, 120).join("\n"));
}

#[test]
fn sizes_and_ages() {
    assert_eq!(human(1023), "1023 B");
    assert_eq!(human(1536), "1.50 KiB");
    assert_eq!(age(119), "119 s");
    assert_eq!(age(7199), "119 min");
    assert_eq!(age(7200), "2.0 h");
    assert_eq!(age(172_800), "2.0 d");
}

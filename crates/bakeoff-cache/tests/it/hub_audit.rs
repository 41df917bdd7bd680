//! The audit of a Hugging Face hub cache: complete, interrupted, damaged, and what each PATH
//! form (HF_HOME, hub/, one repo) resolves to.

use std::time::Duration;

use bakeoff_cache::audit::{Activity, Severity};

use crate::common::{COMMIT, HfHome, audit, fake_sha};

#[test]
fn a_complete_repo_is_ok_with_its_snapshot_refs_and_size() {
    let home = HfHome::new();
    home.add_repo(
        "google/gemma-3-270m",
        &[
            ("config.json", b"{}"),
            ("model.safetensors", &vec![1u8; 1 << 20]),
        ],
    );
    let report = audit(&[home.home()]);
    assert!(report.ok, "{:#?}", report.findings);
    assert_eq!(report.schema_version, 1);
    let repo = &report.caches[0].repos[0];
    assert_eq!(repo.id, "google/gemma-3-270m");
    assert!(repo.complete);
    // Allocated bytes: the 1 MiB of weights once (the snapshot link is not followed), plus a
    // few directory blocks.
    assert!(repo.size_on_disk >= 1 << 20, "{}", repo.size_on_disk);
    assert!(
        repo.size_on_disk < (1 << 20) + (1 << 19),
        "{}",
        repo.size_on_disk
    );
    let snap = &repo.snapshots[0];
    assert_eq!(snap.commit, COMMIT);
    assert_eq!(snap.refs, vec!["main".to_string()]);
    assert_eq!(snap.files, vec!["config.json", "model.safetensors"]);
    assert!(report.findings.is_empty());
}

#[test]
fn hf_home_hub_dir_and_one_repo_dir_resolve_to_the_same_repo() {
    let home = HfHome::new();
    home.add_repo("org/a", &[("config.json", b"{}")]);
    home.add_repo("org/b", &[("config.json", b"{}")]);
    let ids = |paths: &[std::path::PathBuf]| -> Vec<String> {
        audit(paths).caches[0]
            .repos
            .iter()
            .map(|r| r.id.clone())
            .collect()
    };
    assert_eq!(ids(&[home.home()]), vec!["org/a", "org/b"]);
    assert_eq!(ids(&[home.hub()]), vec!["org/a", "org/b"]);
    assert_eq!(ids(&[home.repo_dir("org/b")]), vec!["org/b"]);
}

#[test]
fn an_incomplete_blob_nobody_writes_is_a_problem_naming_the_blob_with_size_and_age() {
    let home = HfHome::new();
    home.add_repo("org/model", &[("config.json", b"{}")]);
    let sha = fake_sha("org/model", 9);
    let (blob, _lock) = home.add_incomplete("org/model", &sha, 4096, Duration::from_secs(7200));
    let report = audit(&[home.home()]);
    assert!(!report.ok);
    let d = &report.downloads[0];
    assert_eq!(d.path, blob);
    assert_eq!(d.bytes, 4096);
    assert!(d.age_secs >= 7199, "{}", d.age_secs);
    assert_eq!(d.activity, Activity::Interrupted);
    assert!(!report.caches[0].repos[0].complete);
    let f = report
        .findings
        .iter()
        .find(|f| f.code == "incomplete_blob")
        .unwrap();
    assert_eq!(f.severity, Severity::Problem);
    assert!(f.message.contains("4096 bytes"), "{}", f.message);
    let fix = f.fix.as_deref().unwrap();
    assert!(fix.contains(&format!("rm '{}'", blob.display())), "{fix}");
    assert!(fix.contains("hf download org/model"), "{fix}");
    // Its lock file is a leftover nobody holds: a note, not a second problem.
    let stale = report
        .findings
        .iter()
        .find(|f| f.code == "stale_lock")
        .unwrap();
    assert_eq!(stale.severity, Severity::Note);
}

#[test]
fn a_snapshot_link_to_a_missing_blob_makes_the_repo_incomplete() {
    let home = HfHome::new();
    let blobs = home.add_repo(
        "org/model",
        &[
            ("config.json", b"{}"),
            ("weights/model.safetensors", b"abc"),
        ],
    );
    std::fs::remove_file(&blobs[1]).unwrap();
    let report = audit(&[home.repo_dir("org/model")]);
    assert!(!report.ok);
    let repo = &report.caches[0].repos[0];
    assert!(!repo.complete);
    assert_eq!(repo.snapshots[0].missing.len(), 1);
    assert_eq!(
        repo.snapshots[0].missing[0].file,
        "weights/model.safetensors"
    );
    let f = report
        .findings
        .iter()
        .find(|f| f.code == "missing_blob")
        .unwrap();
    assert_eq!(f.severity, Severity::Problem);
    assert!(f.fix.as_deref().unwrap().contains("hf download org/model"));
}

//! `bakeoff audit cache` as a process, on caches built in the real layouts: a complete hub
//! repository (exit 0), a blob lock held by a real `flock(1)` whose blob does not grow (exit 1,
//! the pid to end named), `--json` checked against its schema, a llama.cpp partial download,
//! and a PATH that is not there (exit 2).

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::util::{bakeoff, code, read_json, root, stdout};

const COMMIT: &str = "0123456789abcdef0123456789abcdef01234567";
const SHA: &str = "a1b2c3d4e5f60718a1b2c3d4e5f60718a1b2c3d4e5f60718a1b2c3d4e5f60718";

/// `HF_HOME` holding `hub/models--org--model`: one complete snapshot (`config.json` linked to
/// its blob, `refs/main`).
fn hf_home() -> tempfile::TempDir {
    let home = tempfile::tempdir().unwrap();
    let repo = home.path().join("hub/models--org--model");
    std::fs::create_dir_all(repo.join("blobs")).unwrap();
    std::fs::create_dir_all(repo.join("refs")).unwrap();
    std::fs::create_dir_all(repo.join("snapshots").join(COMMIT)).unwrap();
    std::fs::write(repo.join("refs/main"), COMMIT).unwrap();
    std::fs::write(repo.join("blobs/0f0f"), b"{}").unwrap();
    std::os::unix::fs::symlink(
        "../../blobs/0f0f",
        repo.join("snapshots").join(COMMIT).join("config.json"),
    )
    .unwrap();
    home
}

/// Adds `blobs/SHA.incomplete` and its lock; returns the lock.
fn add_incomplete(home: &Path) -> PathBuf {
    let blob = home.join(format!("hub/models--org--model/blobs/{SHA}.incomplete"));
    std::fs::write(&blob, vec![0u8; 3000]).unwrap();
    let locks = home.join("hub/.locks/models--org--model");
    std::fs::create_dir_all(&locks).unwrap();
    let lock = locks.join(format!("{SHA}.lock"));
    std::fs::write(&lock, b"").unwrap();
    lock
}

/// A real `flock LOCK sleep 30` in its own process group; the group is killed on drop.
struct Holder(Child);

impl Holder {
    fn start(lock: &Path) -> Self {
        let child = Command::new("flock")
            .arg(lock)
            .args(["sleep", "30"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .unwrap();
        // A readiness wait (at most 10 s), not a timed assertion.
        let deadline = Instant::now() + Duration::from_secs(10);
        while bakeoff_cache::locks::probe_free(lock).unwrap() {
            assert!(Instant::now() < deadline, "flock never took {lock:?}");
            std::thread::sleep(Duration::from_millis(20));
        }
        Self(child)
    }
}

impl Drop for Holder {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-KILL", "--", &format!("-{}", self.0.id())])
            .status();
        let _ = self.0.wait();
    }
}

fn json_of(args: &[&str]) -> (i32, Value) {
    let out = bakeoff(args);
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let schema = read_json(&root().join("schemas/cache-audit.v1.schema.json"));
    let validator = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = validator.iter_errors(&v).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:#?}");
    (code(&out), v)
}

#[test]
fn a_complete_cache_exits_0_with_its_repository_table() {
    let home = hf_home();
    let out = bakeoff(&["audit", "cache", home.path().to_str().unwrap()]);
    let text = stdout(&out);
    assert_eq!(code(&out), 0, "{text}");
    assert!(text.contains("model org/model:"), "{text}");
    assert!(text.contains(", complete"), "{text}");
    assert!(text.contains(COMMIT), "{text}");
    assert!(text.contains("ok: no incomplete download"), "{text}");
}

#[test]
fn a_held_lock_on_a_stalled_blob_exits_1_naming_the_pid_to_end() {
    let home = hf_home();
    let lock = add_incomplete(home.path());
    let holder = Holder::start(&lock);
    let pid = holder.0.id();
    let out = bakeoff(&["audit", "cache", home.path().to_str().unwrap()]);
    let text = stdout(&out);
    assert_eq!(code(&out), 1, "{text}");
    assert!(text.contains("STALLED"), "{text}");
    assert!(text.contains("HELD, not progressing"), "{text}");
    assert!(text.contains(&format!("kill {pid}")), "{text}");
    assert!(text.contains("flock"), "{text}");

    let (rc, v) = json_of(&["audit", "cache", home.path().to_str().unwrap(), "--json"]);
    assert_eq!(rc, 1);
    assert_eq!(v["schema_version"], 1);
    assert_eq!(v["ok"], false);
    assert_eq!(v["downloads"][0]["activity"], "stalled");
    assert_eq!(v["locks"][0]["state"], "held");
    assert_eq!(v["locks"][0]["holders"][0]["pid"], pid);
    let f = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["code"] == "stalled_download")
        .unwrap();
    assert_eq!(f["severity"], "problem");
    assert_eq!(f["pids"][0], pid);
}

#[test]
fn json_of_an_interrupted_blob_carries_the_verdict() {
    let home = hf_home();
    add_incomplete(home.path());
    let (rc, v) = json_of(&[
        "audit",
        "cache",
        home.path().join("hub").to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(rc, 1);
    assert_eq!(v["caches"][0]["layout"], "hf_hub");
    assert_eq!(v["caches"][0]["repos"][0]["complete"], false);
    assert_eq!(v["downloads"][0]["activity"], "interrupted");
    assert_eq!(v["downloads"][0]["bytes"], 3000);
    assert_eq!(v["locks"][0]["state"], "stale");
}

#[test]
fn a_llamacpp_partial_download_exits_1() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("org_repo_model-Q4_K_M.gguf"), b"GGUF").unwrap();
    let partial = dir.path().join("org_repo_big-Q8_0.gguf.downloadInProgress");
    std::fs::write(&partial, vec![0u8; 2048]).unwrap();
    let out = bakeoff(&["audit", "cache", dir.path().to_str().unwrap()]);
    let text = stdout(&out);
    assert_eq!(code(&out), 1, "{text}");
    assert!(text.contains("(llama.cpp)"), "{text}");
    assert!(text.contains("[partial_download]"), "{text}");
    assert!(
        text.contains(&format!("rm '{}'", partial.display())),
        "{text}"
    );
}

#[test]
fn a_path_that_is_not_there_is_a_usage_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let gone = dir.path().join("huggingface");
    let out = bakeoff(&["audit", "cache", gone.to_str().unwrap()]);
    assert_eq!(code(&out), 2);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains(&gone.display().to_string()), "{err}");
    assert!(err.contains("~/.cache/huggingface"), "{err}");
}

//! A Hugging Face hub cache and a llama.cpp cache built in a temporary directory in their real
//! layouts, and a real `flock(1)` process that holds a lock until dropped.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant, SystemTime};

use bakeoff_cache::locks::probe_free;
use bakeoff_cache::{AuditOptions, CacheAudit, audit_paths};

/// A snapshot commit (40 hex, as the hub writes).
pub const COMMIT: &str = "0123456789abcdef0123456789abcdef01234567";

/// `HF_HOME` with `hub/` under a temporary directory.
pub struct HfHome {
    pub dir: tempfile::TempDir,
}

impl HfHome {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("hub")).unwrap();
        Self { dir }
    }

    pub fn home(&self) -> PathBuf {
        self.dir.path().to_path_buf()
    }

    pub fn hub(&self) -> PathBuf {
        self.dir.path().join("hub")
    }

    /// `hub/models--ORG--NAME` for `ORG/NAME`.
    pub fn repo_dir(&self, id: &str) -> PathBuf {
        self.hub()
            .join(format!("models--{}", id.replace('/', "--")))
    }

    /// A complete repository: one blob per file (named by a fake sha256), snapshot symlinks
    /// `../../blobs/<sha>`, and `refs/main` holding [`COMMIT`]. Returns the blob paths.
    pub fn add_repo(&self, id: &str, files: &[(&str, &[u8])]) -> Vec<PathBuf> {
        let repo = self.repo_dir(id);
        let snap = repo.join("snapshots").join(COMMIT);
        std::fs::create_dir_all(repo.join("blobs")).unwrap();
        std::fs::create_dir_all(repo.join("refs")).unwrap();
        std::fs::write(repo.join("refs/main"), COMMIT).unwrap();
        let mut blobs = Vec::new();
        for (i, (name, bytes)) in files.iter().enumerate() {
            let sha = fake_sha(id, i);
            let blob = repo.join("blobs").join(&sha);
            std::fs::write(&blob, bytes).unwrap();
            let link = snap.join(name);
            std::fs::create_dir_all(link.parent().unwrap()).unwrap();
            let depth = name.matches('/').count();
            let target = format!("{}../../blobs/{sha}", "../".repeat(depth));
            std::os::unix::fs::symlink(target, &link).unwrap();
            blobs.push(blob);
        }
        blobs
    }

    /// A blob still downloading: `blobs/<sha>.incomplete` with `bytes` written, last written
    /// `age` ago, and its lock file `.locks/models--ORG--NAME/<sha>.lock`. Returns (blob, lock).
    pub fn add_incomplete(
        &self,
        id: &str,
        sha: &str,
        bytes: usize,
        age: Duration,
    ) -> (PathBuf, PathBuf) {
        let repo = self.repo_dir(id);
        std::fs::create_dir_all(repo.join("blobs")).unwrap();
        let blob = repo.join("blobs").join(format!("{sha}.incomplete"));
        std::fs::write(&blob, vec![7u8; bytes]).unwrap();
        set_age(&blob, age);
        let locks = self.hub().join(".locks").join(repo.file_name().unwrap());
        std::fs::create_dir_all(&locks).unwrap();
        let lock = locks.join(format!("{sha}.lock"));
        std::fs::write(&lock, b"").unwrap();
        (blob, lock)
    }
}

/// A fake 64-hex blob name, unique per repo and file.
pub fn fake_sha(id: &str, i: usize) -> String {
    let seed = id.bytes().fold(i as u64 + 1, |h, b| {
        h.wrapping_mul(31).wrapping_add(u64::from(b))
    });
    format!("{seed:016x}").repeat(4)
}

/// Sets a file's mtime `age` into the past.
pub fn set_age(path: &Path, age: Duration) {
    let f = std::fs::OpenOptions::new().append(true).open(path).unwrap();
    f.set_modified(SystemTime::now() - age).unwrap();
}

/// The audit with a short sample interval.
pub fn audit(paths: &[PathBuf]) -> CacheAudit {
    audit_paths(
        paths,
        &AuditOptions {
            sample_interval: Duration::from_millis(200),
        },
    )
    .unwrap()
}

/// Polls `cond` every 20 ms for at most 10 s: a readiness wait, not a timed assertion.
pub fn wait_until(what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !cond() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A real `flock LOCK CMD…` process in its own process group, holding the lock until dropped.
pub struct Holder {
    pub child: Child,
    pub lock: PathBuf,
}

impl Holder {
    /// `flock LOCK sleep 30`.
    pub fn start(lock: &Path) -> Self {
        Self::start_with(lock, &["sleep", "30"])
    }

    /// `flock LOCK ARGS…`, returned once the lock is held.
    pub fn start_with(lock: &Path, args: &[&str]) -> Self {
        let child = Command::new("flock")
            .arg(lock)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .unwrap();
        wait_until("flock to take the lock", || !probe_free(lock).unwrap());
        Self {
            child,
            lock: lock.to_path_buf(),
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Kills only the `flock` process: its child keeps the inherited descriptor and the lock
    /// (the "survived a partial kill" shape of docs/field-cases.md B6).
    pub fn kill_leader_only(&mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }

    /// Kills the whole group and waits until the lock is free.
    pub fn kill_all(&mut self) {
        let _ = Command::new("kill")
            .args(["-KILL", "--", &format!("-{}", self.child.id())])
            .status();
        let _ = self.child.wait();
        wait_until("the lock to be released", || {
            probe_free(&self.lock).unwrap_or(true)
        });
    }
}

impl Drop for Holder {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-KILL", "--", &format!("-{}", self.child.id())])
            .status();
        let _ = self.child.wait();
    }
}

//! The verdict of `bakeoff audit cache`: what every cache path holds, which downloads are
//! moving, which are stuck or interrupted, who holds each lock, and one fix per problem.
//!
//! A problem (exit 1): a blob or partial file nobody is writing (an interrupted download), one
//! whose lock or writer is alive but that did not grow over the sample interval (a stale pull
//! loop holding the lock — docs/field-cases.md B6: "the stall is the lock, not a rate limit"), a lock held
//! while nothing of its repository grows, and a snapshot file whose blob is missing. A note (no
//! exit 1): a download that grew (in progress), and a stale lock file — huggingface_hub's
//! `filelock` leaves its `.lock` files behind after every download, so a lock nobody holds is
//! a harmless leftover, listed with the `rm` that removes it.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::error::CacheError;
use crate::hub::{self, HubRepo, PartialFile};
use crate::llamacpp;
use crate::locks::{LockHolder, LockState, LockTable, lock_state};

mod report;

pub use report::{
    Activity, CacheAudit, CacheFinding, CacheReport, DownloadReport, Layout, LockReport,
    SCHEMA_VERSION, Severity, json_schema,
};

/// How the audit samples download progress.
#[derive(Debug, Clone, Copy)]
pub struct AuditOptions {
    /// Two size samples this far apart tell a growing download from a stuck one. Only waited
    /// when a partial file exists.
    pub sample_interval: Duration,
}

impl Default for AuditOptions {
    fn default() -> Self {
        Self {
            sample_interval: Duration::from_secs(1),
        }
    }
}

/// Where a PATH leads.
enum Target {
    Hub {
        hub: PathBuf,
        repos: Vec<PathBuf>,
        /// The `.locks/<name>` dirs to read: one repo's, or all of them.
        lock_dirs: Vec<String>,
    },
    Llama(PathBuf),
}

/// Resolves one PATH: `HF_HOME` (holding `hub/`), a hub dir, one `models--ORG--NAME` dir, or a
/// llama.cpp cache. A volume mounted at both paths (docs/field-cases.md B7) can be a hub and a llama.cpp
/// cache at once: both are read.
fn resolve(path: &Path) -> Result<Vec<Target>, CacheError> {
    let meta = std::fs::metadata(path).map_err(|_| CacheError::Missing {
        path: path.to_path_buf(),
    })?;
    if !meta.is_dir() {
        return Err(CacheError::NotACache {
            path: path.to_path_buf(),
        });
    }
    if let Err(source) = std::fs::read_dir(path) {
        return Err(CacheError::Unreadable {
            path: path.to_path_buf(),
            source,
        });
    }
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if hub::repo_id(&name).is_some() {
        let hub = path
            .parent()
            .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
        return Ok(vec![Target::Hub {
            hub,
            repos: vec![path.to_path_buf()],
            lock_dirs: vec![name],
        }]);
    }
    // An empty cache is a cache with no repositories, not "not a cache": a fresh HF_HOME's
    // `hub/` before the first download, an empty LLAMA_CACHE beside a full hub.
    let empty = std::fs::read_dir(path).is_ok_and(|mut d| d.next().is_none());
    let mut targets = Vec::new();
    let hub_dir = if path.join("hub").is_dir() {
        Some(path.join("hub"))
    } else if hub::is_hub_dir(path) || (empty && name == "hub") {
        Some(path.to_path_buf())
    } else {
        None
    };
    if let Some(hub) = hub_dir {
        let lock_dirs = std::fs::read_dir(hub.join(".locks"))
            .map(|entries| {
                entries
                    .flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        targets.push(Target::Hub {
            repos: hub::repo_dirs(&hub),
            hub,
            lock_dirs,
        });
    }
    if llamacpp::is_llama_cache(path) || (empty && name != "hub") {
        targets.push(Target::Llama(path.to_path_buf()));
    }
    if targets.is_empty() {
        return Err(CacheError::NotACache {
            path: path.to_path_buf(),
        });
    }
    Ok(targets)
}

/// A partial file being followed through the audit.
struct Partial {
    first: PartialFile,
    repo: Option<String>,
    lock: Option<PathBuf>,
    /// Repo id and hub download command for the fix.
    hub: bool,
}

/// Audits every PATH. Errors only on a PATH that is not a cache; everything found inside is a
/// finding.
pub fn audit_paths(paths: &[PathBuf], opts: &AuditOptions) -> Result<CacheAudit, CacheError> {
    let mut resolved = Vec::new();
    for path in paths {
        resolved.push((path.clone(), resolve(path)?));
    }
    let table = LockTable::read();
    let mut caches = Vec::new();
    let mut partials: Vec<Partial> = Vec::new();
    let mut locks = Vec::new();
    let mut findings = Vec::new();
    for (path, targets) in resolved {
        for target in targets {
            match target {
                Target::Hub {
                    hub,
                    repos,
                    lock_dirs,
                } => {
                    let repos: Vec<HubRepo> = repos.iter().map(|r| hub::scan_repo(r)).collect();
                    for repo in &repos {
                        missing_findings(repo, &mut findings);
                        let dir_name = dir_name(&repo.path);
                        for blob in &repo.incomplete_blobs {
                            let sha = blob
                                .path
                                .file_name()
                                .map(|n| n.to_string_lossy().into_owned())
                                .unwrap_or_default();
                            let sha = sha.trim_end_matches(hub::INCOMPLETE);
                            let lock = hub
                                .join(".locks")
                                .join(&dir_name)
                                .join(format!("{sha}.lock"));
                            partials.push(Partial {
                                first: blob.clone(),
                                repo: Some(repo.id.clone()),
                                lock: lock.exists().then_some(lock),
                                hub: true,
                            });
                        }
                    }
                    for name in &lock_dirs {
                        let repo = hub::repo_id(name).map(|(_, id)| id);
                        for lock in hub::repo_locks(&hub, name) {
                            locks.push(LockReport {
                                blob: hub::blob_of_lock(&hub, name, &lock),
                                state: lock_state(&lock, &table),
                                path: lock,
                                repo: repo.clone(),
                                progressing: false,
                            });
                        }
                    }
                    caches.push(CacheReport {
                        path: path.clone(),
                        layout: Layout::HfHub,
                        hub_dir: Some(hub),
                        repos,
                        llama: None,
                    });
                }
                Target::Llama(dir) => {
                    let llama = llamacpp::scan(&dir);
                    for p in &llama.partials {
                        partials.push(Partial {
                            first: p.clone(),
                            repo: None,
                            lock: None,
                            hub: false,
                        });
                    }
                    caches.push(CacheReport {
                        path: path.clone(),
                        layout: Layout::LlamaCpp,
                        hub_dir: None,
                        repos: Vec::new(),
                        llama: Some(llama),
                    });
                }
            }
        }
    }

    let downloads = sample_downloads(&partials, &locks, opts.sample_interval);
    for lock in &mut locks {
        lock.progressing = downloads.iter().any(|d| {
            d.activity == Activity::InProgress && lock.blob.as_deref() == Some(d.path.as_path())
        });
    }
    for (d, p) in downloads.iter().zip(&partials) {
        findings.push(download_finding(d, p.hub, opts.sample_interval));
    }
    for lock in &locks {
        if let Some(f) = lock_finding(lock, &downloads) {
            findings.push(f);
        }
    }
    let ok = findings.iter().all(|f| f.severity != Severity::Problem);
    Ok(CacheAudit {
        schema_version: SCHEMA_VERSION,
        sample_interval_ms: u64::try_from(opts.sample_interval.as_millis()).unwrap_or(u64::MAX),
        caches,
        downloads,
        locks,
        findings,
        ok,
    })
}

fn dir_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Size samples of every partial, `interval` apart, and who holds or writes each.
fn sample_downloads(
    partials: &[Partial],
    locks: &[LockReport],
    interval: Duration,
) -> Vec<DownloadReport> {
    if partials.is_empty() {
        return Vec::new();
    }
    let holders: Vec<Vec<LockHolder>> = partials
        .iter()
        .map(|p| {
            let mut pids: Vec<u32> = Vec::new();
            if let Some(lock) = &p.lock
                && let Some(LockReport {
                    state: LockState::Held { holders },
                    ..
                }) = locks.iter().find(|l| &l.path == lock)
            {
                pids.extend(holders.iter().map(|h| h.pid));
            }
            if let Ok(meta) = std::fs::metadata(&p.first.path) {
                pids.extend(
                    bakeoff_host::ProcRoot::system().pids_with_open(meta.dev(), meta.ino()),
                );
            }
            // The audit itself never has them open; but a test or a caller in this process
            // may, and naming ourselves as a stale loop to kill would be wrong.
            let me = std::process::id();
            pids.retain(|pid| *pid != me);
            pids.sort_unstable();
            pids.dedup();
            pids.into_iter()
                .map(|pid| LockHolder {
                    pid,
                    cmdline: crate::redact::cmdline_of(pid),
                })
                .collect()
        })
        .collect();
    let before: Vec<u64> = partials.iter().map(|p| size_now(&p.first.path)).collect();
    std::thread::sleep(interval);
    let after: Vec<u64> = partials.iter().map(|p| size_now(&p.first.path)).collect();
    partials
        .iter()
        .zip(holders)
        .zip(before.iter().zip(&after))
        .map(|((p, holders), (b, a))| {
            let grew_bytes = a.saturating_sub(*b);
            let lock_held = p.lock.as_ref().is_some_and(|lock| {
                locks
                    .iter()
                    .any(|l| &l.path == lock && matches!(l.state, LockState::Held { .. }))
            });
            let activity = if grew_bytes > 0 {
                Activity::InProgress
            } else if lock_held || !holders.is_empty() {
                Activity::Stalled
            } else {
                Activity::Interrupted
            };
            DownloadReport {
                path: p.first.path.clone(),
                repo: p.repo.clone(),
                bytes: std::fs::symlink_metadata(&p.first.path).map_or(p.first.bytes, |m| m.len()),
                age_secs: p.first.age_secs,
                grew_bytes,
                lock: p.lock.clone(),
                holders,
                activity,
            }
        })
        .collect()
}

/// The larger of apparent and allocated size: an appending download grows the first, a
/// preallocating one the second.
fn size_now(path: &Path) -> u64 {
    std::fs::symlink_metadata(path).map_or(0, |m| m.len().max(m.blocks().saturating_mul(512)))
}

fn missing_findings(repo: &HubRepo, findings: &mut Vec<CacheFinding>) {
    for snap in &repo.snapshots {
        for m in &snap.missing {
            let short: String = snap.commit.chars().take(12).collect();
            findings.push(CacheFinding {
                code: "missing_blob".into(),
                severity: Severity::Problem,
                path: repo.path.join("snapshots").join(&snap.commit).join(&m.file),
                message: format!(
                    "{} snapshot {short}: {} points at {}, which is missing (the blob was deleted or never copied)",
                    repo.id,
                    m.file,
                    m.target.display()
                ),
                fix: Some(format!(
                    "fetch it again: `hf download {} {} --revision {}` (a snapshot link to a missing blob is downloaded anew)",
                    repo.id, m.file, snap.commit
                )),
                pids: Vec::new(),
            });
        }
    }
}

fn holders_text(holders: &[LockHolder]) -> String {
    holders
        .iter()
        .map(|h| {
            if h.cmdline.is_empty() {
                format!("pid {}", h.pid)
            } else {
                format!("pid {} `{}`", h.pid, h.cmdline)
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn kill_text(holders: &[LockHolder]) -> String {
    let pids: Vec<String> = holders.iter().map(|h| h.pid.to_string()).collect();
    format!("kill {}", pids.join(" "))
}

fn download_finding(d: &DownloadReport, hub: bool, interval: Duration) -> CacheFinding {
    let path = d.path.display();
    let rerun = match (&d.repo, hub) {
        (Some(repo), true) => format!("`hf download {repo}`"),
        _ => "the same `llama-server -hf …` / `llama-cli -hf …` command".to_string(),
    };
    let pids = d.holders.iter().map(|h| h.pid).collect();
    let interval_ms = interval.as_millis();
    match d.activity {
        Activity::InProgress => CacheFinding {
            code: "download_in_progress".into(),
            severity: Severity::Note,
            path: d.path.clone(),
            message: format!(
                "{path}: a download in progress ({} bytes, grew {} bytes in {interval_ms} ms){}",
                d.bytes,
                d.grew_bytes,
                if d.holders.is_empty() {
                    String::new()
                } else {
                    format!(", by {}", holders_text(&d.holders))
                }
            ),
            fix: None,
            pids,
        },
        Activity::Stalled => {
            let who = if d.holders.is_empty() {
                "a process this audit cannot see (another pid namespace: a container?)".to_string()
            } else {
                holders_text(&d.holders)
            };
            let end = if d.holders.is_empty() {
                "stop the container or process that pulls this repository".to_string()
            } else {
                format!("`{}`", kill_text(&d.holders))
            };
            CacheFinding {
                code: "stalled_download".into(),
                severity: Severity::Problem,
                path: d.path.clone(),
                message: format!(
                    "{path}: {} bytes, not growing over {interval_ms} ms (last written {} s ago), held by {who}",
                    d.bytes, d.age_secs
                ),
                fix: Some(format!(
                    "a stale pull loop holds the blob lock (the stall is the lock, not a rate limit): end it with {end}, then re-run {rerun} (it resumes the partial), or `rm '{path}'` first to fetch it cleanly"
                )),
                pids,
            }
        }
        Activity::Interrupted => CacheFinding {
            code: if hub {
                "incomplete_blob".into()
            } else {
                "partial_download".into()
            },
            severity: Severity::Problem,
            path: d.path.clone(),
            message: format!(
                "{path}: {} bytes, last written {} s ago, nobody writes it (an interrupted download)",
                d.bytes, d.age_secs
            ),
            fix: Some(format!(
                "`rm '{path}'` and re-run {rerun} to fetch it cleanly (re-running without the rm resumes it)"
            )),
            pids: Vec::new(),
        },
    }
}

fn lock_finding(lock: &LockReport, downloads: &[DownloadReport]) -> Option<CacheFinding> {
    let path = lock.path.display();
    // A lock whose blob is a partial file is judged with that download (one finding each).
    let has_partial = downloads
        .iter()
        .any(|d| lock.blob.as_deref() == Some(d.path.as_path()));
    match &lock.state {
        LockState::Held { .. } if has_partial => None,
        LockState::Held { holders } => {
            let (who, end) = if holders.is_empty() {
                (
                    "a process this audit cannot see (another pid namespace: a container?)"
                        .to_string(),
                    "stop the container or process that pulls this repository".to_string(),
                )
            } else {
                (holders_text(holders), format!("`{}`", kill_text(holders)))
            };
            Some(CacheFinding {
                code: "lock_held_idle".into(),
                severity: Severity::Problem,
                path: lock.path.clone(),
                message: format!("{path}: held by {who}, and no .incomplete blob of it is growing"),
                fix: Some(format!(
                    "a stale pull loop holds the blob lock (the stall is the lock, not a rate limit): end it with {end}"
                )),
                pids: holders.iter().map(|h| h.pid).collect(),
            })
        }
        LockState::Stale => Some(CacheFinding {
            code: "stale_lock".into(),
            severity: Severity::Note,
            path: lock.path.clone(),
            message: format!(
                "{path}: nobody holds it (a leftover: huggingface_hub leaves lock files behind)"
            ),
            fix: Some(format!("`rm '{path}'` (harmless either way)")),
            pids: Vec::new(),
        }),
        LockState::Unknown { reason } => Some(CacheFinding {
            code: "lock_unprobed".into(),
            severity: Severity::Note,
            path: lock.path.clone(),
            message: reason.clone(),
            fix: Some("run the audit as the user that owns the cache".into()),
            pids: Vec::new(),
        }),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;

//! Writing artifacts so that nothing finished is ever lost: item records go to a JSONL journal
//! the moment they finish, and the final file is written to a temporary file in the same
//! directory and renamed over the target, so a reader never sees half an artifact.

use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::{Artifact, ArtifactKind, ItemRecord, SCHEMA_VERSION};

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("cannot create output directory {path}: {source} (choose another --out)")]
    CreateDir {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot write {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path} is not a bakeoff artifact: {source}")]
    Parse {
        path: PathBuf,
        source: serde_json::Error,
    },
    #[error(
        "{path} has schema_version {found}; this bakeoff reads version {SCHEMA_VERSION} (upgrade bakeoff)"
    )]
    Version { path: PathBuf, found: u64 },
}

/// `DIR/<slug>.bakeoff.json` or `DIR/<slug>.failure.json`.
pub fn artifact_path(dir: &Path, slug: &str, kind: ArtifactKind) -> PathBuf {
    match kind {
        ArtifactKind::Bakeoff => dir.join(format!("{slug}.bakeoff.json")),
        ArtifactKind::Failure => dir.join(format!("{slug}.failure.json")),
    }
}

/// Serialize `value` as pretty JSON and move it into place atomically.
pub fn write_atomic<T: Serialize>(path: &Path, value: &T) -> Result<(), StoreError> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(|source| StoreError::CreateDir {
        path: dir.to_path_buf(),
        source,
    })?;
    let werr = |source| StoreError::Write {
        path: path.to_path_buf(),
        source,
    };
    let mut tmp = tempfile::Builder::new()
        .prefix(".bakeoff-")
        .suffix(".tmp")
        .tempfile_in(dir)
        .map_err(werr)?;
    let json = serde_json::to_vec_pretty(value).map_err(|e| werr(std::io::Error::other(e)))?;
    tmp.write_all(&json).map_err(werr)?;
    tmp.write_all(b"\n").map_err(werr)?;
    tmp.as_file().sync_all().map_err(werr)?;
    tmp.persist(path).map_err(|e| werr(e.error))?;
    Ok(())
}

/// Read an artifact, refusing a schema version this build does not know.
pub fn read_artifact(path: &Path) -> Result<Artifact, StoreError> {
    let text = std::fs::read_to_string(path).map_err(|source| StoreError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let raw: serde_json::Value =
        serde_json::from_str(&text).map_err(|source| StoreError::Parse {
            path: path.to_path_buf(),
            source,
        })?;
    let found = raw
        .get("schema_version")
        .and_then(|v| v.as_u64())
        .unwrap_or(0);
    if found != u64::from(SCHEMA_VERSION) {
        return Err(StoreError::Version {
            path: path.to_path_buf(),
            found,
        });
    }
    serde_json::from_value(raw).map_err(|source| StoreError::Parse {
        path: path.to_path_buf(),
        source,
    })
}

/// One journal line.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct JournalLine {
    pub suite: String,
    pub item: ItemRecord,
}

/// Append-only JSONL of finished items: `DIR/<slug>.journal.jsonl`. Each line is flushed as it
/// is written, so a killed process leaves every finished item on disk.
pub struct Journal {
    path: PathBuf,
    file: File,
}

impl Journal {
    pub fn create(dir: &Path, slug: &str) -> Result<Self, StoreError> {
        std::fs::create_dir_all(dir).map_err(|source| StoreError::CreateDir {
            path: dir.to_path_buf(),
            source,
        })?;
        let path = dir.join(format!("{slug}.journal.jsonl"));
        let file = OpenOptions::new()
            .create(true)
            .write(true)
            .truncate(true)
            .open(&path)
            .map_err(|source| StoreError::Write {
                path: path.clone(),
                source,
            })?;
        Ok(Self { path, file })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn append(&mut self, suite: &str, item: &ItemRecord) -> Result<(), StoreError> {
        let line = JournalLine {
            suite: suite.to_string(),
            item: item.clone(),
        };
        let werr = |source| StoreError::Write {
            path: self.path.clone(),
            source,
        };
        let mut bytes = serde_json::to_vec(&line).map_err(|e| werr(std::io::Error::other(e)))?;
        bytes.push(b'\n');
        self.file.write_all(&bytes).map_err(werr)?;
        self.file.flush().map_err(werr)?;
        Ok(())
    }

    /// Read a journal back (for recovery); a torn last line is ignored.
    pub fn read(path: &Path) -> Result<Vec<JournalLine>, StoreError> {
        let file = File::open(path).map_err(|source| StoreError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        let mut out = Vec::new();
        for line in BufReader::new(file).lines() {
            let line = line.map_err(|source| StoreError::Read {
                path: path.to_path_buf(),
                source,
            })?;
            if let Ok(l) = serde_json::from_str::<JournalLine>(&line) {
                out.push(l);
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::*;

    pub(crate) fn sample() -> Artifact {
        Artifact::new(
            ArtifactKind::Bakeoff,
            Candidate {
                slug: "m-generic".into(),
                model: "m".into(),
                engine: EngineKind::Generic,
                engine_version: None,
                quantization: None,
                context_window: ContextWindow::UNKNOWN,
                hardware: None,
                notes: vec![],
            },
            EndpointRecord {
                url: "http://127.0.0.1:1".into(),
                facts: None,
            },
        )
    }

    #[test]
    fn atomic_write_then_read_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let p = artifact_path(dir.path(), "m-generic", ArtifactKind::Bakeoff);
        write_atomic(&p, &sample()).unwrap();
        let back = read_artifact(&p).unwrap();
        assert_eq!(back.candidate.slug, "m-generic");
        // No temporary files left behind.
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 1);
    }

    #[test]
    fn unknown_schema_version_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x.bakeoff.json");
        let mut v = serde_json::to_value(sample()).unwrap();
        v["schema_version"] = 99.into();
        std::fs::write(&p, v.to_string()).unwrap();
        let e = read_artifact(&p).unwrap_err().to_string();
        assert!(e.contains("schema_version 99"), "{e}");
    }

    #[test]
    fn journal_survives_a_torn_last_line() {
        let dir = tempfile::tempdir().unwrap();
        let mut j = Journal::create(dir.path(), "s").unwrap();
        let item = ItemRecord {
            id: "a".into(),
            outcome: Outcome::Ok,
            request: serde_json::json!({}),
            response: ResponseRecord::default(),
            expected: serde_json::Value::Null,
            check: None,
            latency: LatencyRecord::default(),
            error: None,
            extra: serde_json::Value::Null,
        };
        j.append("smoke", &item).unwrap();
        let path = j.path().to_path_buf();
        drop(j);
        let mut f = OpenOptions::new().append(true).open(&path).unwrap();
        f.write_all(b"{\"suite\":\"smoke\",\"it").unwrap();
        let lines = Journal::read(&path).unwrap();
        assert_eq!(lines.len(), 1);
        assert_eq!(lines[0].item.id, "a");
    }
}

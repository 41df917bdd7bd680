//! Writing artifacts so that nothing finished is ever lost or overwritten:
//!
//! - item records go to a JSONL journal the moment they finish;
//! - the final file is written to a temporary file in the same directory and moved into place
//!   without clobbering (`link`/`rename` that fails when the name exists), so a reader never
//!   sees half an artifact and a second run never replaces the first;
//! - a run's files share one **stem**: `<slug>` for the first run of a slug in a directory,
//!   `<slug>.<run_id>` for every later one ([`RunFiles::claim`]). The slug stays a field of the
//!   artifact, and reports group runs by it. Only `--replace` ([`RunFiles::replacing`]) writes
//!   over the slug's own files, and the new artifact records what it replaced.
//!
//! Files are created with mode 0666 less the umask (0644 by default), like every other file the
//! operator's tools write.

use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::{Artifact, ArtifactKind, ItemRecord, ReplacedFile};

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
    #[error("cannot read {path} ({source}): check the path and its permissions")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path} is not a bakeoff {what}: {source}")]
    Parse {
        path: PathBuf,
        /// What the file should have been: `artifact`, `verdict record`, ….
        what: &'static str,
        source: serde_json::Error,
    },
    #[error(
        "{path} has schema_version {found}; this bakeoff reads {what} version {expected} (upgrade bakeoff)"
    )]
    Version {
        path: PathBuf,
        what: &'static str,
        found: u64,
        expected: u32,
    },
    #[error(
        "{path} already exists: bakeoff never overwrites a file it wrote (choose another name)"
    )]
    Exists { path: PathBuf },
    #[error("no free file name for {stem} in {dir} after {tries} tries")]
    NoFreeName {
        dir: PathBuf,
        stem: String,
        tries: u32,
    },
}

/// `DIR/<stem>.bakeoff.json` or `DIR/<stem>.failure.json`.
pub fn artifact_path(dir: &Path, stem: &str, kind: ArtifactKind) -> PathBuf {
    dir.join(format!("{stem}{}", kind_suffix(kind)))
}

fn kind_suffix(kind: ArtifactKind) -> &'static str {
    match kind {
        ArtifactKind::Bakeoff => ".bakeoff.json",
        ArtifactKind::Failure => ".failure.json",
    }
}

const JOURNAL_SUFFIX: &str = ".journal.jsonl";

/// The journal beside an artifact: `x.bakeoff.json` → `x.journal.jsonl`.
pub fn journal_of(artifact: &Path) -> Option<PathBuf> {
    let name = artifact.file_name()?.to_str()?;
    let stem = name
        .strip_suffix(kind_suffix(ArtifactKind::Bakeoff))
        .or_else(|| name.strip_suffix(kind_suffix(ArtifactKind::Failure)))?;
    Some(artifact.with_file_name(format!("{stem}{JOURNAL_SUFFIX}")))
}

/// A run id: the UTC time the run started, to the second (`20261203T101530Z`). It sorts as time
/// and is safe in a file name.
pub fn run_id_now() -> String {
    chrono::Utc::now().format("%Y%m%dT%H%M%SZ").to_string()
}

/// The files of one run: one stem for its artifact and its journal.
#[derive(Debug, Clone)]
pub struct RunFiles {
    dir: PathBuf,
    slug: String,
    run_id: String,
    stem: String,
    /// `--replace`: the slug's own files are this run's to replace.
    replace: bool,
    replaced: Vec<ReplacedFile>,
}

impl RunFiles {
    /// Claim a stem for a new run of `slug` in `dir`: `<slug>` when no file of that stem is
    /// there, else `<slug>.<run_id>`, then `<slug>.<run_id>-2`, … Nothing is created yet; the
    /// writes themselves never clobber, and move to the next free stem if another run took
    /// this one in between.
    pub fn claim(dir: &Path, slug: &str, run_id: &str) -> Result<Self, StoreError> {
        let mut files = Self {
            dir: dir.to_path_buf(),
            slug: slug.to_string(),
            run_id: run_id.to_string(),
            stem: slug.to_string(),
            replace: false,
            replaced: Vec::new(),
        };
        files.stem = files.next_free_stem(0)?;
        Ok(files)
    }

    /// `--replace`: the run takes the slug's own stem, and what was there (artifact of either
    /// kind, journal) is recorded in [`RunFiles::replaced`] before it is replaced.
    pub fn replacing(dir: &Path, slug: &str, run_id: &str) -> Result<Self, StoreError> {
        let mut replaced = Vec::new();
        for path in stem_files(dir, slug) {
            if let Some(r) = describe(&path)? {
                replaced.push(r);
            }
        }
        Ok(Self {
            dir: dir.to_path_buf(),
            slug: slug.to_string(),
            run_id: run_id.to_string(),
            stem: slug.to_string(),
            replace: true,
            replaced,
        })
    }

    pub fn run_id(&self) -> &str {
        &self.run_id
    }

    pub fn stem(&self) -> &str {
        &self.stem
    }

    /// What `--replace` found in place (empty otherwise).
    pub fn replaced(&self) -> &[ReplacedFile] {
        &self.replaced
    }

    pub fn artifact_path(&self, kind: ArtifactKind) -> PathBuf {
        artifact_path(&self.dir, &self.stem, kind)
    }

    pub fn journal_path(&self) -> PathBuf {
        self.dir.join(format!("{}{JOURNAL_SUFFIX}", self.stem))
    }

    /// Open this run's journal, new (or, with `--replace`, emptied: it was recorded). If another
    /// run took the stem meanwhile, the run moves to the next free stem.
    pub fn open_journal(&mut self) -> Result<Journal, StoreError> {
        create_dir(&self.dir)?;
        for attempt in 0..MAX_TRIES {
            let path = self.journal_path();
            let mut o = OpenOptions::new();
            o.write(true);
            if self.replace {
                o.create(true).truncate(true);
            } else {
                o.create_new(true);
            }
            match o.open(&path) {
                Ok(file) => return Ok(Journal { path, file }),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    self.stem = self.next_free_stem(attempt + 1)?;
                }
                Err(source) => return Err(StoreError::Write { path, source }),
            }
        }
        Err(self.no_free_name())
    }

    /// Write the final artifact under this run's stem, atomically and — unless replacing —
    /// without clobbering; returns where it went. With `--replace`, the other kind's file of
    /// the stem (an old failure beside a new result) is removed once the new file is in place,
    /// so a stem never holds two verdicts; both were recorded by [`RunFiles::replacing`].
    pub fn write_artifact(&mut self, art: &Artifact) -> Result<PathBuf, StoreError> {
        if self.replace {
            let path = self.artifact_path(art.kind);
            write_atomic(&path, art)?;
            let other = match art.kind {
                ArtifactKind::Bakeoff => ArtifactKind::Failure,
                ArtifactKind::Failure => ArtifactKind::Bakeoff,
            };
            let stale = self.artifact_path(other);
            if stale.exists() {
                std::fs::remove_file(&stale).map_err(|source| StoreError::Write {
                    path: stale,
                    source,
                })?;
            }
            return Ok(path);
        }
        for attempt in 0..MAX_TRIES {
            let path = self.artifact_path(art.kind);
            match write_new(&path, art) {
                Ok(()) => return Ok(path),
                Err(StoreError::Exists { .. }) => {
                    self.stem = self.next_free_stem(attempt + 1)?;
                }
                Err(e) => return Err(e),
            }
        }
        Err(self.no_free_name())
    }

    fn stem_is_free(&self, stem: &str) -> bool {
        stem_files(&self.dir, stem).is_empty()
    }

    /// The first free stem at or after try `from`: `<slug>`, `<slug>.<run_id>`,
    /// `<slug>.<run_id>-2`, …
    fn next_free_stem(&self, from: u32) -> Result<String, StoreError> {
        (from..MAX_TRIES)
            .map(|k| match k {
                0 => self.slug.clone(),
                1 => format!("{}.{}", self.slug, self.run_id),
                k => format!("{}.{}-{k}", self.slug, self.run_id),
            })
            .find(|s| self.stem_is_free(s))
            .ok_or_else(|| self.no_free_name())
    }

    fn no_free_name(&self) -> StoreError {
        StoreError::NoFreeName {
            dir: self.dir.clone(),
            stem: self.slug.clone(),
            tries: MAX_TRIES,
        }
    }
}

const MAX_TRIES: u32 = 1000;

/// The files a stem names that exist.
fn stem_files(dir: &Path, stem: &str) -> Vec<PathBuf> {
    [
        artifact_path(dir, stem, ArtifactKind::Bakeoff),
        artifact_path(dir, stem, ArtifactKind::Failure),
        dir.join(format!("{stem}{JOURNAL_SUFFIX}")),
    ]
    .into_iter()
    .filter(|p| p.exists())
    .collect()
}

/// What a file about to be replaced was: its name and size, and for an artifact its creation
/// time and run id (an unreadable one is still recorded, by name and size).
fn describe(path: &Path) -> Result<Option<ReplacedFile>, StoreError> {
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => {
            return Err(StoreError::Read {
                path: path.to_path_buf(),
                source,
            });
        }
    };
    let (created_at, run_id) = if path.extension().is_some_and(|e| e == "json") {
        std::fs::read_to_string(path)
            .ok()
            .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
            .map(|v| {
                (
                    v.get("created_at")
                        .and_then(|c| serde_json::from_value(c.clone()).ok()),
                    v.get("run_id").and_then(|r| r.as_str()).map(str::to_string),
                )
            })
            .unwrap_or((None, None))
    } else {
        (None, None)
    };
    Ok(Some(ReplacedFile {
        file: path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
        bytes: meta.len(),
        created_at,
        run_id,
    }))
}

/// Make `dir` (and its parents) for a run's files: a measuring command calls it first, so an
/// output directory that cannot be made fails before minutes of measuring.
pub fn create_dir(dir: &Path) -> Result<(), StoreError> {
    std::fs::create_dir_all(dir).map_err(|source| StoreError::CreateDir {
        path: dir.to_path_buf(),
        source,
    })
}

/// Write `text` (a JSONL file a command makes, such as a session file) and move it into place
/// atomically, refusing to replace an existing file ([`StoreError::Exists`]).
pub fn write_new_text(path: &Path, text: &str) -> Result<(), StoreError> {
    persist_new(staged_bytes(path, text.as_bytes())?, path)
}

/// A temporary file beside `path` holding `value` as pretty JSON, synced, mode 0666 less umask.
fn staged<T: Serialize>(path: &Path, value: &T) -> Result<tempfile::NamedTempFile, StoreError> {
    let mut json = serde_json::to_vec_pretty(value).map_err(|e| StoreError::Write {
        path: path.to_path_buf(),
        source: std::io::Error::other(e),
    })?;
    json.push(b'\n');
    staged_bytes(path, &json)
}

/// A temporary file beside `path` holding `bytes`, synced, mode 0666 less umask.
fn staged_bytes(path: &Path, bytes: &[u8]) -> Result<tempfile::NamedTempFile, StoreError> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    create_dir(dir)?;
    let werr = |source| StoreError::Write {
        path: path.to_path_buf(),
        source,
    };
    let mut b = tempfile::Builder::new();
    b.prefix(".bakeoff-").suffix(".tmp");
    // tempfile's default is 0600; an artifact is as readable as any other file the operator
    // writes, so the mode passed to open(2) is 0666 and the umask decides.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        b.permissions(std::fs::Permissions::from_mode(0o666));
    }
    let mut tmp = b.tempfile_in(dir).map_err(werr)?;
    tmp.write_all(bytes).map_err(werr)?;
    tmp.as_file().sync_all().map_err(werr)?;
    Ok(tmp)
}

/// Serialize `value` as pretty JSON and move it into place atomically, replacing what is there.
/// Only for files that are meant to be replaced (a record with its own history, a `--replace`).
pub fn write_atomic<T: Serialize>(path: &Path, value: &T) -> Result<(), StoreError> {
    staged(path, value)?
        .persist(path)
        .map_err(|e| StoreError::Write {
            path: path.to_path_buf(),
            source: e.error,
        })?;
    Ok(())
}

/// Serialize `value` as pretty JSON and move it into place atomically, refusing to replace an
/// existing file ([`StoreError::Exists`]).
pub fn write_new<T: Serialize>(path: &Path, value: &T) -> Result<(), StoreError> {
    persist_new(staged(path, value)?, path)
}

/// Move a staged file into place, refusing to replace an existing one.
fn persist_new(tmp: tempfile::NamedTempFile, path: &Path) -> Result<(), StoreError> {
    match tmp.persist_noclobber(path) {
        Ok(_) => Ok(()),
        Err(e) if e.error.kind() == std::io::ErrorKind::AlreadyExists => Err(StoreError::Exists {
            path: path.to_path_buf(),
        }),
        Err(e) => Err(StoreError::Write {
            path: path.to_path_buf(),
            source: e.error,
        }),
    }
}

/// Read an artifact, refusing a schema version this build does not know.
pub fn read_artifact(path: &Path) -> Result<Artifact, StoreError> {
    crate::versioned::read_versioned(path)
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
mod tests;

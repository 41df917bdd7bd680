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

use crate::{Artifact, ArtifactKind, ItemRecord, ReplacedFile, SCHEMA_VERSION};

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

fn create_dir(dir: &Path) -> Result<(), StoreError> {
    std::fs::create_dir_all(dir).map_err(|source| StoreError::CreateDir {
        path: dir.to_path_buf(),
        source,
    })
}

/// A temporary file beside `path` holding `value` as pretty JSON, synced, mode 0666 less umask.
fn staged<T: Serialize>(path: &Path, value: &T) -> Result<tempfile::NamedTempFile, StoreError> {
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
    let json = serde_json::to_vec_pretty(value).map_err(|e| werr(std::io::Error::other(e)))?;
    tmp.write_all(&json).map_err(werr)?;
    tmp.write_all(b"\n").map_err(werr)?;
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
    match staged(path, value)?.persist_noclobber(path) {
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
        let mut j = RunFiles::claim(dir.path(), "s", "20261203T000000Z")
            .unwrap()
            .open_journal()
            .unwrap();
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

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn a_second_run_of_a_slug_never_replaces_the_first() {
        let dir = tempfile::tempdir().unwrap();
        let mut first = sample();
        first.candidate.notes = vec!["first".into()];
        let mut a = RunFiles::claim(dir.path(), "m-generic", "20261203T101500Z").unwrap();
        a.open_journal().unwrap();
        let pa = a.write_artifact(&first).unwrap();
        assert!(pa.ends_with("m-generic.bakeoff.json"));

        // The same slug again, even in the same second: new names, the first run untouched.
        for note in ["second", "third"] {
            let mut art = sample();
            art.candidate.notes = vec![note.into()];
            let mut b = RunFiles::claim(dir.path(), "m-generic", "20261203T101500Z").unwrap();
            b.open_journal().unwrap();
            b.write_artifact(&art).unwrap();
        }
        assert_eq!(
            names(dir.path()),
            [
                "m-generic.20261203T101500Z-2.bakeoff.json",
                "m-generic.20261203T101500Z-2.journal.jsonl",
                "m-generic.20261203T101500Z.bakeoff.json",
                "m-generic.20261203T101500Z.journal.jsonl",
                "m-generic.bakeoff.json",
                "m-generic.journal.jsonl",
            ]
        );
        assert_eq!(read_artifact(&pa).unwrap().candidate.notes, ["first"]);
        // A failure of the slug also takes a new stem: a stem never holds two verdicts.
        let mut f = sample();
        f.kind = ArtifactKind::Failure;
        let mut c = RunFiles::claim(dir.path(), "m-generic", "20261203T101501Z").unwrap();
        let pf = c.write_artifact(&f).unwrap();
        assert!(
            pf.ends_with("m-generic.20261203T101501Z.failure.json"),
            "{pf:?}"
        );
    }

    #[test]
    fn a_claimed_stem_taken_meanwhile_moves_on_not_over() {
        let dir = tempfile::tempdir().unwrap();
        let mut a = RunFiles::claim(dir.path(), "s", "r1").unwrap();
        let mut b = RunFiles::claim(dir.path(), "s", "r1").unwrap();
        assert_eq!(a.stem(), b.stem());
        a.write_artifact(&sample()).unwrap();
        let pb = b.write_artifact(&sample()).unwrap();
        assert!(pb.ends_with("s.r1.bakeoff.json"), "{pb:?}");
        assert!(write_new(&pb, &sample()).is_err_and(|e| matches!(e, StoreError::Exists { .. })));
    }

    #[test]
    fn replace_is_explicit_and_recorded() {
        let dir = tempfile::tempdir().unwrap();
        let mut old = sample();
        old.kind = ArtifactKind::Failure;
        old.run_id = Some("r0".into());
        let mut a = RunFiles::claim(dir.path(), "s", "r0").unwrap();
        a.open_journal().unwrap();
        a.write_artifact(&old).unwrap();

        let mut r = RunFiles::replacing(dir.path(), "s", "r1").unwrap();
        let rec: Vec<_> = r.replaced().iter().map(|f| f.file.clone()).collect();
        assert_eq!(rec, ["s.failure.json", "s.journal.jsonl"]);
        assert_eq!(r.replaced()[0].run_id.as_deref(), Some("r0"));
        r.open_journal().unwrap();
        let p = r.write_artifact(&sample()).unwrap();
        assert!(p.ends_with("s.bakeoff.json"));
        // The old failure of that stem is gone (recorded above), not left beside the result.
        assert_eq!(names(dir.path()), ["s.bakeoff.json", "s.journal.jsonl"]);
    }

    #[cfg(unix)]
    #[test]
    fn artifacts_are_as_readable_as_other_files() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x.bakeoff.json");
        write_new(&p, &sample()).unwrap();
        let plain = dir.path().join("plain");
        std::fs::write(&plain, "x").unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&p), mode(&plain));
    }

    #[test]
    fn journal_of_an_artifact() {
        assert_eq!(
            journal_of(Path::new("d/s.r1.failure.json")).unwrap(),
            Path::new("d/s.r1.journal.jsonl")
        );
        assert!(journal_of(Path::new("d/notes.json")).is_none());
    }
}

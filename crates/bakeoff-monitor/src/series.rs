//! The monitor's files under `--out DIR`: `<stem>.monitor.jsonl`, one sample per line, each
//! tick's lines written and flushed as the tick ends (a killed monitor keeps every finished
//! tick), and `<stem>.monitor.json`, the summary, written atomically at the end. Neither ever
//! replaces a file: the stem is the fleet's name, or `<name>.<run id>` (then `-2`, …) when a
//! monitor of that fleet already wrote there.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use bakeoff_artifact::StoreError;
use bakeoff_artifact::monitor::{MonitorSample, MonitorSummary, SERIES_SUFFIX, SUMMARY_SUFFIX};

/// The series being written.
pub struct Series {
    dir: PathBuf,
    stem: String,
    path: PathBuf,
    file: File,
}

const MAX_TRIES: u32 = 1000;

impl Series {
    /// Claim a stem for `name` (the fleet's name, made safe for a file name) in `dir` and
    /// create its series file.
    pub fn create(dir: &Path, name: &str, run_id: &str) -> Result<Self, StoreError> {
        std::fs::create_dir_all(dir).map_err(|source| StoreError::CreateDir {
            path: dir.to_path_buf(),
            source,
        })?;
        let base = match bakeoff_artifact::slug::sanitize(name) {
            s if s.is_empty() => "fleet".to_string(),
            s => s,
        };
        for k in 0..MAX_TRIES {
            let stem = match k {
                0 => base.clone(),
                1 => format!("{base}.{run_id}"),
                k => format!("{base}.{run_id}-{k}"),
            };
            let path = dir.join(format!("{stem}{SERIES_SUFFIX}"));
            if dir.join(format!("{stem}{SUMMARY_SUFFIX}")).exists() {
                continue;
            }
            match OpenOptions::new().write(true).create_new(true).open(&path) {
                Ok(file) => {
                    return Ok(Self {
                        dir: dir.to_path_buf(),
                        stem,
                        path,
                        file,
                    });
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(source) => return Err(StoreError::Write { path, source }),
            }
        }
        Err(StoreError::NoFreeName {
            dir: dir.to_path_buf(),
            stem: base,
            tries: MAX_TRIES,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The series file's name (what the summary records).
    pub fn file_name(&self) -> String {
        format!("{}{SERIES_SUFFIX}", self.stem)
    }

    pub fn summary_path(&self) -> PathBuf {
        self.dir.join(format!("{}{SUMMARY_SUFFIX}", self.stem))
    }

    /// Append one tick's samples and flush them.
    pub fn append(&mut self, samples: &[MonitorSample]) -> Result<(), StoreError> {
        let werr = |source| StoreError::Write {
            path: self.path.clone(),
            source,
        };
        let mut bytes = Vec::new();
        for s in samples {
            serde_json::to_writer(&mut bytes, s).map_err(|e| werr(std::io::Error::other(e)))?;
            bytes.push(b'\n');
        }
        self.file.write_all(&bytes).map_err(werr)?;
        self.file.flush().map_err(werr)?;
        Ok(())
    }

    /// Write the summary beside the series, atomically, never over a file.
    pub fn finish(&self, summary: &MonitorSummary) -> Result<PathBuf, StoreError> {
        let _ = self.file.sync_all();
        let path = self.summary_path();
        bakeoff_artifact::write_new(&path, summary)?;
        Ok(path)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_second_monitor_of_the_fleet_never_takes_the_first_one_s_files() {
        let dir = tempfile::tempdir().unwrap();
        let a = Series::create(dir.path(), "Prod Fleet", "20260101T000000Z").unwrap();
        assert_eq!(a.file_name(), "prod-fleet.monitor.jsonl");
        let b = Series::create(dir.path(), "Prod Fleet", "20260101T000000Z").unwrap();
        assert_eq!(b.file_name(), "prod-fleet.20260101T000000Z.monitor.jsonl");
        let c = Series::create(dir.path(), "Prod Fleet", "20260101T000000Z").unwrap();
        assert_eq!(c.file_name(), "prod-fleet.20260101T000000Z-2.monitor.jsonl");
    }
}

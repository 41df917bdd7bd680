//! The seat start record, `<state_dir>/<seat>.seat.json`: the last watched start of a seat,
//! ready or not, with its seat record (findings included) and the time each phase of its load
//! took. Until it existed a seat record was only written inside a failure artifact, so a
//! successful start left no trace of how long it took; `seat status` reads its load time here.
//!
//! It is replaced by the next start (atomically: a reader sees the old record or the new one,
//! never half of one). It never replaces a failure artifact: a failed start still writes its
//! own never-overwritten `<seat>.failure.json` first, and this record names it.

use std::path::{Path, PathBuf};

use bakeoff_artifact::{
    SEAT_START_VERSION, SeatLoadTiming, SeatStartKind, SeatStartRecord, read_versioned,
    write_atomic,
};

use super::{Seats, failure_artifact};
use crate::fleet::types::{Fleet, Seat};
use crate::watchdog::WatchReport;

/// Where a seat's start record lives.
pub fn start_record_path(fleet: &Fleet, seat: &str) -> PathBuf {
    fleet.state_dir.join(format!("{seat}.seat.json"))
}

/// The start record of a watch that ended with `r`.
pub fn start_record(
    fleet: &Fleet,
    seat: &Seat,
    r: &WatchReport,
    failure: Option<&Path>,
) -> Option<SeatStartRecord> {
    // The same seat record a failure artifact carries (redacted config, phases, evidence,
    // findings): one builder, so the two never drift apart.
    let record = failure_artifact(fleet, seat, r).seat?;
    let progress = r.progress.as_ref().map(|p| p.to_record(r.load_budget_s));
    Some(SeatStartRecord {
        schema_version: SEAT_START_VERSION,
        kind: SeatStartKind::SeatStart,
        at: chrono::Utc::now(),
        ready: r.ready(),
        class: r.class,
        failure_artifact: failure.map(|p| p.display().to_string()),
        load: SeatLoadTiming::from_phases(&r.phases, r.elapsed_ms, progress),
        record,
        page_cache: None,
        conditions: None,
    })
}

/// The last start's time to ready, when the last start got there.
pub fn last_load_ms(fleet: &Fleet, seat: &str) -> Option<u64> {
    let rec: SeatStartRecord = read_versioned(&start_record_path(fleet, seat)).ok()?;
    rec.ready.then_some(rec.load.to_ready_ms).flatten()
}

/// Why a start record was not written (a note on the watch: it fails nothing).
#[derive(Debug, thiserror::Error)]
pub enum StartRecordError {
    #[error("no seat record to write to {}", .0.display())]
    NoRecord(PathBuf),
    #[error("cannot create {}: {source}", dir.display())]
    CreateDir {
        dir: PathBuf,
        source: std::io::Error,
    },
    #[error("the start record {} was not written: {source}", path.display())]
    Write {
        path: PathBuf,
        source: bakeoff_artifact::StoreError,
    },
}

impl Seats {
    /// Write the start record of a watch that ended with `r` (after its failure artifact, when
    /// it failed). The error is one line naming the file.
    pub(super) fn write_start_record(
        &self,
        seat: &Seat,
        r: &WatchReport,
        failure: Option<&Path>,
        page_cache: Option<bakeoff_artifact::SeatPageCache>,
        conditions: Option<bakeoff_artifact::Conditions>,
    ) -> Result<PathBuf, StartRecordError> {
        let path = start_record_path(&self.fleet, &seat.name);
        let Some(mut rec) = start_record(&self.fleet, seat, r, failure) else {
            return Err(StartRecordError::NoRecord(path));
        };
        rec.page_cache = page_cache;
        rec.conditions = conditions;
        std::fs::create_dir_all(&self.fleet.state_dir).map_err(|source| {
            StartRecordError::CreateDir {
                dir: self.fleet.state_dir.clone(),
                source,
            }
        })?;
        if let Err(source) = write_atomic(&path, &rec) {
            return Err(StartRecordError::Write { path, source });
        }
        Ok(path)
    }
}

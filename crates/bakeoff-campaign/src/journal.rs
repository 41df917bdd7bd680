//! `campaign.journal.jsonl`: every step of a campaign, one JSON line each, written and synced
//! before the step it announces is taken (a seat is recorded as starting before it starts, a
//! seat as displaced before it is stopped). Replaying it tells a later run exactly what a
//! killed campaign left behind: seats it started and never stopped, seats it displaced and
//! never restored, and the variant that was running.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use bakeoff_artifact::campaign::VariantRow;
use bakeoff_seats::Seat;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::error::{CampaignError, JournalProblem};

pub const JOURNAL: &str = "campaign.journal.jsonl";

/// One journal line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "kebab-case")]
pub enum Entry {
    /// A `campaign run` began (every run appends one; the first names the campaign).
    CampaignStarted {
        at: DateTime<Utc>,
        name: String,
        file: String,
        pid: u32,
    },
    VariantStarted {
        at: DateTime<Utc>,
        variant: String,
        attempt: u32,
    },
    /// About to stop a displaced seat (written first: a kill between this line and the stop
    /// still leads the next run to restore it).
    Displacing {
        at: DateTime<Utc>,
        variant: String,
        seat: String,
        idle_wait_ms: u64,
    },
    /// A displaced seat was brought back (or the attempt failed).
    Restored {
        at: DateTime<Utc>,
        seat: String,
        ok: bool,
        #[serde(default)]
        down_ms: Option<u64>,
        #[serde(default)]
        message: String,
    },
    /// About to start a variant's seat: the seat as launched, redacted (stopping needs only
    /// its name, backend and container).
    SeatStarting {
        at: DateTime<Utc>,
        variant: String,
        seat: Box<Seat>,
    },
    SeatStopped {
        at: DateTime<Utc>,
        seat: String,
        #[serde(default)]
        message: String,
    },
    /// A variant's final row (an interrupted attempt gets one too).
    VariantDone {
        at: DateTime<Utc>,
        row: Box<VariantRow>,
    },
    /// A candidate's alternative builds, as the registry check answered (no start).
    AlternativesChecked {
        at: DateTime<Utc>,
        candidate: String,
        checks: Vec<bakeoff_artifact::campaign::AlternativeCheck>,
    },
}

/// What the journal says is true now.
#[derive(Debug, Clone, Default)]
pub struct State {
    /// The campaign's name, from its first line.
    pub name: Option<String>,
    /// The campaign file, as the latest run named it (absolute).
    pub file: Option<String>,
    /// The pid of the latest `campaign run`.
    pub pid: Option<u32>,
    pub first_started: Option<DateTime<Utc>>,
    /// The latest row of each variant.
    pub rows: BTreeMap<String, VariantRow>,
    /// The registry check's answers on each candidate's alternative builds.
    pub alternatives: crate::isolate::Checked,
    /// Attempts per variant.
    pub attempts: BTreeMap<String, u32>,
    /// A variant started and never done: `(variant, attempt, started at)`.
    pub open: Option<(String, u32, DateTime<Utc>)>,
    /// Seats started and never stopped (redacted, enough to stop them).
    pub seats_up: Vec<Seat>,
    /// Seats displaced and not restored: `(seat, variant, stopped at)`.
    pub displaced: Vec<(String, String, DateTime<Utc>)>,
}

impl State {
    fn apply(&mut self, e: Entry) {
        match e {
            Entry::CampaignStarted {
                at,
                name,
                file,
                pid,
                ..
            } => {
                self.name.get_or_insert(name);
                self.file = Some(file);
                self.pid = Some(pid);
                self.first_started.get_or_insert(at);
            }
            Entry::VariantStarted {
                at,
                variant,
                attempt,
            } => {
                self.attempts.insert(variant.clone(), attempt);
                self.open = Some((variant, attempt, at));
            }
            Entry::Displacing {
                at, variant, seat, ..
            } => {
                if !self.displaced.iter().any(|(s, _, _)| *s == seat) {
                    self.displaced.push((seat, variant, at));
                }
            }
            Entry::Restored { seat, ok, .. } => {
                if ok {
                    self.displaced.retain(|(s, _, _)| *s != seat);
                }
            }
            Entry::SeatStarting { seat, .. } => {
                self.seats_up.retain(|s| s.name != seat.name);
                self.seats_up.push(*seat);
            }
            Entry::SeatStopped { seat, .. } => self.seats_up.retain(|s| s.name != seat),
            Entry::AlternativesChecked {
                candidate, checks, ..
            } => {
                self.alternatives.insert(candidate, checks);
            }
            Entry::VariantDone { row, .. } => {
                if self
                    .open
                    .as_ref()
                    .is_some_and(|(v, _, _)| *v == row.variant)
                {
                    self.open = None;
                }
                self.rows.insert(row.variant.clone(), *row);
            }
        }
    }

    /// When a displaced seat was stopped.
    pub fn displaced_at(&self, seat: &str) -> Option<DateTime<Utc>> {
        self.displaced
            .iter()
            .find(|(s, _, _)| s == seat)
            .map(|(_, _, at)| *at)
    }
}

/// The journal of one campaign directory, open for appending.
pub struct Journal {
    path: PathBuf,
    file: std::fs::File,
    state: State,
}

impl Journal {
    /// Open (creating) `DIR/campaign.journal.jsonl` and replay what is there.
    pub fn open(dir: &Path) -> Result<Journal, CampaignError> {
        std::fs::create_dir_all(dir).map_err(|e| CampaignError::io(dir, e))?;
        let path = dir.join(JOURNAL);
        let state = if path.exists() {
            replay(&path)?
        } else {
            State::default()
        };
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(|e| CampaignError::io(&path, e))?;
        Ok(Journal { path, file, state })
    }

    pub fn state(&self) -> &State {
        &self.state
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Append one line and sync it before returning: the step it announces happens after.
    pub fn append(&mut self, e: Entry) -> Result<(), CampaignError> {
        let mut line =
            serde_json::to_string(&e).map_err(|err| CampaignError::io(&self.path, err))?;
        line.push('\n');
        self.file
            .write_all(line.as_bytes())
            .and_then(|_| self.file.sync_data())
            .map_err(|err| CampaignError::io(&self.path, err))?;
        self.state.apply(e);
        Ok(())
    }
}

/// Read a journal back. A last line cut short by a kill is ignored (it was never synced as a
/// whole); any other bad line is an error naming it.
pub fn replay(path: &Path) -> Result<State, CampaignError> {
    let text = std::fs::read_to_string(path).map_err(|e| CampaignError::io(path, e))?;
    let mut state = State::default();
    let lines: Vec<&str> = text.lines().collect();
    for (i, line) in lines.iter().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<Entry>(line) {
            Ok(e) => state.apply(e),
            Err(_) if i + 1 == lines.len() && !text.ends_with('\n') => break,
            Err(e) => {
                return Err(CampaignError::Journal {
                    path: path.to_path_buf(),
                    line: i + 1,
                    problem: e.into(),
                });
            }
        }
    }
    Ok(state)
}

/// The campaign file a directory's journal names (`campaign restore DIR`).
pub fn campaign_file(dir: &Path) -> Result<PathBuf, CampaignError> {
    let path = dir.join(JOURNAL);
    if !path.exists() {
        return Err(CampaignError::NoJournal {
            dir: dir.to_path_buf(),
        });
    }
    replay(&path)?
        .file
        .map(PathBuf::from)
        .ok_or_else(|| CampaignError::Journal {
            path,
            line: 1,
            problem: JournalProblem::NoCampaignFile,
        })
}

/// What `campaign status` says of the variant in flight: the journal's open variant, and
/// whether the run that started it is still alive (a dead one left it for the recovery).
pub fn in_flight(dir: &Path) -> Option<String> {
    let st = replay(&dir.join(JOURNAL)).ok()?;
    let (variant, attempt, at) = st.open?;
    let alive = st
        .pid
        .is_some_and(|pid| bakeoff_host::ProcRoot::system().is_alive(pid));
    Some(if alive {
        format!(
            "running now: {variant} (attempt {attempt}, since {})",
            at.format("%H:%M:%S UTC")
        )
    } else {
        format!(
            "{variant} (attempt {attempt}) was left running by a campaign that is gone: `bakeoff campaign run` resumes it, `bakeoff campaign restore {}` only recovers",
            dir.display()
        )
    })
}

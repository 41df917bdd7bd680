//! `seat up|down|restart|status|logs|watch|swap`. The watch flags' defaults are the watchdog's
//! own (`WatchOptions::default()`, taken by the clap attributes).

use std::path::PathBuf;
use std::time::Duration;

use bakeoff_seats::WatchOptions;

use crate::FlagError;
use crate::cli::{
    SeatNamesArgs, SeatSwapArgs, SeatUpArgs, SeatWatchArgs, WatchArgs, WatchTimingArgs,
};

/// Where failure artifacts go without `--out`, relative to the working directory (as `eval run
/// --out results`; the clap default of `--out` is the same): never into the directory of the
/// fleet file, which may be a source tree.
pub const DEFAULT_SEAT_OUT: &str = "results";

#[derive(Debug, Clone)]
pub struct WatchConfig {
    pub options: WatchOptions,
    /// Where failure artifacts go.
    pub out: PathBuf,
    pub json: bool,
}

impl Default for WatchConfig {
    /// For the verbs that watch nothing (down, status, logs).
    fn default() -> Self {
        Self {
            options: WatchOptions::default(),
            out: PathBuf::from(DEFAULT_SEAT_OUT),
            json: false,
        }
    }
}

impl WatchTimingArgs {
    pub fn validate(self) -> Result<WatchOptions, FlagError> {
        if self.crash_loop_restarts == 0 {
            return Err(FlagError::invalid(
                "--crash-loop-restarts must be at least 1",
            ));
        }
        Ok(WatchOptions {
            silence_timeout: secs("--silence-timeout", self.silence_timeout)?,
            ready_timeout: secs("--ready-timeout", self.ready_timeout)?,
            load_budget: self
                .load_budget
                .map(|b| secs("--load-budget", b))
                .transpose()?,
            crash_loop_restarts: self.crash_loop_restarts,
            crash_loop_window: secs("--crash-loop-window", self.crash_loop_window)?,
            writable_layer_limit: size("--writable-layer-limit", &self.writable_layer_limit)?,
            download_stall: secs("--download-stall", self.download_stall)?,
            ..WatchOptions::default()
        })
    }
}

impl WatchArgs {
    pub fn validate(self) -> Result<WatchConfig, FlagError> {
        Ok(WatchConfig {
            options: self.timing.validate()?,
            out: self.out,
            json: self.json,
        })
    }
}

/// A size as the fleet file's `memory` takes it: bytes, or with a suffix `k`, `m`, `g` (an
/// optional `b` after it), binary multiples.
pub(crate) fn size(name: &str, v: &str) -> Result<u64, FlagError> {
    bakeoff_seats::fleet::parse_size(v).ok_or_else(|| {
        FlagError::invalid(format!("{name} {v:?} is not a size: use bytes or 512m, 1g"))
    })
}

pub(crate) fn secs(name: &str, v: f64) -> Result<Duration, FlagError> {
    // try_from: a huge value (1e20) would panic in from_secs_f64.
    match Duration::try_from_secs_f64(v) {
        Ok(d) if v.is_finite() && v > 0.0 => Ok(d),
        _ => Err(FlagError::invalid(format!(
            "{name} {v} must be a positive number of seconds (at most about 1.8e19)"
        ))),
    }
}

/// The seats a verb acts on: those named, or with `--all` every seat in the fleet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SeatSelection {
    All,
    Named(Vec<String>),
}

impl SeatSelection {
    /// Naming none without `--all` is refused: a bare `seat up` or `seat down` never acts on
    /// the whole fleet by accident (clap refuses `--all` with names).
    pub fn new(seats: Vec<String>, all: bool) -> Result<Self, FlagError> {
        match (all, seats.is_empty()) {
            (true, _) => Ok(SeatSelection::All),
            (false, true) => Err(FlagError::invalid(
                "name the seats, or --all for every seat in the fleet",
            )),
            (false, false) => Ok(SeatSelection::Named(seats)),
        }
    }
}

/// `seat down`.
#[derive(Debug)]
pub struct SeatDownConfig {
    pub fleet: PathBuf,
    pub seats: SeatSelection,
    pub confirm: bool,
}

impl SeatNamesArgs {
    pub fn validate(self) -> Result<SeatDownConfig, FlagError> {
        Ok(SeatDownConfig {
            fleet: self.fleet.fleet,
            seats: SeatSelection::new(self.seats, self.all)?,
            confirm: self.confirm,
        })
    }
}

/// `seat up` and `seat restart`.
#[derive(Debug)]
pub struct SeatUpConfig {
    pub fleet: PathBuf,
    pub seats: SeatSelection,
    pub confirm: bool,
    pub watch: WatchConfig,
    /// `--warm-cache`: read the weight files once before each start.
    pub warm_cache: bool,
}

impl SeatUpArgs {
    pub fn validate(self) -> Result<SeatUpConfig, FlagError> {
        Ok(SeatUpConfig {
            fleet: self.fleet.fleet,
            seats: SeatSelection::new(self.seats, self.all)?,
            confirm: self.confirm,
            watch: self.watch.validate()?,
            warm_cache: self.warm_cache,
        })
    }
}

#[derive(Debug)]
pub struct SeatWatchConfig {
    pub fleet: PathBuf,
    pub seat: String,
    pub watch: WatchConfig,
}

impl SeatWatchArgs {
    pub fn validate(self) -> Result<SeatWatchConfig, FlagError> {
        Ok(SeatWatchConfig {
            fleet: self.fleet.fleet,
            seat: self.seat,
            watch: self.watch.validate()?,
        })
    }
}

#[derive(Debug)]
pub struct SeatSwapConfig {
    pub fleet: PathBuf,
    pub old: String,
    pub new: String,
    pub confirm: bool,
    pub watch: WatchConfig,
}

impl SeatSwapArgs {
    pub fn validate(self) -> Result<SeatSwapConfig, FlagError> {
        Ok(SeatSwapConfig {
            fleet: self.fleet.fleet,
            old: self.old,
            new: self.new,
            confirm: self.confirm,
            watch: self.watch.validate()?,
        })
    }
}

//! `bakeoff seat …` arguments.

use std::path::PathBuf;

use bakeoff_seats::WatchOptions;
use clap::{Args, Subcommand};

#[derive(Debug, Subcommand)]
pub enum SeatCommand {
    /// Start seats (all but dormant ones, which are only created) and watch each to ready.
    Up(SeatUpArgs),
    /// Stop seats (a dormant seat's container is kept, stopped).
    Down(SeatNamesArgs),
    /// Stop then start seats, and watch each to ready.
    Restart(SeatUpArgs),
    /// Each seat's state, with the gateway aliases that route to it grouped under it.
    Status(SeatStatusArgs),
    /// The last lines of a seat's log.
    Logs(SeatLogsArgs),
    /// Watch a seat that is already starting until ready or failed.
    Watch(SeatWatchArgs),
    /// Stop OLD, start NEW, wait for ready; on failure stop NEW and bring OLD back.
    Swap(SeatSwapArgs),
}

#[derive(Debug, Args, Clone)]
pub struct FleetArgs {
    /// The fleet file (docs/fleet.md).
    #[arg(long, value_name = "FILE", default_value = "fleet.toml")]
    pub fleet: PathBuf,
}

/// The watchdog's timings (`seat up|restart|watch|swap` and `campaign run`).
#[derive(Debug, Args, Clone)]
pub struct WatchTimingArgs {
    /// No log line for this long while not ready: init-wedge.
    #[arg(long, value_name = "SECS", default_value_t = WatchOptions::default().silence_timeout.as_secs_f64())]
    pub silence_timeout: f64,
    /// Give up (not-ready) after this long.
    #[arg(long, value_name = "SECS", default_value_t = WatchOptions::default().ready_timeout.as_secs_f64())]
    pub ready_timeout: f64,
    /// Flag a weight load projected to take longer than this.
    #[arg(long, value_name = "SECS")]
    pub load_budget: Option<f64>,
    /// Restarts within --crash-loop-window that make a crash-loop.
    #[arg(long, value_name = "N", default_value_t = WatchOptions::default().crash_loop_restarts)]
    pub crash_loop_restarts: u64,
    #[arg(long, value_name = "SECS", default_value_t = WatchOptions::default().crash_loop_window.as_secs_f64())]
    pub crash_loop_window: f64,
}

#[derive(Debug, Args, Clone)]
pub struct WatchArgs {
    #[command(flatten)]
    pub timing: WatchTimingArgs,
    /// Where failure artifacts go (default: results/ in the working directory).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Print the outcome as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args, Clone)]
pub struct SeatUpArgs {
    #[command(flatten)]
    pub fleet: FleetArgs,
    /// Seats to act on (default: every seat in the fleet).
    pub seats: Vec<String>,
    /// Required to act on a production seat; without it the command prints what it would do
    /// and exits 1.
    #[arg(long)]
    pub confirm: bool,
    #[command(flatten)]
    pub watch: WatchArgs,
}

#[derive(Debug, Args, Clone)]
pub struct SeatNamesArgs {
    #[command(flatten)]
    pub fleet: FleetArgs,
    /// Seats to act on (default: every seat in the fleet).
    pub seats: Vec<String>,
    /// Required to act on a production seat.
    #[arg(long)]
    pub confirm: bool,
}

#[derive(Debug, Args, Clone)]
pub struct SeatStatusArgs {
    #[command(flatten)]
    pub fleet: FleetArgs,
    /// Also send a real one-token completion to each running seat.
    #[arg(long)]
    pub probe: bool,
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args, Clone)]
pub struct SeatLogsArgs {
    #[command(flatten)]
    pub fleet: FleetArgs,
    pub seat: String,
    #[arg(long, value_name = "N", default_value_t = 100)]
    pub tail: usize,
}

#[derive(Debug, Args, Clone)]
pub struct SeatWatchArgs {
    #[command(flatten)]
    pub fleet: FleetArgs,
    pub seat: String,
    #[command(flatten)]
    pub watch: WatchArgs,
}

#[derive(Debug, Args, Clone)]
pub struct SeatSwapArgs {
    #[command(flatten)]
    pub fleet: FleetArgs,
    pub old: String,
    pub new: String,
    /// Required when either seat is a production seat.
    #[arg(long)]
    pub confirm: bool,
    #[command(flatten)]
    pub watch: WatchArgs,
}

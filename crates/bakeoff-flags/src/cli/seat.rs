//! `bakeoff seat …` arguments.

use std::path::PathBuf;

use bakeoff_seats::WatchOptions;
use clap::{Args, Subcommand};

#[derive(Debug, Subcommand)]
pub enum SeatCommand {
    /// Start the named seats (or --all) and watch each to ready; a dormant seat is only
    /// created, and a seat already up is said to be so (and still confirmed ready).
    #[command(
        after_help = "Examples:\n  bakeoff seat up --fleet examples/fleet.toml gemma-proc\n  bakeoff seat up --all --confirm --ready-timeout 1800"
    )]
    Up(SeatUpArgs),
    /// Stop the named seats (or --all); a dormant seat's container is kept, stopped.
    #[command(
        after_help = "Examples:\n  bakeoff seat down --fleet examples/fleet.toml gemma-docker\n  bakeoff seat down --all --confirm"
    )]
    Down(SeatNamesArgs),
    /// Stop then start the named seats (or --all), and watch each to ready.
    #[command(
        after_help = "Examples:\n  bakeoff seat restart --fleet examples/fleet.toml gemma-proc\n  bakeoff seat restart --fleet examples/fleet.toml char-rp --confirm --json"
    )]
    Restart(SeatUpArgs),
    /// Each seat's state, with the gateway aliases that route to it grouped under it. Exit 1
    /// when a state cannot be read, a probe fails or, with --probe, a production seat is down.
    #[command(
        after_help = "Examples:\n  bakeoff seat status --fleet examples/fleet.toml\n  bakeoff seat status --probe --json"
    )]
    Status(SeatStatusArgs),
    /// The last lines of a seat's log.
    #[command(
        after_help = "Examples:\n  bakeoff seat logs --fleet examples/fleet.toml gemma-proc\n  bakeoff seat logs gemma-docker --tail 500"
    )]
    Logs(SeatLogsArgs),
    /// Watch a seat that is already starting until ready or failed.
    #[command(
        after_help = "Examples:\n  bakeoff seat watch --fleet examples/fleet.toml gemma-docker\n  bakeoff seat watch gemma-docker --ready-timeout 3600 --json"
    )]
    Watch(SeatWatchArgs),
    /// Stop OLD, start NEW, wait for ready; on failure stop NEW and bring OLD back.
    #[command(
        after_help = "Examples:\n  bakeoff seat swap --fleet examples/fleet.toml gemma-proc gemma-docker\n  bakeoff seat swap char-rp meromero-charrp --confirm"
    )]
    Swap(SeatSwapArgs),
    /// Render the fleet's Docker seats as Kubernetes manifests (docs/scale-out.md); starts nothing.
    #[command(
        after_help = "Examples:\n  bakeoff seat export --kubernetes --fleet examples/fleet.toml\n  bakeoff seat export --kubernetes --fleet examples/fleet.toml char-rp --namespace llm --out k8s"
    )]
    Export(SeatExportArgs),
    /// Watch running seats over time: a real short completion and its latency, the memory
    /// footprint (GPU per process, Docker stats or process RSS, each labelled) and the queue
    /// depth of each, every interval, into a JSONL series; footprint-drift and outage findings.
    #[command(
        after_help = "Examples:\n  bakeoff seat monitor --fleet examples/fleet.toml gemma-proc --interval 30 --duration 3600\n  bakeoff seat monitor --fleet fleet.toml --interval 300 --out results/monitor --drift-threshold 5 --drift-min 1g\n  bakeoff seat monitor --fleet fleet.toml --interval 30 --prometheus 127.0.0.1:9464 --alert-webhook https://ntfy.sh/my-fleet"
    )]
    Monitor(SeatMonitorArgs),
}

/// The fleet file every command that takes `--fleet` reads by default (`plan` only when it
/// exists: without a fleet it still shows the GPUs).
pub const DEFAULT_FLEET: &str = "fleet.toml";

#[derive(Debug, Args, Clone)]
pub struct FleetArgs {
    /// The fleet file (docs/fleet.md), relative to the working directory.
    #[arg(long, value_name = "FILE", default_value = DEFAULT_FLEET)]
    pub fleet: PathBuf,
}

/// The watchdog's timings (`seat up|restart|watch|swap` and `campaign run`).
#[derive(Debug, Args, Clone)]
pub struct WatchTimingArgs {
    /// Seconds without a log line, while not ready, that make an init-wedge. [range: 1–86400]
    #[arg(long, value_name = "SECS", default_value_t = WatchOptions::default().silence_timeout.as_secs_f64())]
    pub silence_timeout: f64,
    /// Seconds to wait for a first real completion before giving up as not-ready: here the
    /// seat's whole start, weight loading included. [range: 1–604800]
    #[arg(long, value_name = "SECS", default_value_t = WatchOptions::default().ready_timeout.as_secs_f64())]
    pub ready_timeout: f64,
    /// Seconds a weight load may take before it is flagged (projected from its progress)
    /// (optional: without it no load is flagged). [range: 1–604800]
    #[arg(long, value_name = "SECS")]
    pub load_budget: Option<f64>,
    /// Restarts within --crash-loop-window that make a crash-loop. [range: 1–1000]
    #[arg(long, value_name = "N", default_value_t = WatchOptions::default().crash_loop_restarts)]
    pub crash_loop_restarts: u64,
    /// Seconds over which --crash-loop-restarts are counted. [range: 1–86400]
    #[arg(long, value_name = "SECS", default_value_t = WatchOptions::default().crash_loop_window.as_secs_f64())]
    pub crash_loop_window: f64,
    /// Growth of a container's writable layer before ready that is flagged as a download landing
    /// inside the container, not in a mounted cache: bytes, or with a suffix k, m, g (512m, 1g).
    #[arg(long, value_name = "SIZE", default_value = "1g")]
    pub writable_layer_limit: String,
    /// Seconds partial downloads (*.incomplete) in a mounted cache may go without growing
    /// before the download is called stalled (and whoever holds its lock is named). [range: 1–86400]
    #[arg(long, value_name = "SECS", default_value_t = WatchOptions::default().download_stall.as_secs_f64())]
    pub download_stall: f64,
}

#[derive(Debug, Args, Clone)]
pub struct WatchArgs {
    #[command(flatten)]
    pub timing: WatchTimingArgs,
    /// Results directory, relative to the working directory (never beside the fleet file):
    /// here a failed start's <slug>.failure.json.
    #[arg(long, value_name = "DIR", default_value = "results")]
    pub out: PathBuf,
    /// Print JSON instead of text (the outcome of each seat).
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args, Clone)]
pub struct SeatUpArgs {
    #[command(flatten)]
    pub fleet: FleetArgs,
    /// Seats to act on, by name (or --all).
    #[arg(value_name = "SEAT")]
    pub seats: Vec<String>,
    /// Act on every seat in the fleet (instead of naming them).
    #[arg(long, conflicts_with = "seats")]
    pub all: bool,
    /// Required to act on a production seat; without it the command prints what it would do
    /// and exits 1.
    #[arg(long)]
    pub confirm: bool,
    /// Read every weight file of the seat once (sequentially) before starting it, so its load
    /// time measures the engine, not the disk; the start record says it was warmed, with the
    /// bytes and seconds of the read.
    #[arg(long)]
    pub warm_cache: bool,
    #[command(flatten)]
    pub watch: WatchArgs,
}

#[derive(Debug, Args, Clone)]
pub struct SeatNamesArgs {
    #[command(flatten)]
    pub fleet: FleetArgs,
    /// Seats to act on, by name (or --all).
    #[arg(value_name = "SEAT")]
    pub seats: Vec<String>,
    /// Act on every seat in the fleet (instead of naming them).
    #[arg(long, conflicts_with = "seats")]
    pub all: bool,
    /// Required to act on a production seat; without it the command prints what it would do
    /// and exits 1.
    #[arg(long)]
    pub confirm: bool,
}

#[derive(Debug, Args, Clone)]
pub struct SeatStatusArgs {
    #[command(flatten)]
    pub fleet: FleetArgs,
    /// Also send a real one-token completion to each running seat; a production seat that is
    /// not running then fails the check (exit 1), as a failed probe does.
    #[arg(long)]
    pub probe: bool,
    /// Print JSON instead of text (every seat, and the aliases that resolve to none).
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args, Clone)]
pub struct SeatLogsArgs {
    #[command(flatten)]
    pub fleet: FleetArgs,
    /// The seat, by name.
    pub seat: String,
    /// How many of the log's last lines to print. [range: 1–1000000]
    #[arg(long, value_name = "N", default_value_t = 100)]
    pub tail: usize,
}

#[derive(Debug, Args, Clone)]
pub struct SeatWatchArgs {
    #[command(flatten)]
    pub fleet: FleetArgs,
    /// The seat, by name.
    pub seat: String,
    #[command(flatten)]
    pub watch: WatchArgs,
}

#[derive(Debug, Args, Clone)]
pub struct SeatSwapArgs {
    #[command(flatten)]
    pub fleet: FleetArgs,
    /// The seat to stop (and bring back if NEW fails).
    pub old: String,
    /// The seat to start in its place.
    pub new: String,
    /// Required to act on a production seat (here: when OLD or NEW is one); without it the
    /// command prints what it would do and exits 1.
    #[arg(long)]
    pub confirm: bool,
    #[command(flatten)]
    pub watch: WatchArgs,
}

#[derive(Debug, Args, Clone)]
pub struct SeatExportArgs {
    #[command(flatten)]
    pub fleet: FleetArgs,
    /// Seats to export, by name (default: every Docker seat; process seats are skipped with a
    /// note, and refused when named).
    #[arg(value_name = "SEAT")]
    pub seats: Vec<String>,
    /// Render Kubernetes manifests, a Deployment and a Service per seat (required: the one
    /// format so far).
    #[arg(long, required = true)]
    pub kubernetes: bool,
    /// The namespace written into every manifest (optional: without it, kubectl's current one).
    #[arg(long, value_name = "NS")]
    pub namespace: Option<String>,
    /// Results directory, relative to the working directory: here one <seat>.yaml per seat,
    /// never overwriting one (optional: without it, one YAML stream on stdout).
    #[arg(long, value_name = "DIR")]
    pub out: Option<std::path::PathBuf>,
}

#[derive(Debug, Args, Clone)]
pub struct SeatMonitorArgs {
    #[command(flatten)]
    pub fleet: FleetArgs,
    /// Seats to watch, by name; a named seat is expected to answer from the first tick
    /// (optional: without names, every seat of the fleet, an outage counted only for a seat that
    /// answered and then stopped).
    #[arg(value_name = "SEAT")]
    pub seats: Vec<String>,
    /// Seconds between ticks (each tick probes, reads the footprint and the queue of every
    /// watched seat). [range: 1–86400]
    #[arg(long, value_name = "SECS", default_value_t = 60.0)]
    pub interval: f64,
    /// Stop after this many seconds (optional: without it, until Ctrl-C; either way the
    /// summary is written). [range: 1–31536000]
    #[arg(long, value_name = "SECS")]
    pub duration: Option<f64>,
    /// Results directory, relative to the working directory: here <fleet>.monitor.jsonl (the
    /// series) and <fleet>.monitor.json (the summary), never over earlier ones.
    #[arg(long, value_name = "DIR", default_value = "results")]
    pub out: PathBuf,
    /// Seconds one probe (a real short completion) may take before the seat counts as not
    /// answering. [range: 1–600]
    #[arg(long, value_name = "SECS", default_value_t = 30.0)]
    pub probe_timeout: f64,
    /// max_tokens of the probe: enough for a thinking model to show text (a reply that is all
    /// reasoning counts as alive). [range: 1–4096]
    #[arg(long, value_name = "N", default_value_t = 32)]
    pub probe_max_tokens: u32,
    /// Growth over the seat's first footprint, in percent, that makes a footprint-drift
    /// finding (together with --drift-min). [range: 0.1–1000]
    #[arg(long, value_name = "PERCENT", default_value_t = 10.0)]
    pub drift_threshold: f64,
    /// The least growth, in bytes or with a suffix k, m, g (512m, 1g), that makes a
    /// footprint-drift finding (together with --drift-threshold).
    #[arg(long, value_name = "SIZE", default_value = "256m")]
    pub drift_min: String,
    /// Serve the monitor's gauges for Prometheus at http://ADDR/metrics, e.g. 127.0.0.1:9464
    /// (probe result and latency, outage state and duration, footprint and its drift slope,
    /// queue; docs/monitor-export.md) (optional: without it, nothing listens).
    #[arg(long, value_name = "ADDR")]
    pub prometheus: Option<String>,
    /// POST a JSON message to this URL when an outage or a footprint drift starts and when it
    /// ends, once each, retried with back-off (ntfy and Slack use: docs/monitor-export.md)
    /// (optional: without it, findings go to the terminal and the files only).
    #[arg(long, value_name = "URL")]
    pub alert_webhook: Option<String>,
    /// Attempts per alert message before it is logged as not delivered (waits of 1 s, 2 s,
    /// 4 s, … between them). [range: 1–100]
    #[arg(long, value_name = "N", default_value_t = 5)]
    pub alert_attempts: u32,
}

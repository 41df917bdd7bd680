//! Command-line surface (clap): the low args, raw values only. Each verb's arguments are
//! converted once into a checked configuration by `validate` ([`crate::config`]).
//! One file per area (`eval.rs`, …); this file only lists the top-level verbs.

mod audit;
mod bench;
mod campaign;
mod eval;
mod plan;
mod report;
mod seat;

use clap::{Parser, Subcommand};

pub use audit::*;
pub use bench::*;
pub use campaign::*;
pub use eval::*;
pub use plan::*;
pub use report::*;
pub use seat::*;

#[derive(Debug, Parser)]
#[command(
    name = "bakeoff",
    version,
    about = "Qualify local LLM deployments with honest measurements."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Qualify a candidate: preflight, then suites, written as evidence.
    #[command(subcommand)]
    Eval(EvalCommand),
    /// Run seats from a fleet file: up, down, restart, status, logs, watch, swap.
    #[command(subcommand)]
    Seat(SeatCommand),
    /// A whole bakeoff as one command: candidate ladders and bench windows, run, journaled,
    /// resumable; campaign.json and negative-results.md.
    #[command(subcommand)]
    Campaign(CampaignCommand),
    /// Load sweeps with server reconciliation, and the harness's self-calibration.
    #[command(subcommand)]
    Bench(BenchCommand),
    /// GPU memory plan: per-GPU claims, measured usage (NVML, nvidia-smi), headroom,
    /// coexistence of two seats.
    Plan(PlanArgs),
    /// KV-cache bytes per token and the tokens a budget holds, from config.json or GGUF.
    Kv(KvArgs),
    /// Audit chat templates and checkpoints before anything starts.
    #[command(subcommand)]
    Audit(AuditCommand),
    /// Print the JSON Schema of the artifacts (schemas/artifact.v1.schema.json).
    Schema,
    /// Compare every artifact under DIR; write the negative-results log and the HTML report.
    Report(ReportArgs),
    /// Record a verdict on a candidate, scoped to its tested configuration.
    Verdict(VerdictArgs),
    /// Mark an artifact's result superseded (the artifact is kept unchanged).
    Retract(RetractArgs),
    /// The operator logbook: dated entries, an index, archival.
    #[command(subcommand)]
    Log(LogCommand),
}

//! Command-line surface (clap): the low args, raw values only. Each verb's arguments are
//! converted once into a checked configuration by `validate` ([`crate::config`]).
//! One file per area (`eval.rs`, …); this file only lists the top-level verbs.

pub mod about;
mod audit;
mod bench;
pub mod bounds;
mod campaign;
mod choice;
mod eval;
mod eval_adapter;
mod eval_damage;
mod gateway;
mod plan;
pub mod refusal;
mod report;
mod seat;
mod values;

use clap::{Parser, Subcommand};

pub use audit::*;
pub use bench::*;
pub use bounds::{command, parse_from};
pub use campaign::*;
pub use choice::{Reading, choice, item, name_of};
pub use eval::*;
pub use eval_adapter::*;
pub use eval_damage::*;
pub use gateway::*;
pub use plan::*;
pub use report::*;
pub use seat::*;
pub use values::*;

#[derive(Debug, Parser)]
#[command(
    name = "bakeoff",
    version,
    about = "Qualify local LLM deployments with honest measurements.",
    after_help = about::EXIT_AND_ENVIRONMENT
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
    /// Run seats from a fleet file: up, down, restart, status, logs, watch, swap, export, monitor.
    #[command(subcommand)]
    Seat(SeatCommand),
    /// A whole bakeoff as one command: candidate ladders and bench windows, run, journaled,
    /// resumable; campaign.json and negative-results.md.
    #[command(subcommand)]
    Campaign(CampaignCommand),
    /// The LiteLLM gateway in front of the fleet: export its config.yaml from the fleet.
    #[command(subcommand)]
    Gateway(GatewayCommand),
    /// Load sweeps with server reconciliation, and the harness's self-calibration.
    #[command(subcommand)]
    Bench(BenchCommand),
    /// GPU memory plan: per-GPU claims, measured usage (NVML, nvidia-smi), headroom,
    /// coexistence of two seats.
    #[command(
        after_help = "Examples:\n  bakeoff plan --fleet examples/fleet.toml\n  bakeoff plan --fleet examples/fleet.toml --coexist char-rp,meromero-charrp --gpu 0"
    )]
    Plan(PlanArgs),
    /// KV-cache bytes per token and the tokens a budget holds, from config.json or GGUF.
    #[command(
        after_help = "Examples:\n  bakeoff kv ~/models/qwen3-8b --budget-gib 20 --max-model-len 32768\n  bakeoff kv ~/models/gemma-3-270m-q4_k_m.gguf --ctx 8192 --parallel 4 --cache-type-k q8_0"
    )]
    Kv(KvArgs),
    /// Audit chat templates and checkpoints before anything starts.
    #[command(subcommand)]
    Audit(AuditCommand),
    /// List the JSON Schemas bakeoff ships, or print one: artifacts, records, and the fleet and
    /// campaign files (for an editor's checking).
    #[command(
        after_help = "Examples:\n  bakeoff schema\n  bakeoff schema artifact > schemas/artifact.v1.schema.json\n  bakeoff schema fleet-file > fleet.schema.json"
    )]
    Schema(SchemaArgs),
    /// Compare every artifact under DIR; write the negative-results log and the HTML report.
    #[command(
        after_help = "Examples:\n  bakeoff report results\n  bakeoff report results --csv results/csv --html /tmp/report.html"
    )]
    Report(ReportArgs),
    /// Record a verdict on a candidate, scoped to its tested configuration.
    #[command(
        after_help = "Examples:\n  bakeoff verdict gemma-3-270m-llamacpp-q4km-8k reject --reason \"scores near chance\"\n  bakeoff verdict qwen3-8b-vllm-awq-32k accept --reason \"passes all suites\" --not-attempted \"fp8 KV\" --out results"
    )]
    Verdict(VerdictArgs),
    /// Mark an artifact's result superseded (the artifact is kept unchanged).
    #[command(
        after_help = "Examples:\n  bakeoff retract results/qwen3-8b-vllm-awq-32k.bakeoff.json --reason \"wrong chat template\"\n  bakeoff retract results/a.20261203T101530Z.bakeoff.json --reason \"server was shared\""
    )]
    Retract(RetractArgs),
    /// The operator logbook: dated entries, an index, archival.
    #[command(subcommand)]
    Log(LogCommand),
}

/// `bakeoff schema [NAME]`.
#[derive(Debug, clap::Args)]
pub struct SchemaArgs {
    /// The schema to print (`bakeoff schema` lists the names); left out: the list.
    #[arg(value_name = "NAME")]
    pub name: Option<String>,
}

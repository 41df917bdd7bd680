//! `bakeoff bench …` arguments.

use bakeoff_load::LoadPlan;
use bakeoff_load::calibrate::CalibrationOptions;
use clap::{Args, Subcommand};

use super::EndpointArgs;

#[derive(Debug, Subcommand)]
pub enum BenchCommand {
    /// A load sweep: closed-loop concurrency levels, or open-loop arrival rates; writes
    /// DIR/<slug>-bench.bakeoff.json. Without --endpoint: a local llama-server with the test model.
    Run(Box<BenchRunArgs>),
    /// Measure this machine's harness ceiling against the built-in loopback target.
    Calibrate(BenchCalibrateArgs),
}

#[derive(Debug, Args)]
pub struct BenchRunArgs {
    #[command(flatten)]
    pub endpoint: EndpointArgs,
    /// Closed loop: concurrency levels, one step each.
    #[arg(long, default_value = "1,2,4,8,16,32,64", conflicts_with = "rate")]
    pub concurrency: String,
    /// Open loop: arrival rates in requests/s, one step each (instead of --concurrency).
    #[arg(long)]
    pub rate: Option<String>,
    /// Open loop: `poisson` or `constant`.
    #[arg(long, default_value = "poisson")]
    pub arrival: String,
    /// Open loop: most requests in flight; above it a request goes late (recorded), never dropped.
    #[arg(long, value_name = "N")]
    pub max_in_flight: Option<usize>,
    /// Requests per step.
    #[arg(long, value_name = "N")]
    pub requests: Option<u64>,
    /// Seconds per step (with --requests, whichever comes first).
    #[arg(long, value_name = "SECS")]
    pub duration: Option<f64>,
    /// Warm-up requests before the first step (not measured).
    #[arg(long, default_value_t = LoadPlan::new("").warmup_requests)]
    pub warmup: u64,
    /// Prompt tokens: N, A-B (uniform) or @file.jsonl (field prompt_tokens).
    #[arg(long, default_value = "128")]
    pub prompt_tokens: String,
    /// Output tokens: N, A-B (uniform) or @file.jsonl (field output_tokens).
    #[arg(long, default_value = "128")]
    pub output_tokens: String,
    /// Do not send ignore_eos / min_tokens (output length then follows the model).
    #[arg(long)]
    pub no_pin: bool,
    /// Let requests share a prompt prefix (by default each gets a unique one, so a prompt
    /// cache cannot flatter the result).
    #[arg(long)]
    pub allow_prefix_cache: bool,
    /// Sampling temperature.
    #[arg(long, default_value_t = LoadPlan::new("").temperature)]
    pub temperature: f32,
    /// Seed of the arrival schedule and the length draws.
    #[arg(long, default_value_t = LoadPlan::new("").seed)]
    pub seed: u64,
    /// Goodput objectives, e.g. ttft=500ms,tpot=50ms.
    #[arg(long)]
    pub slo: Option<String>,
    /// Skip the harness-ceiling measurement (then no step can be flagged client-bound).
    #[arg(long)]
    pub no_calibrate: bool,
    /// Do not scrape /metrics around each step.
    #[arg(long)]
    pub no_metrics: bool,
    #[command(flatten)]
    pub naming: super::NamingArgs,
    /// Print the artifact as JSON (no progress bars).
    #[arg(long)]
    pub json: bool,
    /// Embedded default only: llama-server -c.
    #[arg(long, default_value_t = 8192)]
    pub local_ctx: u32,
    /// Embedded default only: llama-server -np.
    #[arg(long, default_value_t = 4)]
    pub local_parallel: u32,
}

#[derive(Debug, Args)]
pub struct BenchCalibrateArgs {
    /// Streams to open at once for the concurrent-streams figure.
    #[arg(long, default_value_t = CalibrationOptions::default().streams)]
    pub streams: u32,
    /// Seconds per phase (requests/s, tokens/s).
    #[arg(long, default_value_t = CalibrationOptions::default().phase.as_secs_f64())]
    pub seconds: f64,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

//! `bakeoff eval damage …` arguments.

use std::path::PathBuf;

use bakeoff_client::Timeouts;
use bakeoff_measure::damage::DEFAULT_TOP_K;
use bakeoff_suites::PreflightOptions;
use clap::Args;

use super::NamingArgs;

#[derive(Debug, Args)]
pub struct DamageArgs {
    /// OpenAI-compatible base URL, e.g. http://127.0.0.1:8081 (a trailing /v1 is fine): here
    /// the candidate, the build measured against --reference.
    #[arg(long, value_name = "URL")]
    pub endpoint: String,
    /// Model id to request (default: the first id in the candidate's /v1/models).
    #[arg(long, value_name = "ID")]
    pub model: Option<String>,
    /// The reference endpoint: the build the candidate is measured against (the unmodified
    /// model), e.g. http://127.0.0.1:8080; required. It is checked against itself first.
    #[arg(long, value_name = "URL")]
    pub reference: String,
    /// Model id to request from the reference (default: the first id in its /v1/models).
    #[arg(long, value_name = "ID")]
    pub reference_model: Option<String>,
    /// Prompts to compare on, one prompt a line, or JSON lines of {"id", "prompt"} or {"id",
    /// "messages"} (default: the shipped set of forty harmless everyday requests,
    /// docs/suites.md).
    #[arg(long, value_name = "FILE")]
    pub prompts: Option<PathBuf>,
    /// How many of the first token's most likely alternatives to ask for (`top_logprobs`);
    /// the rest of the probability is one tail bucket. vLLM refuses more than its
    /// --max-logprobs (default 20). [range: 1–100]
    #[arg(long, value_name = "K", default_value_t = DEFAULT_TOP_K)]
    pub top_k: u32,
    /// Length of the greedy replies along which damage is measured: greedy agreement, where
    /// the replies part, and the per-token KL along the reference's reply (docs/suites.md
    /// "Damage along the reply"). 0 measures the first token only. [range: 0–4096]
    #[arg(long, value_name = "N", default_value_t = bakeoff_measure::damage::along::DEFAULT_TOKENS)]
    pub tokens: u32,
    /// Seed of the run's random draws (here the prompts' unique prefixes): give it to replay a
    /// run exactly (default: a fresh one per run, recorded in the artifact, so no prompt cache
    /// of an earlier run can answer). [range: 0–18446744073709551615]
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    #[command(flatten)]
    pub naming: NamingArgs,
    /// Print JSON instead of text (the artifact).
    #[arg(long)]
    pub json: bool,
    /// Name of the environment variable holding the API key (here the candidate's; default:
    /// BAKEOFF_API_KEY).
    #[arg(long, value_name = "NAME")]
    pub api_key_env: Option<String>,
    /// Name of the environment variable holding the reference's API key (default:
    /// BAKEOFF_API_KEY).
    #[arg(long, value_name = "NAME")]
    pub reference_api_key_env: Option<String>,
    /// Seconds to wait for a first real completion before giving up as not-ready, each
    /// endpoint on its own. [range: 1–86400]
    #[arg(long, value_name = "SECS", default_value_t = PreflightOptions::default().ready_timeout.as_secs())]
    pub ready_timeout: u64,
    /// Whole-request limit, seconds. [range: 1–86400]
    #[arg(long, value_name = "SECS", default_value_t = Timeouts::default().total.as_secs())]
    pub request_timeout: u64,
    #[command(flatten)]
    pub tls: super::TlsArgs,
}

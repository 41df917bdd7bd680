//! `bakeoff eval adapter …` arguments.

use std::path::PathBuf;

use bakeoff_client::Timeouts;
use bakeoff_measure::adapter::AdapterOptions;
use bakeoff_suites::PreflightOptions;
use clap::Args;

#[derive(Debug, Args)]
pub struct AdapterArgs {
    /// OpenAI-compatible base URL, e.g. http://127.0.0.1:8080 (a trailing /v1 is fine): here
    /// the server that serves both the base model and the adapter.
    #[arg(long, value_name = "URL")]
    pub endpoint: String,
    /// The adapter: its model id where the adapter is a model of its own (vLLM `--lora-modules
    /// NAME=PATH` serves NAME; SGLang; a gateway), or on llama.cpp its id, path or file name as
    /// GET /lora-adapters lists it (measured at the scale the server serves it).
    #[arg(long, value_name = "ADAPTER_ID")]
    pub adapter: String,
    /// The base model's id (default: the adapter's `parent` in /v1/models, else the first
    /// other id listed; on llama.cpp the one model it serves).
    #[arg(long, value_name = "BASE_ID")]
    pub base: Option<String>,
    /// Prompts to compare on, in `eval damage`'s format: one prompt a line, or JSON lines of
    /// {"id", "prompt"} or {"id", "messages"} (default: its shipped set; for an adapter, its
    /// own domain's prompts show more).
    #[arg(long, value_name = "FILE")]
    pub prompts: Option<PathBuf>,
    /// How many of the first token's most likely alternatives to ask for (`top_logprobs`);
    /// the rest of the probability is one tail bucket. vLLM caps it at its --max-logprobs. [range: 1–100]
    #[arg(long, value_name = "K", default_value_t = AdapterOptions::default().top_k)]
    pub top_k: u32,
    /// Tokens of greedy text per request, compared between base and adapter. [range: 1–1048576]
    #[arg(long, value_name = "N", default_value_t = AdapterOptions::default().max_tokens)]
    pub max_tokens: u32,
    /// Results directory: the artifact (<slug>.bakeoff.json) and its journal.
    #[arg(long, value_name = "DIR", default_value = "results")]
    pub out: PathBuf,
    /// Artifact name (default: the base's slug with `-adapter`).
    #[arg(long, value_name = "SLUG")]
    pub slug: Option<String>,
    /// Print JSON instead of text (the artifact).
    #[arg(long)]
    pub json: bool,
    /// Name of the environment variable holding the API key (default: BAKEOFF_API_KEY).
    #[arg(long, value_name = "NAME")]
    pub api_key_env: Option<String>,
    /// Seconds to wait for a first real completion before giving up as not-ready. [range: 1–86400]
    #[arg(long, value_name = "SECS", default_value_t = PreflightOptions::default().ready_timeout.as_secs())]
    pub ready_timeout: u64,
    /// Whole-request limit, seconds. [range: 1–86400]
    #[arg(long, value_name = "SECS", default_value_t = Timeouts::default().total.as_secs())]
    pub request_timeout: u64,
    #[command(flatten)]
    pub tls: super::TlsArgs,
}

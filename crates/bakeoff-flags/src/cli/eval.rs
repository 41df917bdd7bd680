//! `bakeoff eval …` arguments.

use std::path::PathBuf;

use bakeoff_client::Timeouts;
use bakeoff_suites::longgen::LonggenOptions;
use bakeoff_suites::throughput::ThroughputOptions;
use bakeoff_suites::{PreflightOptions, SuiteChoice};
use clap::{Args, Subcommand};

use super::{Allow, Reading, SchemaFormArg, Thinking, choice, item};

#[derive(Debug, Subcommand)]
pub enum EvalCommand {
    /// Is this endpoint fit to be measured? Exit 0 fit, 1 unfit, 2 usage error.
    #[command(
        mut_arg("endpoint", |a| a
            .help("OpenAI-compatible base URL, e.g. http://127.0.0.1:8080 (a trailing /v1 is fine); required here")
            .long_help(None)),
        after_help = "Examples:\n  bakeoff eval preflight --endpoint http://127.0.0.1:8080\n  bakeoff eval preflight --endpoint http://gpu-box:8000/v1 --model qwen3-8b --ready-timeout 600 --json"
    )]
    Preflight(PreflightArgs),
    /// Preflight, then the suites; writes DIR/<slug>.bakeoff.json (or .failure.json).
    /// Without --endpoint: provisions and starts a local llama-server with the test model (the
    /// first run downloads and builds llama.cpp under ~/.cache/bakeoff: minutes; see --endpoint).
    #[command(
        after_help = "Examples:\n  bakeoff eval run --suite smoke,context,tool,session,intelligence --out results\n  bakeoff eval run --endpoint http://127.0.0.1:8080 --suite smoke,context --out results --note \"after driver update\""
    )]
    Run(Box<RunArgs>),
    /// Paired comparison of two artifacts on the same items (exact McNemar per family).
    /// Gives no verdict, and says why, when the runs are not comparable.
    #[command(
        after_help = "Examples:\n  bakeoff eval compare results/a.bakeoff.json results/b.bakeoff.json\n  bakeoff eval compare results/a.bakeoff.json results/b.bakeoff.json --allow template --json"
    )]
    Compare(CompareArgs),
    /// Is a LoRA adapter applied at all? Its first-token distributions and greedy texts
    /// against the base's, with the base against itself as the instrument check. Exit 0
    /// applied, 1 adapter-no-op (or no verdict), 2 usage error.
    #[command(
        after_help = "Examples:\n  bakeoff eval adapter --endpoint http://gpu-box:8000 --base google/gemma-3-27b-it --adapter tuned\n  bakeoff eval adapter --endpoint http://127.0.0.1:8080 --adapter my-lora.gguf --out results"
    )]
    Adapter(super::AdapterArgs),
    /// How far a candidate's first-token distribution sits from a reference endpoint's: KL
    /// divergence from top-K logprobs, after the reference's self-check (the same text sent to
    /// it twice must agree, or the figure is withheld). Exit 0 reported, 1 withheld or unfit,
    /// 2 usage error.
    #[command(
        after_help = "Examples:\n  bakeoff eval damage --endpoint http://127.0.0.1:8081 --reference http://127.0.0.1:8080 --out results\n  bakeoff eval damage --endpoint http://gpu-box:8000 --model abliterated --reference http://gpu-box:8001 --reference-model stock --prompts harmless.jsonl --top-k 20 --json"
    )]
    Damage(Box<super::DamageArgs>),
}

/// Where a run's files go and what its candidate is called: `eval run` and `bench run` alike.
#[derive(Debug, Args, Clone)]
pub struct NamingArgs {
    /// Results directory, relative to the working directory: here the artifact, its journal
    /// and any failure artifact.
    #[arg(long, value_name = "DIR", default_value = "results")]
    pub out: PathBuf,
    /// Artifact name (default: model-engine-quant-window; `bench run` adds `-bench`).
    #[arg(long, value_name = "SLUG")]
    pub slug: Option<String>,
    /// A note recorded in the candidate; repeatable.
    #[arg(long, value_name = "TEXT")]
    pub note: Vec<String>,
    /// Hardware description recorded in the candidate (optional).
    #[arg(long, value_name = "TEXT")]
    pub hardware: Option<String>,
    /// Write over DIR/<slug>.* (recorded in the new artifact's `replaces`). Without it a run
    /// into a slug that already has files gets DIR/<slug>.<run_id>.*: nothing is overwritten.
    #[arg(long)]
    pub replace: bool,
}

#[derive(Debug, Args, Clone)]
pub struct EndpointArgs {
    /// OpenAI-compatible base URL, e.g. http://127.0.0.1:8080 (a trailing /v1 is fine)
    /// (default: the embedded local llama-server with the test model; its first run downloads
    /// and builds llama.cpp under ~/.cache/bakeoff, minutes: --help says all).
    #[arg(long, value_name = "URL", long_help = super::about::ENDPOINT_LONG_HELP)]
    pub endpoint: Option<String>,
    /// Model id to request (default: the first id in /v1/models).
    #[arg(long, value_name = "ID")]
    pub model: Option<String>,
    /// The context window, in tokens: wins over whatever the server advertises (recorded as
    /// source `hint`; default: what the server advertises). [range: 1–16777216]
    #[arg(long, value_name = "N")]
    pub max_model_len: Option<u64>,
    /// Seconds to wait for a first real completion before giving up as not-ready: here the
    /// whole preflight, discovery's control calls included. [range: 1–86400]
    #[arg(long, value_name = "SECS", default_value_t = PreflightOptions::default().ready_timeout.as_secs())]
    pub ready_timeout: u64,
    /// Name of the environment variable holding the API key (default: BAKEOFF_API_KEY).
    #[arg(long, value_name = "NAME")]
    pub api_key_env: Option<String>,
    /// Connect timeout, seconds. [range: 1–3600]
    #[arg(long, value_name = "SECS", default_value_t = Timeouts::default().connect.as_secs())]
    pub connect_timeout: u64,
    /// Request sent → first body byte, seconds (covers prompt processing). [range: 1–86400]
    #[arg(long, value_name = "SECS", default_value_t = Timeouts::default().first_byte.as_secs())]
    pub first_byte_timeout: u64,
    /// Longest silence between stream chunks, seconds. [range: 1–86400]
    #[arg(long, value_name = "SECS", default_value_t = Timeouts::default().idle.as_secs())]
    pub idle_timeout: u64,
    /// Whole-request limit, seconds. [range: 1–86400]
    #[arg(long, value_name = "SECS", default_value_t = Timeouts::default().total.as_secs())]
    pub request_timeout: u64,
    /// Thinking mode for every request: on, off, or default (send nothing). Sent as
    /// chat_template_kwargs.enable_thinking plus the engine's own controls; preflight checks
    /// that it took effect.
    #[arg(
        long,
        value_name = "MODE",
        default_value = "default",
        value_parser = choice::<Thinking>(Reading::AnyCase)
    )]
    pub thinking: Thinking,
    #[command(flatten)]
    pub tls: TlsArgs,
}

/// `--ca-cert` and `--insecure`: every endpoint command's, and `eval damage`'s and `eval
/// adapter`'s for every endpoint they talk to (one CA for all of them).
#[derive(Debug, Clone, Args)]
pub struct TlsArgs {
    /// A PEM file with the CA that signed an https:// endpoint's certificate (a private CA or a
    /// self-signed certificate), trusted beside the system's roots (optional).
    #[arg(long, value_name = "FILE")]
    pub ca_cert: Option<std::path::PathBuf>,
    /// Accept an https:// endpoint's certificate without verifying it: recorded in the
    /// artifact (endpoint.facts.tls.verification = "insecure").
    #[arg(long)]
    pub insecure: bool,
}

#[derive(Debug, Args)]
pub struct PreflightArgs {
    #[command(flatten)]
    pub endpoint: EndpointArgs,
    /// Print JSON instead of text (the preflight report).
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub endpoint: EndpointArgs,
    /// Suites to run, comma-separated, or all (docs/suites.md).
    #[arg(
        long,
        value_name = "LIST",
        default_value = "smoke",
        value_delimiter = ',',
        value_parser = item::<SuiteChoice>(Reading::Trimmed)
    )]
    pub suite: Vec<Option<SuiteChoice>>,
    #[command(flatten)]
    pub naming: NamingArgs,
    /// Print JSON instead of text (the artifact, instead of the table).
    #[arg(long)]
    pub json: bool,
    /// llama.cpp `-c`, the context size of all slots together: here of the embedded local
    /// llama-server (no --endpoint). [range: 1–1048576]
    #[arg(
        long = "ctx",
        alias = "local-ctx",
        value_name = "N",
        default_value_t = 8192
    )]
    pub local_ctx: u32,
    /// llama.cpp `-np`, the number of parallel slots: here of the embedded local llama-server
    /// (no --endpoint). [range: 1–256]
    #[arg(
        long = "parallel",
        alias = "local-parallel",
        value_name = "N",
        default_value_t = 1
    )]
    pub local_parallel: u32,
    /// Context suite: prompt sizes as the server counts them, e.g. `4k,16k,window`
    /// (default: powers of two from 4k up to and including the window).
    #[arg(long, value_name = "LIST")]
    pub context_targets: Option<String>,
    /// Context suite: needle depths in percent, comma-separated. [range: 0–100]
    #[arg(long, value_name = "LIST", default_value = "0,25,50,75,100")]
    pub context_depths: String,
    /// Context suite: skip the one probe just past the window.
    #[arg(long)]
    pub no_overflow_probe: bool,
    /// Seed of the run's random draws (needles, document headers, filler order): give it to
    /// replay a run exactly. Default: a fresh random seed per run (recorded in the artifact),
    /// so a repeated run never sends byte-identical prompts that a prompt cache could answer. [range: 0–18446744073709551615]
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    /// Context suite: a local tokenizer.json (the served model's, from its Hugging Face
    /// repository) to cut and count prompts with, for endpoints with no server /tokenize
    /// (optional).
    #[arg(long, value_name = "FILE")]
    pub tokenizer: Option<PathBuf>,
    /// Intelligence battery (JSONL, docs/suites.md) (default: the shipped battery).
    #[arg(long, value_name = "FILE")]
    pub battery: Option<PathBuf>,
    /// Refusal battery (JSONL of {id, category, prompt}, docs/suites.md) (default: the shipped
    /// over-refusal battery; bring your own for an abliteration audit).
    #[arg(long, value_name = "FILE")]
    pub refusal_battery: Option<PathBuf>,
    /// Structured-output battery (JSONL of {id, class, prompt, schema, answer}, docs/suites.md)
    /// (default: the shipped battery of feature classes).
    #[arg(long, value_name = "FILE")]
    pub structured_battery: Option<PathBuf>,
    /// How each request carries its JSON Schema, in the structured suite (auto: OpenAI's
    /// response_format; native: the engine's own field, vLLM's by its version, llama.cpp's
    /// json_schema; or one form forced).
    #[arg(
        long,
        value_name = "FORM",
        default_value = "auto",
        value_parser = choice::<SchemaFormArg>(Reading::AnyCase)
    )]
    pub schema_form: SchemaFormArg,
    /// Quick subset: the first N tool cases per category, session conversations,
    /// intelligence items per family, refusal items per category and structured items per
    /// class (default: all). [range: 1–1000000]
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
    #[command(flatten)]
    pub load: LoadSuiteArgs,
}

/// The `throughput` and `longgen` suites (`bakeoff bench run` is the full instrument). The
/// defaults are the suites' own.
#[derive(Debug, Args)]
pub struct LoadSuiteArgs {
    /// Throughput suite: concurrency levels of the closed-loop sweep, comma-separated. [range: 1–4096]
    #[arg(long, value_name = "LIST", default_value_t = default_load_levels())]
    pub load_concurrency: String,
    /// Throughput suite: requests per step. [range: 1–10000000]
    #[arg(long, value_name = "N", default_value_t = ThroughputOptions::default().requests_per_step)]
    pub load_requests: u64,
    /// Throughput suite: prompt length in tokens. [range: 1–1048576]
    #[arg(long, value_name = "N", default_value_t = ThroughputOptions::default().prompt_tokens)]
    pub load_prompt_tokens: u32,
    /// Throughput suite: output length in tokens. [range: 1–1048576]
    #[arg(long, value_name = "N", default_value_t = ThroughputOptions::default().output_tokens)]
    pub load_output_tokens: u32,
    /// Longgen suite: number of probes (temperature 0). [range: 1–100000]
    #[arg(long, value_name = "N", default_value_t = LonggenOptions::default().probes)]
    pub longgen_probes: u64,
    /// Longgen suite: output tokens per probe. [range: 1–1048576]
    #[arg(long, value_name = "N", default_value_t = LonggenOptions::default().output_tokens)]
    pub longgen_tokens: u32,
    /// Longgen suite: run the probes N times, in rounds, with fresh prompts: the decode rate
    /// and the speculative-decoding acceptance become a mean with a 95 % interval, and two
    /// runs (MTP on and off) compare with `bakeoff bench compare --sweep longgen`. [range: 1–1000]
    #[arg(long, value_name = "N", default_value_t = LonggenOptions::default().repeats)]
    pub longgen_repeats: u32,
    /// Skip the harness-ceiling measurement (here: before the load suites; then no step can
    /// be flagged client-bound).
    #[arg(long)]
    pub no_calibrate: bool,
}

/// The suite's own default levels, as `--load-concurrency` takes them ("1,2,4").
fn default_load_levels() -> String {
    let levels: Vec<String> = ThroughputOptions::default()
        .concurrency
        .iter()
        .map(u32::to_string)
        .collect();
    levels.join(",")
}

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// Baseline artifact (A).
    #[arg(value_name = "A")]
    pub a: PathBuf,
    /// Candidate artifact (B).
    #[arg(value_name = "B")]
    pub b: PathBuf,
    /// What to allow anyway: item-set, n, template, thinking, contaminated (a
    /// side measured under a condition flag) (comma-separated or repeatable).
    #[arg(
        long,
        value_name = "WHAT",
        value_delimiter = ',',
        value_parser = item::<Allow>(Reading::Trimmed)
    )]
    pub allow: Vec<Option<Allow>>,
    /// Print JSON instead of text (the comparison).
    #[arg(long)]
    pub json: bool,
}

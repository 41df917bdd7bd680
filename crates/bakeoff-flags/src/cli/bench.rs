//! `bakeoff bench …` arguments.

use bakeoff_load::LoadPlan;
use bakeoff_load::calibrate::CalibrationOptions;
use clap::{Args, Subcommand};

use super::{Allow, ArrivalKind, EndpointArgs, Reading, SchemaFormArg, Sweep, choice, item};

#[derive(Debug, Subcommand)]
pub enum BenchCommand {
    /// A load sweep: closed-loop concurrency levels, or open-loop arrival rates; writes
    /// DIR/<slug>-bench.bakeoff.json. Without --endpoint: a local llama-server with the test model
    /// (the first run downloads and builds llama.cpp under ~/.cache/bakeoff: minutes; see --endpoint).
    #[command(
        after_help = "Examples:\n  bakeoff bench run --concurrency 1,2,4 --requests 16 --out results\n  bakeoff bench run --endpoint http://127.0.0.1:8000 --rate 1,2,4 --duration 60 --slo ttft=500ms,tpot=50ms\n  bakeoff bench run --endpoint http://127.0.0.1:8001 --versus http://127.0.0.1:8002 --concurrency 1 --output-tokens 1024 --requests 3 --repeat 5"
    )]
    Run(Box<BenchRunArgs>),
    /// Measure this machine's harness ceiling against the built-in loopback target.
    #[command(
        after_help = "Examples:\n  bakeoff bench calibrate\n  bakeoff bench calibrate --streams 128 --seconds 5 --json"
    )]
    Calibrate(BenchCalibrateArgs),
    /// Two sweeps level by level: B − A of output tok/s, TTFT p50 and TPOT p50 with 95 %
    /// intervals, and a verdict only where an interval excludes zero. Refuses sweeps of
    /// different workloads. Exit 0 compared, 1 not comparable, 2 usage.
    #[command(
        after_help = "Examples:\n  bakeoff bench compare results/np1-bench.bakeoff.json results/np4-bench.bakeoff.json\n  bakeoff bench compare A.json B.json --json\n  bakeoff bench compare mtp-on.bakeoff.json mtp-off.bakeoff.json --sweep longgen"
    )]
    Compare(BenchCompareArgs),
    /// Make a session file for `bench run --sessions-file` from a proxy's request log: LiteLLM's
    /// standard logging payloads, or the messages arrays an OpenAI-compatible proxy records
    /// (docs/artifacts.md, "Session files"). Writes a new file; never replaces one.
    #[command(
        name = "convert-log",
        after_help = "Examples:\n  bakeoff bench convert-log --from litellm litellm-payloads.jsonl --out sessions.jsonl\n  bakeoff bench convert-log --from messages proxy-requests.jsonl --out sessions.jsonl"
    )]
    ConvertLog(BenchConvertLogArgs),
}

#[derive(Debug, Args)]
pub struct BenchConvertLogArgs {
    /// The log, one JSON object per line.
    #[arg(value_name = "LOG.jsonl")]
    pub log: std::path::PathBuf,
    /// What wrote it: litellm (the proxy's standard logging payload, one per line) or messages
    /// (request bodies with their messages arrays, optionally session_id, timestamp, response).
    #[arg(long, value_name = "FORMAT", value_parser = choice::<LogFormatArg>(Reading::AnyCase))]
    pub from: LogFormatArg,
    /// The session file to write (must not exist).
    #[arg(long, value_name = "FILE.jsonl")]
    pub out: std::path::PathBuf,
}

/// `bench convert-log --from`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormatArg {
    Litellm,
    Messages,
}

#[derive(Debug, Args)]
pub struct BenchCompareArgs {
    /// The baseline sweep (a `bench run` artifact).
    #[arg(value_name = "A")]
    pub a: std::path::PathBuf,
    /// The sweep compared against it.
    #[arg(value_name = "B")]
    pub b: std::path::PathBuf,
    /// What to allow anyway: contaminated (a side with a step measured under a
    /// condition flag: host-contended, gpu-shared, …) (comma-separated or repeatable).
    #[arg(
        long,
        value_name = "WHAT",
        value_delimiter = ',',
        value_parser = item::<Allow>(Reading::Trimmed),
        hide_possible_values = true
    )]
    pub allow: Vec<Option<Allow>>,
    /// Which sweep of each artifact: `throughput` (a `bench run`'s, or an `eval run`'s
    /// throughput suite) or `longgen` (an `eval run`'s long-generation probes: the MTP on/off
    /// comparison, with --longgen-repeats for intervals).
    #[arg(
        long,
        value_name = "NAME",
        default_value = "throughput",
        value_parser = choice::<Sweep>(Reading::Trimmed)
    )]
    pub sweep: Sweep,
    /// Print JSON instead of text (the comparison).
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("alternate").args(["versus", "schema"]).multiple(false)))]
pub struct BenchRunArgs {
    #[command(flatten)]
    pub endpoint: EndpointArgs,
    /// Closed loop: concurrency levels, comma-separated, one step each. [range: 1–4096]
    #[arg(
        long,
        value_name = "LIST",
        default_value = "1,2,4,8,16,32,64",
        conflicts_with = "rate"
    )]
    pub concurrency: String,
    /// Open loop: arrival rates in requests/s, comma-separated, one step each (optional:
    /// instead of --concurrency). [range: 0.001–10000]
    #[arg(long, value_name = "LIST")]
    pub rate: Option<String>,
    /// Open loop: the arrival process, `poisson`, `constant` or `gamma` (with --burstiness).
    #[arg(
        long,
        value_name = "KIND",
        default_value = "poisson",
        value_parser = choice::<ArrivalKind>(Reading::Trimmed)
    )]
    pub arrival: ArrivalKind,
    /// With --arrival gamma: the shape K of the gamma inter-arrival times, mean still 1/rate
    /// (as `vllm bench serve --burstiness`): 1 is Poisson, below 1 burstier (CV 1/√K), above 1
    /// more regular (default: 1). [range: 0.01–100]
    #[arg(long, value_name = "K")]
    pub burstiness: Option<f64>,
    /// A linear ramp-up of SECS before each step's measured window (optional): closed loop
    /// starts its workers one by one over it, open loop climbs the rate from 0; the ramp's
    /// requests load the server but are left out of the step's figures. [range: 0.1–3600]
    #[arg(long, value_name = "SECS")]
    pub ramp_up: Option<f64>,
    /// Clients abort this share of requests mid-stream, each at a seeded point (e.g. 0.2;
    /// default: none); the step records the cancellations and what the server counted for them. [range: 0–0.99]
    #[arg(long, value_name = "P")]
    pub cancel_rate: Option<f64>,
    /// Sample the engine's gauges (running, waiting, KV cache, preemptions) every SECS through
    /// each step; 0 turns them off. [range: 0–3600]
    #[arg(long, value_name = "SECS", default_value_t = 1.0)]
    pub gauge_interval: f64,
    /// Open loop: most requests in flight; above it a request goes late (recorded), never
    /// dropped (default: no cap). [range: 1–100000]
    #[arg(long, value_name = "N")]
    pub max_in_flight: Option<usize>,
    /// Requests per step (default: 32 when --duration is not given; else no count bound). [range: 1–10000000]
    #[arg(long, value_name = "N")]
    pub requests: Option<u64>,
    /// Seconds per step, with --requests whichever comes first (default: no time bound). [range: 0.1–604800]
    #[arg(long, value_name = "SECS")]
    pub duration: Option<f64>,
    /// Warm-up requests before the first step (not measured). [range: 0–100000]
    #[arg(long, value_name = "N", default_value_t = LoadPlan::new("").warmup_requests)]
    pub warmup: u64,
    /// Warm-up requests before each measured step, at its concurrency (at most N at once), so
    /// no step starts on a server still busy with the one before; recorded on the step with
    /// their time, never in its figures; 0 turns them off. [range: 0–100000]
    #[arg(long, value_name = "N", default_value_t = LoadPlan::new("").step_warmup)]
    pub step_warmup: u64,
    /// Step length in completed requests: each step ends once N requests have succeeded
    /// (a failed one is replaced, at most N failures), with --duration as its required upper
    /// bound; instead of --requests, closed loop only (optional). [range: 1–10000000]
    #[arg(long, value_name = "N")]
    pub step_requests: Option<u64>,
    /// Prompt tokens: N, A-B (uniform) or @file.jsonl (field prompt_tokens). [range: 1–1048576]
    #[arg(long, value_name = "SPEC", default_value = "128")]
    pub prompt_tokens: String,
    /// Output tokens: N, A-B (uniform) or @file.jsonl (field output_tokens). [range: 1–1048576]
    #[arg(long, value_name = "SPEC", default_value = "128")]
    pub output_tokens: String,
    /// Do not send ignore_eos / min_tokens (output length then follows the model).
    #[arg(long)]
    pub no_pin: bool,
    /// Let requests share a prompt prefix (by default each gets a unique one, so a prompt
    /// cache cannot flatter the result).
    #[arg(long)]
    pub allow_prefix_cache: bool,
    /// Multi-turn conversations of TURNS turns (closed loop): each worker runs whole
    /// conversations, every turn resending the history (shared system prompt, earlier turns,
    /// the model's real replies) plus a new user turn of --prompt-tokens; --requests counts
    /// turns, rounded up to whole conversations. Reports first vs later turns and the
    /// prefix-cache hit rate (optional). [range: 1–1000]
    #[arg(long, value_name = "TURNS", conflicts_with_all = ["rate", "trace"])]
    pub multi_turn: Option<u32>,
    /// With --multi-turn or --sessions: a system prompt of N tokens shared by every
    /// conversation or session, placed before its unique prefix (default: none). [range: 0–1048576]
    #[arg(long, value_name = "N")]
    pub system_prompt_tokens: Option<u32>,
    /// Agent sessions of TURNS turns (closed loop; a level of --concurrency is the number of
    /// concurrent sessions): the first turn is a task of --prompt-tokens, each later turn
    /// resends the history with the model's real reply, its tool calls and a tool result of
    /// --tool-result-tokens, after a tool wait of --tool-wait; --requests counts turns, rounded
    /// up to whole sessions. Reports TTFT against context depth per turn, cache hits per turn,
    /// whether the cache survived each wait, and with --slo the capacity in sessions (optional). [range: 1–1000]
    #[arg(long, value_name = "TURNS", conflicts_with_all = ["rate", "trace", "multi_turn"])]
    pub sessions: Option<u32>,
    /// With --sessions: the tool result each later turn adds, in tokens: N, A-B (uniform) or
    /// @file.jsonl (field tool_result_tokens). [range: 1–1048576]
    #[arg(
        long,
        value_name = "SPEC",
        default_value = "256",
        requires = "sessions"
    )]
    pub tool_result_tokens: String,
    /// With --sessions: the wait on the tool before each later turn, in seconds (0 to 3600):
    /// N, A-B (uniform) or lognormal:MEDIAN,SIGMA.
    #[arg(
        long,
        value_name = "SPEC",
        default_value = "lognormal:1,0.8",
        requires = "sessions"
    )]
    pub tool_wait: String,
    /// With --sessions: after its middle turn each session forks N sub-sessions that run at
    /// once from its history, --fork-turns turns each, then it goes on (default: none). [range: 1–64]
    #[arg(long, value_name = "N", requires = "sessions")]
    pub fork: Option<u32>,
    /// With --fork: turns of each sub-session. [range: 1–1000]
    #[arg(long, value_name = "TURNS", default_value_t = 2, requires = "fork")]
    pub fork_turns: u32,
    /// With --sessions: offer the model one tool (run_command) with tool_choice auto, so the
    /// tool calls it makes join the history and are answered by tool messages (the server must
    /// accept tools: llama-server with its Jinja templates, vLLM with --enable-auto-tool-choice).
    #[arg(long, requires = "sessions")]
    pub tools: bool,
    /// Replay recorded sessions token-for-token, one step `replay`: each session starts at its
    /// recorded offset, each turn sends its recorded history (recorded replies, not this
    /// server's) after its recorded tool wait, asking for the recorded output length (format:
    /// docs/artifacts.md, "Session files"; `bench convert-log` makes one from a proxy's log) (optional).
    #[arg(
        long,
        value_name = "FILE.jsonl",
        conflicts_with_all = ["rate", "concurrency", "find_capacity", "trace", "multi_turn", "sessions", "prompts_sharegpt"]
    )]
    pub sessions_file: Option<std::path::PathBuf>,
    /// With --sessions-file: replay X times faster (session starts and tool waits divided by X;
    /// reported) (default: 1). [range: 0.001–1000]
    #[arg(long, value_name = "X", requires = "sessions_file")]
    pub speedup: Option<f64>,
    /// Replay a trace, one step `trace`, open loop at each line's offset: JSONL lines of
    /// Mooncake/AIPerf `{"timestamp": ms, "input_length", "output_length", "hash_ids"}` or
    /// `{"offset_s", "prompt_tokens", "output_tokens", "conversation_id"}` (optional).
    #[arg(
        long,
        value_name = "FILE.jsonl",
        conflicts_with_all = ["rate", "concurrency", "find_capacity"]
    )]
    pub trace: Option<std::path::PathBuf>,
    /// With --trace: replay X times faster (offsets divided by X) (default: 1). [range: 0.001–1000]
    #[arg(long, value_name = "X")]
    pub trace_speedup: Option<f64>,
    /// Prompts from a ShareGPT file (JSON array or JSONL of {"conversations": [{"from",
    /// "value"}]}): each request sends a conversation's first human turn (with --multi-turn,
    /// its human turns in order); output length is still --output-tokens; --prompt-tokens is
    /// not used (optional).
    #[arg(long, value_name = "FILE", conflicts_with = "trace")]
    pub prompts_sharegpt: Option<std::path::PathBuf>,
    /// Sampling temperature. [range: 0–2]
    #[arg(long, value_name = "T", default_value_t = LoadPlan::new("").temperature)]
    pub temperature: f32,
    /// Seed of the run's random draws (the arrival schedule, the lengths): give it to replay a
    /// run exactly. [range: 0–18446744073709551615]
    #[arg(long, value_name = "N", default_value_t = LoadPlan::new("").seed)]
    pub seed: u64,
    /// Goodput objectives, comma-separated, e.g. ttft=500ms,tpot=50ms (optional); the capacity
    /// finding then names the highest level where 95 % of requests met them.
    #[arg(long, value_name = "LIST")]
    pub slo: Option<String>,
    /// Measure each level N times, in rounds over the sweep, with fresh prompts each time:
    /// every figure becomes a mean with a 95 % interval, and a level whose repeats disagree is
    /// flagged `unstable`. [range: 1–1000]
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub repeat: u32,
    /// Open loop with --slo: search for the highest arrival rate meeting the objectives, from
    /// the first --rate (double until a rate fails, then bisect to within 10 %, at most 8 steps;
    /// when the first rate fails, halve at most three times).
    #[arg(long)]
    pub find_capacity: bool,
    /// A second endpoint measured alternately with --endpoint in the same run, level by level
    /// (optional; A then B, then B then A in the next round), so a drift reaches both; writes
    /// one artifact per side and prints their paired comparison (use --repeat 3 or more for
    /// intervals). The MTP on/off question: two seats, --concurrency 1 --output-tokens 1024.
    #[arg(long, value_name = "URL", requires = "endpoint")]
    pub versus: Option<String>,
    /// A JSON Schema file: the same workload sent constrained by it and unconstrained,
    /// alternately level by level as with --versus, on the one endpoint; prints the difference
    /// of output tok/s, TTFT, TPOT and ITL per level (B constrained minus A unconstrained; use
    /// --repeat 2 or more for intervals) and, apart, the compile cost the first request with
    /// the schema paid. Output pinning is off on both sides (optional).
    #[arg(long, value_name = "FILE")]
    pub schema: Option<std::path::PathBuf>,
    /// How each request carries its JSON Schema, with --schema (auto: OpenAI's
    /// response_format; native: the engine's own field, vLLM's by its version, llama.cpp's
    /// json_schema; or one form forced).
    #[arg(
        long,
        value_name = "FORM",
        default_value = "auto",
        requires = "schema",
        value_parser = choice::<SchemaFormArg>(Reading::AnyCase)
    )]
    pub schema_form: SchemaFormArg,
    /// Model id to request from --versus (default: the first id in its /v1/models).
    #[arg(long, value_name = "ID", requires = "versus")]
    pub versus_model: Option<String>,
    /// Name of the environment variable holding --versus's API key (default: the same key as
    /// --endpoint).
    #[arg(long, value_name = "NAME", requires = "versus")]
    pub versus_api_key_env: Option<String>,
    /// What to allow anyway: contaminated (with --versus or --schema: a side with a step
    /// measured under a condition flag) (optional; comma-separated or repeatable).
    #[arg(
        long,
        value_name = "WHAT",
        value_delimiter = ',',
        requires = "alternate",
        value_parser = item::<Allow>(Reading::Trimmed),
        hide_possible_values = true
    )]
    pub allow: Vec<Option<Allow>>,
    /// Skip the harness-ceiling measurement (then no step can be flagged client-bound).
    #[arg(long)]
    pub no_calibrate: bool,
    /// Do not scrape /metrics around each step, nor sample the engine's gauges through it.
    #[arg(long)]
    pub no_metrics: bool,
    #[command(flatten)]
    pub naming: super::NamingArgs,
    /// Print JSON instead of text (the artifact; no progress bars).
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
        default_value_t = 4
    )]
    pub local_parallel: u32,
}

#[derive(Debug, Args)]
pub struct BenchCalibrateArgs {
    /// Streams to open at once for the concurrent-streams figure. [range: 1–65536]
    #[arg(long, value_name = "N", default_value_t = CalibrationOptions::default().streams)]
    pub streams: u32,
    /// Seconds per phase (requests/s, tokens/s). [range: 0.1–3600]
    #[arg(long, value_name = "SECS", default_value_t = CalibrationOptions::default().phase.as_secs_f64())]
    pub seconds: f64,
    /// Print JSON instead of text (the calibration).
    #[arg(long)]
    pub json: bool,
}

//! `bakeoff plan` and `bakeoff kv`: GPU memory claims, measured usage, headroom, coexistence;
//! KV bytes per token and the tokens a budget holds. Numeric flags are parsed as signed numbers
//! so that a zero, negative or NaN value reaches the command's own check, which refuses it in
//! one line naming the flag and the fix (exit 2).

use std::path::PathBuf;

use clap::Args;

use super::{CacheType, KvDtype, Reading, choice};

#[derive(Debug, Args)]
pub struct PlanArgs {
    /// The fleet file (docs/fleet.md), relative to the working directory (default:
    /// fleet.toml, when there is one; without a fleet file only the GPUs and their processes
    /// are shown).
    #[arg(long, value_name = "FILE")]
    pub fleet: Option<PathBuf>,
    /// Print JSON instead of text (the whole plan, NVML and nvidia-smi readings side by side).
    #[arg(long)]
    pub json: bool,
    /// Warn when headroom is below this many GiB (0: no margin). [range: 0–1024]
    #[arg(
        long,
        value_name = "GIB",
        default_value_t = 2.0,
        allow_negative_numbers = true
    )]
    pub margin: f64,
    /// Answer "can A and B coexist on --gpu N": `--coexist A,B` (optional).
    #[arg(long, value_name = "A,B", requires = "gpu")]
    pub coexist: Option<String>,
    /// The GPU index for --coexist (0, 1, … as nvidia-smi numbers them) (optional). [range: 0–255]
    #[arg(long, value_name = "INDEX", allow_negative_numbers = true)]
    pub gpu: Option<i64>,
    /// Memory of each GPU in GiB, for planning where no GPU can be read (e.g. 94.97 for an
    /// H100 NVL as PyTorch reports it) (default: as read from the GPUs). [range: 0.1–16384]
    #[arg(long, value_name = "GIB", allow_negative_numbers = true)]
    pub gpu_memory_gib: Option<f64>,
    /// A seat's engine version when its Docker image tag does not say it: `SEAT=0.26.0`
    /// (decides which vLLM CUDA-graph rule applies); repeatable.
    #[arg(long = "engine-version", value_name = "SEAT=VERSION")]
    pub engine_versions: Vec<String>,
    /// Estimated CUDA context + non-torch memory per process, GiB. [range: 0.001–1024]
    #[arg(
        long,
        value_name = "GIB",
        default_value_t = 0.5,
        allow_negative_numbers = true
    )]
    pub cuda_context_gib: f64,
    /// Estimated CUDA-graph memory of vLLM before v0.21 (outside its budget), GiB. [range: 0.001–1024]
    #[arg(
        long,
        value_name = "GIB",
        default_value_t = 1.0,
        allow_negative_numbers = true
    )]
    pub cuda_graphs_gib: f64,
    /// The nvidia-smi binary.
    #[arg(long, value_name = "BIN", default_value = "nvidia-smi", hide = true)]
    pub nvidia_smi: String,
}

#[derive(Debug, Args)]
pub struct KvArgs {
    /// A checkpoint directory, its config.json, or a .gguf file.
    pub path: PathBuf,
    /// The context window, in tokens: here the sequence length the ratio is taken against
    /// (default: the model's context length, for a GGUF its `context_length`). A length past
    /// the model's own is warned about and the answer capped at it. [range: 1–16777216]
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub max_model_len: Option<i64>,
    /// KV budget in GiB (vLLM's "Available KV cache memory") (default: from --log if it has
    /// one). For a GGUF: the largest llama-server `-c` whose KV buffers fit in it, capped at
    /// the model's training context per sequence. [range: 0.001–16384]
    #[arg(long, value_name = "GIB", allow_negative_numbers = true)]
    pub budget_gib: Option<f64>,
    /// vLLM `--kv-cache-dtype` (for a config.json; a GGUF's cache types are --cache-type-k/-v).
    #[arg(
        long,
        value_name = "DTYPE",
        default_value = "auto",
        value_parser = choice::<KvDtype>(Reading::AnyCase)
    )]
    pub kv_cache_dtype: KvDtype,
    /// Tensor-parallel size (KV heads are split, or replicated when fewer than ranks). [range: 1–1024]
    #[arg(
        long,
        value_name = "N",
        default_value_t = 1,
        allow_negative_numbers = true
    )]
    pub tp: i64,
    /// An engine log to cross-check against (vLLM `GPU KV cache size`, llama.cpp KV lines)
    /// (optional).
    #[arg(long, value_name = "FILE")]
    pub log: Option<PathBuf>,
    /// llama.cpp `-c`, the context size of all slots together: here for a GGUF (default: the
    /// model's context length). [range: 1–16777216]
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub ctx: Option<i64>,
    /// llama.cpp `-np`, the number of parallel slots: here for a GGUF. [range: 1–4096]
    #[arg(
        long,
        value_name = "N",
        default_value_t = 1,
        allow_negative_numbers = true
    )]
    pub parallel: i64,
    /// llama.cpp `-kvu`: one KV buffer shared by all slots.
    #[arg(long)]
    pub kv_unified: bool,
    /// llama.cpp `--cache-type-k` (`-ctk`) for a GGUF.
    #[arg(
        long,
        visible_alias = "ctk",
        value_name = "TYPE",
        default_value = "f16",
        value_parser = choice::<CacheType>(Reading::AnyCase)
    )]
    pub cache_type_k: CacheType,
    /// llama.cpp `--cache-type-v` (`-ctv`) for a GGUF (same types; a quantized V cache needs
    /// flash attention in llama.cpp).
    #[arg(
        long,
        visible_alias = "ctv",
        value_name = "TYPE",
        default_value = "f16",
        value_parser = choice::<CacheType>(Reading::AnyCase)
    )]
    pub cache_type_v: CacheType,
    /// Print JSON instead of text (the KV report).
    #[arg(long)]
    pub json: bool,
}

//! `bakeoff audit template|checkpoint`.

use std::path::PathBuf;

use clap::{Args, Subcommand};

#[derive(Debug, Subcommand)]
pub enum AuditCommand {
    /// Hash each chat template (normalized), compare with a reference, render one fixed
    /// conversation through each like transformers does, and diff the prompts.
    #[command(
        after_help = "Examples:\n  bakeoff audit template ~/models/qwen3-8b ~/models/qwen3-8b-awq\n  bakeoff audit template http://127.0.0.1:8080 --reference ~/models/gemma-3/tokenizer_config.json --json"
    )]
    Template(AuditTemplateArgs),
    /// Weights size, architecture, model type, and the quantization config against a
    /// serving flag (exit 1 on a mismatch).
    #[command(
        after_help = "Examples:\n  bakeoff audit checkpoint ~/models/qwen3-8b-awq --quantization awq\n  bakeoff audit checkpoint ~/models/gemma-3-270m-q4_k_m.gguf --json"
    )]
    Checkpoint(AuditCheckpointArgs),
    /// Model download caches (Hugging Face hub layout, llama.cpp's own cache): incomplete
    /// blobs and partial files, snapshot links to missing blobs, and who holds each download
    /// lock (exit 1 on an incomplete download or a lock held by a process that is not
    /// progressing).
    #[command(
        after_help = "Examples:\n  bakeoff audit cache ~/.cache/huggingface ~/.cache/llama.cpp   # the default HF_HOME and LLAMA_CACHE\n  bakeoff audit cache /var/lib/docker/volumes/hf-cache/_data --json"
    )]
    Cache(AuditCacheArgs),
    /// A seat's checks before a start, without starting it: the checkpoint audit, cache
    /// mounts, the Hugging Face token and the pinned chat template (exit 1 when the start
    /// would be refused or a finding is an error).
    #[command(
        after_help = "Examples:\n  bakeoff audit seat --fleet examples/fleet.toml gemma-docker\n  bakeoff audit seat char-rp --json"
    )]
    Seat(AuditSeatArgs),
}

#[derive(Debug, Args)]
pub struct AuditTemplateArgs {
    /// Model directories, tokenizer_config.json, chat_template.jinja, .gguf files, or running
    /// endpoints (http://host:port: llama.cpp `/props`).
    #[arg(value_name = "PATH", required = true)]
    pub paths: Vec<String>,
    /// The template everything is matched against (same kinds as PATH) (optional).
    #[arg(long, value_name = "PATH")]
    pub reference: Option<String>,
    /// Print JSON instead of text (each template's hash and the diffs).
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct AuditCheckpointArgs {
    /// A checkpoint directory (config.json + safetensors) or a .gguf file.
    pub path: PathBuf,
    /// The serving flag to check (vLLM `--quantization`) (default: none, as a server started
    /// without the flag).
    #[arg(long, value_name = "METHOD")]
    pub quantization: Option<String>,
    /// Print JSON instead of text (the audit).
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct AuditCacheArgs {
    /// Cache directories: HF_HOME (~/.cache/huggingface), its hub/, one models--ORG--NAME
    /// dir, or a llama.cpp cache (~/.cache/llama.cpp).
    #[arg(value_name = "PATH", required = true)]
    pub paths: Vec<PathBuf>,
    /// Print JSON instead of text (schemas/cache-audit.v1.schema.json).
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct AuditSeatArgs {
    #[command(flatten)]
    pub fleet: crate::cli::FleetArgs,
    /// The seat to check, by name.
    #[arg(value_name = "SEAT")]
    pub seat: String,
    /// Print JSON instead of text (the refusal, if any, and the findings).
    #[arg(long)]
    pub json: bool,
}

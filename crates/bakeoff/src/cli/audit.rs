//! `bakeoff audit template|checkpoint`.

use std::path::PathBuf;

use clap::{Args, Subcommand};

#[derive(Debug, Subcommand)]
pub enum AuditCommand {
    /// Hash each chat template (normalized), compare with a reference, render one fixed
    /// conversation through each like transformers does, and diff the prompts.
    Template(AuditTemplateArgs),
    /// Weights size, architecture, model type, and the quantization config against a
    /// serving flag (exit 1 on a mismatch).
    Checkpoint(AuditCheckpointArgs),
}

#[derive(Debug, Args)]
pub struct AuditTemplateArgs {
    /// Model directories, tokenizer_config.json, chat_template.jinja, .gguf files, or running
    /// endpoints (http://host:port: llama.cpp `/props`).
    #[arg(required = true)]
    pub paths: Vec<String>,
    /// The template everything is matched against (same kinds as PATH).
    #[arg(long)]
    pub reference: Option<String>,
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct AuditCheckpointArgs {
    /// A checkpoint directory (config.json + safetensors) or a .gguf file.
    pub path: PathBuf,
    /// The serving flag to check (vLLM `--quantization`); absent = no flag.
    #[arg(long)]
    pub quantization: Option<String>,
    #[arg(long)]
    pub json: bool,
}

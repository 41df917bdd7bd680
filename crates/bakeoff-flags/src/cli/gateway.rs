//! `bakeoff gateway …` arguments.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use super::FleetArgs;

#[derive(Debug, Subcommand)]
pub enum GatewayCommand {
    /// Write a LiteLLM proxy config.yaml from the fleet: every seat's served names and every
    /// alias, each routed to its seat's http://ADDRESS:PORT/v1 (dormant seats left out).
    #[command(
        after_help = "Examples:\n  bakeoff gateway export --fleet examples/fleet.toml\n  bakeoff gateway export --fleet fleet.toml --out litellm/config.yaml --api-key-env VLLM_API_KEY"
    )]
    Export(GatewayExportArgs),
}

#[derive(Debug, Args, Clone)]
pub struct GatewayExportArgs {
    #[command(flatten)]
    pub fleet: FleetArgs,
    /// The config file to write (optional: without it the config goes to stdout); never
    /// replaced without --force.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Name of the environment variable holding the API key: the proxy reads it as
    /// `os.environ/NAME`, the key itself is never written (optional; default: no api_key).
    #[arg(long, value_name = "NAME")]
    pub api_key_env: Option<String>,
    /// Replace the --out file when it exists (optional).
    #[arg(long)]
    pub force: bool,
}

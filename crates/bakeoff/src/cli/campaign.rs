//! `bakeoff campaign …` arguments.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use super::WatchTimingArgs;

#[derive(Debug, Subcommand)]
pub enum CampaignCommand {
    /// Run a campaign file: each variant started, watched, measured and stopped in order;
    /// displaced seats restored on every exit path; resumes from its journal.
    Run(CampaignRunArgs),
    /// The ladder table of a campaign directory, as it stands.
    Status(CampaignDirArgs),
    /// Only the recovery: stop the seats a killed campaign left up, restore the seats it
    /// displaced, record the interrupted variant.
    Restore(CampaignRestoreArgs),
}

#[derive(Debug, Args, Clone)]
pub struct CampaignRunArgs {
    /// The campaign file (docs/campaign.md).
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// Required when a bench window displaces a production seat; without it the campaign
    /// prints its plan and exits 1 before touching anything.
    #[arg(long)]
    pub confirm: bool,
    /// Print the expanded variants (each exact command or container), the seats each
    /// displaces and the memory check; start nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Start over: the directory's old files move under `previous-<time>/` (kept).
    #[arg(long)]
    pub fresh: bool,
    /// Only these candidates or variants (comma-separated or repeated).
    #[arg(long, value_name = "NAME", value_delimiter = ',')]
    pub only: Vec<String>,
    #[command(flatten)]
    pub watch: WatchTimingArgs,
    /// The nvidia-smi binary the memory check reads GPUs with.
    #[arg(long, value_name = "BIN", default_value = "nvidia-smi")]
    pub nvidia_smi: String,
    /// Print campaign.json on stdout at the end (progress still goes to stderr).
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args, Clone)]
pub struct CampaignDirArgs {
    /// The campaign's output directory (where campaign.json is).
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
    /// Print campaign.json instead of the table.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args, Clone)]
pub struct CampaignRestoreArgs {
    /// The campaign's output directory (where campaign.journal.jsonl is).
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
    #[command(flatten)]
    pub watch: WatchTimingArgs,
}

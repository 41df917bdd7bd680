//! `bakeoff campaign …` arguments.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use super::{Allow, Reading, WatchTimingArgs, item};

#[derive(Debug, Subcommand)]
pub enum CampaignCommand {
    /// Run a campaign file: each variant started, watched, measured and stopped in order;
    /// displaced seats restored on every exit path; resumes from its journal.
    #[command(
        after_help = "Examples:\n  bakeoff campaign run examples/campaign/campaign.toml\n  bakeoff campaign run campaign.toml --dry-run --only gemma\n  bakeoff campaign run campaign.toml --out results/retry-2"
    )]
    Run(CampaignRunArgs),
    /// The ladder table of a campaign directory, as it stands.
    #[command(
        after_help = "Examples:\n  bakeoff campaign status results/example-ladder\n  bakeoff campaign status results/example-ladder --json"
    )]
    Status(CampaignDirArgs),
    /// Only the recovery: stop the seats a killed campaign left up, restore the seats it
    /// displaced, record the interrupted variant.
    #[command(
        after_help = "Examples:\n  bakeoff campaign restore results/example-ladder\n  bakeoff campaign restore results/example-ladder --ready-timeout 1800"
    )]
    Restore(CampaignRestoreArgs),
}

#[derive(Debug, Args, Clone)]
pub struct CampaignRunArgs {
    /// The campaign file (docs/campaign.md).
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// Required to act on a production seat (here: a bench window that displaces one); without
    /// it the campaign prints its plan and exits 1 before touching anything.
    #[arg(long)]
    pub confirm: bool,
    /// Print the expanded variants (each exact command or container), the seats each
    /// displaces and the memory check; start nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Start over: the directory's old files move under `previous-<time>/` (kept).
    #[arg(long)]
    pub fresh: bool,
    /// Write everything here instead of the campaign file's `out`; resuming reads this
    /// directory's journal (default: the file's `out`, else results/<name> beside the file).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Only these candidates or variants, comma-separated or repeatable (default: all).
    #[arg(long, value_name = "NAME", value_delimiter = ',')]
    pub only: Vec<String>,
    #[command(flatten)]
    pub watch: WatchTimingArgs,
    /// The nvidia-smi binary: here the one the memory check reads GPUs with.
    #[arg(long, value_name = "BIN", default_value = "nvidia-smi")]
    pub nvidia_smi: String,
    /// Print JSON instead of text (campaign.json, at the end; progress still goes to stderr).
    #[arg(long)]
    pub json: bool,
    /// What to allow anyway: contaminated (suggest verdicts for variants measured under a
    /// condition flag too; without it they are withheld) (comma-separated or repeatable).
    #[arg(
        long,
        value_name = "WHAT",
        value_delimiter = ',',
        value_parser = item::<Allow>(Reading::Trimmed),
        hide_possible_values = true
    )]
    pub allow: Vec<Option<Allow>>,
}

#[derive(Debug, Args, Clone)]
pub struct CampaignDirArgs {
    /// The campaign's output directory (where campaign.json is).
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
    /// Print JSON instead of text (campaign.json, instead of the table).
    #[arg(long)]
    pub json: bool,
    /// What to allow anyway: contaminated (as `campaign run --allow contaminated`) (optional;
    /// comma-separated or repeatable).
    #[arg(
        long,
        value_name = "WHAT",
        value_delimiter = ',',
        value_parser = item::<Allow>(Reading::Trimmed),
        hide_possible_values = true
    )]
    pub allow: Vec<Option<Allow>>,
}

#[derive(Debug, Args, Clone)]
pub struct CampaignRestoreArgs {
    /// The campaign's output directory (where campaign.journal.jsonl is).
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
    #[command(flatten)]
    pub watch: WatchTimingArgs,
}

//! `bakeoff report`, `bakeoff verdict`, `bakeoff retract`, `bakeoff log …` arguments: keeping
//! honest evidence.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use super::{Allow, Reading, Verdict, choice, item};

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Results directory (the --out of `bakeoff eval run`); read recursively.
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
    /// Write the self-contained HTML report here (default: DIR/report.html).
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Write the markdown negative-results log here (default: DIR/negative-results.md).
    #[arg(long, value_name = "FILE")]
    pub markdown: Option<PathBuf>,
    /// Also write items.csv and steps.csv into this directory (optional).
    #[arg(long, value_name = "DIR")]
    pub csv: Option<PathBuf>,
    /// Print the table only; write no files.
    #[arg(long)]
    pub no_files: bool,
    /// What to allow anyway: contaminated (a campaign's verdicts resting on variants
    /// measured under a condition flag, as `campaign run --allow contaminated`) (optional;
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

#[derive(Debug, Args)]
pub struct VerdictArgs {
    /// Candidate slug (the name of its artifacts).
    #[arg(value_name = "SLUG")]
    pub slug: String,
    /// accept, reject (under tested configuration), not-enough-evidence, or watch.
    #[arg(value_name = "VERDICT", value_parser = choice::<Verdict>(Reading::Words))]
    pub verdict: Verdict,
    /// Why: it is the record.
    #[arg(long, value_name = "TEXT", allow_hyphen_values = true)]
    pub reason: String,
    /// Results directory, relative to the working directory: here the one holding the
    /// candidate's artifacts, where the verdict is written (`--dir` is the old spelling).
    #[arg(
        long = "out",
        alias = "dir",
        value_name = "DIR",
        default_value = "results"
    )]
    pub dir: PathBuf,
    /// Something not attempted (another image, engine, checkpoint, …); repeatable.
    #[arg(long, value_name = "WHAT")]
    pub not_attempted: Vec<String>,
    /// Production impact, when there was one worth noting (optional).
    #[arg(long, value_name = "TEXT")]
    pub impact: Option<String>,
}

#[derive(Debug, Args)]
pub struct RetractArgs {
    /// The artifact file whose result is superseded (it is kept unchanged).
    #[arg(value_name = "FILE")]
    pub artifact: PathBuf,
    /// Why: it is the record.
    #[arg(long, value_name = "TEXT", allow_hyphen_values = true)]
    pub reason: String,
}

#[derive(Debug, Subcommand)]
pub enum LogCommand {
    /// Add a dated entry and its index line.
    #[command(
        after_help = "Examples:\n  bakeoff log add --title \"vLLM 0.21 on gpu-1\" --summary \"OOM at 32k; retest with fp8 KV\" --artifact results/qwen3-8b-vllm-bf16-32k.failure.json\n  bakeoff log add --title \"Driver update\" --summary \"550 -> 570\" --body-file notes.md --date 2026-12-01"
    )]
    Add(LogAddArgs),
    /// List live entries (oldest first), marking those with open work.
    #[command(after_help = "Examples:\n  bakeoff log list\n  bakeoff log list --dir ops/logbook")]
    List(LogDirArgs),
    /// Move entries older than --age days to ARCHIVE.md, keeping those with open work.
    #[command(
        after_help = "Examples:\n  bakeoff log archive --age 90\n  bakeoff log archive --age 30 --marker BLOCKED --dir ops/logbook"
    )]
    Archive(LogArchiveArgs),
}

#[derive(Debug, Args, Clone)]
pub struct LogDirArgs {
    /// Logbook directory.
    #[arg(long, value_name = "DIR", default_value = "logbook")]
    pub dir: PathBuf,
}

#[derive(Debug, Args)]
pub struct LogAddArgs {
    #[command(flatten)]
    pub dir: LogDirArgs,
    /// One-line title.
    #[arg(long, value_name = "TEXT", allow_hyphen_values = true)]
    pub title: String,
    /// One-line summary (the index line carries it).
    #[arg(long, value_name = "TEXT", allow_hyphen_values = true)]
    pub summary: String,
    /// Body text, markdown (optional).
    #[arg(
        long,
        value_name = "TEXT",
        conflicts_with = "body_file",
        allow_hyphen_values = true
    )]
    pub body: Option<String>,
    /// Read the body from a file, `-` for stdin (optional).
    #[arg(long, value_name = "FILE")]
    pub body_file: Option<PathBuf>,
    /// An artifact to link; repeatable.
    #[arg(long, value_name = "PATH")]
    pub artifact: Vec<String>,
    /// A commit to link; repeatable.
    #[arg(long, value_name = "SHA")]
    pub commit: Vec<String>,
    /// Entry date, YYYY-MM-DD (default: today, UTC).
    #[arg(long, value_name = "DATE")]
    pub date: Option<String>,
}

#[derive(Debug, Args)]
pub struct LogArchiveArgs {
    #[command(flatten)]
    pub dir: LogDirArgs,
    /// Archive entries older than this many days (required). [range: 0–36500]
    #[arg(long, value_name = "DAYS")]
    pub age: u32,
    /// An open-work marker that keeps an entry (replaces the defaults: TODO, retest,
    /// follow-up, open question); repeatable.
    #[arg(long, value_name = "TEXT")]
    pub marker: Vec<String>,
    /// Index length, in lines, to report against; never forced. [range: 1–1000000]
    #[arg(long, value_name = "LINES", default_value_t = 250)]
    pub target: usize,
    /// Treat this date (YYYY-MM-DD) as today (default: today, UTC).
    #[arg(long, value_name = "DATE")]
    pub today: Option<String>,
}

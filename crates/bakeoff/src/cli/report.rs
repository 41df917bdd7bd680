//! `bakeoff report`, `bakeoff verdict`, `bakeoff retract`, `bakeoff log …` arguments: keeping
//! honest evidence.

use std::path::PathBuf;

use clap::{Args, Subcommand};

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Directory of artifacts (the --out of `bakeoff eval run`); read recursively.
    pub dir: PathBuf,
    /// Write the self-contained HTML report here (default: DIR/report.html).
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Write the markdown negative-results log here (default: DIR/negative-results.md).
    #[arg(long, value_name = "FILE")]
    pub markdown: Option<PathBuf>,
    /// Also write items.csv and steps.csv into this directory.
    #[arg(long, value_name = "DIR")]
    pub csv: Option<PathBuf>,
    /// Print the table only; write no files.
    #[arg(long)]
    pub no_files: bool,
}

#[derive(Debug, Args)]
pub struct VerdictArgs {
    /// Candidate slug (the name of its artifacts).
    pub slug: String,
    /// accept, reject (under tested configuration), not-enough-evidence, or watch.
    pub verdict: String,
    /// Why: it is the record.
    #[arg(long, allow_hyphen_values = true)]
    pub reason: String,
    /// Directory holding the candidate's artifacts.
    #[arg(long, default_value = "results")]
    pub dir: PathBuf,
    /// Something not attempted (another image, engine, checkpoint, …); repeatable.
    #[arg(long, value_name = "WHAT")]
    pub not_attempted: Vec<String>,
    /// Production impact, when there was one worth noting.
    #[arg(long, value_name = "TEXT")]
    pub impact: Option<String>,
}

#[derive(Debug, Args)]
pub struct RetractArgs {
    /// The artifact file whose result is superseded (it is kept unchanged).
    pub artifact: PathBuf,
    /// Why: it is the record.
    #[arg(long, allow_hyphen_values = true)]
    pub reason: String,
}

#[derive(Debug, Subcommand)]
pub enum LogCommand {
    /// Add a dated entry and its index line.
    Add(LogAddArgs),
    /// List live entries (oldest first), marking those with open work.
    List(LogDirArgs),
    /// Move entries older than --age days to ARCHIVE.md, keeping those with open work.
    Archive(LogArchiveArgs),
}

#[derive(Debug, Args, Clone)]
pub struct LogDirArgs {
    /// Logbook directory.
    #[arg(long, default_value = "logbook")]
    pub dir: PathBuf,
}

#[derive(Debug, Args)]
pub struct LogAddArgs {
    #[command(flatten)]
    pub dir: LogDirArgs,
    /// One-line title.
    #[arg(long, allow_hyphen_values = true)]
    pub title: String,
    /// One-line summary (the index line carries it).
    #[arg(long, allow_hyphen_values = true)]
    pub summary: String,
    /// Body text (markdown).
    #[arg(long, conflicts_with = "body_file", allow_hyphen_values = true)]
    pub body: Option<String>,
    /// Read the body from a file (`-` for stdin).
    #[arg(long, value_name = "FILE")]
    pub body_file: Option<PathBuf>,
    /// An artifact to link; repeatable.
    #[arg(long, value_name = "PATH")]
    pub artifact: Vec<String>,
    /// A commit to link; repeatable.
    #[arg(long, value_name = "SHA")]
    pub commit: Vec<String>,
    /// Entry date, YYYY-MM-DD (default: today, UTC).
    #[arg(long)]
    pub date: Option<String>,
}

#[derive(Debug, Args)]
pub struct LogArchiveArgs {
    #[command(flatten)]
    pub dir: LogDirArgs,
    /// Archive entries older than this many days.
    #[arg(long, value_name = "DAYS")]
    pub age: u32,
    /// An open-work marker that keeps an entry (replaces the defaults: TODO, retest,
    /// follow-up, open question); repeatable.
    #[arg(long, value_name = "TEXT")]
    pub marker: Vec<String>,
    /// Index length to report against; never forced.
    #[arg(long, value_name = "LINES", default_value_t = 250)]
    pub target: usize,
    /// Treat this date (YYYY-MM-DD) as today.
    #[arg(long)]
    pub today: Option<String>,
}

//! `report`, `verdict`, `retract`, `log add|list|archive`.

use std::path::PathBuf;

use bakeoff_report::evidence::VerdictKind;
use bakeoff_report::logbook::DEFAULT_MARKERS;
use chrono::NaiveDate;

use crate::FlagError;
use crate::cli::{LogAddArgs, LogArchiveArgs, ReportArgs, RetractArgs, VerdictArgs};

#[derive(Debug)]
pub struct ReportConfig {
    pub dir: PathBuf,
    /// Where the views go (defaults resolved: DIR/negative-results.md, DIR/report.html);
    /// `None` with `--no-files`.
    pub files: Option<ReportFiles>,
    /// `--allow contaminated`: a campaign's withheld verdicts are given.
    pub allow_contaminated: bool,
}

#[derive(Debug)]
pub struct ReportFiles {
    pub markdown: PathBuf,
    pub html: PathBuf,
    pub csv: Option<PathBuf>,
}

impl ReportArgs {
    pub fn validate(self) -> Result<ReportConfig, FlagError> {
        let files = (!self.no_files).then(|| ReportFiles {
            markdown: self
                .markdown
                .unwrap_or_else(|| self.dir.join("negative-results.md")),
            html: self.html.unwrap_or_else(|| self.dir.join("report.html")),
            csv: self.csv,
        });
        let allow_contaminated = super::allow_contaminated(&self.allow, "report")?;
        Ok(ReportConfig {
            dir: self.dir,
            files,
            allow_contaminated,
        })
    }
}

#[derive(Debug)]
pub struct VerdictConfig {
    pub slug: String,
    pub verdict: VerdictKind,
    /// Trimmed, never empty.
    pub reason: String,
    pub dir: PathBuf,
    pub not_attempted: Vec<String>,
    pub impact: Option<String>,
}

impl VerdictArgs {
    pub fn validate(self) -> Result<VerdictConfig, FlagError> {
        let verdict = VerdictKind::from(self.verdict);
        let reason = self.reason.trim().to_string();
        if reason.is_empty() {
            return Err(FlagError::invalid(
                "--reason is empty: say why, it is the record",
            ));
        }
        Ok(VerdictConfig {
            slug: self.slug,
            verdict,
            reason,
            dir: self.dir,
            not_attempted: self.not_attempted,
            impact: self.impact,
        })
    }
}

/// `retract`: nothing to convert (the library refuses an empty reason with the same words as
/// `verdict`); kept as a config so every verb has one.
#[derive(Debug)]
pub struct RetractConfig {
    pub artifact: PathBuf,
    pub reason: String,
}

impl RetractArgs {
    pub fn validate(self) -> Result<RetractConfig, FlagError> {
        Ok(RetractConfig {
            artifact: self.artifact,
            reason: self.reason,
        })
    }
}

/// Where `log add` takes the body from.
#[derive(Debug)]
pub enum BodySource {
    Text(String),
    Stdin,
    File(PathBuf),
}

impl BodySource {
    /// The body's text: as given, or read from stdin or `--body-file`'s file.
    pub fn read(&self) -> Result<String, FlagError> {
        match self {
            BodySource::Stdin => {
                let mut s = String::new();
                std::io::Read::read_to_string(&mut std::io::stdin(), &mut s)
                    .map_err(FlagError::BodyStdin)?;
                Ok(s)
            }
            BodySource::File(p) => {
                std::fs::read_to_string(p).map_err(|source| FlagError::BodyFile {
                    path: p.clone(),
                    source,
                })
            }
            BodySource::Text(t) => Ok(t.clone()),
        }
    }
}

#[derive(Debug)]
pub struct LogAddConfig {
    pub dir: PathBuf,
    pub date: NaiveDate,
    pub title: String,
    pub summary: String,
    pub body: BodySource,
    pub artifacts: Vec<String>,
    pub commits: Vec<String>,
}

impl LogAddArgs {
    pub fn validate(self) -> Result<LogAddConfig, FlagError> {
        let body = match self.body_file {
            Some(p) if p.as_os_str() == "-" => BodySource::Stdin,
            Some(p) => BodySource::File(p),
            None => BodySource::Text(self.body.unwrap_or_default()),
        };
        Ok(LogAddConfig {
            dir: self.dir.dir,
            date: date(self.date.as_deref(), "--date")?,
            title: self.title,
            summary: self.summary,
            body,
            artifacts: self.artifact,
            commits: self.commit,
        })
    }
}

#[derive(Debug)]
pub struct LogArchiveConfig {
    pub dir: PathBuf,
    pub age: u32,
    /// `--marker`, or the defaults when none is given.
    pub markers: Vec<String>,
    pub target: usize,
    pub today: NaiveDate,
}

impl LogArchiveArgs {
    pub fn validate(self) -> Result<LogArchiveConfig, FlagError> {
        let markers = if self.marker.is_empty() {
            default_markers()
        } else {
            self.marker
        };
        Ok(LogArchiveConfig {
            dir: self.dir.dir,
            age: self.age,
            markers,
            target: self.target,
            today: date(self.today.as_deref(), "--today")?,
        })
    }
}

pub fn default_markers() -> Vec<String> {
    DEFAULT_MARKERS.iter().map(|s| s.to_string()).collect()
}

/// A `YYYY-MM-DD` flag; absent: today (UTC).
fn date(s: Option<&str>, flag: &str) -> Result<NaiveDate, FlagError> {
    match s {
        None => Ok(chrono::Utc::now().date_naive()),
        Some(s) => NaiveDate::parse_from_str(s, "%Y-%m-%d")
            .map_err(|_| FlagError::invalid(format!("{flag} {s:?} is not a date; use YYYY-MM-DD"))),
    }
}

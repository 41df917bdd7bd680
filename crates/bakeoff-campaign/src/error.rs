//! The campaign's errors: each one line naming the thing and the fix.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum CampaignError {
    #[error("cannot read the campaign file {path} ({source}): check the path (docs/campaign.md)")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    /// A campaign file that does not parse or does not validate.
    #[error("{path}: {message}")]
    Invalid { path: PathBuf, message: String },
    #[error(transparent)]
    Fleet(#[from] bakeoff_seats::FleetError),
    #[error(transparent)]
    Store(#[from] bakeoff_artifact::StoreError),
    #[error("{path}: {message}")]
    Io { path: PathBuf, message: String },
    /// The journal cannot be read back: the campaign cannot tell what it already did.
    #[error("{path}: line {line}: {message}; move the directory aside or run with --fresh")]
    Journal {
        path: PathBuf,
        line: usize,
        message: String,
    },
    /// Displaced production seats without `--confirm`: nothing was touched.
    #[error(
        "refused: the campaign displaces production seat(s) {seats} and --confirm was not given; nothing was touched. Rerun with --confirm to run it"
    )]
    NeedsConfirm { seats: String },
    #[error(
        "{dir}: no campaign journal here (campaign.journal.jsonl); give the campaign's output directory"
    )]
    NoJournal { dir: PathBuf },
    /// The embedded default (`{cache}` in a seat's command) could not be provisioned.
    #[error("provisioning the embedded default under {cache}: {message}")]
    Provision { cache: PathBuf, message: String },
    #[error("--only {name}: no candidate or variant of that name; the campaign has: {known}")]
    UnknownOnly { name: String, known: String },
}

impl CampaignError {
    pub(crate) fn io(path: &std::path::Path, e: impl std::fmt::Display) -> Self {
        CampaignError::Io {
            path: path.to_path_buf(),
            message: e.to_string(),
        }
    }
}

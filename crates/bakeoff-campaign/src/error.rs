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
    #[error("{path}: {problem}")]
    Invalid {
        path: PathBuf,
        #[source]
        problem: Invalid,
    },
    #[error(transparent)]
    Fleet(#[from] bakeoff_seats::FleetError),
    #[error(transparent)]
    Store(#[from] bakeoff_artifact::StoreError),
    /// A file of the campaign's directory that cannot be written or read: the path, then the
    /// failure's own message; the failure is kept typed so a caller can tell its kind.
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: IoCause,
    },
    /// The journal cannot be read back: the campaign cannot tell what it already did.
    #[error("{path}: line {line}: {problem}; move the directory aside or run with --fresh")]
    Journal {
        path: PathBuf,
        line: usize,
        #[source]
        problem: JournalProblem,
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
    #[error("provisioning the embedded default under {cache}: {source}")]
    Provision {
        cache: PathBuf,
        #[source]
        source: bakeoff_local::LocalError,
    },
    #[error("--only {name}: no candidate or variant of that name; the campaign has: {known}")]
    UnknownOnly { name: String, known: String },
}

impl CampaignError {
    pub(crate) fn io(path: &std::path::Path, e: impl Into<IoCause>) -> Self {
        CampaignError::Io {
            path: path.to_path_buf(),
            source: e.into(),
        }
    }
}

/// Why a file of the campaign's directory could not be read or written. Each shows its own
/// message unchanged (`CampaignError::Io` puts the path before it).
#[derive(Debug, thiserror::Error)]
pub enum IoCause {
    /// The file system's (create, open, read, rename, append).
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// A journal line that could not be serialized.
    #[error(transparent)]
    Json(#[from] serde_json::Error),
    /// `negative-results.md`, written beside the record.
    #[error(transparent)]
    Logbook(#[from] bakeoff_report::logbook::LogbookError),
}

/// What is wrong with a journal line.
#[derive(Debug, thiserror::Error)]
pub enum JournalProblem {
    /// A line (not a last one cut short by a kill) that is no journal entry.
    #[error(transparent)]
    Parse(#[from] serde_json::Error),
    /// No `campaign-started` line: `campaign restore DIR` cannot find the campaign file.
    #[error("no campaign-started line names the campaign file")]
    NoCampaignFile,
}

/// What is wrong with a campaign file (or the directory it writes to), with the fix.
#[derive(Debug, thiserror::Error)]
pub enum Invalid {
    /// TOML that does not parse, or an unknown key: one line naming the key and the fix,
    /// redacted (`bakeoff_seats::toml_line`).
    #[error("{0}")]
    Toml(String),
    #[error(
        "{what} {name:?} must be lower-case letters, digits and single dashes (e.g. {suggestion:?})"
    )]
    Name {
        what: &'static str,
        name: String,
        suggestion: String,
    },
    /// `suites` names one that does not exist; the suites crate's own message.
    #[error("suites: {0}")]
    Suites(String),
    #[error("suites: name at least one suite (e.g. suites = [\"smoke\"])")]
    NoSuites,
    #[error("limit must be at least 1")]
    ZeroLimit,
    #[error("gpu_memory_gib = {0} is not a size in GiB (e.g. 94.97)")]
    GpuMemory(f64),
    #[error("margin_gib = {0} is not a size in GiB")]
    Margin(f64),
    #[error("no [[candidate]]: a campaign needs at least one candidate")]
    NoCandidate,
    #[error("candidate {0:?} is declared twice; candidate names must be unique")]
    DuplicateCandidate(String),
    #[error("candidate {candidate}: {problem}")]
    Candidate {
        candidate: String,
        #[source]
        problem: Box<CandidateProblem>,
    },
    #[error(transparent)]
    Variant(#[from] crate::variant::VariantError),
    /// The output directory's journal belongs to another campaign.
    #[error(
        "this directory holds campaign {held:?}, not {wanted:?}; set another `out` in the campaign file"
    )]
    OtherCampaign { held: String, wanted: String },
}

/// What is wrong with one `[[candidate]]`.
#[derive(Debug, thiserror::Error)]
pub enum CandidateProblem {
    /// `[candidate.isolate]`: a value out of its range (the text names the key and the fix).
    #[error("[candidate.isolate] {0}")]
    Isolate(String),
    /// `[candidate.tune]`: a value out of its range or a missing key (the text names the fix).
    #[error("[candidate.tune] {0}")]
    Tune(String),
    #[error("seat {seat:?} is not in the fleet file; it declares: {declared}")]
    UnknownSeat { seat: String, declared: String },
    #[error("image is for Docker seats only, and seat {seat} is a process seat")]
    ImageOnProcessSeat { seat: String },
    #[error(
        "seat {seat} has restart = {policy:?}; a candidate seat that restarts itself can block the restore of displaced seats (docs/field-cases.md F8): give the campaign a seat with restart = \"no\" (a bench copy of it in the fleet file)"
    )]
    Restarts { seat: String, policy: String },
    /// `what`: `set_args key`, `remove_args entry`, `ladder key`.
    #[error("{what} {flag:?} is not a flag (flags start with '-' and have no spaces)")]
    NotAFlag { what: &'static str, flag: String },
    #[error("set_args {key:?}: {problem}")]
    SetArg {
        key: String,
        #[source]
        problem: BadFlagValue,
    },
    #[error("ladder {key:?}: {problem}")]
    LadderValue {
        key: String,
        #[source]
        problem: BadFlagValue,
    },
    #[error("ladder {key:?} has no values; list the values to try, e.g. [\"8192\", \"4096\"]")]
    EmptyLadder { key: String },
    #[error("ladder {key:?} lists {value:?} twice")]
    LadderTwice { key: String, value: String },
    #[error("{key:?} is both a ladder axis and in set_args/remove_args; keep it in one place")]
    LadderAndSet { key: String },
    #[error("ladder_mode without a [candidate.ladder]")]
    ModeWithoutLadder,
    #[error(
        "[candidate.window] displaces no seat; name the seats to stop (displaces = [\"gen\"]) or drop the window"
    )]
    DisplacesNothing,
    #[error("window displaces {seat:?}, which is not in the fleet file; it declares: {declared}")]
    DisplacesUnknown { seat: String, declared: String },
    #[error(
        "idle_timeout_s ({idle_timeout_s}) is shorter than idle_for_s ({idle_for_s}): the seat could never be seen idle long enough"
    )]
    IdleTimeout {
        idle_timeout_s: u64,
        idle_for_s: u64,
    },
}

/// A TOML value that is no flag value (a table, an array, a date).
#[derive(Debug, thiserror::Error)]
#[error("{0} is not a flag value (use a string, a number, or true/false for present/absent)")]
pub struct BadFlagValue(pub Box<toml::Value>);

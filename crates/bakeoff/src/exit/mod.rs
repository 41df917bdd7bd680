//! One error type at the edge, and the exit codes it maps to ([`exit_codes`], documented in the
//! README): 0 ok/fit, 1 checked-and-failed, 2 usage or configuration, 3 an I/O failure, 4 an
//! internal failure.
//!
//! Each variant says what went wrong; [`Error::exit_code`] is the one place that decides the
//! code. The library errors convert with `?` and are classified here, by their own variants,
//! never at the call site.

use std::path::PathBuf;
use std::process::ExitCode;

use bakeoff_artifact::StoreError;
use bakeoff_cache::CacheError;
use bakeoff_campaign::CampaignError;
use bakeoff_client::adapter::AdapterError;
use bakeoff_client::discovery::template::EndpointTemplateError;
use bakeoff_flags::FlagError;
use bakeoff_kube::KubeError;
use bakeoff_load::LoadError;
use bakeoff_load::sweep_input::SweepInputError;
use bakeoff_local::LocalError;
use bakeoff_measure::adapter::AdapterRunError;
use bakeoff_measure::bench::BenchError;
use bakeoff_measure::ceiling::CeilingError;
use bakeoff_measure::evaluate::EvalError;
use bakeoff_model::ModelError;
use bakeoff_monitor::MonitorError;
use bakeoff_plan::PlanError;
use bakeoff_plan::kv_report::KvError;
use bakeoff_report::csv_export::CsvError;
use bakeoff_report::evidence::EvidenceError;
use bakeoff_report::logbook::LogbookError;
use bakeoff_report::registry::{NoArtifactFor, RegistryError};
use bakeoff_report::views::ViewError;
use bakeoff_seats::OpsError;
use bakeoff_seats::fleet::{FleetError, UnknownSeat};
use bakeoff_seats::gateway::GatewayError;
use bakeoff_text::TemplateSourceError;

/// The exit codes of `bakeoff`, one constant each (as nextest-metadata's `NextestExitCode`).
pub mod exit_codes {
    /// Done; the endpoint is fit; the plan fits; the checkpoint agrees with its flag.
    pub const OK: i32 = 0;
    /// Checked, and it failed: an unfit endpoint, a failure artifact, an incomplete run, a seat
    /// that did not come up, a production seat without `--confirm`, a mismatch found by an
    /// audit, a coexistence answer that is not "yes".
    pub const FAILED: i32 = 1;
    /// Usage or configuration: a bad flag, or a file named on the command line that is missing
    /// or is not what it should be (fleet file, artifact, checkpoint, battery, tokenizer).
    pub const USAGE: i32 = 2;
    /// I/O: a file bakeoff writes (artifact, journal, report, failure artifact, logbook) could
    /// not be written or read back, or standard output could not be written.
    pub const IO: i32 = 3;
    /// Internal: the runtime could not start, a harness part failed, or a bug.
    pub const INTERNAL: i32 = 4;
}

/// The outcome of a command that ran to its end: it printed why when it is [`Exit::Failed`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    Ok,
    /// The thing was checked and failed (unfit endpoint, failure artifact, incomplete run).
    Failed,
}

impl Exit {
    pub fn from_ok(ok: bool) -> Self {
        if ok { Exit::Ok } else { Exit::Failed }
    }

    pub fn code(self) -> i32 {
        match self {
            Exit::Ok => exit_codes::OK,
            Exit::Failed => exit_codes::FAILED,
        }
    }
}

/// Why a command ended early. The message is one line: `<what>: <fix>`.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Checked, and it failed (exit 1).
    #[error("{0}")]
    Failed(String),
    /// A file could not be read or written (exit 3).
    #[error("cannot {what} {}: {source}", path.display())]
    Io {
        what: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The runtime or a harness part could not start, or a bug (exit 4).
    #[error("{0}")]
    Internal(String),
    /// The async runtime could not start (exit 4).
    #[error("cannot start the async runtime: {0}")]
    Runtime(#[source] std::io::Error),
    /// The command line, refused before anything started.
    #[error(transparent)]
    Flags(#[from] FlagError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Evidence(#[from] EvidenceError),
    #[error(transparent)]
    Logbook(#[from] LogbookError),
    #[error(transparent)]
    View(#[from] ViewError),
    #[error(transparent)]
    Registry(#[from] RegistryError),
    /// A verdict on a candidate the directory holds no artifact of (exit 2).
    #[error(transparent)]
    NoArtifact(#[from] NoArtifactFor),
    #[error(transparent)]
    Csv(#[from] CsvError),
    #[error(transparent)]
    Fleet(#[from] FleetError),
    #[error(transparent)]
    Model(#[from] ModelError),
    #[error(transparent)]
    Template(#[from] TemplateSourceError),
    #[error(transparent)]
    Plan(#[from] PlanError),
    #[error(transparent)]
    Kv(#[from] KvError),
    #[error(transparent)]
    Load(#[from] LoadError),
    /// The artifacts `bench compare` was given.
    #[error(transparent)]
    SweepInput(#[from] SweepInputError),
    #[error(transparent)]
    Campaign(#[from] CampaignError),
    #[error(transparent)]
    Adapter(#[from] AdapterRunError),
    #[error(transparent)]
    Bench(#[from] BenchError),
    #[error(transparent)]
    UnknownSeat(#[from] UnknownSeat),
    /// An endpoint named by a command's argument (`audit template URL`): a bad URL, or no
    /// template there (exit 2).
    #[error(transparent)]
    EndpointTemplate(#[from] EndpointTemplateError),
    /// The embedded default server (provision, start, health).
    #[error(transparent)]
    Local(#[from] LocalError),
    #[error(transparent)]
    Gateway(#[from] GatewayError),
    #[error(transparent)]
    Cache(#[from] CacheError),
    /// A seat operation's error; `message` is what the operator reads: its text through the
    /// fleet's redactor, or the one line that follows a refusal already printed.
    #[error("{message}")]
    Ops {
        message: String,
        #[source]
        source: Box<OpsError>,
    },
    /// A Kubernetes export's error; `message` is its text through the fleet's redactor.
    #[error("{message}")]
    Kube {
        message: String,
        #[source]
        source: Box<KubeError>,
    },
    /// A monitor's error; `message` is its text through the fleet's redactor.
    #[error("{message}")]
    Monitor {
        message: String,
        #[source]
        source: Box<MonitorError>,
    },
}

impl Error {
    pub fn failed(msg: impl std::fmt::Display) -> Self {
        Self::Failed(msg.to_string())
    }

    pub fn internal(msg: impl std::fmt::Display) -> Self {
        Self::Internal(msg.to_string())
    }

    /// Serializing our own values to JSON cannot fail short of a bug.
    pub fn json(e: serde_json::Error) -> Self {
        Self::Internal(format!("cannot serialize the output as JSON: {e}"))
    }

    /// The exit code: one of [`exit_codes`].
    pub fn exit_code(&self) -> i32 {
        use exit_codes::{FAILED, INTERNAL, IO, USAGE};
        match self {
            Error::Failed(_) => FAILED,
            Error::Io { .. } => IO,
            Error::Internal(_) | Error::Runtime(_) => INTERNAL,
            Error::Flags(e) => flag_code(e),
            Error::Store(e) => store_code(e),
            Error::Evidence(e) => match e {
                EvidenceError::Store(s) => store_code(s),
                EvidenceError::AlreadyRetracted(_)
                | EvidenceError::NoReason
                | EvidenceError::BadSlug(_) => USAGE,
            },
            Error::Logbook(e) => logbook_code(e),
            Error::View(e) => match e {
                ViewError::NotOurs(_) => USAGE,
                ViewError::CreateDir { .. } => IO,
                ViewError::Write(e) => logbook_code(e),
            },
            Error::Registry(e) => match e {
                RegistryError::NotADir(_) => USAGE,
                RegistryError::List { .. } => IO,
            },
            Error::Csv(e) => match e {
                CsvError::Create { .. } | CsvError::Write { .. } => IO,
                CsvError::Foreign { .. } => USAGE,
            },
            // The fleet file, checkpoints, templates and plan inputs are what the operator named.
            Error::Fleet(_) | Error::Model(_) | Error::Template(_) | Error::Plan(_) => USAGE,
            Error::Kv(e) => match e {
                KvError::Json(_) => INTERNAL,
                _ => USAGE,
            },
            Error::Load(e) => load_code(e),
            Error::SweepInput(e) => match e {
                SweepInputError::Store(s) => store_code(s),
                // The operator named a file this build cannot read as a sweep.
                SweepInputError::NoSweep { .. } | SweepInputError::Unreadable { .. } => USAGE,
            },
            Error::Campaign(e) => campaign_code(e),
            Error::Adapter(e) => match e {
                AdapterRunError::InterruptedInPreflight | AdapterRunError::Unfit { .. } => FAILED,
                // A listing that cannot be read is the endpoint's; an adapter it does not serve
                // is the operator's to name.
                AdapterRunError::Route(AdapterError::Listing { .. }) => FAILED,
                AdapterRunError::Route(_) => USAGE,
                AdapterRunError::Store(s) => store_code(s),
            },
            Error::Bench(e) => match e {
                BenchError::Unfit { .. }
                | BenchError::VersusUnfit { .. }
                | BenchError::SchemaRefused { .. } => FAILED,
                // The harness's own loopback target did not start.
                BenchError::Ceiling(CeilingError::Target(_) | CeilingError::TlsTarget(_)) => {
                    INTERNAL
                }
                BenchError::Ceiling(CeilingError::Load(l)) => load_code(l),
                BenchError::Load(l) => load_code(l),
                BenchError::Store(s) => store_code(s),
            },
            // An endpoint that does not answer: checked, and it failed (as `eval run` says).
            Error::EndpointTemplate(EndpointTemplateError::Unreachable { .. }) => FAILED,
            // A flag's value or a file the operator named, parsed by the library.
            Error::UnknownSeat(_) | Error::EndpointTemplate(_) | Error::NoArtifact(_) => USAGE,
            // The embedded default could not be had: checked, and it failed.
            Error::Local(_) => FAILED,
            Error::Gateway(e) => match e {
                GatewayError::Exists { .. }
                | GatewayError::IsDir { .. }
                | GatewayError::KeyEnv { .. } => USAGE,
                GatewayError::Write { .. } | GatewayError::Render(_) => IO,
            },
            // A PATH that is missing, unreadable or no cache is what the operator named.
            Error::Cache(_) => USAGE,
            Error::Ops { source, .. } => ops_code(source),
            Error::Kube { source, .. } => match source.as_ref() {
                KubeError::Yaml(_) => INTERNAL,
                KubeError::Exists(_) | KubeError::Io { .. } => IO,
                KubeError::UnknownSeat(_)
                | KubeError::ProcessSeat(_)
                | KubeError::Seat { .. }
                | KubeError::Namespace(_)
                | KubeError::NothingToExport
                | KubeError::Parse { .. } => USAGE,
            },
            Error::Monitor { source, .. } => match source.as_ref() {
                MonitorError::UnknownSeat(_)
                | MonitorError::NoSeats
                | MonitorError::Listen(_)
                | MonitorError::Alert(_) => USAGE,
                MonitorError::Store(s) => store_code(s),
            },
        }
    }

    pub fn exit(&self) -> ExitCode {
        to_exit_code(self.exit_code())
    }
}

/// A measurement interrupted during preflight checked nothing (1); its files are the run's own.
impl From<EvalError> for Error {
    fn from(e: EvalError) -> Self {
        match e {
            EvalError::InterruptedInPreflight => Error::failed(e),
            EvalError::Store(s) => Error::Store(s),
        }
    }
}

/// A refused command line is the operator's (2), but for a client that could not be built
/// (4) and a wrapped library error that its own classification places elsewhere.
fn flag_code(e: &FlagError) -> i32 {
    match e {
        FlagError::Client(_) => exit_codes::INTERNAL,
        FlagError::Load(l) => load_code(l),
        FlagError::Campaign(c) => campaign_code(c),
        FlagError::Invalid(_)
        | FlagError::BodyStdin(_)
        | FlagError::BodyFile { .. }
        | FlagError::EngineLog { .. }
        | FlagError::Trace(_)
        | FlagError::SessionFile(_)
        | FlagError::Url(_)
        | FlagError::Tls(_)
        | FlagError::SuiteList(_)
        | FlagError::Battery(_)
        | FlagError::RefusalBattery(_)
        | FlagError::StructuredBattery(_)
        | FlagError::SchemaFile(_)
        | FlagError::ContextFlag(_)
        | FlagError::Tokenizer(_)
        | FlagError::Prompts(_)
        | FlagError::AlertUrl(_)
        | FlagError::Slug(_) => exit_codes::USAGE,
    }
}

fn campaign_code(e: &CampaignError) -> i32 {
    match e {
        // The campaign file, its fleet and the names given are the operator's input.
        CampaignError::Read { .. }
        | CampaignError::Invalid { .. }
        | CampaignError::Fleet(_)
        | CampaignError::NoJournal { .. }
        | CampaignError::UnknownOnly { .. } => exit_codes::USAGE,
        CampaignError::NeedsConfirm { .. } | CampaignError::Provision { .. } => exit_codes::FAILED,
        CampaignError::Store(s) => store_code(s),
        CampaignError::Io { .. } | CampaignError::Journal { .. } => exit_codes::IO,
    }
}

/// A bad plan is the operator's (2); the load engine's own failures are internal (4).
fn load_code(e: &LoadError) -> i32 {
    match e {
        LoadError::Config(_) => exit_codes::USAGE,
        LoadError::Stats(_) | LoadError::Internal(_) => exit_codes::INTERNAL,
    }
}

/// A seat the fleet does not declare is a usage error (2); a refusal or a backend failure a
/// failed check (1); a failure artifact that could not be written an I/O failure (3).
fn ops_code(e: &OpsError) -> i32 {
    match e {
        OpsError::UnknownSeat(_) | OpsError::SameSeat(_) => exit_codes::USAGE,
        OpsError::Artifact(_) => exit_codes::IO,
        OpsError::NeedsConfirm { .. }
        | OpsError::PortTaken { .. }
        | OpsError::PreStart(_)
        | OpsError::ZombieLoader { .. }
        | OpsError::DoesNotFit { .. }
        | OpsError::NoLog(_)
        | OpsError::Backend(_) => exit_codes::FAILED,
    }
}

fn logbook_code(e: &LogbookError) -> i32 {
    match e {
        LogbookError::Read { .. } | LogbookError::Write { .. } => exit_codes::IO,
        LogbookError::Empty(_) | LogbookError::MultiLine(_) | LogbookError::AgeTooLarge { .. } => {
            exit_codes::USAGE
        }
    }
}

/// Reading an artifact the operator named is their input (2); writing the run's own files is
/// I/O (3).
fn store_code(e: &StoreError) -> i32 {
    match e {
        StoreError::Read { .. } | StoreError::Parse { .. } | StoreError::Version { .. } => {
            exit_codes::USAGE
        }
        StoreError::CreateDir { .. }
        | StoreError::Write { .. }
        | StoreError::Exists { .. }
        | StoreError::NoFreeName { .. } => exit_codes::IO,
    }
}

pub fn to_exit_code(code: i32) -> ExitCode {
    ExitCode::from(u8::try_from(code).unwrap_or(1))
}

impl From<Exit> for ExitCode {
    fn from(e: Exit) -> Self {
        to_exit_code(e.code())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;

//! Why a command line was refused before anything started. The binary classifies
//! each variant into an exit code: the operator's input is 2, except where a wrapped library
//! error says otherwise (a load engine's internal failure, a campaign's I/O).

use std::path::PathBuf;

use bakeoff_artifact::slug::BadSlug;
use bakeoff_campaign::CampaignError;
use bakeoff_client::UrlError;
use bakeoff_client::tls::TlsError;
use bakeoff_load::LoadError;
use bakeoff_load::workload::trace::TraceError;
use bakeoff_measure::damage::PromptsError;
use bakeoff_monitor::export::alert::AlertUrlError;
use bakeoff_suites::context::ContextFlagError;
use bakeoff_suites::suite_choice::SuiteListError;
use bakeoff_suites::{intelligence, refusal, structured};
use bakeoff_text::LocalTokenizerError;

/// A flag's value refused, flags that do not go together, or a file a flag names that a library
/// could not read or parse. The message is one line that names the flag and the fix.
#[derive(Debug, thiserror::Error)]
pub enum FlagError {
    /// A value or a combination these checks refuse; the text names the flag, what is wrong
    /// and the fix (free text by nature: one per check).
    #[error("{0}")]
    Invalid(String),
    /// The HTTP client could not be built from valid options (TLS roots, a bug): not the
    /// operator's input.
    #[error("{0}")]
    Client(#[source] bakeoff_client::ClientBuildError),
    /// `log add --body-file -`: standard input could not be read.
    #[error("cannot read the body from stdin: {0}")]
    BodyStdin(#[source] std::io::Error),
    #[error("cannot read --body-file {} ({source}): pass an existing file, or - for stdin", path.display())]
    BodyFile {
        path: PathBuf,
        source: std::io::Error,
    },
    /// `kv --log FILE`.
    #[error("{}: cannot read the log ({source})", path.display())]
    EngineLog {
        path: PathBuf,
        source: std::io::Error,
    },
    // A flag's value, or a file it names, parsed by the library that owns it.
    #[error(transparent)]
    Load(#[from] LoadError),
    #[error(transparent)]
    Trace(#[from] TraceError),
    #[error(transparent)]
    SessionFile(#[from] bakeoff_load::workload::sessions::SessionFileError),
    #[error(transparent)]
    Campaign(#[from] CampaignError),
    #[error(transparent)]
    Url(#[from] UrlError),
    #[error(transparent)]
    Tls(#[from] TlsError),
    #[error(transparent)]
    SuiteList(#[from] SuiteListError),
    #[error(transparent)]
    Battery(#[from] intelligence::battery::BatteryError),
    #[error(transparent)]
    RefusalBattery(#[from] refusal::battery::BatteryError),
    #[error(transparent)]
    StructuredBattery(#[from] structured::battery::BatteryError),
    #[error(transparent)]
    SchemaFile(#[from] bakeoff_measure::bench::schema::SchemaFileError),
    #[error(transparent)]
    ContextFlag(#[from] ContextFlagError),
    #[error(transparent)]
    Tokenizer(#[from] LocalTokenizerError),
    #[error(transparent)]
    Prompts(#[from] PromptsError),
    #[error(transparent)]
    AlertUrl(#[from] AlertUrlError),
    #[error(transparent)]
    Slug(#[from] BadSlug),
}

impl FlagError {
    pub fn invalid(msg: impl std::fmt::Display) -> Self {
        Self::Invalid(msg.to_string())
    }
}

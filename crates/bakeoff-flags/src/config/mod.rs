//! High args: each verb's clap arguments (low args, [`crate::cli`]) converted once, by
//! `validate`, into a checked configuration that the command then uses. Every flag check lives
//! here, before anything starts or is written; the defaults live in the clap attributes, which
//! take them from the libraries' own `Default`s where a library has one.

mod allow;
mod audit;
mod bench;
mod bench_compare;
mod campaign;
mod endpoint;
mod eval;
mod eval_adapter;
mod eval_damage;
mod evidence;
mod plan;
mod seat;
mod seat_monitor;

pub use allow::*;
pub use bench::*;
pub use bench_compare::*;
pub use campaign::*;
pub use endpoint::*;
pub use eval::*;
pub use eval_adapter::*;
pub use eval_damage::*;
pub use evidence::*;
pub use plan::*;
pub use seat::*;
pub use seat_monitor::*;

use bakeoff_local::embedded::Embedded;

use crate::FlagError;

/// The embedded default's llama-server `-c` and `-np` (`--ctx`, `--parallel`; their ranges
/// are checked as they are parsed, this is the library's guard).
pub fn embedded(ctx: u32, parallel: u32) -> Result<Embedded, FlagError> {
    if ctx == 0 || parallel == 0 {
        return Err(FlagError::invalid(
            "--ctx and --parallel must be positive; fix: e.g. --ctx 8192 --parallel 4",
        ));
    }
    Ok(Embedded { ctx, parallel })
}

/// How the operator named a run and where it goes: `--out`, `--slug`, `--note`, `--hardware`,
/// `--replace`.
#[derive(Debug, Clone)]
pub struct RunNaming {
    pub out: std::path::PathBuf,
    pub slug: Option<String>,
    pub notes: Vec<String>,
    pub hardware: Option<String>,
    pub replace: bool,
}

impl RunNaming {
    pub fn new(a: crate::cli::NamingArgs) -> Result<Self, FlagError> {
        Ok(Self {
            out: a.out,
            slug: slug(a.slug)?,
            notes: a.note,
            hardware: a.hardware,
            replace: a.replace,
        })
    }
}

/// `--slug`, checked: it names files.
pub fn slug(s: Option<String>) -> Result<Option<String>, FlagError> {
    if let Some(s) = &s {
        bakeoff_artifact::slug::validate_slug(s)?;
    }
    Ok(s)
}

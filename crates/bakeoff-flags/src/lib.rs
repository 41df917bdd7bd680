//! bakeoff's command line, below the binary that dispatches it: each verb's arguments as clap
//! reads them ([`cli`], the low args) and their validation, once, into checked configurations
//! ([`config`], the high args), as ripgrep's `flags/lowargs.rs` → `hiargs.rs`. A library so
//! that every check can be tested without spawning the binary; the binary only matches the
//! parsed command, calls the libraries and maps errors to exit codes.

pub mod cli;
pub mod config;
mod error;

pub use error::FlagError;

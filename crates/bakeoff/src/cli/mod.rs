//! Command-line surface (clap). Raw values only; commands validate them into built objects.
//! One file per area (`eval.rs`, …); this file only lists the top-level verbs.

mod eval;

use clap::{Parser, Subcommand};

pub use eval::*;

#[derive(Debug, Parser)]
#[command(
    name = "bakeoff",
    version,
    about = "Qualify local LLM deployments with honest measurements."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Qualify a candidate: preflight, then suites, written as evidence.
    #[command(subcommand)]
    Eval(EvalCommand),
    /// Print the JSON Schema of the artifacts (schemas/artifact.v1.schema.json).
    Schema,
}


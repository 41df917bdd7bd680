//! Preflight and the suites. A suite turns a plan of requests into [`ItemRecord`]s and a
//! summary; the runner hands each finished record to a callback (the journal) at once.
//!
//! Suites never print and never write files: they return data, and the binary's reporters
//! decide what a person sees. A suite that measured nothing is `failed`, never a pass. Running
//! a measurement and writing its artifact is `bakeoff_measure`'s.
//!
//! [`ItemRecord`]: bakeoff_artifact::ItemRecord

pub mod context;
pub mod instrument;
pub mod intelligence;
pub mod item_extra;
pub mod load_options;
pub mod longgen;
pub mod outcome;
pub mod progress;
/// Readiness is the client's ([`bakeoff_client::preflight`]); re-exported for the suites' callers.
pub use bakeoff_client::preflight;
pub mod refusal;
pub mod runner;
pub mod session;
pub mod smoke;
pub mod structured;
pub mod suite_choice;
pub mod suite_run;
pub mod summary;
pub mod thinking;
pub mod throughput;
pub mod tool;

pub use preflight::{PreflightOptions, PreflightOutcome, run_preflight};
pub use progress::{CeilingEvent, EvalEvent, EvalHook, ItemProgress, Outcomes, PreflightPhase};
pub use runner::{RunOutcome, nothing_valid, run_suites, run_suites_with};
pub use suite_choice::{SuiteChoice, SuiteName};
pub use suite_run::{Recorder, SuiteContext, SuiteOptions};
pub use thinking::ThinkingMode;

//! Campaigns: a whole bakeoff as one command (docs/campaign.md).
//!
//! A campaign file names candidates — each a fleet seat's launch with changes, optionally a
//! ladder of flag values to isolate what makes a start fail (docs/field-cases.md B1, B4) and a bench
//! window that displaces production seats (docs/field-cases.md F8). [`run`] brings each variant up with
//! the seats' watchdog, measures it with the same in-process `eval run`
//! (`bakeoff_measure::evaluate`), stops it, and restores what it displaced on every exit path.
//! Every step is journaled (`campaign.journal.jsonl`) before the next one starts, so a campaign
//! killed mid-variant is recovered — its seat stopped, displaced seats restored, the variant
//! recorded `interrupted` and run again — by the next `campaign run` or `campaign restore`.
//!
//! The glue an operator used to write in shell (docs/field-cases.md B7: the CLI changed under the pipeline
//! and the measurement steps silently did nothing) is here, where a step that measured nothing
//! is a failed outcome, never a pass.

mod action;
mod attempt;
pub mod candidate;
pub mod dry_run;
pub mod engine_help;
pub mod error;
pub mod file;
pub mod fits;
pub mod fleet_plan;
pub mod fleet_view;
pub mod host_readings;
pub mod idle;
pub mod isolate;
pub mod journal;
pub mod options;
pub mod progress;
pub mod record;
mod recover;
pub mod run;
pub mod tune;
pub mod variant;
pub mod window;

pub use candidate::{Objective, Tune};
pub use error::CampaignError;
pub use file::Campaign;
pub use variant::Variant;

//! Seats — named serving slots — and their backends. This crate owns the fleet file
//! (`fleet.toml`, with gateway aliases from `[[route]]` or an imported LiteLLM config), the
//! process and Docker backends behind one lifecycle ([`backend::Backend`]), the startup
//! watchdog (starting → loading → warming → ready, ready meaning the preflight's real
//! completion succeeded), the root-cause matching over the ONE failure-class table
//! (`bakeoff_artifact::failure_table`, through [`classify`]) and the seat operations (`up`,
//! `down`, `restart`, `swap`, `status`) with their fail-closed gate. The embedded default (a
//! provisioned local `llama-server`) is `bakeoff-local`'s.
//!
//! Secrets in a seat's configuration never reach what it writes or prints: artifacts, command
//! output and the log lines read back from a seat all go through [`redact`] (one rule).
//!
//! It must never stop or start anything it did not start itself without the operator's say:
//! it signals only processes whose pid *and* start time it recorded, touches only containers
//! labelled for the seat, and never acts on a production seat without `confirm`.

pub mod backend;
pub mod checks;
pub mod classify;
pub mod docker;
pub mod fleet;
pub mod gateway;
pub mod hooks;
mod observed;
pub mod ops;
pub mod process;
pub mod progress;
pub mod readiness;
pub mod redact;
pub mod release;
pub mod render;
pub mod toml_line;
pub mod watchdog;

pub use fleet::{Fleet, FleetError, Role, Seat};
pub use ops::{OpsError, SeatStatus, Seats, SwapOutcome, UpOutcome};
pub use watchdog::{State, WatchOptions, WatchReport};

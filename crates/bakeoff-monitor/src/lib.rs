//! The seat monitor (`bakeoff seat monitor`, docs/fleet.md "Monitor"). Every interval, for each
//! seat it watches, it reads:
//!
//! - the seat's state from its backend (a process's recorded pid, a container's inspect), each
//!   host over its own connection and within its own timeout, so a host that does not answer
//!   makes only its seats `unknown`;
//! - a **real short completion** and its latency ([`probe`]): not `/health`, and a reply that is
//!   all reasoning counts as alive — a `max_tokens: 1` probe calls a thinking model dead;
//! - the seat's **memory footprint** ([`footprint`]), from the best source that answers, each
//!   figure labelled with it: the GPU memory of its processes (NVML, else nvidia-smi; over the
//!   host's ssh channel for an `ssh://` host), else `docker stats` for a container, else the
//!   resident memory of its process tree from `/proc`;
//! - its **queue depth** from the engine's `/metrics` ([`queue`]).
//!
//! Each tick's samples are journaled as they are taken ([`series`]); [`findings`] turns the
//! series into `footprint-drift` (grown past a threshold over the seat's first sample, with the
//! least-squares slope per day) and `outage` (one per seat, with every gateway alias that
//! routes to it). [`run`] is the loop: a stop (Ctrl-C) finishes the tick and writes the summary.
//!
//! [`export`] tells someone: the gauges for a Prometheus to scrape (`--prometheus`), and a
//! webhook message when a finding starts and when it ends (`--alert-webhook`).
//!
//! It only reads: it never starts, stops or signals a seat.

pub mod export;
pub mod findings;
pub mod footprint;
pub mod probe;
pub mod queue;
pub mod render;
pub mod run;
pub mod sample;
pub mod series;

pub use run::{Event, MonitorError, MonitorOptions, monitor};

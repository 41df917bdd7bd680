//! What the watch reports as it goes ([`Event`]) and why it ended ([`Ending`]): the words the
//! state machine (`machine.rs`), the disk readings and the displays share.

use bakeoff_artifact::SeatPhase;

use crate::progress::reading::Reading;

/// What an observation caused.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// The seat reached a phase (loading, warming, ready), as recorded in the report.
    Phase(SeatPhase),
    /// A note for the operator (a load over budget, a state that could not be read).
    Note(String),
    /// A load-progress reading was parsed from the log.
    Progress(Reading),
    /// The watch began (the driver's first event): `model` is the id its probes ask for, so a
    /// display drawing two watches in one operation (a swap and its rollback) can tell them
    /// apart.
    Began { model: Option<String> },
    /// Docker's `RestartCount` rose: `restarts` since the watch began, `restart_count` as
    /// Docker reports it, `at_ms` after the start.
    Restarted {
        restarts: u64,
        restart_count: u64,
        at_ms: u64,
    },
    /// The silence timer, at most once a second on a tick while not ready: no log line for
    /// `silent_ms`; `limit_ms` (`silence_timeout`) is when it becomes an `init-wedge`.
    Silence { silent_ms: u64, limit_ms: u64 },
    /// The watch is decided: stop observing (lines still queued are evidence only), then
    /// [`super::Watchdog::finish`] gives the verdict — ready, or failed with its class, message and
    /// remediation.
    Decided(Ending),
}

/// Why the watch ended, before the evidence is weighed ([`super::Watchdog::finish`] refines a
/// silence or a timeout by what the probes saw, and an exit by the log's root cause).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// A real completion succeeded.
    Ready,
    /// The backend reports the seat exited (or gone).
    Exited,
    /// `RestartCount` rose by this many within the crash-loop window.
    CrashLoop { restarts: u64 },
    /// No log line for `silence_timeout` while not ready.
    Silent,
    /// `ready_timeout` passed.
    Timeout,
    /// The probes showed a misconfiguration no wait can fix ([`Tally::refine`] names it).
    Misconfigured,
}

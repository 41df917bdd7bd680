//! What a damage measurement reports as it goes: the sides, the phases and the events the binary
//! draws.

use std::sync::Arc;
use std::time::Duration;

use super::along::AlongPhase;
use bakeoff_suites::progress::PreflightPhase;

/// Which endpoint an event is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Candidate,
    Reference,
}

impl Side {
    pub fn as_str(self) -> &'static str {
        match self {
            Side::Candidate => "candidate",
            Side::Reference => "reference",
        }
    }
}

/// The two phases of the measurement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// The reference against itself.
    SelfCheck,
    /// The candidate against the reference.
    Candidate,
}

impl Phase {
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::SelfCheck => "self-check",
            Phase::Candidate => "candidate",
        }
    }
}

/// What a damage measurement reports as it goes (the binary draws it).
#[derive(Debug, Clone)]
pub enum DamageEvent {
    Preflight {
        side: Side,
        phase: PreflightPhase,
    },
    Started {
        phase: Phase,
        planned: usize,
    },
    Item {
        phase: Phase,
        done: usize,
        planned: usize,
        elapsed: Duration,
        /// The prompt's KL, when measured.
        kl: Option<f64>,
    },
    /// The self-check's verdict: passed, and its upper bound.
    SelfCheck {
        passed: bool,
        high: f64,
    },
    /// An item of the measurement along the reply.
    AlongItem {
        phase: AlongPhase,
        done: usize,
        planned: usize,
        elapsed: Duration,
    },
}

pub type DamageHook = Arc<dyn Fn(DamageEvent) + Send + Sync>;

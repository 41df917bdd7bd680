//! What a measurement reports as it goes, for a progress display: the preflight's phases, each
//! suite's start and end, every finished item. Suites never print; they hand these to whoever
//! draws (the binary). Below the runner and the suites, which both report through it.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use bakeoff_artifact::{EngineKind, FailureClass, HarnessCeiling, Outcome, SuiteStatus};

/// What a measurement reports as it goes, for a progress display: suites never print, they
/// hand these to whoever draws ([`EvalHook`]).
#[derive(Debug, Clone)]
pub enum EvalEvent {
    /// A phase of the preflight (from the measurement crate's `evaluate`).
    Preflight(PreflightPhase),
    /// The harness ceiling for the load suites, before they run.
    Ceiling(CeilingEvent),
    /// A suite begins; `planned`: its items, when known before it runs.
    SuiteStarted {
        suite: &'static str,
        planned: Option<usize>,
    },
    /// An item finished (journaled).
    ItemFinished(ItemProgress),
    /// A suite ended, with its outcomes.
    SuiteFinished {
        suite: &'static str,
        status: SuiteStatus,
        done: usize,
        planned: Option<usize>,
        elapsed: Duration,
        outcomes: Outcomes,
    },
}

/// The harness ceiling as a measurement meets it: measured once per run, before the first
/// load step that is checked against it.
#[derive(Debug, Clone)]
pub enum CeilingEvent {
    /// Being measured against the loopback target (over TLS when `https`).
    Started {
        https: bool,
    },
    Measured(HarnessCeiling),
    /// It could not be measured: the load steps go unchecked against it.
    Unmeasured {
        https: bool,
        error: String,
    },
}

/// The preflight's phases as `evaluate` sees them.
#[derive(Debug, Clone)]
pub enum PreflightPhase {
    /// Discovery (engine, ids, window), then the readiness probe — a real short completion —
    /// all within `ready_timeout`.
    Probing { ready_timeout: Duration },
    /// Fit to be measured.
    Ready {
        model: Option<String>,
        engine: EngineKind,
        window: Option<u64>,
        elapsed: Duration,
    },
    /// Not fit: the class and why.
    Unfit {
        class: FailureClass,
        message: String,
        elapsed: Duration,
    },
    /// Checking that `--thinking` takes effect on this endpoint.
    CheckingThinking { mode: &'static str },
}

impl PreflightPhase {
    /// What a finished preflight found: fit (the model, engine and window) or not (the class
    /// and why), `elapsed` after it began.
    pub fn finished(pre: &crate::PreflightOutcome, elapsed: Duration) -> Self {
        match &pre.unfit {
            Some(u) => PreflightPhase::Unfit {
                class: u.class,
                message: u.message.clone(),
                elapsed,
            },
            None => PreflightPhase::Ready {
                model: pre.report.model.clone(),
                engine: pre.discovered.facts.engine,
                window: pre.discovered.facts.context_window.tokens,
                elapsed,
            },
        }
    }
}

/// One finished item: where the suite stands.
#[derive(Debug, Clone)]
pub struct ItemProgress {
    pub suite: &'static str,
    /// Items finished in this suite, this one included.
    pub done: usize,
    pub planned: Option<usize>,
    pub outcome: Outcome,
    /// Since the suite began.
    pub elapsed: Duration,
    /// Mean item time so far × items left; `None` before two items are done, when the plan
    /// is unknown, or when nothing is left.
    pub eta: Option<Duration>,
    pub outcomes: Outcomes,
}

/// Outcome classes counted so far, in the enum's order.
pub type Outcomes = BTreeMap<Outcome, usize>;

/// Where [`EvalEvent`]s go (the binary draws them).
pub type EvalHook = Arc<dyn Fn(EvalEvent) + Send + Sync>;

/// Mean item time so far × items left, once at least two items are done.
pub fn eta(elapsed: Duration, done: usize, planned: Option<usize>) -> Option<Duration> {
    let planned = planned?;
    if done < 2 || planned <= done {
        return None;
    }
    let left = u32::try_from(planned - done).ok()?;
    let done = u32::try_from(done).ok()?;
    Some(elapsed / done * left)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eta_is_the_mean_item_time_times_the_items_left_from_two_items_on() {
        let s = Duration::from_secs;
        assert_eq!(eta(s(10), 1, Some(6)), None, "one item is not a mean");
        assert_eq!(eta(s(10), 2, Some(6)), Some(s(20)));
        assert_eq!(eta(s(12), 3, Some(6)), Some(s(12)));
        assert_eq!(eta(s(12), 6, Some(6)), None, "nothing left");
        assert_eq!(eta(s(12), 3, None), None, "no plan, no estimate");
    }
}

//! A measurement's events on the progress display: `eval run`'s preflight and suites (with the
//! load suites' per-request counts), `eval damage`'s prompts and `eval adapter`'s items. The
//! words are the measurements' (`bakeoff_measure::describe`); this decides what stays and what is a
//! passing status.

use std::sync::Arc;

use bakeoff_measure::adapter::AdapterEvent;
use bakeoff_measure::damage::{DamageEvent, DamageHook};
use bakeoff_measure::describe;
use bakeoff_suites::{EvalEvent, EvalHook};

use crate::Progress;
use crate::steps::StepProgress;

/// Draws `eval run`'s events on `display`; the load suites' per-request counts (`steps`) are
/// headed by the suite that runs.
pub fn eval_hook(display: Arc<Progress>, steps: Arc<StepProgress>) -> EvalHook {
    Arc::new(move |e: EvalEvent| {
        if let EvalEvent::SuiteStarted { suite, .. } = &e {
            steps.set_prefix(suite);
        }
        display.described(describe::eval_event(&e));
    })
}

/// Draws `eval damage`'s events on `display`: each endpoint's preflight, each phase's items,
/// the self-check's verdict.
pub fn damage_hook(display: Arc<Progress>) -> DamageHook {
    Arc::new(move |e: DamageEvent| display.described(describe::damage_event(&e)))
}

/// Draws one of `eval adapter`'s events on `display`.
pub fn adapter_event(display: &Progress, e: AdapterEvent<'_>) {
    match e {
        AdapterEvent::Preflight => {
            display.status("[adapter] preflight: a real completion from the base model …")
        }
        AdapterEvent::Resolved {
            engine,
            route,
            prompts,
        } => display.line(&format!(
            "[adapter] {engine}: base {:?}, adapter {:?}; {prompts} prompts × 3 requests (base, \
             adapter, base again)",
            route.base_model, route.adapter,
        )),
        AdapterEvent::Item { done, total, id } => {
            display.transient(&format!("[adapter {done}/{total}] {id}"))
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::time::Duration;

    use bakeoff_artifact::Outcome;
    use bakeoff_suites::{ItemProgress, Outcomes, PreflightPhase};

    use super::*;

    #[test]
    fn events_draw_as_plain_lines() {
        let (display, lines) = Progress::capture();
        let display = Arc::new(display);
        let steps = Arc::new(StepProgress::new(display.clone(), "load", None));
        let hook = eval_hook(display, steps);
        let s = Duration::from_secs;
        let tally = |pairs: &[(Outcome, usize)]| pairs.iter().copied().collect::<Outcomes>();
        hook(EvalEvent::Preflight(PreflightPhase::Probing {
            ready_timeout: s(60),
        }));
        hook(EvalEvent::SuiteStarted {
            suite: "smoke",
            planned: Some(6),
        });
        hook(EvalEvent::ItemFinished(ItemProgress {
            suite: "smoke",
            done: 3,
            planned: Some(6),
            outcome: Outcome::Wrong,
            elapsed: s(12),
            eta: Some(s(12)),
            outcomes: tally(&[(Outcome::Ok, 1), (Outcome::Wrong, 2)]),
        }));
        hook(EvalEvent::SuiteFinished {
            suite: "smoke",
            status: bakeoff_artifact::SuiteStatus::Complete,
            done: 6,
            planned: Some(6),
            elapsed: s(150),
            outcomes: tally(&[(Outcome::Ok, 1), (Outcome::Wrong, 5)]),
        });
        assert_eq!(
            *lines.lock().unwrap(),
            [
                "[preflight] discovering the endpoint, then probing readiness with a real \
                 completion (up to 60 s) …",
                "[smoke] starting: 6 items",
                "[smoke 3/6] 12 s elapsed, ~12 s left — ok 1, wrong 2",
                "[smoke] complete: 6/6 items in 2 min 30 s — ok 1, wrong 5",
            ]
        );
    }
}

//! The closed loop: a fixed number of workers, each sending its next request when its last one
//! finished. Under `--ramp-up` the workers start one by one over the ramp (worker `k` at
//! `k · ramp / c`), and what they send before the ramp ends is counted apart, measured nowhere;
//! the measured window, its request count and its duration start when the ramp ends.
//!
//! Under `--step-requests N` the count is of completed requests: the workers keep sending
//! until N have succeeded (a failed request is replaced, at most N failures), or until the
//! step's `--duration`, its upper bound, has passed.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bakeoff_client::Client;
use tokio::sync::watch;
use tokio::task::JoinSet;

use super::conversations;
use super::step::{Progress, StepSpec, build_request, unwrap_acc};
use crate::measure::{StepAccumulator, measure};
use crate::plan::LoadPlan;
use crate::workload::Workload;
use crate::{LoadError, schedule, shapes};

pub(super) async fn closed_step(
    client: &Client,
    plan: &LoadPlan,
    bound: crate::plan::StepBound,
    spec: &StepSpec,
    run_nonce: u64,
    progress: Arc<dyn Progress>,
    cancel: watch::Receiver<bool>,
) -> Result<StepAccumulator, LoadError> {
    if let Workload::MultiTurn(mt) = &plan.workload {
        return conversations::conversation_step(
            client,
            plan,
            mt,
            bound,
            spec.concurrency.unwrap_or(1),
            spec.index,
            run_nonce,
            progress,
            cancel,
        )
        .await;
    }
    // The run's warm-up (step 0) is single synthetic requests: a session's tool waits would
    // stretch it into minutes.
    if let Workload::Sessions(s) = &plan.workload
        && spec.index != 0
    {
        return super::sessions::session_step(
            client,
            plan,
            s,
            bound,
            spec.concurrency.unwrap_or(1),
            spec.index,
            run_nonce,
            progress,
            cancel,
        )
        .await;
    }
    let acc = Arc::new(Mutex::new(StepAccumulator::new(
        plan.slo,
        plan.keep_requests,
    )?));
    let next = Arc::new(AtomicU64::new(0));
    let quota = bound.completed.map(|n| Arc::new(Quota::new(n)));
    let ramp_next = Arc::new(AtomicU64::new(0));
    let workers = spec.concurrency.unwrap_or(1);
    let ramp = spec.ramp.unwrap_or(Duration::ZERO);
    let starts = schedule::ramp_worker_starts(workers, ramp);
    let start = Instant::now();
    // The measured window's origin: every measured offset is taken from here.
    let measured = start + ramp;
    let deadline = bound.duration.map(|d| measured + d);
    let plan = Arc::new(plan.clone());
    let mut set = JoinSet::new();
    for begin in starts {
        let (client, plan, acc, next, ramp_next, progress, quota) = (
            client.clone(),
            plan.clone(),
            acc.clone(),
            next.clone(),
            ramp_next.clone(),
            progress.clone(),
            quota.clone(),
        );
        let mut cancel = cancel.clone();
        let step_index = spec.index;
        set.spawn(async move {
            if !begin.is_zero() {
                tokio::select! {
                    _ = tokio::time::sleep_until((start + begin).into()) => {}
                    _ = cancel.changed() => return,
                }
            }
            loop {
                if *cancel.borrow() || deadline.is_some_and(|d| Instant::now() >= d) {
                    break;
                }
                if Instant::now() < measured {
                    // The ramp: load, never measured.
                    let j = ramp_next.fetch_add(1, Ordering::Relaxed);
                    let (req, max_tokens) =
                        build_request(&plan, run_nonce, step_index | shapes::RAMP_STEP_BIT, j);
                    let ex = tokio::select! {
                        ex = client.chat_stream(&req) => ex,
                        _ = cancel.changed() => break,
                    };
                    let m = measure(j, Duration::ZERO, Duration::ZERO, max_tokens, &ex);
                    if let Ok(mut a) = acc.lock() {
                        a.add_ramp(&m);
                    }
                    continue;
                }
                if quota.as_ref().is_some_and(|q| !q.take()) {
                    break;
                }
                let i = next.fetch_add(1, Ordering::Relaxed);
                if bound.requests.is_some_and(|n| i >= n) {
                    break;
                }
                let (req, max_tokens) = build_request(&plan, run_nonce, step_index, i);
                let point = shapes::abort_point(&plan, step_index, i, max_tokens);
                // Closed loop: the request is intended the moment its worker is free.
                let sent = Instant::now().saturating_duration_since(measured);
                let (ex, aborted) = tokio::select! {
                    r = client.chat_stream_abort_after(&req, point) => r,
                    _ = cancel.changed() => {
                        if let Some(q) = &quota {
                            q.done(false);
                        }
                        break;
                    }
                };
                let m = measure(i, sent, sent, max_tokens, &ex).with_abort(point, aborted);
                if let Some(q) = &quota {
                    q.done(m.ok);
                }
                progress.request_finished(m.ok);
                if let Ok(mut a) = acc.lock() {
                    a.add(m);
                }
            }
        });
    }
    while set.join_next().await.is_some() {}
    unwrap_acc(acc)
}

/// `--step-requests N`: how many requests a closed-loop step may still start so that N complete
/// successfully. A worker takes a slot before each request and gives it back with the outcome;
/// it stops when the successes so far plus those in flight already make N (a worker still in
/// flight sends again if its request fails), or when N have failed.
struct Quota {
    target: u64,
    state: Mutex<QuotaState>,
}

#[derive(Default)]
struct QuotaState {
    ok: u64,
    failed: u64,
    in_flight: u64,
}

impl Quota {
    fn new(target: u64) -> Self {
        Self {
            target,
            state: Mutex::new(QuotaState::default()),
        }
    }

    /// A slot for one more request, or `false`: this worker is done.
    fn take(&self) -> bool {
        let Ok(mut s) = self.state.lock() else {
            return false;
        };
        if s.failed >= self.target || s.ok + s.in_flight >= self.target {
            return false;
        }
        s.in_flight += 1;
        true
    }

    fn done(&self, ok: bool) {
        if let Ok(mut s) = self.state.lock() {
            s.in_flight = s.in_flight.saturating_sub(1);
            if ok {
                s.ok += 1;
            } else {
                s.failed += 1;
            }
        }
    }
}

/// What ended a step bounded by completed requests: `requests` when it held `target`
/// successes, `failures` when as many failed, `interrupted` when the operator stopped it,
/// else `time` (its upper bound).
pub(super) fn ended_by(target: u64, ok: u64, sent: u64, interrupted: bool) -> &'static str {
    if ok >= target {
        "requests"
    } else if interrupted {
        "interrupted"
    } else if sent.saturating_sub(ok) >= target {
        "failures"
    } else {
        "time"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Three to complete with two workers: both take a slot, the first fails and sends again,
    /// and once the successes and those in flight make three, no worker starts another.
    #[test]
    fn the_quota_replaces_failures_and_stops_at_the_target() {
        let q = Quota::new(3);
        assert!(q.take() && q.take());
        q.done(false);
        assert!(q.take(), "a failure is replaced");
        q.done(true);
        assert!(q.take(), "1 ok + 2 in flight: the third slot");
        assert!(!q.take(), "1 ok + 2 in flight make 3");
        q.done(true);
        q.done(true);
        assert!(!q.take(), "3 ok");
        let q = Quota::new(2);
        for _ in 0..2 {
            assert!(q.take());
            q.done(false);
        }
        assert!(!q.take(), "as many failures as the target: done");
        assert_eq!(ended_by(3, 3, 4, false), "requests");
        assert_eq!(ended_by(3, 1, 4, false), "failures");
        assert_eq!(ended_by(3, 1, 2, false), "time");
        assert_eq!(ended_by(3, 1, 2, true), "interrupted");
    }
}

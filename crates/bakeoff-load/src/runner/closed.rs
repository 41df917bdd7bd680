//! The closed loop: a fixed number of workers, each sending its next request when its last one
//! finished. Under `--ramp-up` the workers start one by one over the ramp (worker `k` at
//! `k · ramp / c`), and what they send before the ramp ends is counted apart, measured nowhere;
//! the measured window, its request count and its duration start when the ramp ends.

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
    let acc = Arc::new(Mutex::new(StepAccumulator::new(
        plan.slo,
        plan.keep_requests,
    )?));
    let next = Arc::new(AtomicU64::new(0));
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
        let (client, plan, acc, next, ramp_next, progress) = (
            client.clone(),
            plan.clone(),
            acc.clone(),
            next.clone(),
            ramp_next.clone(),
            progress.clone(),
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
                    _ = cancel.changed() => break,
                };
                let m = measure(i, sent, sent, max_tokens, &ex).with_abort(point, aborted);
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

//! The open loop: requests sent on a schedule regardless of how many are in flight. Under
//! `--ramp-up` the schedule is preceded by the ramp's arrivals (the rate climbing linearly from
//! 0, [`crate::schedule::ramp_offsets`]), counted apart and measured nowhere; the measured
//! offsets run from the ramp's end.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bakeoff_client::Client;
use bakeoff_wire::ChatRequest;
use tokio::sync::{Semaphore, watch};

use super::step::{Progress, StepSpec, build_request, unwrap_acc};
use crate::measure::{StepAccumulator, measure};
use crate::plan::LoadPlan;
use crate::{LoadError, schedule, shapes};

/// Block this thread until `t`: sleep to within `SPIN` of it, then spin. Tokio's timer has a
/// 1 ms grain and rounds up (an event loop's ~1 ms timer rounding makes a load generator
/// under-deliver a high rate); an OS sleep is accurate to tens of microseconds, and the spin covers
/// the wake-up latency. The spin costs at most `SPIN` of one core per request. `false` when
/// the operator interrupted.
fn sleep_until_precise(t: Instant, cancel: &watch::Receiver<bool>) -> bool {
    const SPIN: Duration = Duration::from_micros(100);
    loop {
        if *cancel.borrow() {
            return false;
        }
        let now = Instant::now();
        if now >= t {
            return true;
        }
        let left = t - now;
        if left > SPIN {
            // Wake at least every 50 ms so an operator's interrupt is seen promptly.
            std::thread::sleep((left - SPIN).min(Duration::from_millis(50)));
        } else {
            std::hint::spin_loop();
        }
    }
}

/// Open loop. The dispatcher is an OS thread of its own, not a task: on the runtime it would
/// share its thread with every in-flight stream (one client core in `harness-bench`), and a
/// busy stream would make it late. It builds each request before its intended time, sleeps
/// until that time, and hands the request to the runtime, whose task stamps the actual send
/// and sends. Lateness therefore measures the runtime picking the request up, not the
/// dispatcher's own work.
pub(super) async fn open_step(
    client: &Client,
    plan: &LoadPlan,
    spec: &StepSpec,
    run_nonce: u64,
    progress: Arc<dyn Progress>,
    cancel: watch::Receiver<bool>,
) -> Result<StepAccumulator, LoadError> {
    let Some((rate, arrival, cap)) = spec.rate else {
        return Err(LoadError::Internal("open step without a rate".into()));
    };
    let offsets = schedule::offsets(
        arrival,
        rate,
        plan.bound.requests,
        plan.bound.duration,
        plan.seed ^ (spec.index as u64),
    );
    let ramp = spec.ramp.map(|r| Ramp {
        offsets: schedule::ramp_offsets(arrival, rate, r, plan.seed ^ (spec.index as u64)),
        length: r,
    });
    let shared = Arc::new(plan.clone());
    let step_index = spec.index;
    let build = move |i: u64, ramp: bool| {
        let step = if ramp {
            step_index | shapes::RAMP_STEP_BIT
        } else {
            step_index
        };
        let (req, max_tokens) = build_request(&shared, run_nonce, step, i);
        Planned {
            // The ramp's requests are load only: never cancelled.
            abort_after: if ramp {
                None
            } else {
                shapes::abort_point(&shared, step_index, i, max_tokens)
            },
            req,
            max_tokens,
            conversation: None,
        }
    };
    dispatch_open(client, plan, offsets, ramp, cap, build, progress, cancel).await
}

/// One open-loop request, built by the dispatcher before its intended time.
pub(crate) struct Planned {
    pub req: ChatRequest,
    pub max_tokens: u32,
    /// Recorded with the request (trace sessions).
    pub conversation: Option<u64>,
    /// `--cancel-rate`: abort after this many text-bearing chunks.
    pub abort_after: Option<u64>,
}

/// The arrivals of a ramp-up before the measured window, offsets from the ramp's start.
pub(crate) struct Ramp {
    pub offsets: Vec<Duration>,
    pub length: Duration,
}

/// The open-loop dispatcher: request `i` (built by `build(i, false)`) is intended at
/// `offsets[i]` from the measured window's start; a ramp's request `j` (built by
/// `build(j, true)`) at its offset from the ramp's start, `length` before. Arrival schedules
/// and trace replay share it.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn dispatch_open(
    client: &Client,
    plan: &LoadPlan,
    offsets: Vec<Duration>,
    ramp: Option<Ramp>,
    cap: Option<usize>,
    build: impl Fn(u64, bool) -> Planned + Send + 'static,
    progress: Arc<dyn Progress>,
    cancel: watch::Receiver<bool>,
) -> Result<StepAccumulator, LoadError> {
    let acc = Arc::new(Mutex::new(StepAccumulator::new(
        plan.slo,
        plan.keep_requests,
    )?));
    // A capped step waits for a permit inside the request's task, after its intended time, so
    // the wait shows as lateness (the semaphore is fair: order is kept).
    let sem = cap.map(|c| Arc::new(Semaphore::new(c.max(1))));
    let runtime = tokio::runtime::Handle::current();
    let (done_tx, done_rx) = tokio::sync::oneshot::channel();
    let (ramp_offsets, ramp_len) = match ramp {
        Some(r) => (r.offsets, r.length),
        None => (Vec::new(), Duration::ZERO),
    };
    let dispatcher = {
        let (client, acc, cancel) = (client.clone(), acc.clone(), cancel.clone());
        std::thread::Builder::new()
            .name("bakeoff-dispatch".into())
            .spawn(move || {
                let ramp_start = Instant::now();
                let start = ramp_start + ramp_len;
                let mut handles = Vec::with_capacity(ramp_offsets.len() + offsets.len());
                let order = ramp_offsets
                    .into_iter()
                    .enumerate()
                    .map(|(j, off)| (j as u64, off, true))
                    .chain(
                        offsets
                            .into_iter()
                            .enumerate()
                            .map(|(i, off)| (i as u64, off, false)),
                    );
                for (i, off, in_ramp) in order {
                    let Planned {
                        req,
                        max_tokens,
                        conversation,
                        abort_after,
                    } = build(i, in_ramp);
                    let origin = if in_ramp { ramp_start } else { start };
                    if !sleep_until_precise(origin + off, &cancel) {
                        break;
                    }
                    let (client, acc, progress, sem) =
                        (client.clone(), acc.clone(), progress.clone(), sem.clone());
                    let mut cancel = cancel.clone();
                    handles.push(runtime.spawn(async move {
                        let permit = match sem {
                            Some(s) => s.acquire_owned().await.ok(),
                            None => None,
                        };
                        let sent = origin.elapsed();
                        let (ex, aborted) = tokio::select! {
                            r = client.chat_stream_abort_after(&req, abort_after) => r,
                            _ = cancel.changed() => return,
                        };
                        drop(permit);
                        let mut m =
                            measure(i, off, sent, max_tokens, &ex).with_abort(abort_after, aborted);
                        m.record.conversation = conversation;
                        if in_ramp {
                            if let Ok(mut a) = acc.lock() {
                                a.add_ramp(&m);
                            }
                            return;
                        }
                        progress.request_finished(m.ok);
                        if let Ok(mut a) = acc.lock() {
                            a.add(m);
                        }
                    }));
                }
                let _ = done_tx.send(handles);
            })
            .map_err(|e| LoadError::Internal(format!("cannot start the dispatcher thread: {e}")))?
    };
    let handles = done_rx
        .await
        .map_err(|_| LoadError::Internal("the dispatcher thread stopped early".into()))?;
    let _ = dispatcher.join();
    for h in handles {
        let _ = h.await;
    }
    unwrap_acc(acc)
}

//! The steps of the non-synthetic workloads: multi-turn conversations on closed-loop workers,
//! and trace replay through the open-loop dispatcher.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use bakeoff_client::Client;
use tokio::sync::watch;
use tokio::task::JoinSet;

use super::open::{Planned, dispatch_open};
use super::step::{Progress, unwrap_acc};
use crate::LoadError;
use crate::measure::{StepAccumulator, measure};
use crate::plan::{LoadPlan, Mode, StepBound};
use crate::workload::{MultiTurn, TraceReplay};

/// Closed loop over whole conversations: each of `workers` takes the next conversation and
/// sends its turns one after another, each turn the moment the last reply ended, resending
/// the conversation so far with the model's real replies. A conversation starts only while
/// the request bound has room for its first turn, and then runs to its end (so `--requests`
/// is rounded up to whole conversations); the duration bound and an interrupt stop it between
/// turns. A failed turn ends its conversation: there is no reply to continue from.
#[allow(clippy::too_many_arguments)]
pub(super) async fn conversation_step(
    client: &Client,
    plan: &LoadPlan,
    mt: &MultiTurn,
    bound: StepBound,
    workers: u32,
    step_index: usize,
    run_nonce: u64,
    progress: Arc<dyn Progress>,
    cancel: watch::Receiver<bool>,
) -> Result<StepAccumulator, LoadError> {
    let acc = Arc::new(Mutex::new(
        StepAccumulator::new(plan.slo, plan.keep_requests)?.with_turns()?,
    ));
    let next_conversation = Arc::new(AtomicU64::new(0));
    // Requests claimed so far: a conversation claims its turns as it starts.
    let claimed = Arc::new(AtomicU64::new(0));
    let start = Instant::now();
    let deadline = bound.duration.map(|d| start + d);
    let shared = Arc::new((plan.clone(), mt.clone()));
    let mut set = JoinSet::new();
    for _ in 0..workers.max(1) {
        let (client, shared, acc, next_conversation, claimed, progress) = (
            client.clone(),
            shared.clone(),
            acc.clone(),
            next_conversation.clone(),
            claimed.clone(),
            progress.clone(),
        );
        let mut cancel = cancel.clone();
        set.spawn(async move {
            let (plan, mt) = (&shared.0, &shared.1);
            'conversations: loop {
                let stop = |c: &watch::Receiver<bool>| {
                    *c.borrow() || deadline.is_some_and(|d| Instant::now() >= d)
                };
                if stop(&cancel) {
                    break;
                }
                let id = next_conversation.fetch_add(1, Ordering::Relaxed);
                let mut conv = mt.start(run_nonce, step_index, id);
                let turns = u64::from(conv.turns());
                let first = claimed.fetch_add(turns, Ordering::Relaxed);
                if bound.requests.is_some_and(|n| first >= n) {
                    break;
                }
                while let Some((req, max_tokens, turn)) =
                    conv.next_request(&plan.request_plan(), mt)
                {
                    if turn > 1 && stop(&cancel) {
                        break 'conversations;
                    }
                    let i = id * u64::from(mt.turns.max(1)) + u64::from(turn - 1);
                    let sent = start.elapsed();
                    let ex = tokio::select! {
                        ex = client.chat_stream(&req) => ex,
                        _ = cancel.changed() => break 'conversations,
                    };
                    let mut m = measure(i, sent, sent, max_tokens, &ex);
                    m.record.turn = Some(turn);
                    m.record.conversation = Some(id);
                    progress.request_finished(m.ok);
                    let ok = m.ok;
                    if let Ok(mut a) = acc.lock() {
                        a.add(m);
                    }
                    if !ok {
                        break;
                    }
                    conv.record_reply(ex.reply.content);
                }
            }
        });
    }
    while set.join_next().await.is_some() {}
    unwrap_acc(acc)
}

/// The trace as one open-loop step: each line's request intended at its offset (after
/// `--trace-speedup`), through the same dispatcher and lateness accounting as an arrival
/// schedule; `--max-in-flight` caps it the same way. `--requests` and `--duration`, when
/// given, cut the trace short (the first N lines; the lines intended within the duration).
pub(super) async fn trace_step(
    client: &Client,
    plan: &LoadPlan,
    t: &TraceReplay,
    step_index: usize,
    run_nonce: u64,
    progress: Arc<dyn Progress>,
    cancel: watch::Receiver<bool>,
) -> Result<StepAccumulator, LoadError> {
    let mut offsets = t.trace.offsets(t.speedup);
    if let Some(n) = plan.bound.requests {
        offsets.truncate(usize::try_from(n).unwrap_or(usize::MAX));
    }
    if let Some(d) = plan.bound.duration {
        offsets.retain(|o| *o < d);
    }
    let cap = match plan.mode {
        Mode::Open { max_in_flight, .. } => max_in_flight,
        Mode::Closed { .. } => None,
    };
    let (shared, trace) = (Arc::new(plan.clone()), t.trace.clone());
    // A trace has no ramp (`LoadPlan::validate`): every `i` is a measured one.
    let build = move |i: u64, _ramp: bool| {
        // `i` indexes `offsets`, built from and never longer than the entries.
        let e = &trace.entries[i as usize];
        Planned {
            req: crate::workload::trace_request(
                &shared.request_plan(),
                e,
                run_nonce,
                step_index,
                i,
            ),
            max_tokens: e.output_tokens,
            conversation: e.conversation,
            abort_after: None,
        }
    };
    dispatch_open(client, plan, offsets, None, cap, build, progress, cancel).await
}

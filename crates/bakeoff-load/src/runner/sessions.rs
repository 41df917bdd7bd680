//! The steps of agent sessions: synthetic sessions on closed-loop workers (each worker one
//! session at a time, so the level is the number of concurrent sessions), and recorded sessions
//! replayed at their recorded starts (docs/metrics.md, "Sessions").
//!
//! Every turn after a session's first is intended at the previous reply's end plus the tool
//! wait; its send lateness is measured from there, so a harness that cannot keep a thousand
//! sessions' waits shows it.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bakeoff_client::Client;
use tokio::sync::watch;
use tokio::task::JoinSet;

use super::step::{Progress, unwrap_acc};
use super::wake::WakeClock;
use crate::LoadError;
use crate::measure::{Measured, StepAccumulator, measure};
use crate::plan::{LoadPlan, StepBound};
use crate::workload::SessionReplay;
use crate::workload::sessions::file::RecordedSession;
use crate::workload::sessions::{Session, Sessions};

/// What every session of one step shares.
struct Shared {
    client: Client,
    plan: LoadPlan,
    acc: Mutex<StepAccumulator>,
    /// The step's request numbering.
    next_i: AtomicU64,
    start: Instant,
    deadline: Option<Instant>,
    progress: Arc<dyn Progress>,
    wake: WakeClock,
}

/// Where a run of turns left its session.
#[derive(Clone, Copy)]
struct Reached {
    /// Every turn was sent and succeeded.
    done: bool,
    /// The step ended first: its duration would pass during the next tool wait, or the
    /// operator interrupted.
    cut: bool,
    last_end: Option<Instant>,
    last_prompt: Option<u64>,
}

impl Shared {
    fn stopped(&self, at: Instant, cancel: &watch::Receiver<bool>) -> bool {
        *cancel.borrow() || self.deadline.is_some_and(|d| at >= d)
    }

    fn offset(&self, t: Instant) -> Duration {
        t.saturating_duration_since(self.start)
    }

    /// One turn sent at `intended` (waited for), measured and tallied; `None` when the step
    /// ended first.
    async fn turn(
        &self,
        req: &bakeoff_wire::ChatRequest,
        max_tokens: u32,
        intended: Instant,
        waited: Option<Duration>,
        tag: (u64, Option<u32>, u32),
        cancel: &mut watch::Receiver<bool>,
    ) -> Option<(Measured, bakeoff_client::Exchange, Instant)> {
        if self.stopped(intended, cancel) || !self.wake.until(intended, cancel).await {
            return None;
        }
        let i = self.next_i.fetch_add(1, Ordering::Relaxed);
        let sent = Instant::now();
        let ex = tokio::select! {
            ex = self.client.chat_stream(req) => ex,
            _ = cancel.changed() => return None,
        };
        let end = Instant::now();
        let mut m = measure(i, self.offset(intended), self.offset(sent), max_tokens, &ex);
        let (conversation, sub, turn) = tag;
        m.record.turn = Some(turn);
        m.record.conversation = Some(conversation);
        m.record.sub_session = sub;
        m.record.tool_wait_ms = waited.map(|w| w.as_secs_f64() * 1000.0);
        self.progress.request_finished(m.ok);
        Some((m, ex, end))
    }

    fn tally(&self, m: Measured, previous_prompt: Option<u64>) {
        if let Ok(mut a) = self.acc.lock() {
            a.add_session_turn(m, previous_prompt);
        }
    }

    /// Send `s`'s turns up to its last, from where `from` left it.
    async fn run_turns(
        &self,
        s: &mut Session,
        cfg: &Sessions,
        from: Reached,
        cancel: &mut watch::Receiver<bool>,
    ) -> Reached {
        let mut at = from;
        while s.next_turn().is_some() {
            let (intended, waited) = match at.last_end {
                Some(end) => {
                    let w = s.tool_wait(&self.plan.request_plan(), cfg);
                    (end + w, Some(w))
                }
                None => (Instant::now(), None),
            };
            let Some((req, max_tokens, turn)) = s.next_request(&self.plan.request_plan(), cfg)
            else {
                break;
            };
            let Some((m, ex, end)) = self
                .turn(
                    &req,
                    max_tokens,
                    intended,
                    waited,
                    (s.id, s.sub, turn),
                    cancel,
                )
                .await
            else {
                return Reached {
                    done: false,
                    cut: true,
                    ..at
                };
            };
            let (ok, prompt) = (m.ok, m.record.prompt_tokens);
            self.tally(m, at.last_prompt);
            if !ok {
                // A failed turn ends its session: there is no reply to continue from.
                return Reached { done: false, ..at };
            }
            s.record_reply(ex.reply.content, ex.reply.tool_calls);
            at = Reached {
                done: true,
                cut: false,
                last_end: Some(end),
                last_prompt: prompt,
            };
        }
        at
    }

    /// One whole synthetic session, its sub-sessions included. `true` when the step ended
    /// before it did: its worker then starts no other (a session cut in its tool wait still
    /// holds its place until the step's end, as an agent would).
    async fn run_session(
        &self,
        cfg: &Sessions,
        id: u64,
        step: usize,
        run_nonce: u64,
        cancel: &mut watch::Receiver<bool>,
    ) -> bool {
        let t0 = Instant::now();
        if let Ok(mut a) = self.acc.lock() {
            a.session_tally(|t| t.session_started(cfg.fork.map_or(0, |f| f.sessions)));
        }
        let mut s = cfg.start(run_nonce, step, id);
        let fresh = Reached {
            done: true,
            cut: false,
            last_end: None,
            last_prompt: None,
        };
        let reached = match cfg.fork {
            None => self.run_turns(&mut s, cfg, fresh, cancel).await,
            Some(f) => {
                s.resume_until(cfg.fork_after());
                let before = self.run_turns(&mut s, cfg, fresh, cancel).await;
                if !before.done {
                    return before.cut;
                }
                let subs = (1..=f.sessions).map(|k| {
                    let mut sub = s.fork(k, f.turns);
                    let mut cancel = cancel.clone();
                    async move { self.run_turns(&mut sub, cfg, before, &mut cancel).await }
                });
                let ends = futures_util::future::join_all(subs).await;
                if ends.iter().any(|r| !r.done) {
                    return ends.iter().any(|r| r.cut);
                }
                // The parent goes on once its slowest sub-session is back.
                let joined = Reached {
                    last_end: ends.iter().filter_map(|r| r.last_end).max(),
                    ..before
                };
                s.resume_until(cfg.turns);
                self.run_turns(&mut s, cfg, joined, cancel).await
            }
        };
        if reached.done
            && let Ok(mut a) = self.acc.lock()
        {
            a.session_tally(|t| t.session_completed(t0.elapsed()));
        }
        reached.cut
    }

    /// One recorded session, turn by turn with its recorded waits (÷ `speedup`). A failed turn
    /// does not end it: the next turn's history is recorded, so every engine replayed is sent
    /// the same turns.
    async fn replay_session(
        &self,
        rec: &RecordedSession,
        k: u64,
        speedup: f64,
        cancel: &mut watch::Receiver<bool>,
    ) {
        let t0 = Instant::now();
        let mut last_end: Option<Instant> = None;
        let mut last_prompt: Option<u64> = None;
        let mut all_ok = true;
        for (j, turn) in rec.turns.iter().enumerate() {
            let (intended, waited) = match last_end {
                Some(end) => {
                    let w = Duration::from_secs_f64(rec.wait_before(j) / speedup);
                    (end + w, Some(w))
                }
                None => (Instant::now(), None),
            };
            let fallback = {
                let mut rng = crate::prng::SplitMix64::new(self.plan.seed ^ k ^ ((j as u64) << 32));
                self.plan.output_tokens.sample(k, &mut rng)
            };
            let (req, max_tokens) = turn.request(&self.plan.request_plan(), fallback);
            let tag = (k, None, u32::try_from(j + 1).unwrap_or(u32::MAX));
            let Some((m, _, end)) = self
                .turn(&req, max_tokens, intended, waited, tag, cancel)
                .await
            else {
                return;
            };
            let (ok, prompt) = (m.ok, m.record.prompt_tokens);
            if let Ok(mut a) = self.acc.lock() {
                a.session_tally(|t| t.replayed(turn.recorded_prompt_tokens, prompt));
            }
            self.tally(m, last_prompt);
            all_ok &= ok;
            last_end = Some(end);
            last_prompt = prompt;
        }
        if all_ok && let Ok(mut a) = self.acc.lock() {
            a.session_tally(|t| t.session_completed(t0.elapsed()));
        }
    }
}

fn shared(
    client: &Client,
    plan: &LoadPlan,
    acc: StepAccumulator,
    bound: StepBound,
    progress: Arc<dyn Progress>,
) -> Arc<Shared> {
    let start = Instant::now();
    Arc::new(Shared {
        client: client.clone(),
        plan: plan.clone(),
        acc: Mutex::new(acc),
        next_i: AtomicU64::new(0),
        start,
        deadline: bound.duration.map(|d| start + d),
        progress,
        wake: WakeClock::start(),
    })
}

fn into_acc(shared: Arc<Shared>) -> Result<StepAccumulator, LoadError> {
    let shared = Arc::try_unwrap(shared)
        .map_err(|_| LoadError::Internal("a session task outlived its step".into()))?;
    unwrap_acc(Arc::new(shared.acc))
}

/// Closed loop over whole sessions: each of `workers` runs one session after another, so
/// `workers` sessions are under way at once (their sub-sessions beside them). A session starts
/// only while the request bound has room for all its requests, then runs to its end; the
/// duration bound and an interrupt stop it before its next turn.
#[allow(clippy::too_many_arguments)]
pub(super) async fn session_step(
    client: &Client,
    plan: &LoadPlan,
    cfg: &Sessions,
    bound: StepBound,
    workers: u32,
    step_index: usize,
    run_nonce: u64,
    progress: Arc<dyn Progress>,
    cancel: watch::Receiver<bool>,
) -> Result<StepAccumulator, LoadError> {
    let acc = StepAccumulator::new(plan.slo, plan.keep_requests)?
        .with_turns()?
        .with_sessions("synthetic")?;
    let shared = shared(client, plan, acc, bound, progress);
    let next_session = Arc::new(AtomicU64::new(0));
    let claimed = Arc::new(AtomicU64::new(0));
    let per_session = cfg.requests_per_session();
    let cfg = Arc::new(cfg.clone());
    let mut set = JoinSet::new();
    for _ in 0..workers.max(1) {
        let (shared, next_session, claimed, cfg) = (
            shared.clone(),
            next_session.clone(),
            claimed.clone(),
            cfg.clone(),
        );
        let mut cancel = cancel.clone();
        set.spawn(async move {
            loop {
                if shared.stopped(Instant::now(), &cancel) {
                    break;
                }
                let first = claimed.fetch_add(per_session, Ordering::Relaxed);
                if bound.requests.is_some_and(|n| first >= n) {
                    break;
                }
                let id = next_session.fetch_add(1, Ordering::Relaxed);
                if shared
                    .run_session(&cfg, id, step_index, run_nonce, &mut cancel)
                    .await
                {
                    break;
                }
            }
        });
    }
    while set.join_next().await.is_some() {}
    into_acc(shared)
}

/// Recorded sessions, each started at its recorded offset (÷ `speedup`) from the first. The
/// request bound admits a session while it has room for the session's first turn (so whole
/// sessions are replayed); the duration bound admits the sessions that start within it.
pub(super) async fn replay_step(
    client: &Client,
    plan: &LoadPlan,
    r: &SessionReplay,
    progress: Arc<dyn Progress>,
    cancel: watch::Receiver<bool>,
) -> Result<StepAccumulator, LoadError> {
    let acc = StepAccumulator::new(plan.slo, plan.keep_requests)?
        .with_turns()?
        .with_sessions("replay")?;
    let shared = shared(client, plan, acc, plan.bound, progress);
    let origin = r.file.origin();
    let mut claimed = 0u64;
    let mut set = JoinSet::new();
    for (k, rec) in r.file.sessions.iter().enumerate() {
        let offset = Duration::from_secs_f64(((rec.start() - origin) / r.speedup).max(0.0));
        if plan.bound.duration.is_some_and(|d| offset >= d)
            || plan.bound.requests.is_some_and(|n| claimed >= n)
        {
            break;
        }
        claimed += rec.turns.len() as u64;
        let (shared, file) = (shared.clone(), r.file.clone());
        let (speedup, mut cancel) = (r.speedup, cancel.clone());
        set.spawn(async move {
            if !shared.wake.until(shared.start + offset, &mut cancel).await {
                return;
            }
            if let Ok(mut a) = shared.acc.lock() {
                a.session_tally(|t| t.session_started(0));
            }
            let Some(rec) = file.sessions.get(k) else {
                return;
            };
            shared
                .replay_session(rec, k as u64, speedup, &mut cancel)
                .await;
        });
    }
    while set.join_next().await.is_some() {}
    into_acc(shared)
}

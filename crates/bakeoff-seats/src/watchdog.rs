//! The startup watchdog: follows a seat's log and its backend state from the start command
//! until the seat is **ready** — a real completion succeeded (the preflight's check,
//! `bakeoff_client::preflight::run_preflight`) — or it has failed with a class from the one table
//! ([`crate::classify`]).
//!
//! States: starting → loading → warming → ready. Log lines move the state forward (never
//! back); only the preflight makes it ready, because `/health` 200 or `/v1/models` answering
//! proves nothing (seed 000 §1: an engine wedged with `/v1/models` up).
//!
//! Verdicts, checked on every tick (after the lines already queued are read: a chatty seat
//! cannot starve them), in this order:
//! 1. `RestartCount` rose by `crash_loop_restarts` within `crash_loop_window`: `crash-loop`
//!    (the root cause of the tail is recorded beside it). First, because a container between
//!    two restarts also reads as exited;
//! 2. the backend reports the seat exited: `host-oom` when Docker says `OOMKilled`, otherwise
//!    the root cause of the log tail, otherwise `exited` with the code. A state that could not
//!    be read (the Docker engine did not answer) is not an exit;
//! 3. the probes say no wait can help: the server lists other model ids than the seat's
//!    (`model-name-mismatch`), or the log names another listening port and the seat's port then
//!    refused (`wrong-port`);
//! 4. no log line for `silence_timeout` while not ready: `init-wedge`;
//! 5. `ready_timeout` passed: `not-ready`.
//!
//! A silence or a timeout is then refined by what the readiness probes saw
//! ([`crate::readiness`]): a port that only ever refused is `not-listening`, not a wedge.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use bakeoff_artifact::{FailureClass, PreflightReport, SeatPhase, SeatRootCause};
use bakeoff_client::preflight::{PreflightOptions, PreflightOutcome, run_preflight};
use bakeoff_client::{Client, ClientOptions, EndpointUrl, Timeouts};
use tokio::sync::mpsc;

use crate::backend::{Backend, Observed};
use crate::classify::{self, Cause};
use crate::progress::{self, Reading};
use crate::readiness::Tally;

/// How much of the log is kept as evidence: vLLM's real cause sits above a ~40-line traceback
/// and the wrapper, so the tail must be deep (engine-facts.md §1: at least 250 lines).
pub const TAIL_LINES: usize = 300;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum State {
    Starting,
    Loading,
    Warming,
    Ready,
    Failed,
}

impl State {
    pub fn as_str(self) -> &'static str {
        match self {
            State::Starting => "starting",
            State::Loading => "loading",
            State::Warming => "warming",
            State::Ready => "ready",
            State::Failed => "failed",
        }
    }
}

#[derive(Debug, Clone)]
pub struct WatchOptions {
    /// No log line for this long while not ready: `init-wedge`.
    pub silence_timeout: Duration,
    /// Give up (`not-ready`) after this long.
    pub ready_timeout: Duration,
    /// Flag a load projected to take longer than this.
    pub load_budget: Option<Duration>,
    pub crash_loop_restarts: u64,
    pub crash_loop_window: Duration,
    /// Pause between readiness probes.
    pub probe_interval: Duration,
}

impl Default for WatchOptions {
    fn default() -> Self {
        Self {
            silence_timeout: Duration::from_secs(300),
            ready_timeout: Duration::from_secs(3600),
            load_budget: None,
            crash_loop_restarts: 3,
            crash_loop_window: Duration::from_secs(600),
            probe_interval: Duration::from_millis(500),
        }
    }
}

/// What the watchdog saw.
#[derive(Debug, Clone)]
pub struct WatchReport {
    pub state: State,
    /// The state reached before the verdict (for a failure: where it died).
    pub last_state: State,
    pub class: Option<FailureClass>,
    pub message: String,
    pub remediation: Option<String>,
    pub cause: Option<Cause>,
    pub phases: Vec<SeatPhase>,
    pub tail: Vec<String>,
    pub exit_code: Option<i64>,
    pub restart_count: Option<u64>,
    pub oom_killed: Option<bool>,
    pub silent_ms: u64,
    pub elapsed_ms: u64,
    pub progress: Option<Reading>,
    pub load_over_budget: bool,
    /// `--load-budget` in seconds, when given.
    pub load_budget_s: Option<f64>,
    pub preflight: Option<PreflightReport>,
    /// What the readiness probes saw.
    pub readiness: bakeoff_artifact::SeatReadiness,
    /// Notes for the operator (a load over budget, …).
    pub notes: Vec<String>,
}

/// What the readiness probes ask for and expect.
#[derive(Debug, Clone, Default)]
pub struct ProbeTarget {
    /// The model id to request (the seat's first served model name).
    pub model: Option<String>,
    /// The port the engine should listen on: the seat's port, or a container's own port.
    pub listen_port: Option<u16>,
}

impl WatchReport {
    pub fn ready(&self) -> bool {
        self.state == State::Ready
    }

    pub fn root_cause_record(&self) -> Option<SeatRootCause> {
        self.cause.as_ref().map(|c| SeatRootCause {
            class: c.class,
            line: c.line.clone(),
            line_index: Some(c.line_index as u64),
            source: c.source.to_string(),
        })
    }
}

/// The state a log line signals, if any (llama.cpp b11434 server logs measured here; vLLM
/// lines from engine-facts.md §1).
pub fn state_signal(line: &str) -> Option<State> {
    const LOADING: &[&str] = &[
        "load_model: loading model",
        "load_tensors:",
        "llama_model_loader:",
        "Loading safetensors checkpoint shards",
        "Loading pt checkpoint shards",
        "Starting to load model",
        "Loading weights",
    ];
    const WARMING: &[&str] = &[
        "warming up the model",
        "llama_server: model loaded",
        "Model loading took",
        "Available KV cache memory",
        "GPU KV cache size",
        "Capturing CUDA graphs",
        "Graph capturing finished",
        "torch.compile",
        "Application startup complete",
        "listening on http",
    ];
    if WARMING.iter().any(|m| line.contains(m)) {
        Some(State::Warming)
    } else if LOADING.iter().any(|m| line.contains(m)) {
        Some(State::Loading)
    } else {
        None
    }
}

/// A client for readiness probes: short timeouts, so a wedged engine costs a few seconds per
/// probe, never the whole watch.
pub fn probe_client(url: &str) -> Option<Client> {
    let url = EndpointUrl::parse(url).ok()?;
    Some(Client::new(
        url,
        ClientOptions {
            timeouts: Timeouts {
                connect: Duration::from_secs(2),
                first_byte: Duration::from_secs(10),
                idle: Duration::from_secs(10),
                total: Duration::from_secs(15),
            },
            api_key: None,
        },
    ))
}

/// Watch `backend` (already started) until ready or failed.
pub async fn watch(
    backend: &mut Backend,
    url: &str,
    target: ProbeTarget,
    opts: &WatchOptions,
) -> WatchReport {
    let model = target.model.clone();
    let mut tally = Tally::new(target.model, target.listen_port);
    let start = Instant::now();
    let (tx, mut rx) = mpsc::channel::<String>(1024);
    let follower = backend.follow(tx);
    let client = probe_client(url);
    let mut tail: VecDeque<String> = VecDeque::with_capacity(TAIL_LINES);
    let mut state = State::Starting;
    let mut phases = vec![SeatPhase {
        state: "starting".into(),
        at_ms: 0,
        line: None,
    }];
    let mut last_line = Instant::now();
    let mut progress: Option<Reading> = None;
    let mut over_budget = false;
    let mut notes = Vec::new();
    let mut state_unknown_noted = false;
    // (entered loading, left loading): the time spent loading, for --load-budget when the
    // engine prints no shard bar to project from (llama.cpp).
    let mut loading: (Option<Instant>, Option<Instant>) = (None, None);
    let mut probe: Option<tokio::task::JoinHandle<PreflightOutcome>> = None;
    let mut next_probe = Instant::now();
    let mut next_status = Instant::now();
    let first = backend.status().await;
    let baseline_restarts = first.restart_count.unwrap_or(0);
    // (when seen, count) of every rise in RestartCount.
    let mut restarts: Vec<(Instant, u64)> = Vec::new();
    let mut last_status = first;
    let budget_s = opts.load_budget.map(|b| b.as_secs_f64());

    let verdict = loop {
        // Wait for a line or a tick, then take every line already queued, then run the
        // checks: a seat that logs faster than the tick must still reach them (a `continue`
        // per line starved them, and a chatty seat was watched forever).
        let mut batch = Vec::new();
        tokio::select! {
            line = rx.recv() => match line {
                Some(line) => batch.push(line),
                // The follower ended (it only does when the channel closes): keep ticking.
                None => tokio::time::sleep(Duration::from_millis(50)).await,
            },
            _ = tokio::time::sleep(Duration::from_millis(100)) => {}
        }
        while batch.len() < 4096 {
            match rx.try_recv() {
                Ok(line) => batch.push(line),
                Err(_) => break,
            }
        }
        for line in batch {
            last_line = Instant::now();
            tally.observe_line(&line);
            if let Some(s) = state_signal(&line)
                && s > state
                && state < State::Ready
            {
                if s == State::Loading {
                    loading.0 = Some(Instant::now());
                } else if state == State::Loading {
                    loading.1 = Some(Instant::now());
                }
                state = s;
                phases.push(SeatPhase {
                    state: s.as_str().into(),
                    at_ms: start.elapsed().as_millis() as u64,
                    line: Some(line.clone()),
                });
            }
            if let Some(r) = progress::parse(&line) {
                let rec = r.to_record(budget_s);
                if rec.over_budget
                    && !over_budget
                    && let Some(b) = budget_s
                {
                    over_budget = true;
                    notes.push(progress_budget_note(&r, b));
                }
                progress = Some(r);
            }
            if tail.len() == TAIL_LINES {
                tail.pop_front();
            }
            tail.push_back(line);
        }

        // Readiness: a probe finished?
        if let Some(p) = &probe
            && p.is_finished()
        {
            if let Some(Ok(out)) = probe.take().and_then(futures_util::FutureExt::now_or_never) {
                tally.observe_probe(&out);
                if out.report.fit {
                    phases.push(SeatPhase {
                        state: "ready".into(),
                        at_ms: start.elapsed().as_millis() as u64,
                        line: None,
                    });
                    break Verdict::Ready(Box::new(out.report));
                }
                if tally.model_mismatch() || tally.serves_elsewhere() {
                    break Verdict::Misconfigured;
                }
            }
            next_probe = Instant::now() + opts.probe_interval;
        }
        if probe.is_none()
            && Instant::now() >= next_probe
            && let Some(c) = client.clone()
        {
            let popts = PreflightOptions {
                model: model.clone(),
                max_model_len: None,
                // Long enough for one short completion on a busy 2-core machine; the
                // probe runs beside the watch loop, so silence and exits are still seen.
                ready_timeout: Duration::from_secs(10),
            };
            probe = Some(tokio::spawn(async move { run_preflight(&c, &popts).await }));
        }

        if Instant::now() >= next_status {
            next_status = Instant::now() + Duration::from_millis(300);
            let st = backend.status().await;
            if let Observed::Unknown { reason } = &st.observed {
                // The backend could not say (the Docker engine did not answer): not an exit.
                // Noted once; silence and --ready-timeout still end a watch that never hears
                // back.
                if !state_unknown_noted {
                    state_unknown_noted = true;
                    notes.push(format!(
                        "the seat's state could not be read at +{:.1} s ({reason}); the watch went on",
                        start.elapsed().as_secs_f64()
                    ));
                }
            } else if let Some(rc) = st.restart_count {
                let prev = restarts.last().map(|r| r.1).unwrap_or(baseline_restarts);
                if rc > prev {
                    restarts.push((Instant::now(), rc));
                }
                let window_start = Instant::now().checked_sub(opts.crash_loop_window);
                let base = restarts
                    .iter()
                    .rev()
                    .find(|(t, _)| window_start.is_some_and(|w| *t < w))
                    .map(|r| r.1)
                    .unwrap_or(baseline_restarts);
                if rc.saturating_sub(base) >= opts.crash_loop_restarts {
                    last_status = st;
                    break Verdict::CrashLoop(rc - base);
                }
            }
            if !matches!(st.observed, Observed::Unknown { .. }) {
                let exited = matches!(st.observed, Observed::Exited { .. } | Observed::Missing);
                last_status = st;
                if exited {
                    break Verdict::Exited;
                }
            }
        }

        check_load_elapsed(loading, opts.load_budget, &mut over_budget, &mut notes);

        if state < State::Ready && last_line.elapsed() >= opts.silence_timeout {
            break Verdict::Silent;
        }
        if start.elapsed() >= opts.ready_timeout {
            break Verdict::Timeout;
        }
    };

    // Drain what the follower already has: the lines just before an exit are the evidence.
    if !matches!(verdict, Verdict::Ready(_)) {
        let drain_until = Instant::now() + Duration::from_millis(400);
        while let Ok(Some(line)) = tokio::time::timeout_at(drain_until.into(), rx.recv()).await {
            if tail.len() == TAIL_LINES {
                tail.pop_front();
            }
            tail.push_back(line);
        }
    }
    follower.abort();
    if let Some(p) = probe.take() {
        p.abort();
    }
    // The verdict may have come on the tick the budget ran out.
    check_load_elapsed(loading, opts.load_budget, &mut over_budget, &mut notes);
    let progress = loading_record(progress, loading);

    let tail: Vec<String> = tail.into_iter().collect();
    let cause = classify::root_cause_for(&tail, tally.record.expected_listen_port);
    let (exit_code, oom_killed) = match &last_status.observed {
        Observed::Exited { code, oom_killed } => (*code, *oom_killed),
        _ => (None, None),
    };
    let silent_ms = last_line.elapsed().as_millis() as u64;
    let last_state = state;
    let secs = |ms: u64| ms as f64 / 1000.0;
    let cause_text = |c: &Option<Cause>| {
        c.as_ref()
            .map(|c| format!("; root cause {}: {}", c.class, c.line.trim()))
            .unwrap_or_default()
    };
    // A silence or a timeout, refined by what the probes saw: a port that only ever refused is
    // not a wedge.
    let refined = match verdict {
        Verdict::Silent | Verdict::Timeout | Verdict::Misconfigured => tally.refine(),
        _ => None,
    };
    let (final_state, class, message, remediation, preflight) = if let Some((class, seen, remedy)) =
        refined
    {
        (
            State::Failed,
            Some(class),
            format!(
                "{class}: {seen} (after {:.1} s, still {}; {:.1} s since the last log line){}",
                start.elapsed().as_secs_f64(),
                last_state.as_str(),
                secs(silent_ms),
                cause_text(&cause)
            ),
            Some(remedy),
            None,
        )
    } else {
        match verdict {
            Verdict::Ready(report) => (
                State::Ready,
                None,
                format!(
                    "ready in {:.1} s (a real completion succeeded)",
                    start.elapsed().as_secs_f64()
                ),
                None,
                Some(*report),
            ),
            Verdict::Exited => {
                let code_text = exit_code
                    .map(|c| format!(" with code {c}"))
                    .unwrap_or_default();
                if oom_killed == Some(true) {
                    (
                        State::Failed,
                        Some(FailureClass::HostOom),
                        format!(
                            "killed by the host OOM killer (Docker OOMKilled){code_text} while {}{}",
                            last_state.as_str(),
                            cause_text(&cause)
                        ),
                        Some(classify::remediation(FailureClass::HostOom).to_string()),
                        None,
                    )
                } else if let Some(c) = &cause {
                    (
                        State::Failed,
                        Some(c.class),
                        format!(
                            "exited{code_text} while {}: {}",
                            last_state.as_str(),
                            c.line.trim()
                        ),
                        Some(c.remediation.to_string()),
                        None,
                    )
                } else {
                    (
                        State::Failed,
                        Some(FailureClass::Exited),
                        format!(
                            "exited{code_text} while {}; last line: {}",
                            last_state.as_str(),
                            tail.last().map(|l| l.trim()).unwrap_or("(no output)")
                        ),
                        Some(classify::exited_remediation(&tail).to_string()),
                        None,
                    )
                }
            }
            Verdict::CrashLoop(n) => (
                State::Failed,
                Some(FailureClass::CrashLoop),
                format!(
                    "crash-loop: {n} restarts within {:.0} s (RestartCount {}){}",
                    secs(start.elapsed().as_millis() as u64)
                        .min(opts.crash_loop_window.as_secs_f64()),
                    last_status.restart_count.unwrap_or(0),
                    cause_text(&cause)
                ),
                Some(format!(
                    "{} Root cause: {}",
                    classify::remediation(FailureClass::CrashLoop),
                    cause
                        .as_ref()
                        .map(|c| c.remediation)
                        .unwrap_or_else(|| classify::exited_remediation(&tail))
                )),
                None,
            ),
            Verdict::Silent => (
                State::Failed,
                Some(FailureClass::InitWedge),
                format!(
                    "init-wedge: no log line for {:.1} s while {} (not ready){}; last line: {}",
                    secs(silent_ms),
                    last_state.as_str(),
                    cause_text(&cause),
                    tail.last().map(|l| l.trim()).unwrap_or("(no output)")
                ),
                Some(classify::remediation(FailureClass::InitWedge).to_string()),
                None,
            ),
            Verdict::Timeout | Verdict::Misconfigured => (
                State::Failed,
                Some(FailureClass::NotReady),
                format!(
                    "not ready after {:.0} s (still {}){}",
                    opts.ready_timeout.as_secs_f64(),
                    last_state.as_str(),
                    cause_text(&cause)
                ),
                Some(classify::remediation(FailureClass::NotReady).to_string()),
                None,
            ),
        }
    };
    WatchReport {
        state: final_state,
        last_state,
        class,
        message,
        remediation,
        cause,
        phases,
        tail,
        exit_code,
        restart_count: last_status.restart_count,
        oom_killed,
        silent_ms,
        elapsed_ms: start.elapsed().as_millis() as u64,
        progress,
        load_over_budget: over_budget,
        load_budget_s: budget_s,
        preflight,
        readiness: tally.record,
        notes,
    }
}

/// The note for a progress reading over `--load-budget`, worded from what tripped it: the
/// projection when it is over the budget, otherwise the time the bar says was already spent
/// (a stalled vLLM bar, `[12:00<?, ?it/s]`, projects nothing).
fn progress_budget_note(r: &Reading, budget_s: f64) -> String {
    let shards = format!("{}/{} shards", r.done.unwrap_or(0), r.total.unwrap_or(0));
    match r.projected_total_s().filter(|p| *p > budget_s) {
        Some(p) => format!(
            "weight loading is projected to take {p:.0} s, over the --load-budget of {budget_s:.0} s ({shards})"
        ),
        None => format!(
            "weight loading has taken {:.0} s, over the --load-budget of {budget_s:.0} s ({shards}; no projection)",
            r.elapsed_s.unwrap_or(0.0)
        ),
    }
}

/// Flag a load that has already spent longer than `--load-budget` in `loading` — the check
/// that works without a projection (llama.cpp prints no shard rate; a vLLM bar may stall).
fn check_load_elapsed(
    loading: (Option<Instant>, Option<Instant>),
    budget: Option<Duration>,
    over_budget: &mut bool,
    notes: &mut Vec<String>,
) {
    let (Some(since), Some(budget)) = (loading.0, budget) else {
        return;
    };
    let spent = loading.1.unwrap_or_else(Instant::now).duration_since(since);
    if *over_budget || spent <= budget {
        return;
    }
    *over_budget = true;
    notes.push(format!(
        "weight loading has taken {:.1} s{}, over the --load-budget of {:.1} s",
        spent.as_secs_f64(),
        if loading.1.is_none() { " so far" } else { "" },
        budget.as_secs_f64()
    ));
}

/// The load progress to record: the last parsed reading, with the time spent in `loading` as
/// its elapsed time when the engine printed none (llama.cpp), or — when no progress line was
/// parsed at all but the seat did reach `loading` — a reading of that time alone.
fn loading_record(
    progress: Option<Reading>,
    loading: (Option<Instant>, Option<Instant>),
) -> Option<Reading> {
    let spent = loading.0.map(|since| {
        loading
            .1
            .unwrap_or_else(Instant::now)
            .duration_since(since)
            .as_secs_f64()
    });
    match (progress, spent) {
        (Some(mut r), Some(s)) => {
            r.elapsed_s.get_or_insert(s);
            Some(r)
        }
        (Some(r), None) => Some(r),
        (None, Some(s)) => Some(Reading {
            source: "watchdog (time in loading)",
            done: None,
            total: None,
            percent: None,
            elapsed_s: Some(s),
            remaining_s: None,
            seconds_per_item: None,
        }),
        (None, None) => None,
    }
}

enum Verdict {
    Ready(Box<PreflightReport>),
    Exited,
    CrashLoop(u64),
    Silent,
    Timeout,
    /// The probes showed a misconfiguration no wait can fix ([`Tally::refine`] names it).
    Misconfigured,
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn the_budget_note_says_what_tripped_it() {
        // A stalled bar projects nothing: the note is the time already spent, not "0 s".
        let stalled = progress::parse(
            "Loading safetensors checkpoint shards:  25% Completed | 1/4 [12:00<?, ?it/s]",
        )
        .unwrap();
        assert!(stalled.to_record(Some(600.0)).over_budget);
        let note = progress_budget_note(&stalled, 600.0);
        assert!(note.contains("has taken 720 s"), "{note}");
        assert!(
            note.contains("--load-budget of 600 s (1/4 shards"),
            "{note}"
        );
        assert!(!note.contains("projected"), "{note}");

        let slow = progress::parse(
            "Loading safetensors checkpoint shards:  25% Completed | 1/4 [01:00<03:00, 60.00s/it]",
        )
        .unwrap();
        assert!(slow.to_record(Some(200.0)).over_budget);
        let note = progress_budget_note(&slow, 200.0);
        assert!(note.contains("projected to take 240 s"), "{note}");
    }
}

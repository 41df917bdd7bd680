//! The watch as a transition function: [`Watchdog::step`] takes one [`Observation`] and the
//! time it was made, updates the one struct that holds everything the watch knows, and returns
//! the [`Event`]s it caused; [`Watchdog::finish`] turns the decided watch into its
//! [`WatchReport`]. Nothing here does I/O or reads a clock: the driver ([`super::drive`])
//! gathers the observations and passes the time, so every verdict can be tested with a
//! sequence of observations alone.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use bakeoff_artifact::{PreflightReport, SeatPhase};
use bakeoff_client::preflight::PreflightOutcome;

pub use super::event::{Ending, Event};
use super::readings::{DiskSample, ReadingLimits, Readings};
use super::verdict::{Evidence, ms, refined_verdict, verdict};
use super::{ProbeTarget, State, TAIL_LINES, WatchOptions, WatchReport, state_signal};
use crate::classify;
use crate::observed::{Observed, Status};
use crate::progress::reading::{self, Reading};
use crate::readiness::Tally;

/// What the watch can see.
#[derive(Debug, Clone)]
pub enum Observation {
    /// One line of the seat's log. After the verdict a line is evidence only: it joins the tail.
    Line(String),
    /// A readiness probe (the preflight's real completion) finished.
    Probe(Box<PreflightOutcome>),
    /// The backend's state, read.
    State(Status),
    /// The clock moved: the timers (silence, the ready timeout, the load budget) are checked.
    Tick,
    /// The disk the seat writes while loading: its container's writable layer, its mounted
    /// caches ([`super::readings`]).
    Disk(DiskSample),
}

/// Everything the watch knows: the state machine's one struct.
#[derive(Debug, Clone)]
pub struct Watchdog {
    opts: WatchOptions,
    start: Instant,
    tally: Tally,
    tail: VecDeque<String>,
    state: State,
    phases: Vec<SeatPhase>,
    last_line: Instant,
    progress: Option<Reading>,
    over_budget: bool,
    notes: Vec<String>,
    state_unknown_noted: bool,
    /// (entered loading, left loading): the time spent loading, for --load-budget when the
    /// engine prints no shard bar to project from (llama.cpp).
    loading: (Option<Instant>, Option<Instant>),
    baseline_restarts: u64,
    /// (when seen, count) of every rise in RestartCount.
    restarts: Vec<(Instant, u64)>,
    /// When the last [`Event::Silence`] was sent (they are rate-limited to one a second).
    last_silence_event: Option<Instant>,
    last_status: Status,
    preflight: Option<PreflightReport>,
    ending: Option<Ending>,
    /// The disk readings and their findings.
    readings: Readings,
}

/// The most often the silence timer is sent.
const SILENCE_EVERY: Duration = Duration::from_secs(1);

impl Watchdog {
    /// A watch that began at `start` (the start command), with the backend's first state read
    /// (its `RestartCount` is the baseline of the crash-loop check).
    pub fn new(target: ProbeTarget, opts: WatchOptions, start: Instant, first: Status) -> Self {
        Self {
            tally: {
                let mut t = Tally::new(target.model, target.listen_port);
                t.set_key(target.api_key_env, target.api_key.is_some());
                t
            },
            tail: VecDeque::with_capacity(TAIL_LINES),
            state: State::Starting,
            phases: vec![SeatPhase {
                state: "starting".into(),
                at_ms: 0,
                line: None,
            }],
            last_line: start,
            progress: None,
            over_budget: false,
            notes: Vec::new(),
            state_unknown_noted: false,
            loading: (None, None),
            baseline_restarts: first.restart_count.unwrap_or(0),
            restarts: Vec::new(),
            last_silence_event: None,
            last_status: first,
            preflight: None,
            ending: None,
            readings: Readings::new(
                ReadingLimits {
                    writable_layer_limit: opts.writable_layer_limit,
                    download_stall: opts.download_stall,
                    layer_fix: String::new(),
                },
                start,
            ),
            opts,
            start,
        }
    }

    /// The fix a `download-in-writable-layer` finding gives: the mount to add, in the seat's
    /// own cache paths (the driver knows the seat; the machine does not).
    pub fn set_layer_fix(&mut self, fix: String) {
        self.readings.set_layer_fix(fix);
    }

    /// The furthest state the log signalled (never `ready`: only a probe makes a seat ready).
    pub fn state(&self) -> State {
        self.state
    }

    /// Why the watch ended, once it has.
    pub fn ending(&self) -> Option<Ending> {
        self.ending
    }

    /// One observation made at `now`. Returns what it caused; an [`Event::Decided`] is the
    /// last event of a watch (later observations only add lines to the evidence).
    pub fn step(&mut self, obs: Observation, now: Instant) -> Vec<Event> {
        let mut events = Vec::new();
        if self.ending.is_some() {
            if let Observation::Line(line) = obs {
                self.push_tail(line);
            }
            return events;
        }
        let ending = match obs {
            Observation::Line(line) => {
                self.on_line(line, now, &mut events);
                None
            }
            Observation::Probe(out) => self.on_probe(*out, now, &mut events),
            Observation::State(st) => self.on_state(st, now, &mut events),
            Observation::Tick => self.on_tick(now, &mut events),
            Observation::Disk(sample) => {
                // Readings matter until ready: after it a growing cache is no load's.
                if self.state < State::Ready {
                    self.readings.observe(sample, now, &mut events);
                }
                None
            }
        };
        if let Some(e) = ending {
            self.ending = Some(e);
            events.push(Event::Decided(e));
        }
        events
    }

    fn push_tail(&mut self, line: String) {
        if self.tail.len() == TAIL_LINES {
            self.tail.pop_front();
        }
        self.tail.push_back(line);
    }

    fn note(&mut self, text: String, events: &mut Vec<Event>) {
        events.push(Event::Note(text.clone()));
        self.notes.push(text);
    }

    fn phase(&mut self, state: &str, now: Instant, line: Option<String>, events: &mut Vec<Event>) {
        let phase = SeatPhase {
            state: state.into(),
            at_ms: ms(now.saturating_duration_since(self.start)),
            line,
        };
        events.push(Event::Phase(phase.clone()));
        self.phases.push(phase);
    }

    fn on_line(&mut self, line: String, now: Instant, events: &mut Vec<Event>) {
        self.last_line = now;
        self.tally.observe_line(&line);
        if let Some(s) = state_signal(&line)
            && s > self.state
            && self.state < State::Ready
        {
            if s == State::Loading {
                self.loading.0 = Some(now);
            } else if self.state == State::Loading {
                self.loading.1 = Some(now);
            }
            self.state = s;
            self.phase(s.as_str(), now, Some(line.clone()), events);
        }
        if let Some(r) = reading::parse(&line) {
            let budget_s = self.budget_s();
            let rec = r.to_record(budget_s);
            if rec.over_budget
                && !self.over_budget
                && let Some(b) = budget_s
            {
                self.over_budget = true;
                self.note(progress_budget_note(&r, b), events);
            }
            events.push(Event::Progress(r.clone()));
            self.progress = Some(r);
        }
        self.push_tail(line);
    }

    fn on_probe(
        &mut self,
        out: PreflightOutcome,
        now: Instant,
        events: &mut Vec<Event>,
    ) -> Option<Ending> {
        self.tally.observe_probe(&out);
        if out.report.fit {
            self.phase("ready", now, None, events);
            self.preflight = Some(out.report);
            return Some(Ending::Ready);
        }
        if self.tally.model_mismatch()
            || self.tally.serves_elsewhere()
            || self.tally.refused_key()
            || self.tally.tls_refused()
        {
            return Some(Ending::Misconfigured);
        }
        None
    }

    fn on_state(&mut self, st: Status, now: Instant, events: &mut Vec<Event>) -> Option<Ending> {
        if let Observed::Unknown { reason } = &st.observed {
            // The backend could not say (the Docker engine did not answer): not an exit.
            // Noted once; silence and --ready-timeout still end a watch that never hears back.
            if !self.state_unknown_noted {
                self.state_unknown_noted = true;
                let text = format!(
                    "the seat's state could not be read at +{:.1} s ({reason}); the watch went on",
                    now.saturating_duration_since(self.start).as_secs_f64()
                );
                self.note(text, events);
            }
            return None;
        }
        if let Some(rc) = st.restart_count {
            let prev = self
                .restarts
                .last()
                .map(|r| r.1)
                .unwrap_or(self.baseline_restarts);
            if rc > prev {
                self.restarts.push((now, rc));
                events.push(Event::Restarted {
                    restarts: rc.saturating_sub(self.baseline_restarts),
                    restart_count: rc,
                    at_ms: ms(now.saturating_duration_since(self.start)),
                });
            }
            let window_start = now.checked_sub(self.opts.crash_loop_window);
            let base = self
                .restarts
                .iter()
                .rev()
                .find(|(t, _)| window_start.is_some_and(|w| *t < w))
                .map(|r| r.1)
                .unwrap_or(self.baseline_restarts);
            if rc.saturating_sub(base) >= self.opts.crash_loop_restarts {
                self.last_status = st;
                return Some(Ending::CrashLoop {
                    restarts: rc - base,
                });
            }
        }
        let exited = matches!(st.observed, Observed::Exited { .. } | Observed::Missing);
        self.last_status = st;
        exited.then_some(Ending::Exited)
    }

    fn on_tick(&mut self, now: Instant, events: &mut Vec<Event>) -> Option<Ending> {
        self.check_load_elapsed(now, events);
        self.silence_timer(now, events);
        if self.state < State::Ready
            && now.saturating_duration_since(self.last_line) >= self.opts.silence_timeout
        {
            return Some(Ending::Silent);
        }
        if now.saturating_duration_since(self.start) >= self.opts.ready_timeout {
            return Some(Ending::Timeout);
        }
        None
    }

    /// The silence timer for a display, while not ready: one [`Event::Silence`] a second at
    /// most, however often the clock ticks.
    fn silence_timer(&mut self, now: Instant, events: &mut Vec<Event>) {
        if self.state >= State::Ready
            || self
                .last_silence_event
                .is_some_and(|t| now.saturating_duration_since(t) < SILENCE_EVERY)
        {
            return;
        }
        self.last_silence_event = Some(now);
        events.push(Event::Silence {
            silent_ms: ms(now.saturating_duration_since(self.last_line)),
            limit_ms: ms(self.opts.silence_timeout),
        });
    }

    fn budget_s(&self) -> Option<f64> {
        self.opts.load_budget.map(|b| b.as_secs_f64())
    }

    /// Flag a load that has already spent longer than `--load-budget` in `loading` — the check
    /// that works without a projection (llama.cpp prints no shard rate; a vLLM bar may stall).
    fn check_load_elapsed(&mut self, now: Instant, events: &mut Vec<Event>) {
        let (Some(since), Some(budget)) = (self.loading.0, self.opts.load_budget) else {
            return;
        };
        let spent = self
            .loading
            .1
            .unwrap_or(now)
            .saturating_duration_since(since);
        if self.over_budget || spent <= budget {
            return;
        }
        self.over_budget = true;
        let text = format!(
            "weight loading has taken {:.1} s{}, over the --load-budget of {:.1} s",
            spent.as_secs_f64(),
            if self.loading.1.is_none() {
                " so far"
            } else {
                ""
            },
            budget.as_secs_f64()
        );
        self.note(text, events);
    }

    /// The report of the watch, at `now` (after the lines queued at the verdict were observed:
    /// the lines just before an exit are the evidence). A watch finished before it was decided
    /// is worded as one that ran out of time.
    pub fn finish(mut self, now: Instant) -> WatchReport {
        // The verdict may have come on the tick the budget ran out.
        self.check_load_elapsed(now, &mut Vec::new());
        let progress = loading_record(self.progress.take(), self.loading, now);
        let tail: Vec<String> = std::mem::take(&mut self.tail).into_iter().collect();
        let cause = classify::root_cause_for(&tail, self.tally.record.expected_listen_port);
        let (exit_code, oom_killed) = match &self.last_status.observed {
            Observed::Exited { code, oom_killed } => (*code, *oom_killed),
            _ => (None, None),
        };
        let silent_ms = ms(now.saturating_duration_since(self.last_line));
        let elapsed = now.saturating_duration_since(self.start);
        let ending = self.ending.unwrap_or(Ending::Timeout);
        let ev = Evidence {
            ending,
            last_state: self.state,
            elapsed,
            silent_ms,
            cause: &cause,
            tail: &tail,
            exit_code,
            oom_killed,
            restart_count: self.last_status.restart_count,
            opts: &self.opts,
        };
        // A silence or a timeout, refined by what the probes saw: a port that only ever
        // refused is not a wedge.
        let refined = match ending {
            Ending::Silent | Ending::Timeout | Ending::Misconfigured => self.tally.refine(),
            _ => None,
        };
        let verdict = match refined {
            Some((class, seen, remedy)) => refined_verdict(&ev, class, seen, remedy),
            None => verdict(&ev),
        };
        let preflight = match (verdict.state, ending) {
            (State::Ready, Ending::Ready) => self.preflight.take(),
            _ => None,
        };
        WatchReport {
            state: verdict.state,
            last_state: self.state,
            class: verdict.class,
            message: verdict.message,
            remediation: verdict.remediation,
            cause,
            phases: self.phases,
            tail,
            exit_code,
            restart_count: self.last_status.restart_count,
            oom_killed,
            silent_ms,
            elapsed_ms: ms(elapsed),
            progress,
            load_over_budget: self.over_budget,
            load_budget_s: self.opts.load_budget.map(|b| b.as_secs_f64()),
            preflight,
            readiness: self.tally.record,
            notes: self.notes,
            findings: self.readings.into_findings(),
        }
    }
}

/// The note for a progress reading over `--load-budget`, worded from what tripped it: the
/// projection when it is over the budget, otherwise the time the bar says was already spent
/// (a stalled vLLM bar, `[12:00<?, ?it/s]`, projects nothing).
pub(super) fn progress_budget_note(r: &Reading, budget_s: f64) -> String {
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

/// The load progress to record: the last parsed reading, with the time spent in `loading` as
/// its elapsed time when the engine printed none (llama.cpp), or — when no progress line was
/// parsed at all but the seat did reach `loading` — a reading of that time alone.
fn loading_record(
    progress: Option<Reading>,
    loading: (Option<Instant>, Option<Instant>),
    now: Instant,
) -> Option<Reading> {
    let spent = loading.0.map(|since| {
        loading
            .1
            .unwrap_or(now)
            .saturating_duration_since(since)
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

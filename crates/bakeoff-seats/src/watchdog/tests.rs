//! The watchdog's transition function, tested with observations alone: no process, no
//! server, no clock (every `now` is the start plus a chosen offset).

use std::time::{Duration, Instant};

use bakeoff_artifact::{
    ContextWindow, EndpointFacts, EngineKind, FailureClass, PreflightReport, ReadyCheck,
    ServedModel, TokenizeSupport,
};
use bakeoff_client::RequestError;
use bakeoff_client::discovery::Discovered;
use bakeoff_client::preflight::{PreflightOutcome, Unfit};

use super::machine::{Ending, Event, Observation, Watchdog, progress_budget_note};
use super::{ProbeTarget, State, WatchOptions, WatchReport};
use crate::observed::{Observed, Status};
use crate::progress;

#[test]
#[allow(clippy::unwrap_used)]
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

fn opts() -> WatchOptions {
    WatchOptions {
        silence_timeout: Duration::from_secs(30),
        ready_timeout: Duration::from_secs(120),
        load_budget: None,
        crash_loop_restarts: 3,
        crash_loop_window: Duration::from_secs(600),
        probe_interval: Duration::from_millis(500),
        events: None,
        ..WatchOptions::default()
    }
}

fn status(observed: Observed, restart_count: Option<u64>) -> Status {
    Status {
        observed,
        restart_count,
        id: None,
    }
}

fn running() -> Status {
    status(Observed::Running, None)
}

/// A watch of a seat that serves `model` on port 8080, begun at `t0`.
fn watchdog(t0: Instant, o: WatchOptions, first: Status) -> Watchdog {
    let target = ProbeTarget {
        model: Some("tiny".into()),
        listen_port: Some(8080),
        ..ProbeTarget::default()
    };
    Watchdog::new(target, o, t0, first)
}

fn at(t0: Instant, secs: f64) -> Instant {
    t0 + Duration::from_secs_f64(secs)
}

/// A finished readiness probe: `fit`, or refused (nothing listens), or answered with the
/// listed model ids (none of them the one asked for).
fn probe(fit: bool, refused: bool, served: &[&str]) -> Observation {
    let unfit = (!fit).then(|| Unfit {
        class: if served.is_empty() {
            FailureClass::Unreachable
        } else {
            FailureClass::ModelNotServed
        },
        message: "not fit".into(),
        evidence: vec![],
        remediation: None,
    });
    let out = PreflightOutcome {
        report: PreflightReport {
            fit,
            reasons: vec![],
            model: Some("tiny".into()),
            ready: ReadyCheck {
                ready: fit,
                attempts: 1,
                elapsed_ms: 5,
                reply_preview: fit.then(|| "hello".into()),
                errors: vec![],
            },
            thinking: None,
            thinking_mode: None,
            tokenizer_route: "none".into(),
            flags: vec![],
            elapsed_ms: 5,
        },
        discovered: Discovered {
            facts: EndpointFacts {
                engine: EngineKind::LlamaCpp,
                engine_version: None,
                models: served
                    .iter()
                    .map(|id| ServedModel {
                        id: (*id).into(),
                        max_model_len: None,
                    })
                    .collect(),
                context_window: ContextWindow::UNKNOWN,
                trained_context: None,
                total_slots: None,
                tokenize: TokenizeSupport {
                    works: false,
                    route: None,
                },
                chat_template: None,
                probes: vec![],
                overflow: None,
                tool_calls: None,
                tls: None,
            },
            chat_template: None,
            quantization: None,
            unreachable: refused.then(|| RequestError::Connect {
                addr: "127.0.0.1:8080".into(),
                message: "connection refused".into(),
            }),
        },
        unfit,
    };
    Observation::Probe(Box::new(out))
}

fn line(s: &str) -> Observation {
    Observation::Line(s.into())
}

/// Feed `obs` at the given offsets; returns every event, in order.
fn feed(wd: &mut Watchdog, t0: Instant, obs: Vec<(f64, Observation)>) -> Vec<Event> {
    obs.into_iter()
        .flat_map(|(s, o)| wd.step(o, at(t0, s)))
        .collect()
}

fn ending(events: &[Event]) -> Option<Ending> {
    events.iter().find_map(|e| match e {
        Event::Decided(end) => Some(*end),
        _ => None,
    })
}

#[test]
fn log_lines_move_the_state_forward_never_back() {
    let (_, wd, events) = start(vec![
        (0.5, line("load_model: loading model 'tiny.gguf'")),
        (1.0, line("llama_server: model loaded")),
        (1.5, line("llama_model_loader: a late loader line")),
        (2.0, Observation::Tick),
    ]);
    let phases: Vec<(&str, u64)> = events
        .iter()
        .filter_map(|e| match e {
            Event::Phase(p) => Some((p.state.as_str(), p.at_ms)),
            _ => None,
        })
        .collect();
    assert_eq!(phases, vec![("loading", 500), ("warming", 1000)]);
    assert_eq!(wd.state(), State::Warming);
    assert_eq!(ending(&events), None);
}

#[test]
fn a_successful_probe_is_ready() {
    let (t0, wd, events) = start(vec![
        (0.2, line("load_model: loading model 'tiny.gguf'")),
        (1.0, probe(false, true, &[])),
        (1.1, Observation::Tick),
        (2.5, probe(true, false, &["tiny"])),
    ]);
    assert_eq!(ending(&events), Some(Ending::Ready));
    let r = wd.finish(at(t0, 2.5));
    assert!(r.ready());
    assert_eq!(r.class, None);
    assert_eq!(r.message, "ready in 2.5 s (a real completion succeeded)");
    assert!(r.preflight.is_some_and(|p| p.fit));
    let last = r.phases.last().map(|p| (p.state.as_str(), p.at_ms));
    assert_eq!(last, Some(("ready", 2500)));
    assert_eq!(r.last_state, State::Loading);
    assert_eq!(r.readiness.attempts, 2);
    assert_eq!(r.readiness.refused, 1);
}

#[test]
fn an_exit_is_classed_by_the_root_cause_of_the_tail() {
    let (t0, mut wd, events) = start(vec![
        (0.1, line("Starting to load model /models/big")),
        (
            0.2,
            line("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB"),
        ),
        (
            0.3,
            Observation::State(status(
                Observed::Exited {
                    code: Some(1),
                    oom_killed: Some(false),
                },
                None,
            )),
        ),
    ]);
    assert_eq!(ending(&events), Some(Ending::Exited));
    // Lines drained after the verdict are evidence only.
    assert!(
        wd.step(line("Traceback (most recent call last):"), at(t0, 0.4))
            .is_empty()
    );
    let r = wd.finish(at(t0, 0.5));
    assert_eq!(r.state, State::Failed);
    assert_eq!(r.class, Some(FailureClass::CudaOom));
    assert!(
        r.message.starts_with(
            "exited with code 1 while loading: torch.OutOfMemoryError: CUDA out of memory"
        ),
        "{}",
        r.message
    );
    assert_eq!(r.exit_code, Some(1));
    assert_eq!(r.tail.len(), 3);
}

#[test]
fn an_exit_without_a_signature_is_exited_and_a_host_oom_is_host_oom() {
    let t0 = Instant::now();
    let mut wd = watchdog(t0, opts(), running());
    let exited = Observation::State(status(
        Observed::Exited {
            code: Some(3),
            oom_killed: None,
        },
        None,
    ));
    let events = feed(&mut wd, t0, vec![(0.1, line("bye")), (0.2, exited)]);
    assert_eq!(ending(&events), Some(Ending::Exited));
    let r = wd.finish(at(t0, 0.2));
    assert_eq!(r.class, Some(FailureClass::Exited));
    assert_eq!(
        r.message,
        "exited with code 3 while starting; last line: bye"
    );

    let mut wd = watchdog(t0, opts(), running());
    let killed = Observation::State(status(
        Observed::Exited {
            code: Some(137),
            oom_killed: Some(true),
        },
        Some(0),
    ));
    let events = feed(&mut wd, t0, vec![(0.2, killed)]);
    assert_eq!(ending(&events), Some(Ending::Exited));
    let r = wd.finish(at(t0, 0.2));
    assert_eq!(r.class, Some(FailureClass::HostOom));
    assert_eq!(r.oom_killed, Some(true));
    assert!(r.message.starts_with(
        "killed by the host OOM killer (Docker OOMKilled) with code 137 (SIGKILL: killed by a signal) while starting"
    ));
}

#[test]
fn restarts_within_the_window_are_a_crash_loop() {
    let t0 = Instant::now();
    let mut wd = watchdog(t0, opts(), status(Observed::Running, Some(1)));
    let rc = |n| Observation::State(status(Observed::Restarting, Some(n)));
    let events = feed(&mut wd, t0, vec![(1.0, rc(2)), (2.0, rc(3))]);
    assert_eq!(ending(&events), None);
    let events = feed(&mut wd, t0, vec![(3.0, rc(4))]);
    assert_eq!(ending(&events), Some(Ending::CrashLoop { restarts: 3 }));
    let r = wd.finish(at(t0, 3.0));
    assert_eq!(r.class, Some(FailureClass::CrashLoop));
    assert_eq!(r.restart_count, Some(4));
    assert!(
        r.message
            .starts_with("crash-loop: 3 restarts within 3 s (RestartCount 4)"),
        "{}",
        r.message
    );
}

#[test]
fn silence_past_the_timeout_is_an_init_wedge_once_the_port_answered() {
    let (t0, mut wd, events) = start(vec![
        (1.0, line("load_tensors: loading")),
        (2.0, probe(false, false, &[])),
        (30.5, Observation::Tick),
    ]);
    assert_eq!(ending(&events), None);
    let events = feed(&mut wd, t0, vec![(31.0, Observation::Tick)]);
    assert_eq!(ending(&events), Some(Ending::Silent));
    let r = wd.finish(at(t0, 31.0));
    assert_eq!(r.class, Some(FailureClass::InitWedge));
    assert_eq!(
        r.message,
        "init-wedge: no log line for 30.0 s while loading (not ready); last line: load_tensors: loading"
    );
    assert_eq!(r.silent_ms, 30_000);
}

#[test]
fn a_port_that_only_refused_is_not_listening() {
    let (t0, wd, events) = start(vec![
        (1.0, probe(false, true, &[])),
        (2.0, probe(false, true, &[])),
        (31.0, Observation::Tick),
    ]);
    assert_eq!(ending(&events), Some(Ending::Silent));
    let r = wd.finish(at(t0, 31.0));
    assert_decided(
        &r,
        FailureClass::NotListening,
        "not-listening: every readiness probe (2) was refused",
    );
}

#[test]
fn the_ready_timeout_is_not_ready() {
    let t0 = Instant::now();
    let mut o = opts();
    o.silence_timeout = Duration::from_secs(1000);
    let mut wd = watchdog(t0, o, running());
    let events = feed(
        &mut wd,
        t0,
        vec![(1.0, probe(false, false, &[])), (119.0, Observation::Tick)],
    );
    assert_eq!(ending(&events), None);
    let events = feed(&mut wd, t0, vec![(120.0, Observation::Tick)]);
    assert_eq!(ending(&events), Some(Ending::Timeout));
    let r = wd.finish(at(t0, 120.0));
    assert_eq!(r.class, Some(FailureClass::NotReady));
    assert_eq!(r.message, "not ready after 120 s (still starting)");
}

#[test]
fn other_model_ids_end_the_watch_at_once() {
    let t0 = Instant::now();
    let mut wd = watchdog(t0, opts(), running());
    let events = feed(&mut wd, t0, vec![(1.0, probe(false, false, &["other"]))]);
    assert_eq!(ending(&events), Some(Ending::Misconfigured));
    let r = wd.finish(at(t0, 1.0));
    assert_decided(
        &r,
        FailureClass::ModelNameMismatch,
        "model-name-mismatch: the server is up but serves other, not \"tiny\"",
    );
}

/// A probe whose TLS handshake failed with rustls' `message`.
fn tls_refused(message: &str) -> Observation {
    let Observation::Probe(mut out) = probe(false, true, &[]) else {
        unreachable!("probe() makes a probe")
    };
    out.discovered.unreachable = Some(RequestError::Tls {
        addr: "127.0.0.1:8080".into(),
        message: message.into(),
    });
    Observation::Probe(out)
}

#[test]
fn a_tls_handshake_that_fails_ends_the_watch_at_once_with_the_fix() {
    for (message, fix) in [
        (
            "invalid peer certificate: UnknownIssuer",
            "ca_cert = \"CA.pem\"",
        ),
        (
            "received corrupt message of type InvalidContentType",
            "does not answer with TLS on its port",
        ),
    ] {
        let (t0, wd, events) = start(vec![(1.0, tls_refused(message))]);
        assert_eq!(ending(&events), Some(Ending::Misconfigured), "{message}");
        let r = wd.finish(at(t0, 1.0));
        assert_decided(
            &r,
            FailureClass::Unreachable,
            "unreachable: the seat answers, but its TLS handshake failed",
        );
        assert!(r.message.contains(message), "{}", r.message);
        assert!(
            r.remediation.as_deref().unwrap_or("").contains(fix),
            "{:?}",
            r.remediation
        );
    }
}

#[test]
fn a_log_naming_another_port_then_a_refusal_is_wrong_port() {
    let (t0, wd, events) = start(vec![
        (
            0.5,
            line("main: server is listening on http://127.0.0.1:9999 - starting the main loop"),
        ),
        (1.0, probe(false, true, &[])),
    ]);
    assert_eq!(ending(&events), Some(Ending::Misconfigured));
    let r = wd.finish(at(t0, 1.0));
    assert_eq!(r.class, Some(FailureClass::WrongPort));
    assert_eq!(r.readiness.log_listen_port, Some(9999));
}

#[test]
fn an_unreadable_state_is_noted_once_and_is_not_an_exit() {
    let t0 = Instant::now();
    let mut wd = watchdog(t0, opts(), running());
    let unknown = || Observation::State(Status::unknown("engine did not answer"));
    let events = feed(&mut wd, t0, vec![(1.5, unknown()), (2.0, unknown())]);
    assert_eq!(
        events,
        vec![Event::Note(
            "the seat's state could not be read at +1.5 s (engine did not answer); the watch went on"
                .into()
        )]
    );
    assert_eq!(wd.ending(), None);
    // A missing seat is an exit.
    let events = feed(
        &mut wd,
        t0,
        vec![(2.5, Observation::State(Status::missing()))],
    );
    assert_eq!(ending(&events), Some(Ending::Exited));
}

#[test]
fn a_load_over_the_budget_is_noted_and_the_watch_goes_on() {
    let t0 = Instant::now();
    let mut o = opts();
    o.load_budget = Some(Duration::from_secs(10));
    let mut wd = watchdog(t0, o, running());
    let events = feed(
        &mut wd,
        t0,
        vec![
            (1.0, line("load_model: loading model 'big.gguf'")),
            (5.0, Observation::Tick),
            (11.5, line("load_tensors: still loading")),
            (12.0, Observation::Tick),
            (13.0, Observation::Tick),
        ],
    );
    let notes: Vec<&Event> = events
        .iter()
        .filter(|e| matches!(e, Event::Note(_)))
        .collect();
    assert_eq!(
        notes,
        vec![&Event::Note(
            "weight loading has taken 11.0 s so far, over the --load-budget of 10.0 s".into()
        )]
    );
    assert_eq!(ending(&events), None);
    let events = feed(&mut wd, t0, vec![(13.5, probe(true, false, &["tiny"]))]);
    assert_eq!(ending(&events), Some(Ending::Ready));
    let r = wd.finish(at(t0, 14.0));
    assert!(r.load_over_budget);
    assert_eq!(r.load_budget_s, Some(10.0));
    assert_eq!(r.progress.and_then(|p| p.elapsed_s), Some(13.0));
}

/// The verdict's class, and the start of its message.
fn assert_decided(r: &WatchReport, class: FailureClass, message_start: &str) {
    assert_eq!(r.class, Some(class));
    assert!(r.message.starts_with(message_start), "{}", r.message);
}

/// A watchdog over a running seat with the default options, fed `obs`.
fn start(obs: Vec<(f64, Observation)>) -> (Instant, Watchdog, Vec<Event>) {
    let t0 = Instant::now();
    let mut wd = watchdog(t0, opts(), running());
    let events = feed(&mut wd, t0, obs);
    (t0, wd, events)
}

/// Each rise in `RestartCount` is an event as it happens, counted from the watch's baseline,
/// well before the crash-loop verdict.
#[test]
fn each_restart_is_an_event() {
    let t0 = Instant::now();
    let mut wd = watchdog(t0, opts(), status(Observed::Running, Some(1)));
    let rc = |n| Observation::State(status(Observed::Restarting, Some(n)));
    let events = feed(&mut wd, t0, vec![(1.0, rc(1)), (2.5, rc(2)), (3.0, rc(2))]);
    assert_eq!(
        events,
        vec![Event::Restarted {
            restarts: 1,
            restart_count: 2,
            at_ms: 2500,
        }]
    );
    let events = feed(&mut wd, t0, vec![(4.0, rc(4))]);
    assert_eq!(
        events.first(),
        Some(&Event::Restarted {
            restarts: 3,
            restart_count: 4,
            at_ms: 4000,
        })
    );
    assert_eq!(ending(&events), Some(Ending::CrashLoop { restarts: 3 }));
}

/// The silence timer: on a tick while not ready, at most once a second however often the
/// clock ticks, measured from the last log line; none once ready.
#[test]
fn the_silence_timer_is_sent_once_a_second_while_not_ready() {
    let t0 = Instant::now();
    let mut wd = watchdog(t0, opts(), running());
    // A tick every 125 ms (exact in binary), a line at 1.25 s.
    let mut obs: Vec<(f64, Observation)> = (1..=20)
        .map(|i| (f64::from(i) * 0.125, Observation::Tick))
        .collect();
    obs.insert(10, (1.25, line("load_tensors: loading")));
    let events = feed(&mut wd, t0, obs);
    let silences: Vec<(u64, u64)> = events
        .iter()
        .filter_map(|e| match e {
            Event::Silence {
                silent_ms,
                limit_ms,
            } => Some((*silent_ms, *limit_ms)),
            _ => None,
        })
        .collect();
    assert_eq!(
        silences,
        vec![(125, 30_000), (1125, 30_000), (875, 30_000)],
        "{events:?}"
    );
    let events = feed(
        &mut wd,
        t0,
        vec![
            (3.0, probe(true, false, &["tiny"])),
            (4.0, Observation::Tick),
        ],
    );
    assert!(
        !events.iter().any(|e| matches!(e, Event::Silence { .. })),
        "{events:?}"
    );
}

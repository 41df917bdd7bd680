//! The words of a watch's verdict: its state, class, message and remediation, from the
//! evidence [`super::Watchdog::finish`] gathered (the ending, the log's root cause, the exit,
//! the restarts, the timers).

use std::time::Duration;

use bakeoff_artifact::FailureClass;

use super::event::Ending;
use super::{State, WatchOptions};
use crate::classify::{self, Cause};

/// Milliseconds, as reports and events record a duration.
pub(super) fn ms(d: Duration) -> u64 {
    d.as_millis() as u64
}

fn secs(ms: u64) -> f64 {
    ms as f64 / 1000.0
}

/// A failure's or a success's words.
pub(super) struct Verdict {
    pub(super) state: State,
    pub(super) class: Option<FailureClass>,
    pub(super) message: String,
    pub(super) remediation: Option<String>,
}

impl Verdict {
    fn failed(class: FailureClass, message: String, remediation: String) -> Self {
        Self {
            state: State::Failed,
            class: Some(class),
            message,
            remediation: Some(remediation),
        }
    }
}

/// What [`super::Watchdog::finish`] words a verdict from.
pub(super) struct Evidence<'a> {
    pub(super) ending: Ending,
    pub(super) last_state: State,
    pub(super) elapsed: Duration,
    pub(super) silent_ms: u64,
    pub(super) cause: &'a Option<Cause>,
    pub(super) tail: &'a [String],
    pub(super) exit_code: Option<i64>,
    pub(super) oom_killed: Option<bool>,
    pub(super) restart_count: Option<u64>,
    pub(super) opts: &'a WatchOptions,
}

/// `; root cause <class>: <line>`, or nothing.
fn cause_text(c: &Option<Cause>) -> String {
    c.as_ref()
        .map(|c| format!("; root cause {}: {}", c.class, c.line.trim()))
        .unwrap_or_default()
}

fn last_line(tail: &[String]) -> &str {
    tail.last().map(|l| l.trim()).unwrap_or("(no output)")
}

pub(super) fn refined_verdict(
    ev: &Evidence<'_>,
    class: FailureClass,
    seen: String,
    remedy: String,
) -> Verdict {
    let message = format!(
        "{class}: {seen} (after {:.1} s, still {}; {:.1} s since the last log line){}",
        ev.elapsed.as_secs_f64(),
        ev.last_state.as_str(),
        secs(ev.silent_ms),
        cause_text(ev.cause)
    );
    Verdict::failed(class, message, remedy)
}

pub(super) fn verdict(ev: &Evidence<'_>) -> Verdict {
    let state = ev.last_state.as_str();
    match ev.ending {
        Ending::Ready => Verdict {
            state: State::Ready,
            class: None,
            message: format!(
                "ready in {:.1} s (a real completion succeeded)",
                ev.elapsed.as_secs_f64()
            ),
            remediation: None,
        },
        Ending::Exited => exited_verdict(ev),
        Ending::CrashLoop { restarts } => Verdict::failed(
            FailureClass::CrashLoop,
            format!(
                "crash-loop: {restarts} restarts within {:.0} s (RestartCount {}){}",
                secs(ms(ev.elapsed)).min(ev.opts.crash_loop_window.as_secs_f64()),
                ev.restart_count.unwrap_or(0),
                cause_text(ev.cause)
            ),
            format!(
                "{} Root cause: {}",
                classify::remediation(FailureClass::CrashLoop),
                ev.cause
                    .as_ref()
                    .map(|c| c.remediation)
                    .unwrap_or_else(|| classify::exited_remediation(ev.tail))
            ),
        ),
        Ending::Silent => Verdict::failed(
            FailureClass::InitWedge,
            format!(
                "init-wedge: no log line for {:.1} s while {state} (not ready){}; last line: {}",
                secs(ev.silent_ms),
                cause_text(ev.cause),
                last_line(ev.tail)
            ),
            classify::remediation(FailureClass::InitWedge).to_string(),
        ),
        Ending::Timeout | Ending::Misconfigured => Verdict::failed(
            FailureClass::NotReady,
            format!(
                "not ready after {:.0} s (still {state}){}",
                ev.opts.ready_timeout.as_secs_f64(),
                cause_text(ev.cause)
            ),
            classify::remediation(FailureClass::NotReady).to_string(),
        ),
    }
}

/// ` with code 137 (SIGKILL: killed by a signal)`: an exit code above 128 is the signal that
/// ended the process, as a shell and Docker report it (128 + n); the signal is named so a start
/// killed from outside reads as that, not as the engine's own exit.
fn code_words(code: i64) -> String {
    let name = match code - 128 {
        1 => "SIGHUP",
        2 => "SIGINT",
        4 => "SIGILL",
        6 => "SIGABRT",
        7 => "SIGBUS",
        8 => "SIGFPE",
        9 => "SIGKILL",
        11 => "SIGSEGV",
        13 => "SIGPIPE",
        15 => "SIGTERM",
        _ => return format!(" with code {code}"),
    };
    format!(" with code {code} ({name}: killed by a signal)")
}

fn exited_verdict(ev: &Evidence<'_>) -> Verdict {
    let state = ev.last_state.as_str();
    let code_text = ev.exit_code.map(code_words).unwrap_or_default();
    if ev.oom_killed == Some(true) {
        Verdict::failed(
            FailureClass::HostOom,
            format!(
                "killed by the host OOM killer (Docker OOMKilled){code_text} while {state}{}",
                cause_text(ev.cause)
            ),
            classify::remediation(FailureClass::HostOom).to_string(),
        )
    } else if let Some(c) = ev.cause {
        Verdict::failed(
            c.class,
            format!("exited{code_text} while {state}: {}", c.line.trim()),
            c.remediation.to_string(),
        )
    } else {
        Verdict::failed(
            FailureClass::Exited,
            format!(
                "exited{code_text} while {state}; last line: {}",
                last_line(ev.tail)
            ),
            classify::exited_remediation(ev.tail).to_string(),
        )
    }
}

//! The words of the measurements' progress events ([`EvalEvent`], [`DamageEvent`]), as
//! `bakeoff_seats::progress::describe` is the seats': each event as one line and whether it
//! lasts. Whoever draws decides where the line goes (the binary's spinner or plain lines).

use std::time::Duration;

use bakeoff_term::escape::for_terminal;

use crate::damage::DamageEvent;
use bakeoff_suites::progress::{CeilingEvent, EvalEvent, Outcomes, PreflightPhase};

/// A duration for a progress line: "42 s" below two minutes, else "3 min 5 s".
pub fn secs(d: Duration) -> String {
    let s = d.as_secs_f64().round() as u64;
    if s < 120 {
        format!("{s} s")
    } else {
        format!("{} min {} s", s / 60, s % 60)
    }
}

/// One event as a progress line; `true`: it lasts (a suite's end), else a status.
pub fn eval_event(e: &EvalEvent) -> (bool, String) {
    match e {
        EvalEvent::Preflight(p) => (false, preflight_line(p)),
        EvalEvent::Ceiling(c) => ceiling_event(c),
        EvalEvent::SuiteStarted { suite, planned } => (
            false,
            match planned {
                Some(n) => format!("[{suite}] starting: {n} item{}", plural(*n)),
                None => format!("[{suite}] starting"),
            },
        ),
        EvalEvent::ItemFinished(i) => {
            let of = i.planned.map(|n| format!("/{n}")).unwrap_or_default();
            let left = i
                .eta
                .map(|t| format!(", ~{} left", secs(t)))
                .unwrap_or_default();
            (
                false,
                format!(
                    "[{} {}{of}] {} elapsed{left} — {}",
                    i.suite,
                    i.done,
                    secs(i.elapsed),
                    outcomes(&i.outcomes)
                ),
            )
        }
        EvalEvent::SuiteFinished {
            suite,
            status,
            done,
            planned,
            elapsed,
            outcomes: o,
        } => {
            let status = status.as_str();
            let of = planned.map(|n| format!("/{n}")).unwrap_or_default();
            let tally = if o.is_empty() {
                String::new()
            } else {
                format!(" — {}", outcomes(o))
            };
            (
                true,
                format!(
                    "[{suite}] {status}: {done}{of} items in {}{tally}",
                    secs(*elapsed)
                ),
            )
        }
    }
}

/// The harness ceiling's events: a status while it is measured, then a lasting line with the
/// figure (or why there is none), as soon as it is known.
pub fn ceiling_event(e: &CeilingEvent) -> (bool, String) {
    match e {
        CeilingEvent::Started { https: true } => (
            false,
            "[harness] measuring the harness ceiling against the loopback target over TLS …".into(),
        ),
        CeilingEvent::Started { https: false } => (
            false,
            "[harness] measuring the harness ceiling against the loopback target …".into(),
        ),
        CeilingEvent::Measured(c) => (
            true,
            format!(
                "[harness] ceiling: {:.0} req/s, {:.0} streamed tokens/s, {} concurrent streams; \
                 steps above half of these are flagged client-bound",
                c.requests_per_second, c.streamed_tokens_per_second, c.concurrent_streams
            ),
        ),
        CeilingEvent::Unmeasured { https, error } => (
            true,
            format!(
                "[harness] {}",
                crate::ceiling::unmeasured(*https, &for_terminal(error, 300))
            ),
        ),
    }
}

fn preflight_line(p: &PreflightPhase) -> String {
    match p {
        PreflightPhase::Probing { ready_timeout } => format!(
            "[preflight] discovering the endpoint, then probing readiness with a real completion \
             (up to {}) …",
            secs(*ready_timeout)
        ),
        PreflightPhase::Ready {
            model,
            engine,
            window,
            elapsed,
        } => format!(
            "[preflight] ready in {}: {} on {engine}, window {}",
            secs(*elapsed),
            model.as_deref().unwrap_or("(no model id)"),
            window.map_or_else(|| "unknown".to_string(), |w| w.to_string())
        ),
        PreflightPhase::Unfit {
            class,
            message,
            elapsed,
        } => format!(
            "[preflight] unfit after {} ({class}): {message}",
            secs(*elapsed)
        ),
        PreflightPhase::CheckingThinking { mode } => {
            format!("[preflight] checking that --thinking {mode} takes effect …")
        }
    }
}

/// "ok 1, wrong 2": the outcome classes so far.
fn outcomes(o: &Outcomes) -> String {
    o.iter()
        .map(|(k, n)| format!("{} {n}", k.as_str()))
        .collect::<Vec<_>>()
        .join(", ")
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// One event of `eval damage` as a progress line; `true`: it lasts (an endpoint's preflight
/// verdict, the self-check's), else a status. Model ids come from the endpoint: escaped.
pub fn damage_event(e: &DamageEvent) -> (bool, String) {
    use bakeoff_suites::PreflightPhase as P;
    match e {
        DamageEvent::Preflight { side, phase } => {
            let side = side.as_str();
            match phase {
                P::Probing { ready_timeout } => (
                    false,
                    format!(
                        "[{side} preflight] probing with a real completion (up to {}) …",
                        secs(*ready_timeout)
                    ),
                ),
                P::Ready {
                    model,
                    engine,
                    elapsed,
                    ..
                } => (
                    true,
                    format!(
                        "[{side} preflight] ready in {}: {} on {engine}",
                        secs(*elapsed),
                        for_terminal(model.as_deref().unwrap_or("(no model id)"), 200)
                    ),
                ),
                P::Unfit { class, message, .. } => (
                    true,
                    format!(
                        "[{side} preflight] unfit ({class}): {}",
                        for_terminal(message, 400)
                    ),
                ),
                P::CheckingThinking { .. } => (false, format!("[{side} preflight] …")),
            }
        }
        DamageEvent::Started { phase, planned } => (
            false,
            format!("[{}] starting: {planned} prompts", phase.as_str()),
        ),
        DamageEvent::Item {
            phase,
            done,
            planned,
            elapsed,
            kl,
        } => (
            false,
            format!(
                "[{} {done}/{planned}] {} elapsed{}",
                phase.as_str(),
                secs(*elapsed),
                kl.map(|k| format!(" — KL {k:.4}")).unwrap_or_default()
            ),
        ),
        DamageEvent::SelfCheck { passed, high } => (
            true,
            if *passed {
                format!(
                    "[self-check] passed: the reference agrees with itself (KL ≤ {high:.1e} nats)"
                )
            } else {
                format!(
                    "[self-check] FAILED: the reference disagrees with itself (KL up to {high:.3e} nats); the candidate is not measured"
                )
            },
        ),
        DamageEvent::AlongItem {
            phase,
            done,
            planned,
            elapsed,
        } => (
            false,
            format!(
                "[{} {done}/{planned}] {} elapsed",
                phase.as_str(),
                secs(*elapsed)
            ),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_below_two_minutes_else_minutes_and_seconds() {
        assert_eq!(secs(Duration::from_millis(41_600)), "42 s");
        assert_eq!(secs(Duration::from_secs(119)), "119 s");
        assert_eq!(secs(Duration::from_secs(185)), "3 min 5 s");
    }

    #[test]
    fn a_self_check_that_failed_lasts() {
        let (lasting, text) = damage_event(&DamageEvent::SelfCheck {
            passed: false,
            high: 0.5,
        });
        assert!(lasting);
        assert!(text.starts_with("[self-check] FAILED"), "{text}");
    }
}

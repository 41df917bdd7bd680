//! Bench windows: the seats a candidate displaces are waited for until idle (0 running and 0
//! waiting for `idle_for_s`, docs/field-cases.md F8), stopped, and restored after the candidate — on
//! every exit path, each restore watched to a real completion and its downtime recorded.
//! A seat that is not idle by `idle_timeout_s` is never forced: the candidate is skipped.

use std::time::{Duration, Instant};

use bakeoff_artifact::campaign::Displacement;
use bakeoff_seats::Seats;
use chrono::Utc;
use tokio::sync::watch;

use crate::action::{RestoreAction, RestoreFailure, WatchVerdict};
use crate::candidate::Window;
use crate::error::CampaignError;
use crate::idle::{IdleWait, SeatAccess, wait_idle_at};
use crate::journal::{Entry, Journal};
use crate::progress::Reporter;

/// How often a displaced seat's load is read while waiting for it to be idle.
pub const IDLE_POLL: Duration = Duration::from_millis(500);

/// Why a window did not open (nothing it stopped is left stopped).
#[derive(Debug, Clone, PartialEq)]
pub enum NotOpened {
    /// A seat stayed busy (or unreadable) past the timeout: `(reason, message)`.
    Skip(String, String),
    /// Ctrl-C or SIGTERM while waiting.
    Stopped,
}

/// Wait for every displaced seat that is up to be idle, then stop each (journaled first).
/// Seats that are not up are recorded as such and left alone. On any refusal, whatever was
/// already stopped is restored before returning.
pub async fn open(
    seats: &Seats,
    journal: &mut Journal,
    variant: &str,
    w: &Window,
    stop: &mut watch::Receiver<bool>,
    report: &Reporter,
    displaced: &mut Vec<Displacement>,
) -> Result<Result<(), NotOpened>, CampaignError> {
    let deadline = Instant::now() + Duration::from_secs(w.idle_timeout_s);
    let mut up = Vec::new();
    for name in &w.displaces {
        let Ok(seat) = seats.seat(name) else { continue };
        let was_up = seats.status_of(seat).await.observed.is_up();
        displaced.push(Displacement {
            seat: name.clone(),
            was_up,
            idle_wait_ms: 0,
            restored: None,
            down_ms: None,
            notes: if was_up {
                vec![]
            } else {
                vec!["was not up: neither stopped nor restored".into()]
            },
        });
        if was_up {
            up.push(displaced.len() - 1);
        }
    }
    // Every seat is waited for before any is stopped: a window never takes one seat down and
    // then finds another busy.
    for &i in &up {
        let name = displaced[i].seat.clone();
        let Ok(seat) = seats.seat(&name) else {
            continue;
        };
        report.phase(
            variant,
            &format!(
                "waiting for {name} to be idle ({} s of 0 running, 0 waiting)",
                w.idle_for_s
            ),
        );
        let t0 = Instant::now();
        let left = deadline.saturating_duration_since(Instant::now());
        let access = SeatAccess {
            api_key: seat.api_key(),
            tls: seat.tls_options(),
        };
        let waited = wait_idle_at(
            &seats.fleet.seat_url(seat),
            access,
            seat.engine,
            Duration::from_secs(w.idle_for_s),
            left,
            IDLE_POLL,
            stop,
        )
        .await;
        displaced[i].idle_wait_ms = t0.elapsed().as_millis() as u64;
        match waited {
            IdleWait::Idle { source, .. } => displaced[i]
                .notes
                .push(format!("idle for {} s by {source}", w.idle_for_s)),
            IdleWait::Busy { last, waited } => {
                return Ok(Err(NotOpened::Skip(
                    "not-idle".into(),
                    format!(
                        "displaced seat {name} was not idle for {} s within {} s (waited {} s; last reading: {last}); the candidate was skipped, the seat never forced",
                        w.idle_for_s,
                        w.idle_timeout_s,
                        waited.as_secs()
                    ),
                )));
            }
            IdleWait::Unreadable { error, .. } => {
                return Ok(Err(NotOpened::Skip(
                    "load-unreadable".into(),
                    format!(
                        "cannot tell whether displaced seat {name} is idle: {error}; the candidate was skipped, the seat never forced"
                    ),
                )));
            }
            IdleWait::Stopped => return Ok(Err(NotOpened::Stopped)),
        }
    }
    for &i in &up {
        let name = displaced[i].seat.clone();
        journal.append(Entry::Displacing {
            at: Utc::now(),
            variant: variant.to_string(),
            seat: name.clone(),
            idle_wait_ms: displaced[i].idle_wait_ms,
        })?;
        report.phase(variant, &format!("stopping displaced seat {name}"));
        // The campaign's --confirm was checked before anything was touched.
        if let Err(e) = seats.down(&name, true).await {
            displaced[i].notes.push(format!("stop failed: {e}"));
            restore(seats, journal, variant, &mut displaced[..], report).await?;
            return Ok(Err(NotOpened::Skip(
                "displace-failed".into(),
                format!("could not stop displaced seat {name}: {e}"),
            )));
        }
    }
    Ok(Ok(()))
}

/// Bring back every displaced seat the journal says is down, each watched to a real
/// completion; downtime is from its stop (the journal's `displacing` line) to ready.
pub async fn restore(
    seats: &Seats,
    journal: &mut Journal,
    variant: &str,
    displaced: &mut [Displacement],
    report: &Reporter,
) -> Result<(), CampaignError> {
    for d in displaced.iter_mut() {
        let Some(stopped_at) = journal.state().displaced_at(&d.seat) else {
            continue;
        };
        let action = restore_one(seats, &d.seat, stopped_at, variant, report).await;
        let ok = !action.is_failure();
        let down_ms = action.down_ms().unwrap_or_default();
        let message = action.restore_note();
        journal.append(Entry::Restored {
            at: Utc::now(),
            seat: d.seat.clone(),
            ok,
            down_ms: Some(down_ms),
            message: message.clone(),
        })?;
        d.restored = Some(ok);
        d.down_ms = Some(down_ms);
        if !message.is_empty() {
            d.notes.push(message);
        }
    }
    Ok(())
}

/// Restore one seat: [`RestoreAction::Restored`] or [`RestoreAction::RestoreFailed`], with its
/// downtime.
pub async fn restore_one(
    seats: &Seats,
    name: &str,
    stopped_at: chrono::DateTime<Utc>,
    variant: &str,
    report: &Reporter,
) -> RestoreAction {
    report.phase(variant, &format!("restoring displaced seat {name}"));
    // The operator confirmed the displacement; bringing the seat back undoes it.
    let outcome = seats.up(name, true, false).await;
    let down_ms = (Utc::now() - stopped_at).num_milliseconds().max(0) as u64;
    let failure = match outcome {
        Ok(o) if o.ok() => {
            report.phase(
                variant,
                &format!(
                    "{name} restored: serving again after {:.1} s down",
                    down_ms as f64 / 1000.0
                ),
            );
            return RestoreAction::Restored {
                seat: name.to_string(),
                down_ms,
            };
        }
        Ok(o) => RestoreFailure::NotBack(o.report.map(|r| WatchVerdict {
            class: r.class,
            message: r.message,
        })),
        Err(e) => RestoreFailure::Up(e),
    };
    let action = RestoreAction::RestoreFailed {
        seat: name.to_string(),
        down_ms,
        failure,
    };
    report.note(&action.to_string());
    action
}

//! What the recovery of an earlier run did — `campaign restore DIR`, and the start of a
//! `campaign run` — one value a step, printed one line each. A caller asks
//! [`RestoreAction::is_failure`] rather than read the text: a seat left down or left up is
//! the operator's to act on, and `campaign restore` exits with a failure for it.

use std::fmt;
use std::path::PathBuf;

use bakeoff_artifact::FailureClass;
use bakeoff_seats::OpsError;

/// One step of the recovery, or of the bench window's restore of a displaced seat.
#[derive(Debug)]
pub enum RestoreAction {
    /// A seat an earlier run started and never stopped was stopped.
    Stopped { seat: String },
    /// Stopping a seat an earlier run left up failed: it may still be up.
    CouldNotStop { seat: String, error: OpsError },
    /// A displaced seat is serving again, `down_ms` after it was stopped.
    Restored { seat: String, down_ms: u64 },
    /// A displaced seat did not come back: the operator must bring it up by hand.
    RestoreFailed {
        seat: String,
        down_ms: u64,
        failure: RestoreFailure,
    },
    /// The variant the earlier run was running is recorded `interrupted` (it runs again).
    Interrupted { variant: String },
    /// `campaign run --fresh`: the directory's earlier files were moved under `to`.
    SetAside { to: PathBuf },
}

/// Why a displaced seat did not come back.
#[derive(Debug)]
pub enum RestoreFailure {
    /// It was started and not seen ready (or a check failed): the watchdog's verdict, when it
    /// gave one.
    NotBack(Option<WatchVerdict>),
    /// Starting it failed before any watch (its fleet entry, its gate, its backend).
    Up(OpsError),
}

/// The watchdog's verdict on a start that did not come back.
#[derive(Debug, Clone, PartialEq)]
pub struct WatchVerdict {
    pub class: Option<FailureClass>,
    pub message: String,
}

impl RestoreAction {
    /// A seat left up or left down: `campaign restore` fails, the operator must act.
    pub fn is_failure(&self) -> bool {
        matches!(
            self,
            RestoreAction::CouldNotStop { .. } | RestoreAction::RestoreFailed { .. }
        )
    }

    /// What the journal (and a variant row's notes) keep of a restore: a failure's line,
    /// nothing for one that worked.
    pub fn restore_note(&self) -> String {
        if self.is_failure() {
            self.to_string()
        } else {
            String::new()
        }
    }

    /// A displaced seat's downtime, from its stop to ready or to the failed restore.
    pub fn down_ms(&self) -> Option<u64> {
        match self {
            RestoreAction::Restored { down_ms, .. }
            | RestoreAction::RestoreFailed { down_ms, .. } => Some(*down_ms),
            _ => None,
        }
    }
}

impl fmt::Display for RestoreAction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RestoreAction::Stopped { seat } => {
                write!(f, "stopped seat {seat} left up by an earlier run")
            }
            RestoreAction::CouldNotStop { seat, error } => {
                write!(f, "could not stop seat {seat}: {error}")
            }
            RestoreAction::Restored { seat, down_ms } => write!(
                f,
                "restored displaced seat {seat} ({:.1} s down)",
                *down_ms as f64 / 1000.0
            ),
            RestoreAction::RestoreFailed { seat, failure, .. } => {
                match failure {
                    RestoreFailure::NotBack(verdict) => {
                        write!(f, "RESTORE FAILED: {seat} did not come back (")?;
                        if let Some(v) = verdict {
                            if let Some(c) = v.class {
                                write!(f, "{c}")?;
                            }
                            write!(f, ": {}", v.message)?;
                        }
                        write!(f, ")")?;
                    }
                    RestoreFailure::Up(e) => write!(f, "RESTORE FAILED: {seat}: {e}")?,
                }
                write!(f, "; bring it up by hand: bakeoff seat up {seat} --confirm")
            }
            RestoreAction::Interrupted { variant } => {
                write!(f, "recorded variant {variant} as interrupted")
            }
            RestoreAction::SetAside { to } => write!(f, "old files moved to {}", to.display()),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn failed(failure: RestoreFailure) -> RestoreAction {
        RestoreAction::RestoreFailed {
            seat: "gen".into(),
            down_ms: 1234,
            failure,
        }
    }

    /// The texts `campaign restore` prints and the journal keeps, byte for byte (the binary's
    /// tests and anyone reading the journal match them), and which of them are failures.
    #[test]
    fn each_action_reads_as_its_line() {
        let lines = [
            (
                RestoreAction::Stopped {
                    seat: "solo".into(),
                },
                "stopped seat solo left up by an earlier run",
                false,
            ),
            (
                RestoreAction::CouldNotStop {
                    seat: "solo".into(),
                    error: OpsError::SameSeat("solo".into()),
                },
                "could not stop seat solo: swap solo solo: OLD and NEW are the same seat; name the seat to swap to",
                true,
            ),
            (
                RestoreAction::Restored {
                    seat: "gen".into(),
                    down_ms: 1234,
                },
                "restored displaced seat gen (1.2 s down)",
                false,
            ),
            (
                failed(RestoreFailure::NotBack(Some(WatchVerdict {
                    class: Some(FailureClass::CudaOom),
                    message: "CUDA out of memory".into(),
                }))),
                "RESTORE FAILED: gen did not come back (cuda-oom: CUDA out of memory); bring it up by hand: bakeoff seat up gen --confirm",
                true,
            ),
            (
                failed(RestoreFailure::NotBack(Some(WatchVerdict {
                    class: None,
                    message: "no verdict".into(),
                }))),
                "RESTORE FAILED: gen did not come back (: no verdict); bring it up by hand: bakeoff seat up gen --confirm",
                true,
            ),
            (
                failed(RestoreFailure::NotBack(None)),
                "RESTORE FAILED: gen did not come back (); bring it up by hand: bakeoff seat up gen --confirm",
                true,
            ),
            (
                RestoreAction::Interrupted {
                    variant: "solo".into(),
                },
                "recorded variant solo as interrupted",
                false,
            ),
            (
                RestoreAction::SetAside {
                    to: PathBuf::from("/out/previous-x"),
                },
                "old files moved to /out/previous-x",
                false,
            ),
        ];
        for (action, text, failure) in lines {
            let shown = action.to_string();
            assert_eq!(shown, text);
            assert_eq!(action.is_failure(), failure, "{shown}");
        }
        let up = failed(RestoreFailure::Up(OpsError::SameSeat("gen".into())));
        assert_eq!(
            up.to_string(),
            "RESTORE FAILED: gen: swap gen gen: OLD and NEW are the same seat; name the seat to swap to; bring it up by hand: bakeoff seat up gen --confirm"
        );
        assert!(up.is_failure());
        assert_eq!(up.down_ms(), Some(1234));
    }
}

//! What either backend reports of a seat (`backend.rs` dispatches to `process.rs` and
//! `docker/`, which both speak these): its state, its errors, and its log cut into lines.

use std::time::Duration;

use crate::redact::Redactor;

#[derive(Debug, thiserror::Error)]
pub enum BackendError {
    #[error("seat {seat}: {message}")]
    Process { seat: String, message: String },
    #[error("seat {seat}: Docker: {message}")]
    Docker { seat: String, message: String },
    /// The seat's host's Docker engine could not be reached.
    #[error("seat {seat}: Docker: {source}")]
    Connect {
        seat: String,
        source: Box<crate::docker::transport::ConnectError>,
    },
}

/// What the backend sees of a seat right now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Observed {
    /// No process started by bakeoff / no container of that name.
    Missing,
    /// A container that exists but was never started (or was stopped and kept: dormant).
    Created,
    Running,
    /// Docker is about to start it again (a restart policy at work).
    Restarting,
    Exited {
        code: Option<i64>,
        oom_killed: Option<bool>,
    },
    /// The state could not be read: the Docker engine did not answer (or answered an error
    /// other than "no such container"). Not "down", and never taken for an exit.
    Unknown {
        reason: String,
    },
}

impl Observed {
    pub fn is_up(&self) -> bool {
        matches!(self, Observed::Running | Observed::Restarting)
    }

    pub fn label(&self) -> String {
        match self {
            Observed::Missing => "down".into(),
            Observed::Created => "created (stopped)".into(),
            Observed::Running => "running".into(),
            Observed::Restarting => "restarting".into(),
            Observed::Exited { code: Some(c), .. } => format!("exited ({c})"),
            Observed::Exited { code: None, .. } => "exited".into(),
            Observed::Unknown { reason } => format!("unknown ({reason})"),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Status {
    pub observed: Observed,
    /// Docker's top-level `RestartCount`; `None` for processes.
    pub restart_count: Option<u64>,
    /// pid or container id.
    pub id: Option<String>,
}

impl Status {
    pub fn missing() -> Self {
        Self {
            observed: Observed::Missing,
            restart_count: None,
            id: None,
        }
    }

    pub fn unknown(reason: impl Into<String>) -> Self {
        Self {
            observed: Observed::Unknown {
                reason: reason.into(),
            },
            restart_count: None,
            id: None,
        }
    }
}

/// Splits a byte stream into lines on `\n` or `\r`, keeping a partial line across frames.
#[derive(Default)]
pub struct LineSplitter {
    partial: Vec<u8>,
}

impl LineSplitter {
    pub fn push(&mut self, bytes: &[u8], out: &mut Vec<String>) {
        for &b in bytes {
            if b == b'\n' || b == b'\r' {
                if !self.partial.is_empty() {
                    out.push(String::from_utf8_lossy(&self.partial).into_owned());
                    self.partial.clear();
                }
            } else {
                self.partial.push(b);
            }
        }
    }

    /// The partial line, when the stream ended without a newline.
    pub fn finish(&mut self) -> Option<String> {
        if self.partial.is_empty() {
            None
        } else {
            let s = String::from_utf8_lossy(&self.partial).into_owned();
            self.partial.clear();
            Some(s)
        }
    }

    /// The last `n` of `lines` and the partial line, redacted: a log's tail.
    pub fn tail(mut self, mut lines: Vec<String>, n: usize, redactor: &Redactor) -> Vec<String> {
        lines.extend(self.finish());
        let skip = lines.len().saturating_sub(n);
        lines
            .split_off(skip)
            .iter()
            .map(|l| redactor.text(l))
            .collect()
    }
}

pub(crate) const FOLLOW_POLL: Duration = Duration::from_millis(100);

//! A seat's failure: the report of a start that failed before anything could be watched, and
//! the `<seat>.failure.json` artifact every failed operation writes.

use std::path::{Path, PathBuf};

use bakeoff_artifact::{
    Artifact, ArtifactKind, Candidate, ContextWindow, EndpointRecord, Evidence, Failure, RunFiles,
    SeatRecord, StoreError, run_id_now,
};

use crate::backend::BackendError;
use crate::fleet::types::{Fleet, Seat};
use crate::watchdog::{self, WatchReport};

/// Write the failure artifact of `seat` into `out_dir`: `<seat>.failure.json` for a seat's first
/// failure there, `<seat>.<run_id>.failure.json` for every later one (a failure never replaces
/// an earlier one).
pub(super) fn write_failure_artifact(
    fleet: &Fleet,
    out_dir: &Path,
    seat: &Seat,
    r: &WatchReport,
) -> Result<PathBuf, StoreError> {
    let mut art = failure_artifact(fleet, seat, r);
    let run_id = run_id_now();
    art.run_id = Some(run_id.clone());
    RunFiles::claim(out_dir, &seat.name, &run_id).and_then(|mut files| files.write_artifact(&art))
}

/// A failure before the watchdog had anything to watch: the engine API refused the start.
pub(super) fn start_failure_report(e: &BackendError) -> WatchReport {
    let mut r = error_report(&e.to_string());
    r.message = format!("the start was refused: {e}");
    r
}

/// A failure that is one error message, not a watched start: classified by the table when a
/// signature matches (Docker's `port is already allocated`), else `exited`.
pub(crate) fn error_report(line: &str) -> WatchReport {
    let line = line.to_string();
    let tail = vec![line.clone()];
    let cause = crate::classify::root_cause(&tail);
    let class = cause
        .as_ref()
        .map(|c| c.class)
        .unwrap_or(bakeoff_artifact::FailureClass::Exited);
    WatchReport {
        cause,
        tail,
        ..WatchReport::decided(
            watchdog::State::Failed,
            watchdog::State::Starting,
            Some(class),
            line,
        )
    }
}

/// The failure artifact of a seat.
pub fn failure_artifact(fleet: &Fleet, seat: &Seat, r: &WatchReport) -> Artifact {
    let candidate = Candidate {
        slug: seat.name.clone(),
        model: seat
            .served_model_names
            .first()
            .cloned()
            .unwrap_or_else(|| "unknown".into()),
        engine: seat.engine,
        // A negative result is scoped to the exact configuration: for a container seat the image
        // (tag or digest) is the engine build, and `--quantization` is what the seat was told.
        engine_version: match &seat.launch {
            crate::fleet::launch::Launch::Docker(d) => Some(format!("image {}", d.image)),
            crate::fleet::launch::Launch::Process(_) => None,
        },
        quantization: crate::checks::model_path::quantization_flag(seat),
        context_window: ContextWindow::UNKNOWN,
        hardware: None,
        notes: r.notes.clone(),
    };
    let mut art = Artifact::new(
        ArtifactKind::Failure,
        candidate,
        EndpointRecord {
            url: fleet.seat_url(seat),
            facts: None,
        },
    );
    art.preflight = r.preflight.clone();
    let evidence = evidence(r);
    art.failure = Some(Failure {
        class: r.class.unwrap_or(bakeoff_artifact::FailureClass::Exited),
        message: r.message.clone(),
        evidence,
        elapsed_ms: r.elapsed_ms,
        remediation: r.remediation.clone(),
    });
    art.seat = Some(SeatRecord {
        seat: seat.name.clone(),
        backend: seat.backend_name().into(),
        config: seat.redacted_config(),
        last_state: r.last_state.as_str().into(),
        phases: r.phases.clone(),
        evidence_lines: r.tail.clone(),
        root_cause: r.root_cause_record(),
        exit_code: r.exit_code,
        restart_count: r.restart_count,
        oom_killed: r.oom_killed,
        silent_ms: r.silent_ms,
        load_progress: r.progress.as_ref().map(|p| p.to_record(r.load_budget_s)),
        readiness: Some(r.readiness.clone()),
        findings: r.findings.clone(),
    });
    art.run = bakeoff_artifact::RunRecord {
        fleet: Some(fleet.path.display().to_string()),
        ..Default::default()
    };
    art
}

/// The evidence lines of a failure: the root cause, what Docker or the process reported, the
/// silence at the verdict and the last log line.
fn evidence(r: &WatchReport) -> Vec<Evidence> {
    let mut evidence = Vec::new();
    if let Some(c) = &r.cause {
        evidence.push(Evidence {
            what: format!("root cause (log line {} of the tail)", c.line_index + 1),
            detail: c.line.clone(),
        });
    }
    if let Some(code) = r.exit_code {
        evidence.push(Evidence {
            what: "exit code".into(),
            detail: code.to_string(),
        });
    }
    if let Some(n) = r.restart_count {
        evidence.push(Evidence {
            what: "RestartCount (Docker inspect, top level)".into(),
            detail: n.to_string(),
        });
    }
    if let Some(o) = r.oom_killed {
        evidence.push(Evidence {
            what: "State.OOMKilled (Docker inspect)".into(),
            detail: o.to_string(),
        });
    }
    evidence.push(Evidence {
        what: "silence at the verdict".into(),
        detail: format!("{} ms since the last log line", r.silent_ms),
    });
    if let Some(l) = r.tail.last() {
        evidence.push(Evidence {
            what: "last log line".into(),
            detail: l.clone(),
        });
    }
    evidence
}

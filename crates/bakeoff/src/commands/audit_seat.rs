//! `bakeoff audit seat --fleet F SEAT`: the checks `seat up` runs before a start — the
//! checkpoint audit, cache mounts, the Hugging Face token, the pinned chat template — run
//! without starting anything. Exit 1 when the start would be refused or a finding is an error.
//!
//! Printed through the fleet's redactor, as `seat` prints: a token's value never appears
//! (the findings only name the variable anyway).

use bakeoff_artifact::FindingSeverity;
use bakeoff_report::escape::for_terminal;
use bakeoff_seats::redact::Redactor;
use bakeoff_seats::{Fleet, hooks, render};

use crate::exit::{Error, Exit};
use bakeoff_flags::cli::AuditSeatArgs;

pub fn run(a: AuditSeatArgs) -> Result<Exit, Error> {
    let fleet = Fleet::load(&a.fleet.fleet)?;
    let redactor = Redactor::for_fleet(&fleet);
    let seat = fleet.require(&a.seat)?;
    let (refused, findings) = match hooks::before_start_blocking(&fleet, seat) {
        Ok(f) => (None, f),
        Err(reason) => (Some(reason.to_string()), Vec::new()),
    };
    let any_error = findings
        .iter()
        .any(|f| f.severity == FindingSeverity::Error);
    let ok = refused.is_none() && !any_error;
    if a.json {
        let mut v = serde_json::json!({
            "seat": seat.name,
            "ok": ok,
            "refused": refused,
            "findings": findings,
        });
        redactor.json(&mut v);
        stdoutln!("{}", serde_json::to_string_pretty(&v).map_err(Error::json)?);
    } else {
        let mut lines = vec![format!(
            "seat {} ({}, {}): {}",
            seat.name,
            seat.engine,
            seat.backend_name(),
            match &refused {
                // The reason quotes the checkpoint's files: escaped for the terminal.
                Some(r) => format!("the start would be REFUSED: {}", for_terminal(r, 800)),
                None => "the start would go ahead".into(),
            }
        )];
        if refused.is_none() && findings.is_empty() {
            lines.push("  no findings".into());
        }
        lines.extend(render::finding_lines(&findings));
        for l in lines {
            stdoutln!("{}", super::screen(&redactor.text(&l)));
        }
    }
    Ok(Exit::from_ok(ok))
}

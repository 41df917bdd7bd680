//! A failure of engine support (the engine said it cannot run the checkpoint, or the registry
//! check refused the start) is not isolated by starting the same build again: the candidate's
//! listed alternative builds (`alternatives = [...]` under `[candidate.isolate]`: images for a
//! Docker seat, commands for a process seat) are each asked with the registry check the seats
//! run before a start (docs/engines.md "Engine support before a start"), and none is started.

use bakeoff_artifact::campaign::{AlternativeCheck, AlternativeVerdict, IsolationStatus};
use bakeoff_seats::Fleet;
use bakeoff_seats::checks::engine_support;
use bakeoff_seats::fleet::Launch;

use super::plan::Conclusion;
use crate::variant::Variant;

/// The parent's seat with its build replaced: a Docker seat's image, a process seat's command.
fn with_build(parent: &Variant, build: &str) -> bakeoff_seats::Seat {
    let mut seat = parent.seat.clone();
    match &mut seat.launch {
        Launch::Docker(d) => d.image = build.to_string(),
        Launch::Process(p) => p.command = build.to_string(),
    }
    seat
}

/// Asks each build's registry (blocking: a throw-away container or the build's Python).
pub fn check(fleet: &Fleet, parent: &Variant, builds: &[String]) -> Vec<AlternativeCheck> {
    builds
        .iter()
        .map(|build| {
            let seat = with_build(parent, build);
            let (verdict, words) = match engine_support::check(fleet, &seat) {
                None => (
                    AlternativeVerdict::NotChecked,
                    format!("the {} engine has no registry bakeoff can ask", seat.engine),
                ),
                Some(f) => {
                    let verdict = match f.code.as_str() {
                        engine_support::SUPPORTED => AlternativeVerdict::Supports,
                        engine_support::UNSUPPORTED => AlternativeVerdict::Refuses,
                        _ => AlternativeVerdict::NotChecked,
                    };
                    let mut words = f.message;
                    if !f.evidence.is_empty() {
                        words = format!("{words} ({})", f.evidence.join("; "));
                    }
                    (verdict, words)
                }
            };
            AlternativeCheck {
                build: build.clone(),
                verdict,
                words,
            }
        })
        .collect()
}

/// What the checks conclude: a build that knows the checkpoint isolates the engine build as
/// the factor; every build refusing proves the candidate unfit with these builds; otherwise
/// (a check that could not run, none supporting) nothing is claimed.
pub fn conclude(parent_build: &str, checks: &[AlternativeCheck]) -> Conclusion {
    let of = |v: AlternativeVerdict| -> Vec<&str> {
        checks
            .iter()
            .filter(|c| c.verdict == v)
            .map(|c| c.build.as_str())
            .collect()
    };
    let (supports, refuses, unknown) = (
        of(AlternativeVerdict::Supports),
        of(AlternativeVerdict::Refuses),
        of(AlternativeVerdict::NotChecked),
    );
    let listed = |v: &[&str]| {
        v.iter()
            .map(|b| format!("`{b}`"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    if !supports.is_empty() {
        return Conclusion {
            status: IsolationStatus::Isolated,
            factor: Some(format!(
                "the engine build: {} knows the checkpoint, `{parent_build}` does not",
                listed(&supports)
            )),
            passed: None,
            failed: None,
            summary: format!(
                "the registry of {} knows the checkpoint (asked without a start): run the candidate on it",
                listed(&supports)
            ),
            not_attempted: Vec::new(),
        };
    }
    if unknown.is_empty() {
        return Conclusion {
            status: IsolationStatus::ProvenUnfit,
            factor: Some(format!(
                "engine support: none of the listed builds knows the checkpoint ({}, and `{parent_build}`)",
                listed(&refuses)
            )),
            passed: None,
            failed: None,
            summary: format!(
                "proven unfit with these builds: the registries of {} refuse the checkpoint too (asked without a start)",
                listed(&refuses)
            ),
            not_attempted: Vec::new(),
        };
    }
    let why: Vec<String> = checks
        .iter()
        .filter(|c| c.verdict == AlternativeVerdict::NotChecked)
        .map(|c| format!("`{}`: {}", c.build, c.words))
        .collect();
    Conclusion {
        status: IsolationStatus::NotIsolated,
        factor: None,
        passed: None,
        failed: None,
        summary: format!(
            "not isolated: no listed build was found to know the checkpoint, and {} could not be asked ({})",
            listed(&unknown),
            why.join("; ")
        ),
        not_attempted: Vec::new(),
    }
}

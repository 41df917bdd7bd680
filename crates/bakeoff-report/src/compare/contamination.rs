//! Which side of a comparison was contaminated (docs/metrics.md "Conditions"): a run whose suites were
//! measured on a busy host, a shared GPU, a dropped page cache or a throttled card carries a
//! condition flag (`bakeoff_artifact::CONDITION_CODES`), and is never silently compared with a
//! clean one — the comparison names the side and withholds its verdict unless
//! `--allow contaminated`.

use bakeoff_artifact::{Artifact, CONDITION_CODES, InstrumentFlag};

/// Whether `f` says the measurement's conditions were contaminated.
pub fn is_condition(f: &InstrumentFlag) -> bool {
    CONDITION_CODES.contains(&f.code)
}

/// What contaminated a run, one entry per finding: `suite: code (message)` with `evidence`,
/// else the short `suite: code` (for the one-line reason, which must keep its `--allow` hint).
/// Reads each suite's own flags and the run's `instrument_flags`, once each.
pub fn of_artifact(a: &Artifact, evidence: bool) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut add = |suite: Option<&str>, f: &InstrumentFlag| {
        let where_ = suite.or(f.suite.as_deref()).unwrap_or("run");
        let line = if evidence {
            format!("{where_}: {} ({})", f.code, f.message)
        } else {
            format!("{where_}: {}", f.code)
        };
        if !out.contains(&line) {
            out.push(line);
        }
    };
    for (name, s) in &a.suites {
        for f in s.summary.flags.iter().filter(|f| is_condition(f)) {
            add(Some(name), f);
        }
    }
    for f in a.instrument_flags.iter().filter(|f| is_condition(f)) {
        add(None, f);
    }
    out
}

/// The confound's detail when either side is contaminated: which side, and by what.
pub fn detail(a: &[String], b: &[String]) -> Option<String> {
    if a.is_empty() && b.is_empty() {
        return None;
    }
    let side = |name: &str, v: &[String]| {
        if v.is_empty() {
            format!("{name} clean")
        } else {
            format!("{name} contaminated — {}", v.join(", "))
        }
    };
    Some(format!(
        "contaminated measurement: {}; {}",
        side("A", a),
        side("B", b)
    ))
}

//! `bakeoff verdict SLUG VERDICT --reason …`: the operator's verdict, scoped to the tested
//! configuration, stored beside the artifacts as DIR/<slug>.verdict.json.

use bakeoff_report::escape::for_terminal;
use bakeoff_report::evidence::{Scope, VerdictEntry, set_verdict};
use bakeoff_report::registry;

use crate::config::VerdictConfig;
use crate::exit::{Error, Exit};

pub fn run(a: VerdictConfig) -> Result<Exit, Error> {
    let reg = registry::load(&a.dir)?;
    let entries: Vec<_> = reg.entries_of(&a.slug).collect();
    let Some(newest) = entries
        .iter()
        .rev()
        .find(|e| !e.is_retracted())
        .or(entries.last())
    else {
        let slugs = reg.slugs();
        return Err(Error::usage(format!(
            "no artifact for candidate {:?} under {} ({}); give the slug of an artifact there, or --out DIR",
            a.slug,
            a.dir.display(),
            if slugs.is_empty() {
                "it holds none".to_string()
            } else {
                format!("candidates there: {}", for_terminal(&slugs.join(", "), 500))
            }
        )));
    };
    let counted: Vec<String> = entries
        .iter()
        .filter(|e| !e.is_retracted())
        .map(|e| e.name.clone())
        .collect();
    let entry = VerdictEntry {
        verdict: a.verdict,
        reason: a.reason.clone(),
        date: chrono::Utc::now(),
        scope: Scope::of(&newest.artifact, counted),
        not_attempted: a.not_attempted.clone(),
        production_impact: a.impact.clone(),
    };
    let (path, record) = set_verdict(&a.dir, &a.slug, entry)?;
    // The scope is copied from an artifact's file: escaped, like the slug the operator typed.
    let t = |s: &str| for_terminal(s, 300);
    let s = &record.current.scope;
    println!(
        "verdict on {}: {} ({}) — scoped to {} on {} {}, quantization {}, window {}, hardware {}",
        t(&a.slug),
        record.current.verdict,
        record.current.date.format("%Y-%m-%d"),
        t(&s.model),
        s.engine,
        t(s.engine_version.as_deref().unwrap_or("(version unknown)")),
        t(s.quantization.as_deref().unwrap_or("unknown")),
        s.window_tokens
            .map(|t| t.to_string())
            .unwrap_or_else(|| "unknown".into()),
        t(s.hardware.as_deref().unwrap_or("not recorded")),
    );
    if let Some(prev) = record.history.last() {
        println!(
            "replaces {} ({}); the earlier verdict is kept in the record's history",
            prev.verdict,
            prev.date.format("%Y-%m-%d")
        );
    }
    println!("wrote {}", t(&path.display().to_string()));
    Ok(Exit::Ok)
}

//! The terminal rendering of `bakeoff audit cache`: per cache its repositories and snapshots (or
//! llama.cpp's finished files), then the partial downloads, the locks, the problems with their
//! fixes and the verdict line. Pure: it returns lines and prints nothing; the binary prints them.
//!
//! Every path and command line comes from the disk or /proc and goes through [`for_terminal`] or
//! [`for_terminal_keep_end`], so a hostile file name cannot drive the terminal.

use std::path::Path;

use bakeoff_term::escape::{for_terminal, for_terminal_keep_end};
use bakeoff_term::{Grid, Kind, render};

use crate::audit::{Activity, CacheAudit, CacheFinding, CacheReport, Severity};
use crate::locks::{LockHolder, LockState};

/// Bytes in the largest unit that keeps a number above 1.
fn human(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    let mut value = bytes as f64;
    if value < 1024.0 {
        return format!("{bytes} B");
    }
    let mut unit = "B";
    for u in UNITS {
        if value < 1024.0 {
            break;
        }
        value /= 1024.0;
        unit = u;
    }
    format!("{value:.2} {unit}")
}

/// A duration in seconds as the operator reads it: `42 s`, `17 min`, `5.2 h`, `3.1 d`.
fn age(secs: u64) -> String {
    match secs {
        s if s < 120 => format!("{s} s"),
        s if s < 7200 => format!("{} min", s / 60),
        s if s < 172_800 => format!("{:.1} h", s as f64 / 3600.0),
        s => format!("{:.1} d", s as f64 / 86_400.0),
    }
}

/// A table drawn at `width` columns, each line after `indent`.
fn indented(out: &mut Vec<String>, t: &Grid, width: u16, indent: &str) {
    let inner = width.saturating_sub(indent.len() as u16);
    for line in render(t, inner).lines() {
        out.push(format!("{indent}{line}"));
    }
}

/// The audit for a terminal `width` columns wide, one entry per line (an empty entry is a blank
/// line): each cache, the partial downloads, the locks, then the findings and the verdict.
pub fn lines(report: &CacheAudit, width: u16) -> Vec<String> {
    let mut out = Vec::new();
    for cache in &report.caches {
        cache_lines(&mut out, cache, width);
    }
    if !report.downloads.is_empty() {
        download_lines(&mut out, report, width);
    }
    if !report.locks.is_empty() {
        lock_lines(&mut out, report, width);
    }
    finding_lines(&mut out, report);
    out
}

/// Every path and command line comes from the disk or /proc: escaped, so a hostile file name
/// cannot drive the terminal.
fn p(path: &Path) -> String {
    for_terminal_keep_end(&path.display().to_string(), 300)
}

/// One cache: its repositories with their snapshots, or its llama.cpp files.
fn cache_lines(out: &mut Vec<String>, cache: &CacheReport, width: u16) {
    match &cache.hub_dir {
        Some(hub) => out.push(format!(
            "cache {} (Hugging Face hub at {})",
            p(&cache.path),
            p(hub)
        )),
        None => out.push(format!("cache {} (llama.cpp)", p(&cache.path))),
    }
    if cache.repos.is_empty() && cache.llama.is_none() {
        out.push("  no repositories".into());
    }
    for repo in &cache.repos {
        out.push(format!(
            "  {} {}: {} on disk, {}",
            repo.kind,
            for_terminal(&repo.id, 200),
            human(repo.size_on_disk),
            if repo.complete {
                "complete"
            } else {
                "INCOMPLETE"
            }
        ));
        if repo.snapshots.is_empty() {
            out.push("    no snapshots".into());
            continue;
        }
        let mut t = Grid::new();
        t.column("snapshot", Kind::Name(44))
            .column("refs", Kind::Words)
            .column("files", Kind::Number)
            .column("missing blobs", Kind::Words);
        for s in &repo.snapshots {
            let missing: Vec<&str> = s.missing.iter().map(|m| m.file.as_str()).collect();
            t.row(vec![
                for_terminal(&s.commit, 80),
                if s.refs.is_empty() {
                    "-".into()
                } else {
                    for_terminal(&s.refs.join(", "), 200)
                },
                s.files.len().to_string(),
                if missing.is_empty() {
                    "-".into()
                } else {
                    for_terminal(&missing.join(", "), 400)
                },
            ]);
        }
        indented(out, &t, width, "    ");
    }
    if let Some(llama) = &cache.llama {
        if llama.files.is_empty() {
            out.push("  no finished .gguf files".into());
        } else {
            let mut t = Grid::new();
            t.column("file", Kind::Name(80))
                .column("on disk", Kind::Number)
                .column("etag", Kind::Text);
            for f in &llama.files {
                t.row(vec![
                    p(&f.path),
                    human(f.size_on_disk),
                    if f.has_etag { "yes" } else { "no" }.into(),
                ]);
            }
            indented(out, &t, width, "  ");
        }
    }
}

/// The partial downloads, sampled twice.
fn download_lines(out: &mut Vec<String>, report: &CacheAudit, width: u16) {
    out.push(String::new());
    out.push(format!(
        "partial downloads (sampled {} ms apart):",
        report.sample_interval_ms
    ));
    let mut t = Grid::new();
    t.column("file", Kind::Name(80))
        .column("written", Kind::Number)
        .column("last write", Kind::Number)
        .column("grew", Kind::Number)
        .column("state", Kind::Text)
        .column("held by", Kind::Words);
    for d in &report.downloads {
        t.row(vec![
            p(&d.path),
            human(d.bytes),
            age(d.age_secs),
            human(d.grew_bytes),
            match d.activity {
                Activity::InProgress => "in progress",
                Activity::Stalled => "STALLED",
                Activity::Interrupted => "interrupted",
            }
            .into(),
            holders(&d.holders),
        ]);
    }
    indented(out, &t, width, "  ");
}

/// The download locks and who holds them.
fn lock_lines(out: &mut Vec<String>, report: &CacheAudit, width: u16) {
    out.push(String::new());
    out.push("locks:".into());
    let mut t = Grid::new();
    t.column("lock", Kind::Name(80))
        .column("state", Kind::Text)
        .column("holder", Kind::Words);
    for l in &report.locks {
        let (state, holder) = match &l.state {
            LockState::Held { holders: h } if l.progressing => ("held, progressing", holders(h)),
            LockState::Held { holders: h } => ("HELD, not progressing", holders(h)),
            LockState::Stale => ("stale (nobody holds it)", "-".into()),
            LockState::Unknown { reason } => ("unknown", for_terminal(reason, 300)),
        };
        t.row(vec![p(&l.path), state.into(), holder]);
    }
    indented(out, &t, width, "  ");
}

/// The problems, the notes and the verdict.
fn finding_lines(out: &mut Vec<String>, report: &CacheAudit) {
    let problems: Vec<&CacheFinding> = report
        .findings
        .iter()
        .filter(|f| f.severity == Severity::Problem)
        .collect();
    let notes: Vec<&CacheFinding> = report
        .findings
        .iter()
        .filter(|f| f.severity == Severity::Note)
        .collect();
    if !problems.is_empty() {
        out.push(String::new());
        out.push("problems:".into());
        for f in &problems {
            finding(out, "PROBLEM", f);
        }
    }
    if !notes.is_empty() {
        out.push(String::new());
        out.push("notes:".into());
        for f in &notes {
            finding(out, "note", f);
        }
    }
    out.push(String::new());
    if report.ok {
        out.push("ok: no incomplete download, no lock held by a stalled process".into());
    } else {
        out.push(format!(
            "failed: {} problem(s), fixes above",
            problems.len()
        ));
    }
}

fn holders(h: &[LockHolder]) -> String {
    if h.is_empty() {
        return "-".into();
    }
    let list: Vec<String> = h
        .iter()
        .map(|h| format!("{} {}", h.pid, h.cmdline))
        .collect();
    for_terminal(&list.join("; "), 400)
}

fn finding(out: &mut Vec<String>, label: &str, f: &CacheFinding) {
    out.push(format!(
        "  {label} [{}]: {}",
        f.code,
        for_terminal(&f.message, 800)
    ));
    if let Some(fix) = &f.fix {
        out.push(format!("    fix: {}", for_terminal(fix, 800)));
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;

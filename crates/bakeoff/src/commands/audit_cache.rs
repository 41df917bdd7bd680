//! `bakeoff audit cache PATH… [--json]`: the model download caches — per repository its
//! snapshots and size on disk, every partial download and what it is doing, every lock and its
//! holder — then the problems, each with its fix. Exit 1 when a problem was found (an incomplete
//! download, a lock held by a process that is not progressing), 2 when a PATH is not a cache.

use bakeoff_cache::audit::{Activity, CacheAudit, CacheFinding, Severity};
use bakeoff_cache::locks::LockState;
use bakeoff_cache::{AuditOptions, audit_paths};
use bakeoff_report::escape::{for_terminal, for_terminal_keep_end};
use bakeoff_report::table::{Grid, Kind, render, width};

use crate::cli::AuditCacheArgs;
use crate::exit::{Error, Exit};

pub fn run(a: AuditCacheArgs) -> Result<Exit, Error> {
    // A PATH that is missing or no cache is a usage error: one line naming it and the fix.
    let report = audit_paths(&a.paths, &AuditOptions::default()).map_err(Error::usage)?;
    if a.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&report).map_err(Error::json)?
        );
    } else {
        print_text(&report, width());
    }
    Ok(Exit::from_ok(report.ok))
}

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

fn print_text(report: &CacheAudit, width: u16) {
    // Every path and command line below comes from the disk or /proc: escaped, so a hostile
    // file name cannot drive the terminal.
    let p = |path: &std::path::Path| for_terminal_keep_end(&path.display().to_string(), 300);
    for cache in &report.caches {
        match &cache.hub_dir {
            Some(hub) => println!("cache {} (Hugging Face hub at {})", p(&cache.path), p(hub)),
            None => println!("cache {} (llama.cpp)", p(&cache.path)),
        }
        if cache.repos.is_empty() && cache.llama.is_none() {
            println!("  no repositories");
        }
        for repo in &cache.repos {
            println!(
                "  {} {}: {} on disk, {}",
                repo.kind,
                for_terminal(&repo.id, 200),
                human(repo.size_on_disk),
                if repo.complete {
                    "complete"
                } else {
                    "INCOMPLETE"
                }
            );
            if repo.snapshots.is_empty() {
                println!("    no snapshots");
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
            for line in render(&t, width.saturating_sub(4)).lines() {
                println!("    {line}");
            }
        }
        if let Some(llama) = &cache.llama {
            if llama.files.is_empty() {
                println!("  no finished .gguf files");
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
                for line in render(&t, width.saturating_sub(2)).lines() {
                    println!("  {line}");
                }
            }
        }
    }
    if !report.downloads.is_empty() {
        println!();
        println!(
            "partial downloads (sampled {} ms apart):",
            report.sample_interval_ms
        );
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
        for line in render(&t, width.saturating_sub(2)).lines() {
            println!("  {line}");
        }
    }
    if !report.locks.is_empty() {
        println!();
        println!("locks:");
        let mut t = Grid::new();
        t.column("lock", Kind::Name(80))
            .column("state", Kind::Text)
            .column("holder", Kind::Words);
        for l in &report.locks {
            let (state, holder) = match &l.state {
                LockState::Held { holders: h } if l.progressing => {
                    ("held, progressing", holders(h))
                }
                LockState::Held { holders: h } => ("HELD, not progressing", holders(h)),
                LockState::Stale => ("stale (nobody holds it)", "-".into()),
                LockState::Unknown { reason } => ("unknown", for_terminal(reason, 300)),
            };
            t.row(vec![p(&l.path), state.into(), holder]);
        }
        for line in render(&t, width.saturating_sub(2)).lines() {
            println!("  {line}");
        }
    }
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
        println!();
        println!("problems:");
        for f in &problems {
            print_finding("PROBLEM", f);
        }
    }
    if !notes.is_empty() {
        println!();
        println!("notes:");
        for f in &notes {
            print_finding("note", f);
        }
    }
    println!();
    if report.ok {
        println!("ok: no incomplete download, no lock held by a stalled process");
    } else {
        println!("failed: {} problem(s), fixes above", problems.len());
    }
}

fn holders(h: &[bakeoff_cache::locks::LockHolder]) -> String {
    if h.is_empty() {
        return "-".into();
    }
    let list: Vec<String> = h
        .iter()
        .map(|h| format!("{} {}", h.pid, h.cmdline))
        .collect();
    for_terminal(&list.join("; "), 400)
}

fn print_finding(label: &str, f: &CacheFinding) {
    println!("  {label} [{}]: {}", f.code, for_terminal(&f.message, 800));
    if let Some(fix) = &f.fix {
        println!("    fix: {}", for_terminal(fix, 800));
    }
}

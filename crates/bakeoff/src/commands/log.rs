//! `bakeoff log add|list|archive`: the operator logbook.

use std::io::Read as _;

use bakeoff_report::escape::for_terminal;
use bakeoff_report::logbook::{self, DEFAULT_MARKERS, NewEntry};
use chrono::NaiveDate;

use crate::cli::{LogAddArgs, LogArchiveArgs, LogCommand, LogDirArgs};
use crate::exit::{CliError, Exit, failed, usage};

fn date(s: Option<&str>, flag: &str) -> Result<NaiveDate, CliError> {
    match s {
        None => Ok(chrono::Utc::now().date_naive()),
        Some(s) => NaiveDate::parse_from_str(s, "%Y-%m-%d")
            .map_err(|_| usage(format!("{flag} {s:?} is not a date; use YYYY-MM-DD"))),
    }
}

pub fn run(c: LogCommand) -> Result<Exit, CliError> {
    match c {
        LogCommand::Add(a) => add(a),
        LogCommand::List(a) => list(a),
        LogCommand::Archive(a) => archive(a),
    }
}

fn add(a: LogAddArgs) -> Result<Exit, CliError> {
    let body = match &a.body_file {
        Some(p) if p.as_os_str() == "-" => {
            let mut s = String::new();
            std::io::stdin()
                .read_to_string(&mut s)
                .map_err(|e| usage(format!("cannot read the body from stdin: {e}")))?;
            s
        }
        Some(p) => std::fs::read_to_string(p)
            .map_err(|e| usage(format!("cannot read --body-file {}: {e}", p.display())))?,
        None => a.body.clone().unwrap_or_default(),
    };
    let n = NewEntry {
        date: date(a.date.as_deref(), "--date")?,
        title: a.title.clone(),
        summary: a.summary.clone(),
        body,
        artifacts: a.artifact.clone(),
        commits: a.commit.clone(),
    };
    let e = logbook::add(&a.dir.dir, &n).map_err(|e| match e {
        logbook::LogbookError::Empty(_) | logbook::LogbookError::MultiLine(_) => usage(e),
        other => failed(other),
    })?;
    println!(
        "added {} — {}",
        for_terminal(&a.dir.dir.join(&e.file).display().to_string(), 500),
        for_terminal(&e.title, 300)
    );
    Ok(Exit::Ok)
}

fn list(a: LogDirArgs) -> Result<Exit, CliError> {
    let markers: Vec<String> = DEFAULT_MARKERS.iter().map(|s| s.to_string()).collect();
    let entries = logbook::list(&a.dir).map_err(failed)?;
    if entries.is_empty() {
        println!(
            "no entries under {} (add one with `bakeoff log add`)",
            for_terminal(&a.dir.display().to_string(), 500)
        );
    }
    // File names, titles and the matched markers come from the entries' files: escaped.
    for e in &entries {
        let open = logbook::open_markers(&e.text, &markers);
        println!(
            "{}  {}  {}{}",
            e.date
                .map(|d| d.to_string())
                .unwrap_or_else(|| "undated   ".into()),
            for_terminal(&e.file, 300),
            for_terminal(&e.title, 300),
            if open.is_empty() {
                String::new()
            } else {
                format!("  [open: {}]", for_terminal(&open.join(", "), 300))
            }
        );
    }
    Ok(Exit::Ok)
}

fn archive(a: LogArchiveArgs) -> Result<Exit, CliError> {
    let markers: Vec<String> = if a.marker.is_empty() {
        DEFAULT_MARKERS.iter().map(|s| s.to_string()).collect()
    } else {
        a.marker.clone()
    };
    let today = date(a.today.as_deref(), "--today")?;
    let r =
        logbook::archive(&a.dir.dir, a.age, &markers, today, a.target).map_err(|e| match e {
            logbook::LogbookError::AgeTooLarge { .. } => usage(e),
            other => failed(other),
        })?;
    for l in r.render().lines() {
        println!("{}", for_terminal(l, 2000));
    }
    Ok(Exit::Ok)
}

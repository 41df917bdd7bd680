//! `bakeoff report DIR`: the comparison table on stdout; the markdown negative-results log and
//! the HTML report written (beside the artifacts unless told otherwise); CSV on request.

use std::path::PathBuf;

use bakeoff_report::{csv_export, html, markdown, registry, terminal};

use crate::cli::ReportArgs;
use crate::exit::{CliError, Exit, failed, usage};

/// Write a report view: regenerated from the artifacts on every run, so an earlier view of
/// ours is replaced (atomically); a file at that path that bakeoff report did not write —
/// `marker` is absent from it — is never overwritten.
fn write(path: &PathBuf, text: &str, marker: &str) -> Result<(), CliError> {
    if let Ok(old) = std::fs::read_to_string(path)
        && !old.contains(marker)
    {
        return Err(failed(format!(
            "{} exists and was not written by bakeoff report: it is never overwritten (choose another path)",
            path.display()
        )));
    }
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(std::path::Path::new("."));
    std::fs::create_dir_all(dir)
        .map_err(|e| failed(format!("cannot create {}: {e}", dir.display())))?;
    bakeoff_report::logbook::write_replace(path, text).map_err(failed)
}

/// What marks a view as bakeoff report's own.
const HTML_MARKER: &str = "<meta name=\"generator\" content=\"bakeoff report\">";
const MARKDOWN_MARKER: &str = " by bakeoff ";

pub fn run(a: ReportArgs) -> Result<Exit, CliError> {
    let reg = registry::load(&a.dir).map_err(usage)?;
    print!("{}", terminal::report(&reg));
    if reg.entries.is_empty() {
        return Ok(Exit::Failed);
    }
    if a.no_files {
        return Ok(Exit::Ok);
    }
    let generated = chrono::Utc::now().format("%Y-%m-%d %H:%M UTC").to_string();
    let md_path = a
        .markdown
        .clone()
        .unwrap_or_else(|| a.dir.join("negative-results.md"));
    write(
        &md_path,
        &markdown::negative_results(&reg, &generated),
        MARKDOWN_MARKER,
    )?;
    println!("wrote negative-results log: {}", md_path.display());
    let html_path = a.html.clone().unwrap_or_else(|| a.dir.join("report.html"));
    write(&html_path, &html::report(&reg, &generated), HTML_MARKER)?;
    println!("wrote HTML report: {}", html_path.display());
    if let Some(dir) = &a.csv {
        for (p, n) in csv_export::export(&reg, dir).map_err(failed)? {
            println!("wrote {n} rows: {}", p.display());
        }
    }
    Ok(Exit::Ok)
}

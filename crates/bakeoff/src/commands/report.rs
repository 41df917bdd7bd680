//! `bakeoff report DIR`: the comparison table on stdout; the markdown negative-results log and
//! the HTML report written (beside the artifacts unless told otherwise); CSV on request.

use std::path::PathBuf;

use bakeoff_report::{csv_export, html, markdown, registry, terminal};

use crate::cli::ReportArgs;
use crate::exit::{CliError, Exit, failed, usage};

fn write(path: &PathBuf, text: &str) -> Result<(), CliError> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)
            .map_err(|e| failed(format!("cannot create {}: {e}", parent.display())))?;
    }
    std::fs::write(path, text).map_err(|e| failed(format!("cannot write {}: {e}", path.display())))
}

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
    write(&md_path, &markdown::negative_results(&reg, &generated))?;
    println!("wrote negative-results log: {}", md_path.display());
    let html_path = a.html.clone().unwrap_or_else(|| a.dir.join("report.html"));
    write(&html_path, &html::report(&reg, &generated))?;
    println!("wrote HTML report: {}", html_path.display());
    if let Some(dir) = &a.csv {
        for (p, n) in csv_export::export(&reg, dir).map_err(failed)? {
            println!("wrote {n} rows: {}", p.display());
        }
    }
    Ok(Exit::Ok)
}

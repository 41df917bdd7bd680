//! `bakeoff report DIR`: the comparison table on stdout; the markdown negative-results log and
//! the HTML report written (beside the artifacts unless told otherwise); CSV on request.

use bakeoff_report::views::{HTML_MARKER, MARKDOWN_MARKER, write_view};
use bakeoff_report::{csv_export, html, markdown, registry, terminal};

use crate::exit::{Error, Exit};
use bakeoff_flags::config::ReportConfig;

pub fn run(cfg: ReportConfig) -> Result<Exit, Error> {
    let mut reg = registry::load(&cfg.dir)?;
    if let Some(c) = reg.campaign.as_mut() {
        // `--allow contaminated`: render the verdicts the campaign run withheld.
        c.allow_contaminated |= cfg.allow_contaminated;
    }
    stdout!("{}", super::screen(&terminal::report(&reg)));
    // A seat monitor's series is something to report too (`bakeoff seat monitor --out DIR`).
    if reg.entries.is_empty() && reg.monitors.is_empty() {
        return Ok(Exit::Failed);
    }
    let Some(files) = cfg.files else {
        return Ok(Exit::Ok);
    };
    let generated = chrono::Utc::now().format("%Y-%m-%d %H:%M UTC").to_string();
    let md_path = files.markdown;
    // A campaign's directory: its negative-results document is the campaign's (the one
    // `campaign run` writes, with the ladders' isolation), never replaced by the flat log.
    let md = match &reg.campaign {
        Some(rec) => bakeoff_report::campaign::negative_results(rec, &cfg.dir, &generated),
        None => markdown::negative_results(&reg, &generated),
    };
    write_view(&md_path, &md, MARKDOWN_MARKER)?;
    stdoutln!(
        "{}",
        super::screen(&format!(
            "wrote negative-results log: {}",
            md_path.display()
        ))
    );
    let html_path = files.html;
    write_view(&html_path, &html::report(&reg, &generated), HTML_MARKER)?;
    stdoutln!(
        "{}",
        super::screen(&format!("wrote HTML report: {}", html_path.display()))
    );
    if let Some(dir) = &files.csv {
        for (p, n) in csv_export::export(&reg, dir)? {
            stdoutln!(
                "{}",
                super::screen(&format!("wrote {n} rows: {}", p.display()))
            );
        }
    }
    Ok(Exit::Ok)
}

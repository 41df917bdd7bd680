//! What `bakeoff log add` and `bakeoff log list` print. Titles, file names and the open markers
//! found come from the logbook's files: every one is escaped.

use std::path::Path;

use crate::escape::for_terminal;
use crate::logbook::{Entry, open_markers};

/// The line `log add` prints for the entry it wrote under `dir`.
pub fn added(dir: &Path, e: &Entry) -> String {
    format!(
        "added {} — {}",
        for_terminal(&dir.join(&e.file).display().to_string(), 500),
        for_terminal(&e.title, 300)
    )
}

/// `log list`: one line per entry (date, file, title, the open markers it still holds), or
/// one line saying there are none.
pub fn list(dir: &Path, entries: &[Entry], markers: &[String]) -> Vec<String> {
    if entries.is_empty() {
        return vec![format!(
            "no entries under {} (add one with `bakeoff log add`)",
            for_terminal(&dir.display().to_string(), 500)
        )];
    }
    entries
        .iter()
        .map(|e| {
            let open = open_markers(&e.text, markers);
            format!(
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
            )
        })
        .collect()
}

//! A campaign's progress on the display: a variant's phases replace each other on the
//! spinner; its start and end, and notes, stay.

use std::sync::Mutex;
use std::time::Instant;

use bakeoff_campaign::run::{Progress, Reporter};

/// Progress on stderr ([`crate::Progress`]): a variant's phases replace each other on the spinner;
/// its start and end, and notes, stay.
pub fn reporter() -> Reporter {
    let progress = crate::Progress::new(false);
    // The variant in flight and when it began, for the elapsed time on every line.
    let current: Mutex<(String, Instant)> = Mutex::new((String::new(), Instant::now()));
    Reporter::new(move |p| {
        let mut cur = current.lock().unwrap_or_else(|e| e.into_inner());
        match p {
            Progress::Variant {
                index,
                total,
                variant,
            } => {
                *cur = (format!("{index}/{total} {variant}"), Instant::now());
                progress.line(&format!("[campaign {}] begins", cur.0));
            }
            Progress::Phase { text, .. } => progress.status(&format!(
                "[campaign {}] {text} ({:.0} s)",
                cur.0,
                cur.1.elapsed().as_secs_f64()
            )),
            Progress::Done { outcome, .. } => progress.line(&format!(
                "[campaign {}] {outcome} after {:.0} s",
                cur.0,
                cur.1.elapsed().as_secs_f64()
            )),
            Progress::Note(n) => progress.line(&format!("[campaign] {n}")),
        }
    })
}

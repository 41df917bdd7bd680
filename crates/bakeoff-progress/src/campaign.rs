//! A campaign's progress on the display: a variant's phases replace each other on the
//! spinner; its start and end, and notes, stay.

use std::sync::Mutex;
use std::time::Instant;

use bakeoff_campaign::run::{Progress, Reporter};

/// Progress on stderr ([`crate::Progress`]): a variant's phases replace each other on the spinner;
/// its start and end, and notes, stay.
pub fn reporter() -> Reporter {
    reporter_on(crate::Progress::new(false))
}

/// [`reporter`] drawing on `progress`.
fn reporter_on(progress: crate::Progress) -> Reporter {
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
                // A designed probe or tuning trial is not one of the file's variants: its
                // index is past the total, and it is headed by its name alone.
                let head = if index <= total {
                    format!("{index}/{total} {variant}")
                } else {
                    variant
                };
                *cur = (head, Instant::now());
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

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// Off a terminal: a variant's start, each phase, its end and notes are plain lines, each
    /// headed by the variant in flight (the seconds vary with the machine: only the heads are
    /// pinned).
    #[test]
    fn a_variants_progress_as_plain_lines() {
        let (display, lines) = crate::Progress::capture();
        let r = reporter_on(display);
        r.emit(Progress::Variant {
            index: 1,
            total: 2,
            variant: "gemma-q4".into(),
        });
        r.phase("gemma-q4", "loading 3/5 shards");
        r.emit(Progress::Done {
            variant: "gemma-q4".into(),
            outcome: "pass".into(),
        });
        r.note("prod restored");
        let lines = lines.lock().unwrap().clone();
        assert_eq!(lines.len(), 4, "{lines:?}");
        assert_eq!(lines[0], "[campaign 1/2 gemma-q4] begins");
        assert!(
            lines[1].starts_with("[campaign 1/2 gemma-q4] loading 3/5 shards ("),
            "{lines:?}"
        );
        assert!(lines[1].ends_with(" s)"), "{lines:?}");
        assert!(
            lines[2].starts_with("[campaign 1/2 gemma-q4] pass after "),
            "{lines:?}"
        );
        assert_eq!(lines[3], "[campaign] prod restored");
    }

    /// A designed probe or trial (its index past the file's variants) is headed by its name.
    #[test]
    fn a_designed_variant_is_headed_by_its_name() {
        let (display, lines) = crate::Progress::capture();
        let r = reporter_on(display);
        r.emit(Progress::Variant {
            index: 153,
            total: 2,
            variant: "gemma-tuned-tune-base".into(),
        });
        let lines = lines.lock().unwrap().clone();
        assert_eq!(lines, ["[campaign gemma-tuned-tune-base] begins"]);
    }
}

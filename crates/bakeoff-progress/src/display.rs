//! Progress on stderr for every long operation: on a terminal, one indicatif spinner whose
//! message is the current status, with lasting lines printed above it; otherwise one plain line
//! per step. Never both, and never on stdout (so `--json` output stays clean).

use std::io::{IsTerminal, Write as _};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bakeoff_term as term;
use bakeoff_term::escape::for_terminal;

/// Where a command's progress goes.
pub struct Progress {
    bar: Option<indicatif::ProgressBar>,
    quiet: bool,
    /// Plain lines kept here instead of stderr ([`Progress::capture`], for tests).
    captured: Option<Arc<Mutex<Vec<String>>>>,
}

impl Progress {
    /// A spinner when stderr is a terminal, plain lines otherwise; `quiet`: nothing at all.
    pub fn new(quiet: bool) -> Self {
        let bar = (!quiet && std::io::stderr().is_terminal()).then(|| {
            let pb = indicatif::ProgressBar::new_spinner();
            pb.enable_steady_tick(Duration::from_millis(200));
            pb
        });
        Self {
            bar,
            quiet,
            captured: None,
        }
    }

    /// Plain lines into the returned buffer instead of stderr (what a test reads: the lines a
    /// log would get).
    pub fn capture() -> (Self, Arc<Mutex<Vec<String>>>) {
        let lines = Arc::new(Mutex::new(Vec::new()));
        let p = Self {
            bar: None,
            quiet: false,
            captured: Some(lines.clone()),
        };
        (p, lines)
    }

    /// A plain line: to the capture buffer when there is one, else stderr (unless quiet).
    fn plain(&self, text: &str) {
        if self.quiet {
            return;
        }
        match &self.captured {
            Some(buf) => {
                if let Ok(mut b) = buf.lock() {
                    b.push(text.to_string());
                }
            }
            // Never `eprintln!`: it panics when stderr is closed; a lost progress line is not
            // worth the run.
            // Fitted to `COLUMNS` when it is set; on a log, one line per step.
            None => {
                let _ = writeln!(std::io::stderr().lock(), "{}", term::for_stderr(text));
            }
        }
    }

    /// A status worth showing only on a terminal (a counter that changes with every
    /// request): the spinner's message there, nothing otherwise — off a terminal one plain
    /// line per step is the rule, never a line per request.
    pub fn transient(&self, text: &str) {
        if let Some(pb) = &self.bar {
            pb.set_message(spinner_message(&for_terminal(text, 400)));
        }
    }

    /// A described event: a lasting line, or the passing status (the event's words say
    /// which).
    pub(crate) fn described(&self, (lasting, text): (bool, String)) {
        if lasting {
            self.line(&text);
        } else {
            self.status(&text);
        }
    }

    /// A step's status: the spinner's message on a terminal (replaced by the next), a plain
    /// line otherwise.
    pub fn status(&self, text: &str) {
        let text = for_terminal(text, 400);
        match &self.bar {
            Some(pb) => pb.set_message(spinner_message(&text)),
            None => self.plain(&text),
        }
    }

    /// A line that stays (a step's end, a note), above the spinner on a terminal.
    pub fn line(&self, text: &str) {
        let text = for_terminal(text, 2000);
        match &self.bar {
            Some(pb) => pb.println(term::for_stderr(&text)),
            None => self.plain(&text),
        }
    }

    /// Remove the spinner (before the command prints its result).
    pub fn finish(&self) {
        if let Some(pb) = &self.bar {
            pb.finish_and_clear();
        }
    }
}

/// A spinner's message fitted to the terminal beside the spinner's two columns, wrapped between
/// words like every free-text line (`term::fit_text`).
fn spinner_message(text: &str) -> String {
    match term::stderr_width() {
        Some(w) => term::fit_text(text, w.saturating_sub(2).max(20)),
        None => text.to_string(),
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.finish();
    }
}

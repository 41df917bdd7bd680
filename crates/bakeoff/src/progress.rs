//! Progress on stderr for every long operation: on a terminal, one indicatif spinner whose
//! message is the current status, with lasting lines printed above it; otherwise one plain line
//! per step. Never both, and never on stdout (so `--json` output stays clean).

use std::io::IsTerminal;
use std::time::Duration;

/// Where a command's progress goes.
pub struct Progress {
    bar: Option<indicatif::ProgressBar>,
    quiet: bool,
}

impl Progress {
    /// A spinner when stderr is a terminal, plain lines otherwise; `quiet`: nothing at all.
    pub fn new(quiet: bool) -> Self {
        let bar = (!quiet && std::io::stderr().is_terminal()).then(|| {
            let pb = indicatif::ProgressBar::new_spinner();
            pb.enable_steady_tick(Duration::from_millis(200));
            pb
        });
        Self { bar, quiet }
    }

    /// A step's status: the spinner's message on a terminal (replaced by the next), a plain
    /// line otherwise.
    pub fn status(&self, text: &str) {
        let text = bakeoff_report::escape::for_terminal(text, 400);
        match &self.bar {
            Some(pb) => pb.set_message(text),
            None if !self.quiet => eprintln!("{text}"),
            None => {}
        }
    }

    /// A line that stays (a step's end, a note), above the spinner on a terminal.
    pub fn line(&self, text: &str) {
        let text = bakeoff_report::escape::for_terminal(text, 2000);
        match &self.bar {
            Some(pb) => pb.println(text),
            None if !self.quiet => eprintln!("{text}"),
            None => {}
        }
    }

    /// Remove the spinner (before the command prints its result).
    pub fn finish(&self) {
        if let Some(pb) = &self.bar {
            pb.finish_and_clear();
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.finish();
    }
}

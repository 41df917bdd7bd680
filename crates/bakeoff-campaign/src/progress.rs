//! The campaign's progress: events the binary draws (a spinner on a terminal, plain lines
//! otherwise), including the watchdog's load progress while a variant's seat starts.

use bakeoff_seats::progress;
use bakeoff_seats::watchdog::Event;
use tokio::sync::mpsc;

/// One progress report.
#[derive(Debug, Clone, PartialEq)]
pub enum Progress {
    /// A variant begins.
    Variant {
        index: u32,
        total: u32,
        variant: String,
    },
    /// A phase of the variant in flight (`starting`, `loading 18/46 shards, ~61 s left`, …).
    Phase { variant: String, text: String },
    /// A variant's outcome.
    Done { variant: String, outcome: String },
    /// Something the operator must read (a failed restore).
    Note(String),
}

/// Where progress goes: the binary draws it; tests collect or drop it.
#[derive(Clone)]
pub struct Reporter {
    f: std::sync::Arc<dyn Fn(Progress) + Send + Sync>,
}

impl Reporter {
    pub fn new(f: impl Fn(Progress) + Send + Sync + 'static) -> Self {
        Self {
            f: std::sync::Arc::new(f),
        }
    }

    pub fn silent() -> Self {
        Self::new(|_| {})
    }

    pub fn emit(&self, p: Progress) {
        (self.f)(p)
    }

    pub fn phase(&self, variant: &str, text: &str) {
        self.emit(Progress::Phase {
            variant: variant.to_string(),
            text: text.to_string(),
        })
    }

    pub fn note(&self, text: &str) {
        self.emit(Progress::Note(text.to_string()))
    }
}

/// Forward the watchdog's events as progress while a seat starts, in the seats' one wording
/// (`bakeoff_seats::progress::describe`). The campaign says `starting` itself; the silence
/// timer is passed on when its step rises (10 s, then each minute), not every second.
pub(crate) fn forward_events(
    mut rx: mpsc::UnboundedReceiver<Event>,
    variant: String,
    report: &Reporter,
) -> tokio::task::JoinHandle<()> {
    let report = report.clone();
    tokio::spawn(async move {
        let mut silence = progress::SilenceSteps::default();
        while let Some(ev) = rx.recv().await {
            match &ev {
                Event::Began { .. } => continue,
                Event::Silence { silent_ms, .. } if !silence.rose(*silent_ms) => continue,
                _ => {}
            }
            if let Some(text) = progress::describe(&ev) {
                report.phase(&variant, &text);
            }
        }
    })
}

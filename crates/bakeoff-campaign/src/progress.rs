//! The campaign's progress: events the binary draws (a spinner on a terminal, plain lines
//! otherwise), including the watchdog's load progress while a variant's seat starts.

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
    /// A phase of the variant in flight (`starting`, `loading 40 %, ~12 s left`, …).
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

/// Forward the watchdog's events as progress while a seat starts.
pub(crate) fn forward_events(
    mut rx: mpsc::UnboundedReceiver<Event>,
    variant: String,
    report: &Reporter,
) -> tokio::task::JoinHandle<()> {
    let report = report.clone();
    tokio::spawn(async move {
        while let Some(ev) = rx.recv().await {
            let text = match ev {
                Event::Phase(p) => p.state.clone(),
                Event::Note(n) => n,
                Event::Progress(r) => load_text(&r),
                Event::Decided(_) => continue,
            };
            report.phase(&variant, &text);
        }
    })
}

/// `loading 18/46 shards, ~61 s left` from a watchdog load reading.
fn load_text(r: &bakeoff_seats::progress::Reading) -> String {
    let mut t = String::from("loading");
    if let (Some(d), Some(n)) = (r.done, r.total) {
        t.push_str(&format!(" {d}/{n}"));
    } else if let Some(p) = r.percent {
        t.push_str(&format!(" {p:.0} %"));
    }
    if let Some(left) = r.remaining_s {
        t.push_str(&format!(", ~{left:.0} s left"));
    }
    t
}

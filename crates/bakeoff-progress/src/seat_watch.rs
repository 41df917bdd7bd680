//! A seat operation's watch on the progress display, while `seat up|restart|watch|swap` runs:
//! a spinner on a terminal, plain lines otherwise; stdout keeps the result.

use bakeoff_seats::Seats;
use bakeoff_seats::redact::Redactor;

/// The watch's progress on stderr while one seat operation runs (a spinner on a terminal,
/// plain lines otherwise; stdout keeps the result): each phase as a lasting line
/// with its time (`[gemma-proc] warming after 4.2 s`), notes and restarts as they happen, the
/// load progress and, while not ready, the silence timer as the status (`[gemma-proc] loading
/// 18/46 shards, ~61 s left (2 min 3 s)`). The words are the seats'
/// (`bakeoff_seats::progress::describe`, as a campaign's); the fleet's secrets are redacted.
pub struct Drawing {
    task: tokio::task::JoinHandle<()>,
}

/// Whose watches an operation draws: one seat, or a swap's NEW then OLD's rollback — each as
/// (label, the model id its watch probes).
struct Whose(Vec<(String, Option<String>)>);

impl Whose {
    fn seat(seats: &Seats, name: &str, label: String) -> (String, Option<String>) {
        let model = seats
            .seat(name)
            .ok()
            .and_then(|s| s.served_model_names.first().cloned());
        (label, model)
    }

    /// The label of the `nth` watch of the operation, which probes `model`: the one seat that
    /// serves that model, else the seat in the operation's order (a swap's NEW, then OLD).
    fn label(&self, nth: usize, model: Option<&str>) -> String {
        let serving: Vec<&(String, Option<String>)> = self
            .0
            .iter()
            .filter(|(_, m)| m.as_deref() == model)
            .collect();
        match serving.as_slice() {
            [one] => one.0.clone(),
            _ => self
                .0
                .get(nth)
                .or(self.0.last())
                .map(|s| s.0.clone())
                .unwrap_or_default(),
        }
    }
}

impl Drawing {
    /// Draw the watch of one seat.
    pub fn one(seats: &mut Seats, name: &str) -> Self {
        let whose = Whose(vec![Whose::seat(seats, name, name.to_string())]);
        Self::start(seats, whose)
    }

    /// Draw a swap's watches: NEW's, then (when NEW failed) OLD's rollback.
    pub fn swap(seats: &mut Seats, old: &str, new: &str) -> Self {
        let whose = Whose(vec![
            Whose::seat(seats, new, new.to_string()),
            Whose::seat(seats, old, format!("{old} rollback")),
        ]);
        Self::start(seats, whose)
    }

    /// Draw the watches of the operation about to run on `seats` (its watch options get the
    /// events sender).
    fn start(seats: &mut Seats, whose: Whose) -> Self {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        seats.watch.events = Some(tx);
        let redactor = Redactor::for_fleet(&seats.fleet);
        Self {
            task: tokio::spawn(draw(rx, whose, redactor)),
        }
    }

    /// Once the operation returned: every event it sent is drawn (its watches are over and the
    /// sender is dropped here, so the channel ends), and the spinner is gone before the result
    /// is printed.
    pub async fn done(self, seats: &mut Seats) {
        seats.watch.events = None;
        let mut task = self.task;
        if tokio::time::timeout(std::time::Duration::from_secs(2), &mut task)
            .await
            .is_err()
        {
            task.abort();
        }
    }
}

async fn draw(
    mut rx: tokio::sync::mpsc::UnboundedReceiver<bakeoff_seats::watchdog::Event>,
    whose: Whose,
    redactor: Redactor,
) {
    use bakeoff_seats::progress::{SilenceSteps, describe, elapsed_text};
    use bakeoff_seats::watchdog::Event;
    let progress = crate::Progress::new(false);
    let terminal = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let mut label = whose.label(0, None);
    let mut began = std::time::Instant::now();
    let mut watches = 0;
    // What the seat is doing (its phase or load progress), beside the silence timer.
    let mut doing = String::from("starting");
    let mut silence = SilenceSteps::default();
    while let Some(ev) = rx.recv().await {
        let Some(text) = describe(&ev) else { continue };
        let text = redactor.text(&text);
        let since = elapsed_text(began.elapsed().as_millis() as u64);
        match &ev {
            Event::Began { model } => {
                label = whose.label(watches, model.as_deref());
                watches += 1;
                began = std::time::Instant::now();
                progress.line(&format!("[{label}] {text}"));
                doing = text;
            }
            Event::Phase(p) => {
                progress.line(&format!("[{label}] {text}"));
                doing = p.state.clone();
            }
            Event::Progress(_) => {
                if text != doing {
                    progress.status(&format!("[{label}] {text} ({since})"));
                    doing = text;
                }
            }
            // On a terminal the timer redraws every second (from 2 s of silence); a log gets
            // a line at 10 s of silence, then one a minute.
            Event::Silence { silent_ms, .. } => {
                let rose = silence.rose(*silent_ms);
                if terminal && *silent_ms >= 2000 {
                    progress.status(&format!("[{label}] {doing}; {text} ({since})"));
                } else if terminal {
                    progress.status(&format!("[{label}] {doing} ({since})"));
                } else if rose {
                    progress.status(&format!("[{label}] {text} ({since})"));
                }
            }
            _ => progress.line(&format!("[{label}] {text}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A swap draws NEW's watch, then OLD's rollback: each watch is labelled by the seat that
    /// serves the model it probes, else by its place in the operation.
    #[test]
    fn a_swaps_watches_are_labelled_by_the_model_they_probe() {
        let whose = Whose(vec![
            ("qwen-b".into(), Some("qwen".into())),
            ("qwen-a rollback".into(), Some("qwen-old".into())),
        ]);
        assert_eq!(whose.label(0, Some("qwen")), "qwen-b");
        assert_eq!(whose.label(1, Some("qwen-old")), "qwen-a rollback");
        // No model known: the operation's order.
        assert_eq!(whose.label(1, None), "qwen-a rollback");
        assert_eq!(whose.label(5, None), "qwen-a rollback");
        // Both serve the same id: the order decides.
        let same = Whose(vec![
            ("new".into(), Some("m".into())),
            ("old rollback".into(), Some("m".into())),
        ]);
        assert_eq!(same.label(1, Some("m")), "old rollback");
    }
}

//! The watchdog's events in words, over the weight-loading progress parsed from engine logs
//! (`reading.rs`, with its projected load time).
//!
//! [`describe`] is the one wording of the watchdog's events for an operator, shared by `seat
//! up|restart|swap|watch` and a campaign's variant starts.

pub mod reading;

pub use reading::{Reading, parse};

use crate::watchdog::event::Event;

/// A watchdog event in words (`warming after 4.2 s`, `loading 18/46 shards, ~61 s left`,
/// `silent for 12 s (init-wedge at 300 s)`); `None` for the verdict, which is the report's.
pub fn describe(event: &Event) -> Option<String> {
    Some(match event {
        Event::Began { .. } => "starting".into(),
        Event::Phase(p) => format!("{} after {}", p.state, elapsed_text(p.at_ms)),
        Event::Note(n) => n.clone(),
        Event::Progress(r) => load_text(r),
        Event::Restarted {
            restarts,
            restart_count,
            at_ms,
        } => format!(
            "restarted at {} ({restarts} since the watch began; RestartCount {restart_count})",
            elapsed_text(*at_ms)
        ),
        Event::Silence {
            silent_ms,
            limit_ms,
        } => format!(
            "silent for {} (init-wedge at {})",
            whole_text(*silent_ms as f64 / 1000.0),
            whole_text(*limit_ms as f64 / 1000.0)
        ),
        Event::Decided(_) => return None,
    })
}

/// A load reading in words: `loading 18/46 shards, ~61 s left` (vLLM), `loading 40 %`,
/// `offloaded 15/49 layers to GPU` or `loading tensors` (llama.cpp).
fn load_text(r: &Reading) -> String {
    if r.source == "llama.cpp" {
        return match (r.done, r.total) {
            (Some(d), Some(n)) => format!("offloaded {d}/{n} layers to GPU"),
            _ => "loading tensors".into(),
        };
    }
    let mut t = String::from("loading");
    if let (Some(d), Some(n)) = (r.done, r.total) {
        t.push_str(&format!(" {d}/{n} shards"));
    } else if let Some(p) = r.percent {
        t.push_str(&format!(" {p:.0} %"));
    }
    if let Some(left) = r.remaining_s.filter(|l| *l >= 0.5) {
        t.push_str(&format!(", ~{} left", whole_text(left)));
    }
    t
}

/// Time since a start, for an operator: `4.2 s` below two minutes, `2 min 3 s` after, `1 h 4
/// min` past an hour.
pub fn elapsed_text(ms: u64) -> String {
    let s = ms as f64 / 1000.0;
    if s < 120.0 {
        format!("{s:.1} s")
    } else {
        whole_text(s)
    }
}

/// Whole seconds, for an operator: `61 s` below two minutes, `2 min 3 s` (or `5 min`) after,
/// `1 h 4 min` past an hour.
pub fn whole_text(secs: f64) -> String {
    let s = secs.max(0.0).round() as u64;
    match s {
        0..120 => format!("{s} s"),
        120..3600 if s.is_multiple_of(60) => format!("{} min", s / 60),
        120..3600 => format!("{} min {} s", s / 60, s % 60),
        _ => format!("{} h {} min", s / 3600, s / 60 % 60),
    }
}

/// The silence timer for a display that cannot redraw (a log, not a terminal): a line when
/// the timer reaches 10 s, then one per whole minute, so a 44-minute wedge is ~45 lines, not
/// one a second. A log line resets it.
#[derive(Debug, Clone, Default)]
pub struct SilenceSteps {
    step: u64,
}

impl SilenceSteps {
    /// Whether `silent_ms` reached a new step (then it is worth a line).
    pub fn rose(&mut self, silent_ms: u64) -> bool {
        let step = match silent_ms / 1000 {
            0..10 => 0,
            10..60 => 1,
            s => 1 + s / 60,
        };
        let rose = step > self.step;
        self.step = step;
        rose
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use bakeoff_artifact::SeatPhase;

    use super::*;
    use crate::watchdog::Ending;

    #[test]
    fn every_event_in_words() {
        let phase = |state: &str, at_ms| {
            Event::Phase(SeatPhase {
                state: state.into(),
                at_ms,
                line: Some("load_tensors: loading".into()),
            })
        };
        let events = vec![
            Event::Began {
                model: Some("gemma".into()),
            },
            phase("loading", 250),
            Event::Progress(
                parse("Loading safetensors checkpoint shards:  39% Completed | 18/46 [01:20<02:05,  4.46s/it]")
                    .unwrap(),
            ),
            Event::Progress(
                parse("Loading safetensors checkpoint shards: 100% Completed | 46/46 [03:25<00:00,  1.10it/s]")
                    .unwrap(),
            ),
            Event::Progress(parse("load_tensors: loading model tensors, this can take a while... (load_mode = mmap)").unwrap()),
            Event::Progress(parse("load_tensors: offloaded 15/49 layers to GPU").unwrap()),
            phase("warming", 4_200),
            phase("warming", 123_400),
            Event::Silence {
                silent_ms: 12_400,
                limit_ms: 300_000,
            },
            Event::Silence {
                silent_ms: 2_640_000,
                limit_ms: 3_000_000,
            },
            Event::Restarted {
                restarts: 2,
                restart_count: 5,
                at_ms: 61_000,
            },
            Event::Note("weight loading has taken 11.0 s so far, over the --load-budget of 10.0 s".into()),
            phase("ready", 9_876),
        ];
        let text: Vec<String> = events.iter().map(|e| describe(e).unwrap()).collect();
        insta::assert_snapshot!(text.join("\n"));
        assert_eq!(describe(&Event::Decided(Ending::Ready)), None);
    }

    #[test]
    fn the_silence_steps() {
        let mut steps = SilenceSteps::default();
        let rose: Vec<u64> = [
            0, 9_999, 10_000, 11_000, 59_999, 60_000, 119_999, 120_000, 500, 10_500, 2_640_000,
        ]
        .into_iter()
        .filter(|ms| steps.rose(*ms))
        .collect();
        assert_eq!(rose, vec![10_000, 60_000, 120_000, 10_500, 2_640_000]);
    }
}

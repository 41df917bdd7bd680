//! Achieved rates: things completed per wall-clock second.

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// `count / seconds`, or `None` when the duration is zero, negative or not finite — a run
/// that took no measurable time has no rate, and infinity does not belong in an artifact.
pub fn rate_per_second(count: u64, seconds: f64) -> Option<f64> {
    (seconds.is_finite() && seconds > 0.0).then(|| count as f64 / seconds)
}

/// Completed units (requests, tokens) over a wall-clock window.
#[derive(Serialize, Deserialize, schemars::JsonSchema, Debug, Clone, PartialEq)]
pub struct Throughput {
    /// Units completed inside the window.
    pub completed: u64,
    /// Window length in seconds.
    pub wall_seconds: f64,
    /// `completed / wall_seconds`; `None` for a zero-length window.
    pub per_second: Option<f64>,
}

impl Throughput {
    /// Achieved rate of `completed` units over `wall`.
    pub fn new(completed: u64, wall: Duration) -> Self {
        let wall_seconds = wall.as_secs_f64();
        Self {
            completed,
            wall_seconds,
            per_second: rate_per_second(completed, wall_seconds),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates() {
        assert_eq!(rate_per_second(120, 60.0), Some(2.0));
        assert_eq!(rate_per_second(0, 10.0), Some(0.0));
        assert_eq!(rate_per_second(5, 0.0), None);
        assert_eq!(rate_per_second(5, -1.0), None);
        assert_eq!(rate_per_second(5, f64::NAN), None);
        assert_eq!(rate_per_second(5, f64::INFINITY), None);
        let t = Throughput::new(30, Duration::from_millis(1500));
        assert_eq!((t.wall_seconds, t.per_second), (1.5, Some(20.0)));
        assert_eq!(Throughput::new(3, Duration::ZERO).per_second, None);
    }
}

//! The secrets of a seat's (or a fleet's) configuration: the [`Redactor`] that knows their
//! values, and the seat as it may be written or printed. Beside the rules ([`super`]), which
//! know launches only, so the fleet's own modules may redact without importing the seat back.

use super::{MIN_KNOWN, REDACTED, Redactor, launch, launch_into};
use crate::fleet::types::{Fleet, Seat, substitute};

impl Redactor {
    pub fn for_seat(seat: &Seat) -> Self {
        Self::for_seats(std::slice::from_ref(seat))
    }

    pub fn for_fleet(fleet: &Fleet) -> Self {
        Self::for_seats(&fleet.seats)
    }

    fn for_seats(seats: &[Seat]) -> Self {
        let mut known = Vec::new();
        for seat in seats {
            let mut found = Vec::new();
            launch_into(&seat.launch, &mut found);
            // The process sees the values with `{port}`/`{seat}`/`{cache}` filled in.
            for v in found {
                let sub = substitute(&v, seat);
                if sub != v {
                    known.push(sub);
                }
                known.push(v);
            }
        }
        known.retain(|v| v.chars().count() >= MIN_KNOWN && v != REDACTED);
        known.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
        known.dedup();
        Self { known }
    }
}

impl Seat {
    /// The seat as it may be written or printed: its launch with secrets redacted
    /// ([`crate::redact`], the one rule for arguments, environment values, headers and URLs).
    /// Only for output: a seat is always launched from `self`, with the real values.
    pub fn redacted(&self) -> Seat {
        Seat {
            launch: launch(&self.launch),
            ..self.clone()
        }
    }

    /// The seat's configuration as recorded in artifacts: [`Seat::redacted`] as JSON.
    pub fn redacted_config(&self) -> serde_json::Value {
        serde_json::to_value(self.redacted()).unwrap_or(serde_json::Value::Null)
    }
}

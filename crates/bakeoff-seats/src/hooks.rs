//! Checks that run after the gate and the port check, right before a seat is started.
//!
//! **Hook for issue 7 (checkpoint audit):** `bakeoff seat up` will audit a seat whose model is
//! a local path (config.json, quantization config against the seat's flags, chat template)
//! before it starts; that call goes in [`before_start`]. An `Err(reason)` refuses the start
//! with a one-line reason (the command exits 1) and nothing is started. Today it checks
//! nothing and always allows the start.

use crate::fleet::{Fleet, Seat};

/// Called by `Seats::up` (and so by `restart` and `swap`) before the backend starts `seat`.
pub fn before_start(_fleet: &Fleet, _seat: &Seat) -> Result<(), String> {
    Ok(())
}

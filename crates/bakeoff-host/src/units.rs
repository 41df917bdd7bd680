//! GPU memory in the units the driver, the field cases and the engines' logs use: nvidia-smi
//! prints MiB, an operator writes GiB. How a byte count is shown (GiB with two decimals) is
//! `bakeoff_term::units`', for the plan and the reports alike.

pub const GIB: f64 = 1024.0 * 1024.0 * 1024.0;
pub const MIB: u64 = 1024 * 1024;

/// GiB (as written by an operator) to bytes, rounding to the byte.
pub fn gib_to_bytes(g: f64) -> u64 {
    if g.is_finite() && g > 0.0 {
        (g * GIB).round() as u64
    } else {
        0
    }
}

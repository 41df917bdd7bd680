//! GPU memory in the units the driver, the field cases and the engines' logs use: nvidia-smi
//! prints MiB, the plan and the reports GiB with two decimals.

pub const GIB: f64 = 1024.0 * 1024.0 * 1024.0;
pub const MIB: u64 = 1024 * 1024;

/// Bytes as GiB with two decimals, the unit the field cases and the engines' logs use.
pub fn gib(bytes: u64) -> String {
    format!("{:.2} GiB", bytes as f64 / GIB)
}

/// Signed bytes as GiB with two decimals.
pub fn gib_signed(bytes: i128) -> String {
    format!("{:.2} GiB", bytes as f64 / GIB)
}

/// GiB (as written by an operator) to bytes, rounding to the byte.
pub fn gib_to_bytes(g: f64) -> u64 {
    if g.is_finite() && g > 0.0 {
        (g * GIB).round() as u64
    } else {
        0
    }
}

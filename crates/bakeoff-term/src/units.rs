//! Byte counts as an operator reads them: GiB with two decimals, the unit the field cases and
//! the engines' logs use, for the plan's texts and the checkpoint audit alike. The arithmetic
//! on GPU memory (`GIB`, `MIB`, an operator's GiB to bytes) is `bakeoff_host::units`'.

/// Bytes per GiB.
const GIB: f64 = 1024.0 * 1024.0 * 1024.0;

/// Bytes as GiB with two decimals.
pub fn gib(bytes: u64) -> String {
    format!("{:.2} GiB", bytes as f64 / GIB)
}

/// Signed bytes as GiB with two decimals.
pub fn gib_signed(bytes: i128) -> String {
    format!("{:.2} GiB", bytes as f64 / GIB)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_decimals_of_a_gib() {
        assert_eq!(gib(3 * 1024 * 1024 * 1024 / 2), "1.50 GiB");
        assert_eq!(gib_signed(-(1 << 30)), "-1.00 GiB");
    }
}

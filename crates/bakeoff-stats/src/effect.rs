//! Effects in items as well as percentage points.
//!
//! "−15.6 pts" on a 32-item family is five questions; readers judge an effect very
//! differently once they see it is five questions, so reports always show both.

/// Format a signed difference of `delta_items` on a family of `n` items, e.g.
/// `"−5 items (−15.6 pts)"`, `"+1 item (+3.1 pts)"`, `"0 items (0.0 pts)"`.
///
/// Uses U+2212 MINUS SIGN, since these strings are for humans. With `n == 0` there are no
/// points to quote and the text says `"no data"` instead.
pub fn format_effect(delta_items: i64, n: u64) -> String {
    let sign = match delta_items.signum() {
        1 => "+",
        -1 => "\u{2212}",
        _ => "",
    };
    let magnitude = delta_items.unsigned_abs();
    let noun = if magnitude == 1 { "item" } else { "items" };
    if n == 0 {
        return format!("{sign}{magnitude} {noun} (no data)");
    }
    let pts = 100.0 * magnitude as f64 / n as f64;
    format!("{sign}{magnitude} {noun} ({sign}{pts:.1} pts)")
}

#[cfg(test)]
mod tests {
    use super::format_effect;

    #[test]
    fn formats() {
        // 5/32 = 15.625 %; "{:.1}" rounds the exactly-representable tie to 15.6.
        assert_eq!(format_effect(-5, 32), "\u{2212}5 items (\u{2212}15.6 pts)");
        assert_eq!(format_effect(1, 32), "+1 item (+3.1 pts)");
        assert_eq!(format_effect(0, 32), "0 items (0.0 pts)");
        assert_eq!(format_effect(0, 0), "0 items (no data)");
    }
}

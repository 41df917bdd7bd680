//! Lower tail of the fair-coin binomial, the only distribution the exact McNemar test needs.

/// `P(X ≤ k)` for `X ~ Binomial(m, 1/2)`, with `k ≤ m / 2` (the smaller discordant count).
///
/// Why this shape: `C(m, i) / 2^m` overflows u128 long before m = 2000 and underflows f64
/// below m ≈ 1075, so we work relative to the largest term in the tail, `t_k = C(m, k) / 2^m`
/// (terms grow with `i` up to the mode m/2, so for `k ≤ m/2` it is the largest). Its logarithm
/// is a sum of `k` logs, which loses at most ~k ulps of relative accuracy (≈1e-13 at m = 2000);
/// the ratios `t_{i-1}/t_i = i / (m - i + 1)` are all ≤ 1, so the running sum cannot overflow
/// and stops as soon as terms no longer change it. Results below ~1e-308 underflow to 0, which
/// is the honest f64 answer for "astronomically significant".
pub(crate) fn fair_lower_tail(k: u64, m: u64) -> f64 {
    debug_assert!(2 * k <= m, "tail must not cross the mode");
    // ln t_k = ln C(m, k) − m ln 2, with ln C(m, k) = Σ_{j=1..k} ln((m − k + j) / j).
    let ln_binom: f64 = (1..=k).map(|j| ((m - k + j) as f64 / j as f64).ln()).sum();
    let ln_top = ln_binom - m as f64 * std::f64::consts::LN_2;

    let mut ratio = 1.0_f64;
    let mut sum = 1.0_f64;
    let mut i = k;
    while i > 0 {
        ratio *= i as f64 / (m - i + 1) as f64;
        if ratio < sum * f64::EPSILON * 1e-3 {
            // Remaining terms shrink at least geometrically; they cannot move the sum.
            break;
        }
        sum += ratio;
        i -= 1;
    }
    (ln_top + sum.ln()).exp().min(1.0)
}

#[cfg(test)]
mod tests {
    use super::fair_lower_tail;

    /// Exact oracle in u128 rationals, valid while 2^m fits (m ≤ 127).
    fn exact(k: u64, m: u64) -> f64 {
        let mut c: u128 = 1; // C(m, 0)
        let mut total: u128 = 1;
        for i in 1..=k as u128 {
            c = c * (m as u128 - i + 1) / i;
            total += c;
        }
        total as f64 / 2f64.powi(m as i32)
    }

    #[test]
    fn matches_exact_rationals_for_moderate_m() {
        for m in 0..=120u64 {
            for k in 0..=m / 2 {
                let want = exact(k, m);
                let got = fair_lower_tail(k, m);
                assert!(
                    ((got - want) / want).abs() < 1e-12,
                    "P(X ≤ {k}) for m = {m}: got {got}, want {want}"
                );
            }
        }
    }

    #[test]
    fn hand_worked_values() {
        // P(X ≤ 1 | m = 10) = (1 + 10) / 1024.
        assert!((fair_lower_tail(1, 10) - 11.0 / 1024.0).abs() < 1e-15);
        // P(X ≤ 0 | m = 5) = 1/32.
        assert!((fair_lower_tail(0, 5) - 1.0 / 32.0).abs() < 1e-15);
    }
}

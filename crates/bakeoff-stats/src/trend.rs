//! A straight-line trend through a time series: the ordinary least-squares slope, for a seat
//! monitor's footprint over time (bytes per second; the caller scales it to a day).

/// The least-squares slope of `y` over `x` through `points`: Σ(x−x̄)(y−ȳ) / Σ(x−x̄)². `None`
/// with fewer than two points, when every `x` is the same, or when a value is not finite —
/// no trend is an explicit state, never a NaN.
pub fn least_squares_slope(points: &[(f64, f64)]) -> Option<f64> {
    if points.len() < 2 || points.iter().any(|(x, y)| !x.is_finite() || !y.is_finite()) {
        return None;
    }
    let n = points.len() as f64;
    let mx = points.iter().map(|p| p.0).sum::<f64>() / n;
    let my = points.iter().map(|p| p.1).sum::<f64>() / n;
    let sxx: f64 = points.iter().map(|(x, _)| (x - mx) * (x - mx)).sum();
    let sxy: f64 = points.iter().map(|(x, y)| (x - mx) * (y - my)).sum();
    (sxx > 0.0).then(|| sxy / sxx).filter(|s| s.is_finite())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_line_gives_its_slope() {
        let pts: Vec<(f64, f64)> = (0..10)
            .map(|i| (f64::from(i), 3.0 + 2.5 * f64::from(i)))
            .collect();
        assert!((least_squares_slope(&pts).unwrap() - 2.5).abs() < 1e-12);
    }

    #[test]
    fn noise_around_a_line_is_fitted_not_followed() {
        // y = 10 + 2x with ±1 alternating: the fit keeps the slope near 2, where the end
        // points alone would say (y9 − y0) / 9 = (29 − 11) / 9 = 2.0 only by luck.
        let pts: Vec<(f64, f64)> = (0..10)
            .map(|i| {
                let x = f64::from(i);
                (x, 10.0 + 2.0 * x + if i % 2 == 0 { 1.0 } else { -1.0 })
            })
            .collect();
        let s = least_squares_slope(&pts).unwrap();
        assert!((s - 2.0).abs() < 0.3, "{s}");
    }

    #[test]
    fn no_trend_without_two_distinct_times() {
        assert_eq!(least_squares_slope(&[]), None);
        assert_eq!(least_squares_slope(&[(1.0, 5.0)]), None);
        assert_eq!(least_squares_slope(&[(1.0, 5.0), (1.0, 9.0)]), None);
        assert_eq!(least_squares_slope(&[(0.0, 1.0), (1.0, f64::NAN)]), None);
    }
}

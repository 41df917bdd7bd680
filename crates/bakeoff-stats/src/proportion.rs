//! Proportions (k of n items correct) with Wilson score intervals.
//!
//! Wilson rather than the textbook `p ± z·sqrt(p(1−p)/n)` because eval families here have
//! 16–64 items and scores near 0 or 1: the normal interval collapses to zero width at 0/n and
//! n/n and can leave [0, 1]; Wilson does neither.

use serde::{Deserialize, Serialize};

use crate::StatsError;

/// Two-sided 95 % standard-normal quantile, `Φ⁻¹(0.975)` (R: `qnorm(0.975)`).
pub const Z_95: f64 = 1.959_963_984_540_054;

/// `successes` of `n` with a Wilson score interval at `confidence`.
#[derive(Serialize, Deserialize, schemars::JsonSchema, Debug, Clone, PartialEq)]
pub struct Proportion {
    /// Items scored as successes.
    pub successes: u64,
    /// Items scored (never 0: an empty family has no `Proportion`).
    pub n: u64,
    /// `successes / n`.
    pub estimate: f64,
    /// Lower end of the Wilson interval, in [0, 1].
    pub wilson_low: f64,
    /// Upper end of the Wilson interval, in [0, 1].
    pub wilson_high: f64,
    /// Two-sided confidence of the interval (0.95).
    pub confidence: f64,
}

impl Proportion {
    /// `successes / n` with its 95 % Wilson score interval (no continuity correction, i.e.
    /// R's `prop.test(successes, n, correct = FALSE)$conf.int`).
    ///
    /// # Errors
    /// [`StatsError::NoData`] when `n == 0` — there is no estimate, and we refuse to invent a
    /// NaN; [`StatsError::SuccessesExceedTrials`] when `successes > n`.
    pub fn wilson(successes: u64, n: u64) -> Result<Self, StatsError> {
        if n == 0 {
            return Err(StatsError::NoData { what: "n" });
        }
        if successes > n {
            return Err(StatsError::SuccessesExceedTrials { successes, n });
        }
        let nf = n as f64;
        let p = successes as f64 / nf;
        let z2 = Z_95 * Z_95;
        let denom = 1.0 + z2 / nf;
        let center = (p + z2 / (2.0 * nf)) / denom;
        let half = Z_95 / denom * (p * (1.0 - p) / nf + z2 / (4.0 * nf * nf)).sqrt();
        // At 0/n and n/n the Wilson bound is exactly 0 (resp. 1) algebraically; pin it so that
        // rounding never reports 1e-17 or 1.0000000000000002 in an artifact.
        let low = if successes == 0 {
            0.0
        } else {
            (center - half).max(0.0)
        };
        let high = if successes == n {
            1.0
        } else {
            (center + half).min(1.0)
        };
        Ok(Self {
            successes,
            n,
            estimate: p,
            wilson_low: low,
            wilson_high: high,
            confidence: 0.95,
        })
    }

    /// Half the interval width, the "± pp" people quote for a sample size.
    pub fn half_width(&self) -> f64 {
        (self.wilson_high - self.wilson_low) / 2.0
    }

    /// Whether `value` lies inside the closed interval.
    pub fn interval_contains(&self, value: f64) -> bool {
        self.wilson_low <= value && value <= self.wilson_high
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    // Known values: Wilson score formula worked by hand with z = 1.959963984540054,
    // identical to R's `prop.test(k, n, correct = FALSE)$conf.int`.
    #[test]
    fn four_of_thirty_two() {
        // Worked by hand (Wilson 1927, z = 1.96): 4 of 32 gives [5 %, 28 %].
        let p = Proportion::wilson(4, 32).unwrap();
        assert!(close(p.estimate, 0.125));
        assert!(close(p.wilson_low, 0.049_701_343_874_800_74));
        assert!(close(p.wilson_high, 0.280_683_054_816_502_2));
        assert_eq!(p.confidence, 0.95);
    }

    #[test]
    fn zero_of_ten() {
        // Upper bound at k = 0 is z² / (n + z²) = 3.841459 / 13.841459.
        let p = Proportion::wilson(0, 10).unwrap();
        assert_eq!(p.wilson_low, 0.0);
        assert!(close(p.wilson_high, 0.277_532_799_862_889_2));
    }

    #[test]
    fn ten_of_ten() {
        // Mirror image of 0/10: lower bound n / (n + z²).
        let p = Proportion::wilson(10, 10).unwrap();
        assert!(close(p.wilson_low, 0.722_467_200_137_110_7));
        assert_eq!(p.wilson_high, 1.0);
    }

    #[test]
    fn half_of_thirty_two_and_sixteen() {
        let p = Proportion::wilson(16, 32).unwrap();
        assert!(close(p.wilson_low, 0.336_308_828_693_274_83));
        assert!(close(p.wilson_high, 0.663_691_171_306_725_2));
        // At p = 0.5 the Wilson half-width is about ±22 points at n = 16 and ±16 at n = 32.
        assert!((p.half_width() - 0.16).abs() < 0.005);
        let p16 = Proportion::wilson(8, 16).unwrap();
        assert!((p16.half_width() - 0.22).abs() < 0.005);
    }

    #[test]
    fn no_data_and_impossible_counts_are_errors() {
        assert_eq!(
            Proportion::wilson(0, 0),
            Err(StatsError::NoData { what: "n" })
        );
        assert_eq!(
            Proportion::wilson(3, 2),
            Err(StatsError::SuccessesExceedTrials { successes: 3, n: 2 })
        );
    }

    #[test]
    fn serializes_without_nan() {
        let json = serde_json::to_string(&Proportion::wilson(0, 10).unwrap()).unwrap();
        assert!(json.starts_with(r#"{"successes":0,"n":10,"estimate":0.0,"wilson_low":0.0,"#));
    }
}

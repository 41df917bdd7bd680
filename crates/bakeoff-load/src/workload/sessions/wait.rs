//! The tool wait between a session's turns (`--tool-wait`): a fixed number of seconds, a
//! uniform range, or a log-normal given by its median and the σ of its logarithm, the shape
//! tool latencies take (a few quick calls, a long tail of slow builds and searches).

use std::time::Duration;

use crate::prng::SplitMix64;

/// The longest wait any spec may draw: an hour. A drawn wait above it is cut to it.
pub const MAX_WAIT_S: f64 = 3600.0;

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum WaitSpec {
    Fixed(f64),
    Uniform { min: f64, max: f64 },
    LogNormal { median: f64, sigma: f64 },
}

/// Why a `--tool-wait` value is refused.
#[derive(Debug, thiserror::Error)]
#[error(
    "--tool-wait {spec:?}: {why}; give seconds (2), a range (1-5) or lognormal:MEDIAN,SIGMA (lognormal:2,0.8)"
)]
pub struct WaitInvalid {
    pub spec: String,
    pub why: &'static str,
}

impl WaitSpec {
    pub fn parse(s: &str) -> Result<Self, WaitInvalid> {
        let s = s.trim();
        let bad = |why| WaitInvalid {
            spec: s.to_string(),
            why,
        };
        let secs = |v: &str| -> Result<f64, WaitInvalid> {
            let x: f64 = v.trim().parse().map_err(|_| bad("not a number"))?;
            if !x.is_finite() || x < 0.0 {
                return Err(bad("seconds must be 0 or more"));
            }
            if x > MAX_WAIT_S {
                return Err(bad("at most 3600 seconds"));
            }
            Ok(x)
        };
        if let Some(rest) = s.strip_prefix("lognormal:") {
            let (m, sg) = rest
                .split_once(',')
                .ok_or_else(|| bad("lognormal needs MEDIAN,SIGMA"))?;
            let median = secs(m)?;
            let sigma: f64 = sg
                .trim()
                .parse()
                .map_err(|_| bad("SIGMA is not a number"))?;
            if median <= 0.0 || !sigma.is_finite() || !(0.0..=5.0).contains(&sigma) {
                return Err(bad("MEDIAN must be above 0 and SIGMA from 0 to 5"));
            }
            return Ok(WaitSpec::LogNormal { median, sigma });
        }
        if let Some((a, b)) = s.split_once('-') {
            let (min, max) = (secs(a)?, secs(b)?);
            if max < min {
                return Err(bad("the range's end is below its start"));
            }
            return Ok(WaitSpec::Uniform { min, max });
        }
        Ok(WaitSpec::Fixed(secs(s)?))
    }

    pub fn sample(&self, rng: &mut SplitMix64) -> Duration {
        let s = match *self {
            WaitSpec::Fixed(s) => s,
            WaitSpec::Uniform { min, max } => min + (max - min) * rng.next_f64(),
            WaitSpec::LogNormal { median, sigma } => {
                // Box–Muller: one standard normal from two uniforms; 1 − u keeps ln away from 0.
                let (u1, u2) = (1.0 - rng.next_f64(), rng.next_f64());
                let z = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
                median * (sigma * z).exp()
            }
        };
        Duration::from_secs_f64(s.clamp(0.0, MAX_WAIT_S))
    }

    pub fn describe(&self) -> String {
        match *self {
            WaitSpec::Fixed(s) => format!("fixed {s} s"),
            WaitSpec::Uniform { min, max } => format!("uniform {min}-{max} s"),
            WaitSpec::LogNormal { median, sigma } => {
                format!("log-normal, median {median} s, sigma {sigma}")
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn parses_each_form_and_refuses_the_rest() {
        assert_eq!(WaitSpec::parse("2").unwrap(), WaitSpec::Fixed(2.0));
        assert_eq!(
            WaitSpec::parse("0.5-3").unwrap(),
            WaitSpec::Uniform { min: 0.5, max: 3.0 }
        );
        assert_eq!(
            WaitSpec::parse("lognormal:2,0.8").unwrap(),
            WaitSpec::LogNormal {
                median: 2.0,
                sigma: 0.8
            }
        );
        for bad in ["", "x", "-1", "3-1", "lognormal:0,1", "lognormal:2", "9999"] {
            let e = WaitSpec::parse(bad).unwrap_err().to_string();
            assert!(e.contains("--tool-wait"), "{e}");
        }
    }

    #[test]
    fn a_log_normal_draw_has_its_median() {
        let w = WaitSpec::LogNormal {
            median: 2.0,
            sigma: 0.8,
        };
        let mut rng = SplitMix64::new(7);
        let mut v: Vec<f64> = (0..4001)
            .map(|_| w.sample(&mut rng).as_secs_f64())
            .collect();
        v.sort_by(f64::total_cmp);
        let median = v[2000];
        assert!((1.8..2.2).contains(&median), "{median}");
        assert!(v.iter().all(|x| (0.0..=MAX_WAIT_S).contains(x)));
    }
}

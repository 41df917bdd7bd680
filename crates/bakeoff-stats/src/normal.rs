//! Standard normal quantile, needed only to turn alpha and power into z values.
//!
//! Wichura's Algorithm AS 241 (PPND16), Applied Statistics 37(3):477–484, 1988: relative error
//! about 1e-16 over (0, 1). It is the algorithm behind R's `qnorm` and Python's
//! `statistics.NormalDist.inv_cdf`; it needs no `erf`, which Rust's std does not have.

/// `Φ⁻¹(p)` for `p` strictly inside (0, 1). Callers validate `p` first.
// The coefficients are copied verbatim from the paper (more digits than f64 keeps) so that
// they can be checked against it line by line.
#[allow(clippy::excessive_precision)]
pub(crate) fn quantile(p: f64) -> f64 {
    let q = p - 0.5;
    if q.abs() <= 0.425 {
        let r = 0.180625 - q * q;
        let num = (((((((2.5090809287301226727e+3 * r + 3.3430575583588128105e+4) * r
            + 6.7265770927008700853e+4)
            * r
            + 4.5921953931549871457e+4)
            * r
            + 1.3731693765509461125e+4)
            * r
            + 1.9715909503065514427e+3)
            * r
            + 1.3314166789178437745e+2)
            * r
            + 3.3871328727963666080e+0)
            * q;
        let den = ((((((5.2264952788528545610e+3 * r + 2.8729085735721942674e+4) * r
            + 3.9307895800092710610e+4)
            * r
            + 2.1213794301586595867e+4)
            * r
            + 5.3941960214247511077e+3)
            * r
            + 6.8718700749205790830e+2)
            * r
            + 4.2313330701600911252e+1)
            * r
            + 1.0;
        return num / den;
    }
    let tail = if q <= 0.0 { p } else { 1.0 - p };
    let mut r = (-tail.ln()).sqrt();
    let x = if r <= 5.0 {
        r -= 1.6;
        let num = ((((((7.74545014278341407640e-4 * r + 2.27238449892691845833e-2) * r
            + 2.41780725177450611770e-1)
            * r
            + 1.27045825245236838258e+0)
            * r
            + 3.64784832476320460504e+0)
            * r
            + 5.76949722146069140550e+0)
            * r
            + 4.63033784615654529590e+0)
            * r
            + 1.42343711074968357734e+0;
        let den = ((((((1.05075007164441684324e-9 * r + 5.47593808499534494600e-4) * r
            + 1.51986665636164571966e-2)
            * r
            + 1.48103976427480074590e-1)
            * r
            + 6.89767334985100004550e-1)
            * r
            + 1.67638483018380384940e+0)
            * r
            + 2.05319162663775882187e+0)
            * r
            + 1.0;
        num / den
    } else {
        r -= 5.0;
        let num = ((((((2.01033439929228813265e-7 * r + 2.71155556874348757815e-5) * r
            + 1.24266094738807843860e-3)
            * r
            + 2.65321895265761230930e-2)
            * r
            + 2.96560571828504891230e-1)
            * r
            + 1.78482653991729133580e+0)
            * r
            + 5.46378491116411436990e+0)
            * r
            + 6.65790464350110377720e+0;
        let den = ((((((2.04426310338993978564e-15 * r + 1.42151175831644588870e-7) * r
            + 1.84631831751005468180e-5)
            * r
            + 7.86869131145613259100e-4)
            * r
            + 1.48753612908506148525e-2)
            * r
            + 1.36929880922735805310e-1)
            * r
            + 5.99832206555887937690e-1)
            * r
            + 1.0;
        num / den
    };
    if q < 0.0 { -x } else { x }
}

#[cfg(test)]
mod tests {
    use super::quantile;

    // Known values from Python 3 `statistics.NormalDist().inv_cdf(p)` (same algorithm, AS 241),
    // which agree with R's `qnorm(p)` to the printed digits.
    #[test]
    fn known_quantiles() {
        let cases = [
            (0.975, 1.959_963_984_540_054),
            (0.8, 0.841_621_233_572_914_4),
            (0.995, 2.575_829_303_548_9),
            (0.5, 0.0),
            (0.025, -1.959_963_984_540_054),
            (1e-10, -6.361_340_902_404_056),
        ];
        for (p, z) in cases {
            let got = quantile(p);
            assert!((got - z).abs() < 1e-12, "quantile({p}) = {got}, want {z}");
        }
    }
}

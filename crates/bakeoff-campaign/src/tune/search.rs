//! Coordinate search over the tuning space, as a pure function of what the trials so far
//! measured: a resumed campaign replays it over its journal's rows and asks for the same next
//! trial. From the base configuration, each axis in turn (in the space's order: list the flag
//! that matters most first): every other value of that axis is tried with the other axes at the
//! best so far, and the axis moves to the value that beats the best by more than `min_gain`.
//! One pass: with `a` axes of `n` values it costs `1 + a × (n − 1)` trials against the grid's
//! `n^a`, and it finds the grid's best where the flags' effects do not interact (a second pass
//! would re-check each axis at the others' new values, at up to the same cost again).

/// One configuration: a value per axis of the space, in order.
pub type Config = Vec<String>;

/// What a configuration measured.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Lookup {
    /// Not run yet.
    Pending,
    /// Run: its value, `None` when it measured nothing valid (or did not start or fit).
    Done(Option<f64>),
}

/// The search's answer.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// Measure this configuration next.
    Next(Config),
    /// The search has converged: the best configuration and its value.
    Best(Config, Option<f64>),
}

/// The next step of a coordinate search from `base` over `values` (per axis).
pub fn next(
    base: &Config,
    values: &[Vec<String>],
    min_gain: f64,
    lookup: impl Fn(&Config) -> Lookup,
) -> Step {
    let mut best = base.clone();
    let mut best_val = match lookup(&best) {
        Lookup::Pending => return Step::Next(best),
        Lookup::Done(None) => return Step::Best(best, None),
        Lookup::Done(Some(v)) => v,
    };
    {
        for (i, axis) in values.iter().enumerate() {
            let mut axis_best = (best.clone(), best_val);
            for v in axis {
                if *v == best[i] {
                    continue;
                }
                let mut cand = best.clone();
                cand[i] = v.clone();
                match lookup(&cand) {
                    Lookup::Pending => return Step::Next(cand),
                    Lookup::Done(Some(x)) if x > axis_best.1 * (1.0 + min_gain) => {
                        axis_best = (cand, x);
                    }
                    Lookup::Done(_) => {}
                }
            }
            if axis_best.0 != best {
                best = axis_best.0;
                best_val = axis_best.1;
            }
        }
    }
    Step::Best(best, Some(best_val))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn s(v: &[&str]) -> Config {
        v.iter().map(|x| x.to_string()).collect()
    }

    /// Runs the search to its end over a function, counting trials.
    fn run(values: &[Vec<String>], base: &Config, f: impl Fn(&Config) -> f64) -> (Config, usize) {
        let mut seen: HashMap<Config, f64> = HashMap::new();
        loop {
            let lookup = |c: &Config| match seen.get(c) {
                Some(v) => Lookup::Done(Some(*v)),
                None => Lookup::Pending,
            };
            match next(base, values, 0.03, lookup) {
                Step::Next(c) => {
                    let v = f(&c);
                    seen.insert(c, v);
                }
                Step::Best(c, _) => return (c, seen.len()),
            }
        }
    }

    #[test]
    fn finds_the_peak_of_a_separable_surface_in_fewer_trials_than_the_grid() {
        let values = vec![s(&["1", "2", "4", "8"]), s(&["32", "64", "128", "256"])];
        let f = |c: &Config| {
            let np: f64 = c[0].parse().unwrap_or(0.0);
            let ub: f64 = c[1].parse().unwrap_or(0.0);
            (np.log2() * 10.0 + 5.0) * (1.0 - (ub.log2() - 7.0).abs() * 0.1)
        };
        let (best, trials) = run(&values, &s(&["1", "32"]), f);
        assert_eq!(best, s(&["8", "128"]));
        assert!(trials <= 8, "{trials} trials against a grid of 16");
    }

    #[test]
    fn noise_below_the_gain_does_not_move() {
        let values = vec![s(&["1", "2"])];
        let (best, _) = run(
            &values,
            &s(&["1"]),
            |c| if c[0] == "2" { 101.0 } else { 100.0 },
        );
        assert_eq!(best, s(&["1"]));
    }
}

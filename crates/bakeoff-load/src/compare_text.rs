//! The terminal rendering of `bakeoff bench compare A B` and `bench run --versus`: the sweep
//! comparison of [`crate::compare`], level by level. Pure: it returns the text and prints
//! nothing. Paths, labels and reasons come from artifact files and go through [`for_terminal`].

use std::path::Path;

use bakeoff_term::escape::for_terminal;

use crate::compare::SweepComparison;

fn num(v: f64) -> String {
    if v.abs() >= 100.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// The comparison of the sweeps of the artifacts at `a` and `b`.
pub fn text(c: &SweepComparison, a: &Path, b: &Path) -> String {
    let mut out = format!(
        "A: {}\nB: {}\n",
        for_terminal(&a.display().to_string(), 300),
        for_terminal(&b.display().to_string(), 300)
    );
    if !c.not_comparable.is_empty() {
        out.push_str("not comparable, no verdict: the two sweeps ran different workloads\n");
        for r in &c.not_comparable {
            out.push_str(&format!("  {}\n", for_terminal(r, 300)));
        }
        return out;
    }
    for x in &c.contaminated {
        out.push_str(&format!("contaminated: {}\n", for_terminal(x, 300)));
    }
    if let Some(r) = &c.no_verdict_reason {
        out.push_str(&format!("{}\n", for_terminal(r, 300)));
    }
    if c.design == "paired" {
        out.push_str(
            "paired: the two sides of one `bench run --versus`, repeat r of A against repeat r of B\n",
        );
    }
    for l in &c.levels {
        let pairs = match l.pairs {
            Some(n) => format!(" ({n} pair{})", if n == 1 { "" } else { "s" }),
            None => String::new(),
        };
        out.push_str(&format!("{}{pairs}\n", for_terminal(&l.label, 100)));
        for d in &l.differences {
            let interval = match (d.low, d.high) {
                (Some(lo), Some(hi)) => format!(" [{}, {}]", num(lo), num(hi)),
                _ => String::new(),
            };
            out.push_str(&format!(
                "  {:<14} A {:>9}  B {:>9}  B − A {:>9}{interval}: {}\n",
                d.metric,
                num(d.a.mean),
                num(d.b.mean),
                num(d.diff),
                d.verdict
            ));
        }
        for n in &l.notes {
            out.push_str(&format!("  {}\n", for_terminal(n, 300)));
        }
    }
    for u in &c.unmatched {
        out.push_str(&format!(
            "{}: measured by one sweep only\n",
            for_terminal(u, 100)
        ));
    }
    out.push_str("(B − A with its 95 % interval; a verdict only where the interval excludes zero: docs/metrics.md)\n");
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;

//! `bakeoff bench compare A B`: reads two bench artifacts and prints the level-by-level
//! comparison (logic in `bakeoff_load::compare`).

use bakeoff_artifact::{LoadReport, read_artifact};
use bakeoff_load::compare::{SweepComparison, compare};
use bakeoff_report::escape::for_terminal;

use crate::config::BenchCompareConfig;
use crate::exit::{Error, Exit};

/// The sweep `suite` of the artifact at `path`: a `bench run`'s `load.<suite>`, else the
/// load suite of that name in an `eval run`'s suites.
fn sweep_of(path: &std::path::Path, suite: &str) -> Result<LoadReport, Error> {
    let art = read_artifact(path).map_err(Error::from)?;
    if let Some(r) = art.load.get(suite) {
        return Ok(r.clone());
    }
    art.suites
        .get(suite)
        .and_then(|s| serde_json::from_value::<LoadReport>(s.summary.details.clone()).ok())
        .ok_or_else(|| {
            Error::usage(format!(
                "{} holds no `{suite}` sweep: give two `bakeoff bench run` artifacts, or two \
                 `bakeoff eval run` artifacts that ran the {suite} suite",
                path.display()
            ))
        })
}

pub fn run(a: BenchCompareConfig) -> Result<Exit, Error> {
    let sweep = a.sweep.as_str();
    let (ra, rb) = (sweep_of(&a.a, sweep)?, sweep_of(&a.b, sweep)?);
    let cmp = compare(&ra, &rb, a.allow_contaminated);
    if a.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&cmp).map_err(Error::json)?
        );
    } else {
        print!("{}", text(&cmp, &a.a, &a.b));
    }
    Ok(Exit::from_ok(cmp.not_comparable.is_empty()))
}

fn num(v: f64) -> String {
    if v.abs() >= 100.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

pub(super) fn text(c: &SweepComparison, a: &std::path::Path, b: &std::path::Path) -> String {
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

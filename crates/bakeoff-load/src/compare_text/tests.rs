use super::*;
use crate::compare::{Difference, Estimate, LevelComparison};

fn est(mean: f64) -> Estimate {
    Estimate {
        mean,
        se: Some(1.0),
        df: Some(4.0),
    }
}

fn diff(metric: &'static str, a: f64, b: f64, verdict: &str) -> Difference {
    Difference {
        metric,
        a: est(a),
        b: est(b),
        diff: b - a,
        low: Some(b - a - 3.0),
        high: Some(b - a + 3.0),
        verdict: verdict.into(),
    }
}

/// A paired comparison: two levels, a note, a level only one side measured.
#[test]
fn paired_levels() {
    let c = SweepComparison {
        design: "paired",
        not_comparable: vec![],
        levels: vec![
            LevelComparison {
                label: "c1".into(),
                differences: vec![
                    diff("tok/s", 41.25, 52.5, "B higher"),
                    diff("ttft p50 ms", 180.0, 181.5, "no difference detectable"),
                ],
                pairs: Some(3),
                notes: vec!["acceptance rate: A 0.62, B none (B does not speculate)".into()],
            },
            LevelComparison {
                label: "c4".into(),
                differences: vec![Difference {
                    low: None,
                    high: None,
                    ..diff("tok/s", 120.0, 118.0, "no interval (one repeat)")
                }],
                pairs: Some(1),
                notes: vec![],
            },
        ],
        unmatched: vec!["c8".into()],
        contaminated: vec![],
        no_verdict_reason: None,
    };
    insta::assert_snapshot!(text(&c, Path::new("runs/a.json"), Path::new("runs/b.json")));
}

/// Sweeps of different workloads: the reasons and no levels. A reason with an escape sequence
/// is shown escaped.
#[test]
fn not_comparable() {
    let c = SweepComparison {
        design: "independent",
        not_comparable: vec![
            "prompt lengths differ: A 512, B 1024".into(),
            "\u{1b}[2Jmax tokens differ".into(),
        ],
        levels: vec![],
        unmatched: vec![],
        contaminated: vec![],
        no_verdict_reason: None,
    };
    insta::assert_snapshot!(text(&c, Path::new("a.json"), Path::new("b.json")));
}

/// A contaminated side, not allowed: the steps and the reason, then the levels without verdicts.
#[test]
fn contaminated() {
    let c = SweepComparison {
        design: "independent",
        not_comparable: vec![],
        levels: vec![LevelComparison {
            label: "c2".into(),
            differences: vec![diff("tok/s", 80.0, 95.0, "withheld")],
            pairs: None,
            notes: vec![],
        }],
        unmatched: vec![],
        contaminated: vec!["A c2: host-contended (load 9.1 on 8 cores)".into()],
        no_verdict_reason: Some("no verdict: A ran contaminated (--allow-contaminated)".into()),
    };
    insta::assert_snapshot!(text(&c, Path::new("a.json"), Path::new("b.json")));
}

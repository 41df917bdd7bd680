//! Capacity in sessions (docs/metrics.md, "Sessions"): the most concurrent sessions a server
//! holds with 95 % of their turns meeting the `--slo` objectives — with `--slo ttft=X` that is
//! turn TTFT p95 ≤ X — found over the sweep's levels like every SLO capacity
//! ([`crate::capacity`]), and under `--repeat` found in each round too, for its interval.

use std::collections::BTreeMap;

use bakeoff_artifact::{LoadReport, SessionCapacity};

use crate::capacity::SLO_SHARE;

/// `None` unless the sweep ran synthetic sessions under an SLO.
pub fn find(report: &LoadReport) -> Option<SessionCapacity> {
    let steps: Vec<_> = report
        .steps
        .iter()
        .filter(|s| {
            s.sessions
                .as_ref()
                .is_some_and(|x| x.workload == "synthetic")
        })
        .filter_map(|s| Some((s.concurrency?, s.repeat.unwrap_or(1), s.goodput.as_ref()?)))
        .collect();
    let slo = steps.first().map(|(_, _, g)| g.slo.clone())?;
    let mut pooled: BTreeMap<u32, (u64, u64)> = BTreeMap::new();
    let mut rounds: BTreeMap<u32, BTreeMap<u32, (u64, u64)>> = BTreeMap::new();
    for (level, round, g) in &steps {
        for tally in [
            pooled.entry(*level).or_default(),
            rounds.entry(*round).or_default().entry(*level).or_default(),
        ] {
            tally.0 += g.met;
            tally.1 += g.of;
        }
    }
    let highest = |levels: &BTreeMap<u32, (u64, u64)>| {
        levels
            .iter()
            .rev()
            .find(|(_, (met, of))| *of > 0 && *met as f64 >= SLO_SHARE * *of as f64)
            .map(|(l, _)| *l)
    };
    let sessions = highest(&pooled);
    let per_repeat: Vec<u32> = if rounds.len() > 1 {
        rounds.values().map(|r| highest(r).unwrap_or(0)).collect()
    } else {
        Vec::new()
    };
    let interval =
        bakeoff_stats::mean_interval(&per_repeat.iter().map(|x| f64::from(*x)).collect::<Vec<_>>());
    let share = SLO_SHARE * 100.0;
    let mut statement = match sessions {
        Some(n) => format!("{n} concurrent sessions with ≥ {share:.0} % of turns meeting {slo}"),
        None => {
            format!("no level of concurrent sessions had ≥ {share:.0} % of turns meeting {slo}")
        }
    };
    if let Some(i) = &interval {
        let each: Vec<String> = per_repeat.iter().map(u32::to_string).collect();
        statement.push_str(&format!(
            "; by round {} (mean {:.1}, 95 % interval {:.1} to {:.1})",
            each.join(", "),
            i.mean,
            i.low,
            i.high
        ));
    }
    Some(SessionCapacity {
        slo,
        sessions,
        per_repeat,
        interval,
        statement,
    })
}

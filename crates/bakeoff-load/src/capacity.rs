//! Where a sweep stops scaling (docs/metrics.md, "Capacity and the knee").
//!
//! The knee is the lowest level that no higher level out-produces beyond the noise: aggregate
//! output tokens/s has stopped rising there. It is "only queueing" past the knee when TTFT kept
//! rising. The noise of a level is its within-step standard error (or, under `--repeat`, the
//! standard error across repeats), with a floor of [`RELATIVE_FLOOR`] of the level's
//! throughput for the drift a shared machine adds between steps.

use bakeoff_artifact::{
    Capacity, CapacityVerdict, LevelSummary, LoadReport, LoadStep, SloCapacity,
};

pub use crate::schedule::rate_text;

/// Differences below this share of a level's throughput are never a rise: two steps of one
/// sweep run minutes apart, and a host's background moves throughput by a few percent.
pub const RELATIVE_FLOOR: f64 = 0.03;

/// A rise must exceed this many standard errors of the difference (≈ 95 % one-sided: 1.645;
/// 2 keeps a sweep of many levels from finding rises in noise).
pub const SIGMAS: f64 = 2.0;

/// TTFT at the top level must exceed the knee's by this factor for "only queueing".
pub const TTFT_GROWTH: f64 = 1.25;

/// A level passes an SLO when at least this share of its requests met every objective.
pub const SLO_SHARE: f64 = 0.95;

/// Five slices: enough to estimate a spread, few enough that each holds several completions.
const SLICES: usize = 5;

/// One request's decode: tokens produced between `start_ms` and `end_ms` (step offsets).
#[derive(Debug, Clone, Copy)]
pub struct DecodeSpan {
    pub start_ms: f64,
    pub end_ms: f64,
    pub tokens: u64,
}

/// Standard error of a step's output tokens/s: batch means over [`SLICES`] equal slices of the
/// wall time, each request's tokens spread evenly over its decode interval (counting tokens at
/// completion would make the slices lumpy, and the spread an artefact of request boundaries).
/// `None` below four requests.
pub fn throughput_se(spans: &[DecodeSpan], wall_ms: f64) -> Option<f64> {
    if spans.len() < 4 || !(wall_ms.is_finite() && wall_ms > 0.0) {
        return None;
    }
    let width = wall_ms / SLICES as f64;
    let mut tokens = [0.0f64; SLICES];
    for s in spans {
        let (a, b) = (s.start_ms.max(0.0), s.end_ms.min(wall_ms));
        if b <= a {
            let k = ((b / width) as usize).min(SLICES - 1);
            tokens[k] += s.tokens as f64;
            continue;
        }
        let per_ms = s.tokens as f64 / (b - a);
        for (k, slot) in tokens.iter_mut().enumerate() {
            let (lo, hi) = (k as f64 * width, (k + 1) as f64 * width);
            let overlap = (b.min(hi) - a.max(lo)).max(0.0);
            *slot += overlap * per_ms;
        }
    }
    let rates: Vec<f64> = tokens.iter().map(|t| t / (width / 1000.0)).collect();
    let mean = rates.iter().sum::<f64>() / SLICES as f64;
    let var = rates.iter().map(|r| (r - mean).powi(2)).sum::<f64>() / (SLICES - 1) as f64;
    Some((var / SLICES as f64).sqrt())
}

/// One level as the knee rule sees it.
#[derive(Debug, Clone)]
struct Level {
    level: f64,
    label: String,
    throughput: f64,
    se: f64,
    ttft_p50: Option<f64>,
    goodput: Option<(u64, u64, Option<f64>)>,
}

fn level_of(s: &LoadStep) -> Option<f64> {
    s.concurrency.map(f64::from).or(s.requested_rate)
}

/// The levels: repeats folded into their level's mean (the across-repeat standard error as
/// noise); single steps as they are. Levels that measured nothing are left out.
fn levels(report: &LoadReport) -> Vec<Level> {
    let mut out: Vec<Level> = Vec::new();
    for s in &report.steps {
        let (Some(level), Some(tps)) = (level_of(s), s.output_tokens_per_second) else {
            continue;
        };
        if s.ok == 0 {
            continue;
        }
        let base = base_label(s);
        if let Some(l) = out.iter_mut().find(|l| l.label == base) {
            // A repeat: its goodput counts pool; the figures come from the level summary.
            if let (Some((m, o, _)), Some(g)) = (&mut l.goodput, &s.goodput) {
                *m += g.met;
                *o += g.of;
            }
            continue;
        }
        out.push(Level {
            level,
            label: base,
            throughput: tps,
            se: s.output_tokens_per_second_se.unwrap_or(0.0),
            ttft_p50: s.latency.ttft.p50_ms,
            goodput: s.goodput.as_ref().map(|g| (g.met, g.of, g.per_second)),
        });
    }
    for l in &mut out {
        if let Some(sum) = report.levels.iter().find(|x| x.label == l.label) {
            apply_repeats(l, sum);
        }
    }
    out.sort_by(|a, b| a.level.total_cmp(&b.level));
    out
}

fn apply_repeats(l: &mut Level, sum: &LevelSummary) {
    if let Some(t) = &sum.output_tokens_per_second {
        l.throughput = t.mean;
        // The across-repeat standard error, from the repeats themselves (the stored interval
        // is on the log scale: docs/statistics.md, "Intervals that stay in range").
        if let Some(se) = t.standard_error() {
            l.se = se;
        }
    }
    if let Some(t) = &sum.ttft_p50_ms {
        l.ttft_p50 = Some(t.mean);
    }
}

/// `c=4 #2` → `c=4`.
pub fn base_label(s: &LoadStep) -> String {
    match s.repeat {
        Some(r) => s
            .label
            .strip_suffix(&format!(" #{r}"))
            .unwrap_or(&s.label)
            .to_string(),
        None => s.label.clone(),
    }
}

fn noise(l: &Level) -> f64 {
    l.se
}

/// `hi` out-produces `lo` beyond the noise.
fn rises(lo: &Level, hi: &Level) -> bool {
    let diff = hi.throughput - lo.throughput;
    let sigma = (noise(lo).powi(2) + noise(hi).powi(2)).sqrt();
    diff > (SIGMAS * sigma).max(RELATIVE_FLOOR * lo.throughput)
}

fn level_text(kind: &str, l: &Level) -> String {
    match kind {
        "concurrency" => format!("c = {}", l.level),
        _ => format!("{} req/s", l.level),
    }
}

/// The capacity finding of a sweep, ending with the likely limit where the engine's gauges
/// show one ([`crate::limit`]).
pub fn find(report: &LoadReport) -> Capacity {
    let mut cap = find_knee(report);
    if let Some(l) = cap.limit.as_mut()
        && l.kind == bakeoff_artifact::LimitKind::NoneSeen
        && matches!(cap.verdict, CapacityVerdict::Knee | CapacityVerdict::Flat)
    {
        l.statement = format!("{}: {}", l.statement, crate::limit::NONE_SEEN_MEANS);
    }
    if let Some(l) = &cap.limit {
        cap.statement = if cap.statement.is_empty() {
            format!("gauges: {}", l.statement)
        } else {
            format!("{}; gauges: {}", cap.statement, l.statement)
        };
    }
    cap
}

fn find_knee(report: &LoadReport) -> Capacity {
    let open = report.steps.iter().any(|s| s.requested_rate.is_some());
    let kind = if open { "rate" } else { "concurrency" };
    let ls = levels(report);
    let noise_rule = format!(
        "a higher level counts as a rise when its output tok/s exceeds the lower one's by more than \
         {SIGMAS} standard errors of the difference and by more than {:.0} %",
        RELATIVE_FLOOR * 100.0
    );
    let slo = slo_capacity(report, &ls, kind);
    let mut cap = Capacity {
        verdict: CapacityVerdict::TooFewLevels,
        level_kind: kind.into(),
        knee: None,
        knee_label: None,
        throughput_at_knee: None,
        peak_throughput: None,
        peak_label: None,
        ttft_p50_at_knee_ms: None,
        ttft_p50_at_top_ms: None,
        statement: String::new(),
        noise_rule,
        slo,
        sessions: crate::session_capacity::find(report),
        limit: crate::limit::find(&report.steps, kind),
    };
    let Some(peak) = ls
        .iter()
        .max_by(|a, b| a.throughput.total_cmp(&b.throughput))
    else {
        cap.statement = "no level measured output: no capacity finding".into();
        return cap;
    };
    cap.peak_throughput = Some(peak.throughput);
    cap.peak_label = Some(peak.label.clone());
    if ls.len() < 2 {
        cap.statement = format!(
            "one level measured ({}): a capacity finding needs two or more",
            ls[0].label
        );
        return cap;
    }
    let Some(k) = (0..ls.len()).find(|&i| !ls[i + 1..].iter().any(|h| rises(&ls[i], h))) else {
        return cap;
    };
    let (knee, top) = (&ls[k], &ls[ls.len() - 1]);
    cap.knee = Some(knee.level);
    cap.knee_label = Some(knee.label.clone());
    cap.throughput_at_knee = Some(knee.throughput);
    cap.ttft_p50_at_knee_ms = knee.ttft_p50;
    cap.ttft_p50_at_top_ms = top.ttft_p50;
    let at = level_text(kind, knee);
    if k + 1 == ls.len() {
        cap.verdict = CapacityVerdict::StillRising;
        cap.statement = format!(
            "no knee within the sweep: output throughput still rising at {at} ({:.1} tok/s); \
             extend the sweep to find where it stops",
            knee.throughput
        );
        return cap;
    }
    let ttft_grew = match (knee.ttft_p50, top.ttft_p50) {
        (Some(a), Some(b)) => b > a * TTFT_GROWTH,
        _ => false,
    };
    let ttft = |v: Option<f64>| v.map_or("–".to_string(), |x| format!("{x:.0} ms"));
    if ttft_grew {
        cap.verdict = CapacityVerdict::Knee;
        cap.statement = format!(
            "past {at} only queueing: output throughput stayed at {:.1} tok/s (within noise) up to {} \
             while TTFT p50 went from {} to {}",
            knee.throughput,
            level_text(kind, top),
            ttft(knee.ttft_p50),
            ttft(top.ttft_p50)
        );
    } else {
        cap.verdict = CapacityVerdict::Flat;
        cap.statement = format!(
            "output throughput stopped rising at {at} ({:.1} tok/s) but TTFT p50 did not grow ({} → {}): \
             the server is not what limits these levels (see the client flags and the harness ceiling)",
            knee.throughput,
            ttft(knee.ttft_p50),
            ttft(top.ttft_p50)
        );
    }
    cap
}

/// Under `--slo`: the highest level at which at least [`SLO_SHARE`] of the requests met every
/// objective (the sweep's own levels are the search).
fn slo_capacity(report: &LoadReport, ls: &[Level], kind: &str) -> Option<SloCapacity> {
    let slo = report
        .steps
        .iter()
        .find_map(|s| s.goodput.as_ref().map(|g| g.slo.clone()))?;
    let passing = ls.iter().rev().find(|l| {
        l.goodput
            .is_some_and(|(met, of, _)| of > 0 && met as f64 >= SLO_SHARE * of as f64)
    });
    let searched = if kind == "rate" {
        "the sweep's own arrival rates".to_string()
    } else {
        "the sweep's own concurrency levels".to_string()
    };
    let statement = match passing {
        Some(l) => format!(
            "highest level meeting {slo} for ≥ {:.0} % of requests: {} (goodput {} req/s)",
            SLO_SHARE * 100.0,
            level_text(kind, l),
            l.goodput
                .and_then(|g| g.2)
                .map_or("–".into(), |g| format!("{g:.2}"))
        ),
        None => format!(
            "no level met {slo} for ≥ {:.0} % of requests",
            SLO_SHARE * 100.0
        ),
    };
    Some(SloCapacity {
        slo,
        required_share: SLO_SHARE,
        level: passing.map(|l| l.level),
        label: passing.map(|l| l.label.clone()),
        goodput_per_second: passing.and_then(|l| l.goodput.and_then(|g| g.2)),
        searched,
        statement,
    })
}

/// A step meets its SLO when at least [`SLO_SHARE`] of its sent requests met every objective.
pub fn meets_slo(s: &LoadStep) -> bool {
    s.goodput
        .as_ref()
        .is_some_and(|g| g.of > 0 && g.met as f64 >= SLO_SHARE * g.of as f64)
}

/// The state of a `--find-capacity` search ([`crate::plan::CapacitySearch`]).
#[derive(Debug, Clone)]
pub struct Search {
    start: f64,
    rule: crate::plan::CapacitySearch,
    steps: u32,
    passing: Option<f64>,
    failing: Option<f64>,
}

impl Search {
    pub fn new(start: f64, rule: crate::plan::CapacitySearch) -> Self {
        Self {
            start,
            rule,
            steps: 0,
            passing: None,
            failing: None,
        }
    }

    /// Record a measured rate; the next rate to try, or `None` when the search is done.
    pub fn record(&mut self, rate: f64, passed: bool) -> Option<f64> {
        self.steps += 1;
        if passed {
            self.passing = Some(self.passing.map_or(rate, |p| p.max(rate)));
        } else {
            self.failing = Some(self.failing.map_or(rate, |f| f.min(rate)));
        }
        if self.steps >= self.rule.max_steps {
            return None;
        }
        match (self.passing, self.failing) {
            (Some(p), None) => Some(p * 2.0),
            // Nothing passes yet: halve, at most three times (to an eighth of the start): a
            // request-bounded step at a tiny rate would take hours, and a server that misses
            // the SLO at an eighth of the operator's guess needs a different question.
            (None, Some(f)) => Some(f / 2.0).filter(|r| *r >= self.start / 8.0 * 0.999),
            (Some(p), Some(f)) if (f - p) / p > self.rule.precision => Some((p + f) / 2.0),
            _ => None,
        }
    }

    /// How the search went, for the capacity finding.
    pub fn describe(&self) -> String {
        let bound =
            |v: Option<f64>| v.map_or("none".to_string(), |r| format!("{}/s", rate_text(r)));
        format!(
            "a bounded rate search from {}/s (double until a rate fails, then bisect to within {:.0} %, at most {} steps): {} steps, highest passing {}, lowest failing {}",
            rate_text(self.start),
            self.rule.precision * 100.0,
            self.rule.max_steps,
            self.steps,
            bound(self.passing),
            bound(self.failing)
        )
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn level(c: f64, tps: f64, se: f64, ttft: f64) -> Level {
        Level {
            level: c,
            label: format!("c={c}"),
            throughput: tps,
            se,
            ttft_p50: Some(ttft),
            goodput: None,
        }
    }

    #[test]
    fn even_spans_have_no_spread() {
        let spans: Vec<DecodeSpan> = (0..10)
            .map(|_| DecodeSpan {
                start_ms: 0.0,
                end_ms: 1000.0,
                tokens: 100,
            })
            .collect();
        let se = throughput_se(&spans, 1000.0).unwrap();
        assert!(se < 1e-9, "{se}");
        assert!(throughput_se(&spans[..3], 1000.0).is_none());
    }

    #[test]
    fn a_rise_must_clear_the_noise_and_the_floor() {
        let lo = level(1.0, 500.0, 5.0, 30.0);
        assert!(rises(&lo, &level(2.0, 600.0, 5.0, 40.0)));
        // 2 % up: under the 3 % floor.
        assert!(!rises(&lo, &level(2.0, 510.0, 0.1, 40.0)));
        // 40 up but noise of 30 each: 2σ of the difference is 85.
        assert!(!rises(
            &level(1.0, 500.0, 30.0, 1.0),
            &level(2.0, 540.0, 30.0, 1.0)
        ));
    }

    #[test]
    fn the_search_doubles_then_bisects_to_the_precision() {
        let mut s = Search::new(1.0, crate::plan::CapacitySearch::default());
        // The true capacity is 5/s: 1, 2, 4 pass; 8 fails; then 6 fails, 5 passes, 5.5 fails.
        let truth = |r: f64| r <= 5.2;
        let mut rate = Some(1.0);
        let mut seen = Vec::new();
        while let Some(r) = rate {
            seen.push(r);
            rate = s.record(r, truth(r));
        }
        assert_eq!(seen, vec![1.0, 2.0, 4.0, 8.0, 6.0, 5.0, 5.5]);
        assert!(
            s.describe()
                .contains("highest passing 5/s, lowest failing 5.5/s"),
            "{}",
            s.describe()
        );
        // Nothing ever passes: three halvings, then the search stops.
        let mut s = Search::new(8.0, crate::plan::CapacitySearch::default());
        let mut rate = Some(8.0);
        let mut seen = Vec::new();
        while let Some(r) = rate {
            seen.push(r);
            rate = s.record(r, false);
        }
        assert_eq!(seen, vec![8.0, 4.0, 2.0, 1.0]);
    }
}

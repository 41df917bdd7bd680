//! The figures of damage along the reply, from the per-prompt comparisons (estimators in
//! docs/statistics.md "Damage along the reply").

use bakeoff_artifact::{AlongCheck, DamageAlong, PositionFigure};
use bakeoff_stats::kl::BOOTSTRAP_RESAMPLES;
use bakeoff_stats::{ClusteredSummary, summarize_clustered};
use bakeoff_text::SplitMix64;

use super::compare::Compared;
use crate::damage::noise::{
    BOOTSTRAP_SEED, RESOLUTION_NATS, SELF_CHECK_LIMIT_NATS as LIMIT_NATS, summarize_kl,
};
use crate::damage::record::median;
use bakeoff_suites::summary::score;

pub(super) struct Inputs<'a> {
    pub tokens: u32,
    pub route: String,
    pub forcing_missing: Option<String>,
    /// Prompts whose reference reply came back.
    pub prompts: usize,
    pub self_checks: &'a [Compared],
    /// The route check's comparisons (llama.cpp; empty elsewhere).
    pub route_checks: &'a [Compared],
    pub batch: &'a [Compared],
    /// Requests in flight in the batch-floor phase.
    pub in_flight: u32,
    pub candidates: &'a [Compared],
    pub interrupted: bool,
    pub timing: Vec<bakeoff_artifact::AlongTiming>,
}

/// Per-token figures of one prompt, as a cluster: its KL values, its top-1 flags as 0/1.
fn clusters(c: &[Compared]) -> (Vec<Vec<f64>>, Vec<Vec<f64>>) {
    c.iter()
        .filter_map(|x| x.along.as_ref())
        .map(|a| {
            (
                a.kl.iter().flatten().copied().collect(),
                a.top1_differs
                    .iter()
                    .map(|d| if *d { 1.0 } else { 0.0 })
                    .collect(),
            )
        })
        .unzip()
}

fn clustered(groups: &[Vec<f64>]) -> Option<ClusteredSummary> {
    let mut rng = SplitMix64::new(BOOTSTRAP_SEED);
    summarize_clustered(groups, BOOTSTRAP_RESAMPLES, &mut |n| {
        rng.below(n as u64) as usize
    })
    .ok()
}

fn check(c: &[Compared], in_flight: u32, limit: Option<f64>) -> AlongCheck {
    let identical = c.iter().filter(|x| x.agreement.identical).count() as u64;
    let token_kl = clustered(&clusters(c).0);
    let passed = limit.map(|l| {
        identical == c.len() as u64
            && !c.is_empty()
            && token_kl.as_ref().is_none_or(|k| k.high <= l)
    });
    AlongCheck {
        in_flight,
        identical: score(identical, c.len() as u64).unwrap_or(bakeoff_artifact::Score {
            successes: 0,
            n: 0,
            estimate: 0.0,
            low: 0.0,
            high: 1.0,
        }),
        token_kl,
        limit_nats: limit,
        passed,
    }
}

/// The strict self-check: every reply identical, per-token KL within the limit. `prompts` is
/// how many reference replies came back: one whose second run failed fails the check.
pub(super) fn self_check(c: &[Compared], prompts: usize) -> AlongCheck {
    let mut k = check(c, 1, Some(LIMIT_NATS));
    if c.len() < prompts {
        k.passed = Some(false);
    }
    k
}

fn positions(c: &[Compared]) -> Vec<PositionFigure> {
    let len = c
        .iter()
        .filter_map(|x| x.along.as_ref().map(|a| a.kl.len()))
        .max()
        .unwrap_or(0);
    (0..len)
        .filter_map(|i| {
            let at: Vec<(f64, bool)> = c
                .iter()
                .filter_map(|x| {
                    let a = x.along.as_ref()?;
                    Some(((*a.kl.get(i)?)?, *a.top1_differs.get(i)?))
                })
                .collect();
            (!at.is_empty()).then(|| PositionFigure {
                position: i as u32,
                prompts: at.len() as u64,
                mean_kl: at.iter().map(|(k, _)| k).sum::<f64>() / at.len() as f64,
                top1_differs: at.iter().filter(|(_, d)| *d).count() as u64,
            })
        })
        .collect()
}

pub(super) fn build(i: Inputs<'_>) -> DamageAlong {
    let self_check =
        (!i.self_checks.is_empty() || i.prompts > 0).then(|| self_check(i.self_checks, i.prompts));
    let batch_floor = (!i.batch.is_empty()).then(|| check(i.batch, i.in_flight, None));
    let route_check = (!i.route_checks.is_empty()).then(|| check(i.route_checks, 1, None));
    let passed = self_check.as_ref().and_then(|c| c.passed) == Some(true);
    let floor = [
        self_check
            .as_ref()
            .and_then(|c| c.token_kl.as_ref())
            .map(|k| k.high),
        batch_floor
            .as_ref()
            .and_then(|c| c.token_kl.as_ref())
            .map(|k| k.high),
        route_check
            .as_ref()
            .and_then(|c| c.token_kl.as_ref())
            .map(|k| k.high),
        Some(RESOLUTION_NATS),
    ]
    .into_iter()
    .flatten()
    .fold(0.0, f64::max);
    let withheld = match &self_check {
        None => {
            Some("no reference reply came back: nothing was measured along the reply".to_string())
        }
        Some(c) if !passed => Some(format!(
            "self-check failed along the reply: the reference's second reply was identical on {} of {} prompts{}, so its own variation would be read as damage",
            c.identical.successes,
            i.prompts,
            c.token_kl
                .as_ref()
                .map(|k| format!(
                    " and its per-token KL upper bound {:.3e} nats against a limit of {:.0e}",
                    k.high, LIMIT_NATS
                ))
                .unwrap_or_default()
        )),
        Some(_) if i.candidates.is_empty() && i.interrupted => {
            Some("interrupted before the candidate was measured".into())
        }
        Some(_) if i.candidates.is_empty() => {
            Some("no candidate reply came back: nothing was measured along the reply".into())
        }
        Some(_) => None,
    };
    let c = if withheld.is_some() {
        &[][..]
    } else {
        i.candidates
    };
    let n = c.len() as u64;
    let identical = c.iter().filter(|x| x.agreement.identical).count() as u64;
    let greedy_identical = score(identical, n);
    let (kl_groups, top1_groups) = clusters(c);
    let token_kl = clustered(&kl_groups);
    let token_top1_differs = clustered(&top1_groups);
    let reproduced: Vec<f64> = c.iter().map(|x| x.agreement.reproduced).collect();
    // The reference's own agreement with itself: in flight beside other requests where that
    // was measured, else one at a time.
    let own = batch_floor.as_ref().or(self_check.as_ref());
    let agreement_beyond_noise = match (&greedy_identical, own) {
        (Some(g), Some(o)) => Some(g.high < o.identical.low),
        _ => None,
    };
    DamageAlong {
        tokens: i.tokens,
        route: i.route,
        forcing_missing: i.forcing_missing,
        prompts: i.prompts as u64,
        self_check,
        batch_floor,
        route_check,
        greedy_identical,
        first_divergence_median: median(
            c.iter()
                .filter_map(|x| x.agreement.first_divergence.map(f64::from))
                .collect(),
        ),
        reproduced: summarize_kl(&reproduced),
        kl_beyond_noise: token_kl.as_ref().map(|k| k.low > floor),
        token_kl,
        token_top1_differs,
        positions: positions(c),
        noise_floor_nats: floor,
        agreement_beyond_noise,
        withheld,
        timing: i.timing,
    }
}

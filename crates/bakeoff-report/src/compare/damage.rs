//! Two `eval damage` runs against the same reference, paired by prompt (`eval compare A B`):
//! which candidate sits closer to the reference along the reply, or that the difference is not
//! detectable (docs/statistics.md "Comparing two damage runs").
//!
//! - Per-token KL: each prompt's mean KL along the reference's reply, B − A per prompt; the
//!   mean difference with a percentile-bootstrap 95 % interval over prompts. An interval that
//!   excludes 0 names the closer build.
//! - Greedy agreement: identical replies paired per prompt, exact McNemar on the discordant
//!   pairs.

use std::collections::BTreeMap;

use bakeoff_artifact::{Artifact, DamageExtra, DamagePhase};
use bakeoff_stats::SplitMix64;
use bakeoff_stats::kl::{BOOTSTRAP_RESAMPLES, summarize};
use bakeoff_stats::mcnemar_exact_p_value;
use serde::Serialize;

use crate::damage::SUITE;
use crate::read::{self, noted};

/// Seed of the paired bootstrap: fixed, so a comparison replays exactly.
const SEED: u64 = 0x6461_6d61_6765_6370;

#[derive(Debug, Clone, Serialize)]
pub struct DamageComparison {
    /// Prompts measured along the reply in both runs.
    pub pairs: u64,
    /// Mean over prompts of B's per-prompt mean KL minus A's, in nats, and its interval.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kl_difference: Option<[f64; 3]>,
    /// Prompts whose reply was identical to the reference's in A only, and in B only.
    pub identical_only_a: u64,
    pub identical_only_b: u64,
    pub agreement_p_value: f64,
    /// Which build sits closer to the reference, or why no side is named.
    pub verdict: String,
    pub has_verdict: bool,
}

/// One prompt's candidate along the reply: identical to the reference's, its mean per-token KL.
type PromptFigures = (bool, Option<f64>);

/// One run's candidate items along the reply, by prompt.
fn per_prompt(a: &Artifact) -> BTreeMap<String, PromptFigures> {
    let mut out = BTreeMap::new();
    let Some(s) = a.suites.get(SUITE) else {
        return out;
    };
    for it in &s.items {
        // An item whose `extra` does not read is a notice of the comparison.
        let Some(DamageExtra::Along(x)) = noted(read::damage_item(SUITE, it)) else {
            continue;
        };
        if x.phase != DamagePhase::AlongCandidate || x.prompt.is_empty() {
            continue;
        }
        let kls: Vec<f64> = x.kl.iter().flatten().flatten().copied().collect();
        let mean = (!kls.is_empty()).then(|| kls.iter().sum::<f64>() / kls.len() as f64);
        out.insert(x.prompt, (x.identical, mean));
    }
    out
}

fn reference_of(a: &Artifact) -> Option<(String, String)> {
    let d = a.suites.get(SUITE)?.summary.damage.as_ref()?;
    Some((d.reference.url.clone(), d.reference.model.clone()))
}

/// The mean of the per-prompt differences and its percentile-bootstrap 95 % interval (the
/// estimator of every KL interval, `bakeoff_stats::kl::summarize`), seeded with [`SEED`].
fn bootstrap_mean(d: &[f64]) -> Option<[f64; 3]> {
    let mut rng = SplitMix64::new(SEED);
    let s = summarize(d, BOOTSTRAP_RESAMPLES, &mut |n| {
        rng.below(n as u64) as usize
    })
    .ok()?;
    Some([s.mean, s.low, s.high])
}

/// The comparison, when both runs measured damage along the reply.
pub fn compare(a: &Artifact, b: &Artifact) -> Option<DamageComparison> {
    let pa = per_prompt(a);
    let pb = per_prompt(b);
    if pa.is_empty() || pb.is_empty() {
        return None;
    }
    let pairs: Vec<(&PromptFigures, &PromptFigures)> = pa
        .iter()
        .filter_map(|(k, x)| pb.get(k).map(|y| (x, y)))
        .collect();
    let only_a = pairs.iter().filter(|(x, y)| x.0 && !y.0).count() as u64;
    let only_b = pairs.iter().filter(|(x, y)| !x.0 && y.0).count() as u64;
    let diffs: Vec<f64> = pairs
        .iter()
        .filter_map(|(x, y)| Some(y.1? - x.1?))
        .collect();
    let kl_difference = bootstrap_mean(&diffs);
    let p = mcnemar_exact_p_value(only_a, only_b);
    let same_reference = reference_of(a) == reference_of(b);
    let (verdict, has_verdict) = if !same_reference {
        (
            "no verdict: the runs were measured against different references".to_string(),
            false,
        )
    } else if pairs.is_empty() {
        (
            "no verdict: no prompt was measured in both runs".to_string(),
            false,
        )
    } else {
        match kl_difference {
            Some([m, lo, _]) if lo > 0.0 => (
                format!("A sits closer to the reference: per-token KL B − A = {m:+.3e} nats, interval above 0"),
                true,
            ),
            Some([m, _, hi]) if hi < 0.0 => (
                format!("B sits closer to the reference: per-token KL B − A = {m:+.3e} nats, interval below 0"),
                true,
            ),
            _ if p < 0.05 => (
                format!(
                    "{} reproduces the reference's reply more often (identical in A only {only_a}, in B only {only_b}; exact McNemar p = {p:.3})",
                    if only_a > only_b { "A" } else { "B" }
                ),
                true,
            ),
            _ => (
                "the difference is not detectable: the per-token KL interval spans 0 and the agreement counts do not differ".to_string(),
                true,
            ),
        }
    };
    Some(DamageComparison {
        pairs: pairs.len() as u64,
        kl_difference,
        identical_only_a: only_a,
        identical_only_b: only_b,
        agreement_p_value: p,
        verdict,
        has_verdict,
    })
}

//! The instrument's noise: the self-check of a reference (the same text sent to it twice must
//! give KL ≈ 0) and the one rule that says whether a KL figure stands beyond that noise. `eval
//! damage` withholds its figure when the self-check fails; `eval adapter` calls
//! [`within_noise`] for "identical within noise". The thresholds are argued in
//! docs/statistics.md ("The self-check").

use bakeoff_artifact::DamageSelfCheck;
use bakeoff_stats::KlSummary;
use bakeoff_stats::SplitMix64;
use bakeoff_stats::kl::{BOOTSTRAP_RESAMPLES, summarize};

/// The self-check passes when the bootstrap upper bound of the reference's mean KL against
/// itself is at most this many nats. A deterministic server gives exactly 0 (llama.cpp on CPU,
/// measured); the smallest damage the seed cares about is 0.09 nats, ninety times above it;
/// anything larger on the SAME text means the reference answers one prompt with different
/// distributions (replicas that differ behind one address, a stateful cache path), and its
/// own variation would be read as the candidate's damage.
pub const SELF_CHECK_LIMIT_NATS: f64 = 1e-3;

/// The estimator's own resolution: probabilities come from float32 logprobs, so a tail bucket
/// is known to ~1e-6 ([`bakeoff_stats::kl::MASS_FLOOR`]); a KL below this is rounding.
pub const RESOLUTION_NATS: f64 = 1e-6;

/// Seed of the bootstrap's index draws: fixed, so an artifact's intervals replay exactly.
pub const BOOTSTRAP_SEED: u64 = 0x6b6c_2d62_6f6f_7473;

/// Mean, median and bootstrap 95 % interval of per-prompt KL figures (seeded with
/// [`BOOTSTRAP_SEED`]); `None` when there is none.
pub fn summarize_kl(values: &[f64]) -> Option<KlSummary> {
    let mut rng = SplitMix64::new(BOOTSTRAP_SEED);
    summarize(values, BOOTSTRAP_RESAMPLES, &mut |n| {
        rng.below(n as u64) as usize
    })
    .ok()
}

/// The self-check from the reference's KL against itself per prompt and the prompts whose
/// two runs disagreed on the top-1 token; `None` when no prompt was measured twice.
pub fn self_check(self_kls: &[f64], top1_differs: u64) -> Option<DamageSelfCheck> {
    let kl = summarize_kl(self_kls)?;
    let passed = kl.high <= SELF_CHECK_LIMIT_NATS;
    Some(DamageSelfCheck {
        kl,
        top1_differs,
        limit_nats: SELF_CHECK_LIMIT_NATS,
        passed,
    })
}

/// The smallest KL that stands beyond the instrument's noise: the self-check's upper bound,
/// or the estimator's resolution when that is smaller.
pub fn noise_floor(self_check: &KlSummary) -> f64 {
    self_check.high.max(RESOLUTION_NATS)
}

/// A candidate's KL is beyond noise when the lower bound of its mean exceeds the noise floor.
pub fn beyond_noise(self_check: &KlSummary, candidate: &KlSummary) -> bool {
    candidate.low > noise_floor(self_check)
}

/// [`beyond_noise`]'s negation: the candidate cannot be told apart from the reference.
pub fn within_noise(self_check: &KlSummary, candidate: &KlSummary) -> bool {
    !beyond_noise(self_check, candidate)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_deterministic_reference_passes_and_sets_the_floor_at_the_resolution() {
        let c = self_check(&[0.0; 30], 0).unwrap();
        assert!(c.passed);
        assert_eq!(noise_floor(&c.kl), RESOLUTION_NATS);
        let damaged = summarize_kl(&[0.05; 30]).unwrap();
        assert!(beyond_noise(&c.kl, &damaged));
        let same = summarize_kl(&[0.0; 30]).unwrap();
        assert!(within_noise(&c.kl, &same));
    }

    #[test]
    fn a_reference_that_disagrees_with_itself_fails() {
        // Half the prompts routed to a replica that differs by 0.1 nats.
        let v: Vec<f64> = (0..30)
            .map(|i| if i % 2 == 0 { 0.0 } else { 0.1 })
            .collect();
        let c = self_check(&v, 4).unwrap();
        assert!(!c.passed);
        assert!(c.kl.high > SELF_CHECK_LIMIT_NATS);
        assert!(self_check(&[], 0).is_none());
    }

    #[test]
    fn one_differing_prompt_of_forty_is_not_beyond_a_zero_floor_by_its_mean_alone() {
        // The bootstrap lower bound of a mean carried by one prompt touches 0: "beyond noise"
        // needs the difference to be more than one prompt's accident.
        let quiet = summarize_kl(&[0.0; 40]).unwrap();
        let mut v = vec![0.0; 40];
        v[7] = 0.3;
        let one = summarize_kl(&v).unwrap();
        assert_eq!(one.low, 0.0);
        assert!(within_noise(&quiet, &one));
    }
}

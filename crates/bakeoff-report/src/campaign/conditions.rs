//! The last line of `campaign run` and `campaign status`: the conditions every variant was
//! measured under, clean or which variant was contaminated by what (docs/metrics.md,
//! "Conditions"), as `bench run` and `eval run` end theirs.

use bakeoff_artifact::campaign::CampaignRecord;

/// `conditions: clean (N variant(s) sampled)`, `conditions: CONTAMINATED — v1: host-contended
/// during smoke; …`, or `conditions: not recorded` when no variant carries them.
pub fn conditions_line(rec: &CampaignRecord) -> String {
    let sampled: Vec<_> = rec
        .variants
        .iter()
        .filter_map(|v| v.conditions.as_ref().map(|c| (v, c)))
        .collect();
    if sampled.is_empty() {
        return "conditions: not recorded".to_owned();
    }
    let bad: Vec<String> = sampled
        .iter()
        .filter_map(|(v, c)| c.contamination().map(|w| format!("{}: {w}", v.variant)))
        .collect();
    if bad.is_empty() {
        format!("conditions: clean ({} variant(s) sampled)", sampled.len())
    } else {
        format!("conditions: CONTAMINATED — {}", bad.join("; "))
    }
}

//! Paired comparison of two artifacts (`bakeoff eval compare A B`): items paired on
//! (suite, item id), exact McNemar per family, changes as item counts, the smallest
//! difference detectable at that n — and no verdict, with the reason, when the runs are not
//! comparable (different item sets or n, different chat-template hashes, different thinking
//! modes) unless the operator allows that difference.

use std::collections::BTreeMap;

use bakeoff_artifact::{Artifact, ItemRecord};
use bakeoff_stats::{
    MinDetectableDifference, PairedComparison, format_effect, min_detectable_difference,
};
use serde::Serialize;

/// A difference between the runs that blocks a verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Confound {
    /// The runs measured different items (ids, or the same id with a different expectation).
    ItemSet,
    /// The runs measured different numbers of items.
    N,
    /// Different chat-template hashes.
    Template,
    /// Different `--thinking` modes.
    Thinking,
}

impl Confound {
    pub fn parse(s: &str) -> Result<Self, String> {
        match s.trim() {
            "item-set" | "items" => Ok(Self::ItemSet),
            "n" | "n-confound" => Ok(Self::N),
            "template" | "chat-template" => Ok(Self::Template),
            "thinking" => Ok(Self::Thinking),
            o => Err(format!(
                "--allow {o:?} is not a difference; use item-set, n, template or thinking"
            )),
        }
    }
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ItemSet => "item-set",
            Self::N => "n",
            Self::Template => "template",
            Self::Thinking => "thinking",
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct ConfoundFound {
    pub confound: Confound,
    pub detail: String,
    pub allowed: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct FamilyComparison {
    pub suite: String,
    pub family: String,
    /// Items scored in both runs.
    pub pairs: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub paired: Option<PairedComparison>,
    /// Items B lost relative to A ("−5 items") and gained ("+4 items").
    pub lost: String,
    pub gained: String,
    /// Net B − A, in items and points.
    pub net: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_detectable: Option<MinDetectableDifference>,
    /// The verdict, or why there is none.
    pub verdict: String,
    pub has_verdict: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    pub a: String,
    pub b: String,
    pub confounds: Vec<ConfoundFound>,
    /// Why no verdict is given, when none is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub no_verdict_reason: Option<String>,
    pub families: Vec<FamilyComparison>,
    /// Items present in only one run, per side.
    pub only_in_a: u64,
    pub only_in_b: u64,
    /// Paired items left out because a run did not score them (request failures, skipped).
    pub unscored_pairs: u64,
}

fn family_of(suite: &str, it: &ItemRecord) -> String {
    it.extra
        .get("family")
        .and_then(|f| f.as_str())
        .map(str::to_string)
        .unwrap_or_else(|| suite.to_string())
}

type Key = (String, String);

fn index(a: &Artifact) -> BTreeMap<Key, &ItemRecord> {
    let mut m = BTreeMap::new();
    for (suite, s) in &a.suites {
        for it in &s.items {
            m.insert((suite.clone(), it.id.clone()), it);
        }
    }
    m
}

fn template_hash(a: &Artifact) -> Option<String> {
    a.endpoint
        .facts
        .as_ref()?
        .chat_template
        .as_ref()
        .map(|t| t.fingerprint.sha256.clone())
}

/// The thinking mode a run used: `run.thinking`, else `default` (runs before the flag).
pub fn thinking_of(a: &Artifact) -> String {
    a.run
        .get("thinking")
        .and_then(|v| v.as_str())
        .unwrap_or("default")
        .to_string()
}

pub fn compare(
    a: &Artifact,
    b: &Artifact,
    allow: &[Confound],
    a_name: &str,
    b_name: &str,
) -> Comparison {
    let ia = index(a);
    let ib = index(b);
    let only_in_a = ia.keys().filter(|k| !ib.contains_key(*k)).count() as u64;
    let only_in_b = ib.keys().filter(|k| !ia.contains_key(*k)).count() as u64;
    let changed_expectation = ia
        .iter()
        .filter(|(k, x)| ib.get(*k).is_some_and(|y| y.expected != x.expected))
        .count();
    let mut confounds = Vec::new();
    let mut push = |c: Confound, detail: String| {
        confounds.push(ConfoundFound {
            confound: c,
            detail,
            allowed: allow.contains(&c),
        })
    };
    if only_in_a + only_in_b > 0 || changed_expectation > 0 {
        push(
            Confound::ItemSet,
            format!(
                "item sets differ: {only_in_a} item(s) only in A, {only_in_b} only in B, {changed_expectation} with a different expected answer"
            ),
        );
    }
    if ia.len() != ib.len() {
        push(
            Confound::N,
            format!("n-confound: A has {} items, B has {}", ia.len(), ib.len()),
        );
    }
    let (ta, tb) = (template_hash(a), template_hash(b));
    if ta != tb {
        let short = |t: &Option<String>| {
            t.as_deref()
                .map(|s| s[..16.min(s.len())].to_string())
                .unwrap_or_else(|| "unknown".into())
        };
        push(
            Confound::Template,
            format!(
                "chat-template hashes differ: A {} vs B {}",
                short(&ta),
                short(&tb)
            ),
        );
    }
    let (tha, thb) = (thinking_of(a), thinking_of(b));
    if tha != thb {
        push(
            Confound::Thinking,
            format!("thinking modes differ: A {tha} vs B {thb}"),
        );
    }
    let blocking: Vec<&ConfoundFound> = confounds.iter().filter(|c| !c.allowed).collect();
    let no_verdict_reason = (!blocking.is_empty()).then(|| {
        format!(
            "no verdict: {} (pass --allow {} to compare anyway)",
            blocking
                .iter()
                .map(|c| c.detail.as_str())
                .collect::<Vec<_>>()
                .join("; "),
            blocking
                .iter()
                .map(|c| c.confound.as_str())
                .collect::<Vec<_>>()
                .join(",")
        )
    });

    let mut groups: BTreeMap<(String, String), Vec<(bool, bool)>> = BTreeMap::new();
    let mut unscored_pairs = 0u64;
    for (k, x) in &ia {
        let Some(y) = ib.get(k) else { continue };
        if !(x.outcome.is_scored() && y.outcome.is_scored()) {
            unscored_pairs += 1;
            continue;
        }
        let fam = family_of(&k.0, x);
        groups.entry((k.0.clone(), fam)).or_default().push((
            x.outcome == bakeoff_artifact::Outcome::Ok,
            y.outcome == bakeoff_artifact::Outcome::Ok,
        ));
    }
    let families = groups
        .into_iter()
        .map(|((suite, family), pairs)| {
            family_comparison(suite, family, &pairs, no_verdict_reason.is_none())
        })
        .collect();
    Comparison {
        a: a_name.to_string(),
        b: b_name.to_string(),
        confounds,
        no_verdict_reason,
        families,
        only_in_a,
        only_in_b,
        unscored_pairs,
    }
}

fn family_comparison(
    suite: String,
    family: String,
    pairs: &[(bool, bool)],
    verdict_allowed: bool,
) -> FamilyComparison {
    let n = pairs.len() as u64;
    let paired = PairedComparison::from_pairs(pairs.iter().copied()).ok();
    let mdd = min_detectable_difference(n.max(1), 0.05, 0.8)
        .ok()
        .filter(|_| n > 0);
    let (lost, gained, net) = match &paired {
        Some(p) => (
            format_effect(-(p.only_a as i64), n),
            format_effect(p.only_b as i64, n),
            format_effect(p.delta_items, n),
        ),
        None => (
            "0 items (no data)".into(),
            "0 items (no data)".into(),
            "0 items (no data)".into(),
        ),
    };
    let (verdict, has_verdict) = match (&paired, verdict_allowed) {
        (_, false) => (
            "no verdict: the runs are not comparable (see confounds)".to_string(),
            false,
        ),
        (None, true) => (
            "no verdict: no item was scored in both runs".to_string(),
            false,
        ),
        (Some(p), true) => {
            let detect = match mdd.as_ref().and_then(|m| m.difference.zip(m.items)) {
                Some((d, items)) => format!(
                    "smallest detectable difference at n={n}: {items} items ({:.1} pts)",
                    100.0 * d
                ),
                None => format!("no difference is detectable at n={n}"),
            };
            if p.p_value < 0.05 {
                let who = if p.delta_items > 0 { "B" } else { "A" };
                (
                    format!(
                        "{who} ahead: {} (exact McNemar p = {:.3}); {detect}",
                        format_effect(p.delta_items, n),
                        p.p_value
                    ),
                    true,
                )
            } else {
                (
                    format!(
                        "no detectable difference (exact McNemar p = {:.3}); {detect}",
                        p.p_value
                    ),
                    true,
                )
            }
        }
    };
    FamilyComparison {
        suite,
        family,
        pairs: n,
        paired,
        lost,
        gained,
        net,
        min_detectable: mdd,
        verdict,
        has_verdict,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn mcnemar_known_values() {
        // R: binom.test(1, 8, 0.5)$p.value = 0.0703125; binom.test(0, 6, .5) = 0.03125.
        assert!((bakeoff_stats::mcnemar_exact_p_value(1, 7) - 0.070_312_5).abs() < 1e-12);
        assert!((bakeoff_stats::mcnemar_exact_p_value(6, 0) - 0.031_25).abs() < 1e-12);
        assert_eq!(bakeoff_stats::mcnemar_exact_p_value(0, 0), 1.0);
    }

    #[test]
    fn family_effects_are_in_items() {
        let mut pairs = vec![(true, true); 20];
        pairs.extend(vec![(true, false); 5]);
        pairs.extend(vec![(false, true); 4]);
        pairs.extend(vec![(false, false); 3]);
        let f = family_comparison("intelligence".into(), "arith".into(), &pairs, true);
        assert_eq!(f.lost, "\u{2212}5 items (\u{2212}15.6 pts)");
        assert_eq!(f.gained, "+4 items (+12.5 pts)");
        assert!(
            f.has_verdict && f.verdict.starts_with("no detectable difference"),
            "{}",
            f.verdict
        );
        assert!(
            f.verdict.contains("smallest detectable difference at n=32"),
            "{}",
            f.verdict
        );
        let f = family_comparison("s".into(), "f".into(), &pairs, false);
        assert!(!f.has_verdict);
    }

    #[test]
    fn allow_names() {
        assert_eq!(Confound::parse("thinking"), Ok(Confound::Thinking));
        assert!(Confound::parse("vibes").is_err());
    }
}

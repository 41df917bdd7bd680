//! Instrument statistics shared by the scored suites (tool, session, intelligence) and their
//! reports: per family the proportion with its Wilson 95 % interval, the chance floor, and the
//! instrument check (docs/statistics.md).
//!
//! - point estimate below chance → `suspect-instrument` (warning), listing the extraction
//!   failures, since a below-chance score indicts the instrument before the model;
//! - Wilson upper bound below chance → `instrument-failure` (invalid): the family is not
//!   scored, and the suite score leaves it out.
//!
//! Effects are always given in items as well as percent (`bakeoff_stats::format_effect`).
//!
//! Thinking artifacts (`truncated-in-reasoning`, `empty-content-reasoning-only`) are failures
//! of the item but not wrong answers: they are counted apart per family, named in the
//! instrument flags, and when they are common the suite gets a `thinking-artifacts` flag, so a
//! reasoning model's empty `content` is never read as a weak model (the misreading of
//! docs/field-cases.md B3).

use bakeoff_artifact::{
    FlagCode, FlagSeverity, InstrumentFlag, Outcome, ScoredDetails, SuiteSummary,
};
use bakeoff_stats::{Proportion, check_instrument, format_effect};

use crate::summary;

/// One item as the statistics see it.
#[derive(Debug, Clone, PartialEq)]
pub struct Tally {
    pub id: String,
    pub family: String,
    pub outcome: Outcome,
    /// Probability that a uniform guess passes this item (accepted options / options; 0 for
    /// open answers).
    pub chance: f64,
    /// The answer could not be extracted from the content (no letter, no number, …).
    pub extraction_failed: bool,
}

/// A family's figures, as stored in a suite summary's `details.families` (bakeoff-artifact's
/// row, which reads them back).
pub type FamilyStats = bakeoff_artifact::FamilyRow;

/// Is this outcome a thinking artifact (the reply never left the reasoning)?
pub fn is_thinking_artifact(o: Outcome) -> bool {
    matches!(
        o,
        Outcome::TruncatedInReasoning | Outcome::EmptyContentReasoningOnly
    )
}

/// A suite gets the `thinking-artifacts` flag when at least this share of its scored items
/// ended inside the reasoning.
pub const THINKING_ARTIFACT_SHARE: f64 = 0.25;

/// Figures per family in first-seen order, and the flags they raise for `suite`.
pub fn families(suite: &str, tallies: &[Tally]) -> (Vec<FamilyStats>, Vec<InstrumentFlag>) {
    let mut order: Vec<&str> = Vec::new();
    for t in tallies {
        if !order.contains(&t.family.as_str()) {
            order.push(&t.family);
        }
    }
    let mut out = Vec::new();
    let mut flags = Vec::new();
    for fam in order {
        let all: Vec<&Tally> = tallies.iter().filter(|t| t.family == fam).collect();
        let scored: Vec<&&Tally> = all.iter().filter(|t| t.outcome.is_scored()).collect();
        let n = scored.len() as u64;
        let passed = scored.iter().filter(|t| t.outcome == Outcome::Ok).count() as u64;
        let chance = if n == 0 {
            0.0
        } else {
            scored.iter().map(|t| t.chance).sum::<f64>() / n as f64
        };
        let extraction_failures: Vec<String> = all
            .iter()
            .filter(|t| t.extraction_failed)
            .map(|t| t.id.clone())
            .collect();
        let thinking_artifacts = scored
            .iter()
            .filter(|t| is_thinking_artifact(t.outcome))
            .count() as u64;
        let expected_by_chance = (chance * n as f64).round() as i64;
        let mut fs = FamilyStats {
            family: fam.to_string(),
            items: all.len() as u64,
            scored_items: n,
            passed,
            score: summary::score(passed, n),
            chance_floor: chance,
            versus_chance: format_effect(passed as i64 - expected_by_chance, n),
            flag: None,
            reason: String::new(),
            counted: n > 0,
            extraction_failures,
            thinking_artifacts,
        };
        if let Ok(p) = Proportion::wilson(passed, n) {
            let check = check_instrument(&p, chance);
            fs.reason = check.reason.clone();
            if let Some(f) = check.flag {
                let code = match f {
                    bakeoff_stats::InstrumentFlag::SuspectInstrument => FlagCode::SuspectInstrument,
                    bakeoff_stats::InstrumentFlag::InstrumentFailure => FlagCode::InstrumentFailure,
                };
                fs.flag = Some(code);
                fs.counted = check.is_scored();
                let listed = list_ids(&fs.extraction_failures);
                flags.push(InstrumentFlag {
                    code,
                    severity: if check.is_scored() {
                        FlagSeverity::Warning
                    } else {
                        FlagSeverity::Invalid
                    },
                    message: format!(
                        "{suite}/{fam}: {}; {} extraction failure(s){listed}; {}",
                        check.reason,
                        fs.extraction_failures.len(),
                        thinking_note(thinking_artifacts, n)
                    ),
                    suite: Some(suite.to_string()),
                    count: Some(fs.extraction_failures.len() as u64),
                });
            }
        }
        out.push(fs);
    }
    (out, flags)
}

fn thinking_note(artifacts: u64, n: u64) -> String {
    if artifacts == 0 {
        "0 thinking artifact(s)".into()
    } else {
        format!(
            "{artifacts} of {n} scored item(s) ended inside the reasoning (thinking artifacts, not \
             wrong answers: raise the output budget with --thinking on, or run --thinking off)"
        )
    }
}

/// The suite-level flag when many scored items never left the reasoning.
pub fn thinking_artifacts_flag(suite: &str, tallies: &[Tally]) -> Option<InstrumentFlag> {
    let scored: Vec<&Tally> = tallies.iter().filter(|t| t.outcome.is_scored()).collect();
    let hit: Vec<String> = scored
        .iter()
        .filter(|t| is_thinking_artifact(t.outcome))
        .map(|t| t.id.clone())
        .collect();
    let cut = scored
        .iter()
        .filter(|t| t.outcome == Outcome::TruncatedInReasoning)
        .count();
    if hit.is_empty() || (hit.len() as f64) < THINKING_ARTIFACT_SHARE * scored.len() as f64 {
        return None;
    }
    Some(InstrumentFlag {
        code: FlagCode::ThinkingArtifacts,
        severity: FlagSeverity::Warning,
        message: format!(
            "{suite}: {} of {} scored item(s) ended inside the reasoning ({cut} cut off by max_tokens \
             while reasoning, {} with reasoning and empty content){}: the score understates the model; \
             rerun with --thinking on (larger output budget) or --thinking off",
            hit.len(),
            scored.len(),
            hit.len() - cut,
            list_ids(&hit)
        ),
        suite: Some(suite.to_string()),
        count: Some(hit.len() as u64),
    })
}

fn list_ids(ids: &[String]) -> String {
    if ids.is_empty() {
        return String::new();
    }
    const SHOWN: usize = 12;
    let head = ids
        .iter()
        .take(SHOWN)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if ids.len() > SHOWN {
        format!(": {head}, … ({} more)", ids.len() - SHOWN)
    } else {
        format!(": {head}")
    }
}

/// Put the family figures into a suite summary — flags added, the suite score recomputed
/// without the families that failed the instrument check — and return the details they give:
/// `families` and `families_not_scored` set; the suite adds the rest and writes them.
pub fn apply(suite: &str, summary: &mut SuiteSummary, tallies: &[Tally]) -> ScoredDetails {
    let (fams, flags) = families(suite, tallies);
    let excluded: Vec<String> = fams
        .iter()
        .filter(|f| !f.counted)
        .map(|f| f.family.clone())
        .collect();
    let counted = |t: &Tally| !excluded.contains(&t.family);
    let scored = tallies
        .iter()
        .filter(|t| counted(t) && t.outcome.is_scored())
        .count() as u64;
    let passed = tallies
        .iter()
        .filter(|t| counted(t) && t.outcome == Outcome::Ok)
        .count() as u64;
    summary.scored = scored;
    summary.passed = passed;
    summary.score = summary::score(passed, scored);
    summary.flags.extend(flags);
    summary
        .flags
        .extend(thinking_artifacts_flag(suite, tallies));
    ScoredDetails {
        families: fams,
        families_not_scored: excluded,
        ..ScoredDetails::default()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn t(id: usize, fam: &str, ok: bool, chance: f64, failed_extract: bool) -> Tally {
        Tally {
            id: format!("{fam}-{id}"),
            family: fam.into(),
            outcome: if ok { Outcome::Ok } else { Outcome::Wrong },
            chance,
            extraction_failed: failed_extract,
        }
    }

    #[test]
    fn seeds_case_four_of_thirty_two_on_five_options_is_suspect() {
        // 4/32 on a five-option task: 12.5 % < 20 %, Wilson [5.0 %, 28.1 %] reaches chance.
        let tallies: Vec<Tally> = (0..32).map(|i| t(i, "mc", i < 4, 0.2, i >= 30)).collect();
        let (fams, flags) = families("intelligence", &tallies);
        assert_eq!(fams[0].flag, Some(FlagCode::SuspectInstrument));
        assert!(fams[0].counted);
        assert_eq!(fams[0].versus_chance, "\u{2212}2 items (\u{2212}6.2 pts)");
        let s = fams[0].score.as_ref().unwrap();
        assert!((s.low - 0.049_70).abs() < 1e-4 && (s.high - 0.280_68).abs() < 1e-4);
        assert_eq!(flags.len(), 1);
        assert_eq!(flags[0].severity, FlagSeverity::Warning);
        assert!(flags[0].message.contains("mc-30, mc-31"));
    }

    use bakeoff_artifact::ItemRecord;

    #[test]
    fn zero_of_forty_on_four_options_fails_and_is_not_scored() {
        let mut tallies: Vec<Tally> = (0..40).map(|i| t(i, "mc", false, 0.25, true)).collect();
        tallies.extend((0..10).map(|i| t(i, "open", i < 5, 0.0, false)));
        let (fams, flags) = families("intelligence", &tallies);
        assert_eq!(fams[0].flag, Some(FlagCode::InstrumentFailure));
        assert!(!fams[0].counted);
        assert_eq!(fams[1].flag, None);
        assert_eq!(flags[0].severity, FlagSeverity::Invalid);
        assert!(flags[0].message.contains("(28 more)"));

        let items: Vec<ItemRecord> = Vec::new();
        let mut sum = summary::summarize(50, &items);
        let details = apply("intelligence", &mut sum, &tallies);
        // Only the open family counts: 5/10.
        assert_eq!((sum.passed, sum.scored), (5, 10));
        assert_eq!(details.families_not_scored, ["mc"]);
    }

    #[test]
    fn open_answers_never_fall_below_a_zero_floor() {
        let tallies: Vec<Tally> = (0..16).map(|i| t(i, "arith", false, 0.0, false)).collect();
        let (fams, flags) = families("intelligence", &tallies);
        assert_eq!(fams[0].flag, None);
        assert!(flags.is_empty());
        assert_eq!(fams[0].versus_chance, "0 items (0.0 pts)");
    }

    #[test]
    fn a_reasoning_model_out_of_budget_is_named_not_read_as_a_weak_model() {
        // 30 items cut off while reasoning, 2 empty-content-reasoning-only, on four options.
        let tallies: Vec<Tally> = (0..32)
            .map(|i| Tally {
                id: format!("mc-{i}"),
                family: "mc".into(),
                outcome: if i < 30 {
                    Outcome::TruncatedInReasoning
                } else {
                    Outcome::EmptyContentReasoningOnly
                },
                chance: 0.25,
                extraction_failed: false,
            })
            .collect();
        let (fams, flags) = families("intelligence", &tallies);
        assert_eq!(fams[0].thinking_artifacts, 32);
        assert_eq!(fams[0].flag, Some(FlagCode::InstrumentFailure));
        assert!(
            flags[0]
                .message
                .contains("32 of 32 scored item(s) ended inside the reasoning"),
            "{}",
            flags[0].message
        );
        let f = thinking_artifacts_flag("intelligence", &tallies).unwrap();
        assert_eq!(f.code, FlagCode::ThinkingArtifacts);
        assert_eq!(f.count, Some(32));
        assert!(
            f.message.contains("30 cut off by max_tokens"),
            "{}",
            f.message
        );
        let mut sum = summary::summarize(32, &[]);
        apply("intelligence", &mut sum, &tallies);
        assert!(
            sum.flags
                .iter()
                .any(|f| f.code == FlagCode::ThinkingArtifacts)
        );
        // One artifact in 32 is not "many".
        let mut few: Vec<Tally> = (0..31).map(|i| t(i, "mc", i < 20, 0.25, false)).collect();
        few.push(Tally {
            outcome: Outcome::TruncatedInReasoning,
            ..t(31, "mc", false, 0.25, false)
        });
        assert!(thinking_artifacts_flag("intelligence", &few).is_none());
        assert_eq!(families("intelligence", &few).0[0].thinking_artifacts, 1);
    }
}

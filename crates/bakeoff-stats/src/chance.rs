//! Chance floors and the instrument check that runs before any family is scored.
//!
//! A model answering a k-option question at random scores 1/k. A score *below* that is more
//! often a broken instrument (answer extraction, template, letter mapping) than a bad model,
//! so we say so instead of reporting a low score as a model property.

use std::num::NonZeroU32;

use serde::{Deserialize, Serialize};

use crate::Proportion;

/// Score expected from uniform guessing: `1/k` for `k` options, `0` for open answers (`None`),
/// where a guess essentially never matches.
pub fn chance_floor(options: Option<NonZeroU32>) -> f64 {
    options.map_or(0.0, |k| 1.0 / f64::from(k.get()))
}

/// What the instrument check concluded, when it concluded something is wrong.
#[derive(Serialize, Deserialize, schemars::JsonSchema, Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[serde(rename_all = "kebab-case")]
pub enum InstrumentFlag {
    /// Point estimate below chance, but the interval still reaches it: look at extraction
    /// failures before believing the number. The family is still scored.
    SuspectInstrument,
    /// Even the Wilson upper bound is below chance: the harness, not the model, is failing.
    /// The family must not be scored.
    InstrumentFailure,
}

/// Outcome of comparing a proportion with its chance floor.
#[derive(Serialize, Deserialize, schemars::JsonSchema, Debug, Clone, PartialEq)]
pub struct InstrumentCheck {
    /// The floor the proportion was compared against.
    pub chance_floor: f64,
    /// `None` when the result is at or above chance.
    pub flag: Option<InstrumentFlag>,
    /// One human sentence with the numbers, for reports and logs.
    pub reason: String,
}

impl InstrumentCheck {
    /// Whether the family may be scored (everything except `instrument-failure`).
    pub fn is_scored(&self) -> bool {
        self.flag != Some(InstrumentFlag::InstrumentFailure)
    }
}

/// Compare `p` with `chance_floor`: upper bound below chance → `instrument-failure`; point
/// estimate below chance → `suspect-instrument`; otherwise no flag.
///
/// Why two levels: at 4/32 on a 5-option task (12.5 %, Wilson [5 %, 28 %]) the score is not
/// significantly below the 20 % chance rate, so failing the run would be overreach, but the
/// number deserves a look. Only an interval wholly below chance is evidence of a broken
/// harness.
pub fn check_instrument(p: &Proportion, chance_floor: f64) -> InstrumentCheck {
    let summary = format!(
        "{}/{} = {:.1}% (Wilson {:.0}% [{:.1}%, {:.1}%]) vs chance {:.1}%",
        p.successes,
        p.n,
        100.0 * p.estimate,
        100.0 * p.confidence,
        100.0 * p.wilson_low,
        100.0 * p.wilson_high,
        100.0 * chance_floor,
    );
    let (flag, verdict) = if p.wilson_high < chance_floor {
        (
            Some(InstrumentFlag::InstrumentFailure),
            "the whole interval is below chance: instrument failure, family not scored; \
             check extraction failures",
        )
    } else if p.estimate < chance_floor {
        (
            Some(InstrumentFlag::SuspectInstrument),
            "below chance but not significantly: suspect the instrument and check \
             extraction failures",
        )
    } else {
        (None, "at or above chance")
    };
    InstrumentCheck {
        chance_floor,
        flag,
        reason: format!("{summary}: {verdict}"),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn five() -> Option<NonZeroU32> {
        NonZeroU32::new(5)
    }

    #[test]
    fn floors() {
        assert_eq!(chance_floor(five()), 0.2);
        assert_eq!(chance_floor(NonZeroU32::new(4)), 0.25);
        assert_eq!(chance_floor(None), 0.0);
    }

    #[test]
    fn four_of_thirty_two_on_five_options_is_suspect_not_failed() {
        // Worked by hand (Wilson 1927): 4 of 32 is 12.5 %, Wilson [5 %, 28 %], against 20 % chance.
        let check = check_instrument(&Proportion::wilson(4, 32).unwrap(), chance_floor(five()));
        assert_eq!(check.flag, Some(InstrumentFlag::SuspectInstrument));
        assert!(check.is_scored());
        assert!(
            check
                .reason
                .starts_with("4/32 = 12.5% (Wilson 95% [5.0%, 28.1%]) vs chance 20.0%")
        );
    }

    #[test]
    fn interval_wholly_below_chance_fails_the_instrument() {
        // 0/32: Wilson upper bound z²/(n + z²) = 0.107 < 0.2.
        let check = check_instrument(&Proportion::wilson(0, 32).unwrap(), chance_floor(five()));
        assert_eq!(check.flag, Some(InstrumentFlag::InstrumentFailure));
        assert!(!check.is_scored());
    }

    #[test]
    fn at_chance_and_open_answers_are_clean() {
        let at = check_instrument(&Proportion::wilson(8, 40).unwrap(), chance_floor(five()));
        assert_eq!(at.flag, None);
        let open = check_instrument(&Proportion::wilson(0, 10).unwrap(), chance_floor(None));
        assert_eq!(open.flag, None);
    }

    #[test]
    fn flags_serialize_kebab_case() {
        let s = |f| serde_json::to_string(&f).unwrap();
        assert_eq!(
            s(InstrumentFlag::SuspectInstrument),
            r#""suspect-instrument""#
        );
        assert_eq!(
            s(InstrumentFlag::InstrumentFailure),
            r#""instrument-failure""#
        );
    }
}

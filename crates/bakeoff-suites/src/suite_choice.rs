//! The suites by name ([`SuiteName`]) and what `--suite` (and a campaign file's `suites`) may
//! name: one suite, or `all` of them. The
//! names are [`SuiteName::as_str`]'s, so the command line's value list (the `clap` feature's
//! `ValueEnum`) and the library's list reader cannot drift apart.

use crate::{refusal, structured};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum SuiteName {
    Smoke,
    Tool,
    Session,
    Intelligence,
    Context,
    Throughput,
    Longgen,
    Refusal,
    Structured,
}

/// Every suite this build has, in the order `--suite all` runs them.
pub const AVAILABLE: &[SuiteName] = &[
    SuiteName::Smoke,
    SuiteName::Tool,
    SuiteName::Session,
    SuiteName::Intelligence,
    SuiteName::Context,
    SuiteName::Throughput,
    SuiteName::Longgen,
    SuiteName::Refusal,
    SuiteName::Structured,
];

/// Suites planned but not in this build; asking for one is a usage error, never a silent skip.
const PLANNED: &[&str] = &[];

impl SuiteName {
    pub fn as_str(self) -> &'static str {
        match self {
            SuiteName::Smoke => "smoke",
            SuiteName::Tool => "tool",
            SuiteName::Session => "session",
            SuiteName::Intelligence => "intelligence",
            SuiteName::Context => "context",
            SuiteName::Throughput => "throughput",
            SuiteName::Longgen => "longgen",
            SuiteName::Refusal => refusal::SUITE,
            SuiteName::Structured => structured::SUITE,
        }
    }

    pub(crate) fn available_list() -> String {
        AVAILABLE
            .iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// A comma-separated list of [`SuiteChoice`] names (blank items skipped), expanded by
    /// [`SuiteChoice::expand`].
    pub fn parse_list(list: &str) -> Result<Vec<SuiteName>, SuiteListError> {
        let mut choices = Vec::new();
        for raw in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let Some(c) = SuiteChoice::named(raw) else {
                return Err(if PLANNED.contains(&raw) {
                    SuiteListError::Planned(raw.to_owned())
                } else {
                    SuiteListError::Unknown(raw.to_owned())
                });
            };
            choices.push(c);
        }
        SuiteChoice::expand(choices)
    }
}

/// A suite list that names no suite of this build; each message lists the available ones.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SuiteListError {
    #[error(
        "suite {0:?} is not in this build yet; available: {list}",
        list = SuiteName::available_list()
    )]
    Planned(String),
    #[error("unknown suite {0:?}; available: {list}", list = SuiteName::available_list())]
    Unknown(String),
    #[error("--suite is empty; available: {list}", list = SuiteName::available_list())]
    Empty,
}

/// One item of a suite list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SuiteChoice {
    One(SuiteName),
    /// Every suite of this build, in [`AVAILABLE`]'s order.
    All,
}

/// Every choice, in the order `--help` lists them: the suites, then `all`.
const CHOICES: [SuiteChoice; AVAILABLE.len() + 1] = {
    let mut out = [SuiteChoice::All; AVAILABLE.len() + 1];
    let mut i = 0;
    while i < AVAILABLE.len() {
        out[i] = SuiteChoice::One(AVAILABLE[i]);
        i += 1;
    }
    out
};

impl SuiteChoice {
    pub fn as_str(self) -> &'static str {
        match self {
            SuiteChoice::One(s) => s.as_str(),
            SuiteChoice::All => "all",
        }
    }

    /// The choice spelled `name` exactly, if any.
    pub fn named(name: &str) -> Option<Self> {
        CHOICES.iter().copied().find(|c| c.as_str() == name)
    }

    /// The suites a list of choices names: `all` expanded in [`AVAILABLE`]'s order, each suite
    /// once, in the order first named. An empty list is refused.
    pub fn expand(
        choices: impl IntoIterator<Item = SuiteChoice>,
    ) -> Result<Vec<SuiteName>, SuiteListError> {
        let mut out = Vec::new();
        for c in choices {
            let named: &[SuiteName] = match &c {
                SuiteChoice::One(s) => std::slice::from_ref(s),
                SuiteChoice::All => AVAILABLE,
            };
            for s in named {
                if !out.contains(s) {
                    out.push(*s);
                }
            }
        }
        if out.is_empty() {
            return Err(SuiteListError::Empty);
        }
        Ok(out)
    }
}

#[cfg(feature = "clap")]
mod value_enum {
    use clap::builder::PossibleValue;

    use super::{AVAILABLE, CHOICES, SuiteChoice, SuiteName};

    impl clap::ValueEnum for SuiteName {
        fn value_variants<'a>() -> &'a [Self] {
            AVAILABLE
        }

        fn to_possible_value(&self) -> Option<PossibleValue> {
            Some(PossibleValue::new(self.as_str()))
        }
    }

    impl clap::ValueEnum for SuiteChoice {
        fn value_variants<'a>() -> &'a [Self] {
            &CHOICES
        }

        fn to_possible_value(&self) -> Option<PossibleValue> {
            Some(PossibleValue::new(self.as_str()))
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn suite_lists() {
        assert_eq!(
            SuiteName::parse_list("smoke, smoke"),
            Ok(vec![SuiteName::Smoke])
        );
        assert_eq!(SuiteName::parse_list("all"), Ok(AVAILABLE.to_vec()));
        assert!(
            SuiteName::parse_list("nope")
                .unwrap_err()
                .to_string()
                .contains("unknown suite")
        );
        assert!(SuiteName::parse_list("").is_err());
    }

    #[test]
    fn suite_list_errors_name_the_suite_and_the_available_ones() {
        let all =
            "smoke, tool, session, intelligence, context, throughput, longgen, refusal, structured";
        assert_eq!(
            SuiteName::parse_list("smoke,nope").unwrap_err().to_string(),
            format!("unknown suite \"nope\"; available: {all}")
        );
        assert_eq!(
            SuiteName::parse_list(" , ").unwrap_err().to_string(),
            format!("--suite is empty; available: {all}")
        );
        assert_eq!(
            SuiteListError::Planned("later".into()).to_string(),
            format!("suite \"later\" is not in this build yet; available: {all}")
        );
    }

    #[test]
    fn every_choice_is_named_by_its_own_spelling() {
        assert_eq!(CHOICES.last(), Some(&SuiteChoice::All));
        for c in CHOICES {
            assert_eq!(SuiteChoice::named(c.as_str()), Some(c));
        }
        assert_eq!(SuiteChoice::named("nonsense"), None);
    }

    #[test]
    fn all_expands_once_in_order() {
        let got = SuiteChoice::expand([SuiteChoice::One(SuiteName::Tool), SuiteChoice::All]);
        let mut want = vec![SuiteName::Tool];
        want.extend(AVAILABLE.iter().filter(|s| **s != SuiteName::Tool));
        assert_eq!(got.unwrap(), want);
        assert!(SuiteChoice::expand(Vec::new()).is_err());
    }
}

//! `--allow WHAT…`, parsed once by clap into [`Allow`]; here each command's share of it. `eval
//! compare` can allow every difference; `bench run --versus`, `bench compare`, the campaign
//! commands and `report` only `contaminated` (a verdict resting on a step, suite or variant
//! measured under a condition flag, docs/metrics.md "Conditions").

use bakeoff_report::compare::Confound;

use crate::FlagError;
use crate::cli::{Allow, name_of};

/// `eval compare --allow`: the differences the comparison may give a verdict across (blank list
/// items skipped).
pub fn confounds(allow: &[Option<Allow>]) -> Vec<Confound> {
    allow.iter().flatten().map(|a| (*a).into()).collect()
}

/// `--allow` of a command that can allow only `contaminated`: whether it was given.
pub fn allow_contaminated(allow: &[Option<Allow>], command: &str) -> Result<bool, FlagError> {
    let mut yes = false;
    for a in allow.iter().flatten() {
        match a {
            Allow::Contaminated => yes = true,
            other => {
                return Err(FlagError::invalid(format!(
                    "--allow {} is not something {command} can allow; use contaminated",
                    name_of(other)
                )));
            }
        }
    }
    Ok(yes)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn only_contaminated_where_only_it_applies() {
        let given = [None, Some(Allow::Contaminated)];
        assert!(allow_contaminated(&given, "report").unwrap());
        assert!(!allow_contaminated(&[None], "report").unwrap());
        let e = allow_contaminated(&[Some(Allow::Template)], "bench compare").unwrap_err();
        assert_eq!(
            e.to_string(),
            "--allow template is not something bench compare can allow; use contaminated"
        );
    }

    #[test]
    fn every_difference_where_compare_takes_them() {
        let given = [Some(Allow::N), None, Some(Allow::ItemSet)];
        assert_eq!(confounds(&given), vec![Confound::N, Confound::ItemSet]);
    }
}

//! `bakeoff bench compare A B`: reads two bench artifacts and prints the level-by-level
//! comparison (logic in `bakeoff_load::compare`).

use bakeoff_artifact::{LoadReport, read_artifact};
use bakeoff_load::compare::compare;
use bakeoff_load::compare_text;

use crate::exit::{Error, Exit};
use bakeoff_flags::config::BenchCompareConfig;

/// The sweep `suite` of the artifact at `path`: a `bench run`'s `load.<suite>`, else the
/// load suite of that name in an `eval run`'s suites.
fn sweep_of(path: &std::path::Path, suite: &str) -> Result<LoadReport, Error> {
    let art = read_artifact(path).map_err(Error::from)?;
    if let Some(r) = art.load.get(suite) {
        return Ok(r.clone());
    }
    art.suites
        .get(suite)
        .and_then(|s| s.summary.details_as::<LoadReport>().ok())
        .ok_or_else(|| {
            Error::usage(format!(
                "{} holds no `{suite}` sweep: give two `bakeoff bench run` artifacts, or two \
                 `bakeoff eval run` artifacts that ran the {suite} suite",
                path.display()
            ))
        })
}

pub fn run(a: BenchCompareConfig) -> Result<Exit, Error> {
    let sweep = a.sweep.as_str();
    let (ra, rb) = (sweep_of(&a.a, sweep)?, sweep_of(&a.b, sweep)?);
    let cmp = compare(&ra, &rb, a.allow_contaminated);
    if a.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&cmp).map_err(Error::json)?
        );
    } else {
        print!("{}", compare_text::text(&cmp, &a.a, &a.b));
    }
    Ok(Exit::from_ok(cmp.not_comparable.is_empty()))
}

//! `bakeoff bench compare A B`: reads two bench artifacts and prints the level-by-level
//! comparison (logic in `bakeoff_load::compare`).

use bakeoff_load::compare::compare;
use bakeoff_load::compare_text;
use bakeoff_load::sweep_input::read_sweep;

use crate::exit::{Error, Exit};
use bakeoff_flags::config::BenchCompareConfig;

pub fn run(a: BenchCompareConfig) -> Result<Exit, Error> {
    let sweep = a.sweep.as_str();
    let (ra, rb) = (read_sweep(&a.a, sweep)?, read_sweep(&a.b, sweep)?);
    let cmp = compare(&ra, &rb, a.allow_contaminated);
    if a.json {
        stdoutln!(
            "{}",
            serde_json::to_string_pretty(&cmp).map_err(Error::json)?
        );
    } else {
        stdout!("{}", super::screen(&compare_text::text(&cmp, &a.a, &a.b)));
    }
    Ok(Exit::from_ok(cmp.not_comparable.is_empty()))
}

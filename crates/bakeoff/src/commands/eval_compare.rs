//! `bakeoff eval compare A B`: paired comparison of two artifacts (logic in
//! `bakeoff_report::compare`; this file reads, validates and prints).

use bakeoff_artifact::read_artifact;
use bakeoff_report::compare::{compare, render};

use crate::exit::{Error, Exit};
use bakeoff_flags::config::CompareConfig;

pub fn run(a: CompareConfig) -> Result<Exit, Error> {
    let read = |p: &std::path::Path| {
        read_artifact(p).map_err(|e| {
            // --json always prints JSON: the refusal too.
            json_refusal(a.json, &e.to_string());
            Error::from(e)
        })
    };
    let art_a = read(&a.a)?;
    let art_b = read(&a.b)?;
    // A failure artifact holds no measurement: naming one is the wrong input (exit 2, as
    // `bench compare` refuses a file without the sweep), not a comparison that failed.
    for (path, art) in [(&a.a, &art_a), (&a.b, &art_b)] {
        if let Some(why) = failure_input(path, art) {
            json_refusal(a.json, &why);
            return Err(Error::Flags(bakeoff_flags::FlagError::invalid(why)));
        }
    }
    let mut cmp = compare(
        &art_a,
        &art_b,
        &a.allow,
        &a.a.display().to_string(),
        &a.b.display().to_string(),
    );
    if cmp.families.is_empty() && cmp.damage.is_none() {
        let reason = format!(
            "{} and {} share no scored item: nothing to compare",
            a.a.display(),
            a.b.display()
        );
        if a.json {
            cmp.no_verdict_reason = Some(reason.clone());
            stdoutln!(
                "{}",
                serde_json::to_string_pretty(&cmp).map_err(Error::json)?
            );
        }
        return Err(Error::failed(reason));
    }
    if a.json {
        stdoutln!(
            "{}",
            serde_json::to_string_pretty(&cmp).map_err(Error::json)?
        );
    } else {
        stdoutln!("{}", super::screen(&render::text(&cmp)));
    }
    // A comparison without a verdict is still a finished comparison; the reason is printed.
    Ok(Exit::Ok)
}

/// Why `art` cannot be one side of a comparison: it is a failure artifact.
fn failure_input(path: &std::path::Path, art: &bakeoff_artifact::Artifact) -> Option<String> {
    (art.kind == bakeoff_artifact::ArtifactKind::Failure).then(|| {
        format!(
            "{} is a failure artifact: the endpoint was not measured, so it holds no scored item; \
             fix: compare two artifacts of runs that measured (<slug>.bakeoff.json)",
            path.display()
        )
    })
}

/// A refusal before any comparison exists, as JSON on stdout when `--json` was asked for.
fn json_refusal(json: bool, reason: &str) {
    if json {
        stdoutln!("{}", serde_json::json!({ "refused": reason }));
    }
}

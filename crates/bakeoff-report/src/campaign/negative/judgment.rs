//! The judgment of an entry: what was not attempted, the verdict (the operator's, else the
//! one the outcomes suggest) and the production impact.

use std::fmt::Write as _;
use std::path::Path;

use bakeoff_artifact::campaign::OutcomeKind;
use bakeoff_artifact::evidence::{VerdictKind, VerdictRecord, verdict_path};
use bakeoff_artifact::slug::validate_slug;
use bakeoff_artifact::{StoreError, read_versioned};

use super::super::{Group, contaminated, duration, store_reason};
use super::text::{axes_text, bullet, code, distinct, md};

/// The verdict recorded on `slug`, when its file exists (a slug that is not a safe file name
/// names no file).
fn verdict_of(dir: &Path, slug: &str) -> Option<Result<VerdictRecord, StoreError>> {
    validate_slug(slug).ok()?;
    let path = verdict_path(dir, slug);
    if !path.exists() {
        return None;
    }
    Some(read_versioned::<VerdictRecord>(&path))
}

/// The operator's verdicts on the candidate (its name) and on each variant (its slug), with
/// the files that could not be read.
pub(super) struct Verdicts {
    found: Vec<(String, VerdictRecord)>,
    refused: Vec<(String, StoreError)>,
}

impl Verdicts {
    pub(super) fn read(g: &Group<'_>, dir: &Path) -> Self {
        let slugs = distinct(
            std::iter::once(g.name.to_string()).chain(g.rows.iter().map(|r| r.variant.clone())),
        );
        let mut v = Verdicts {
            found: Vec::new(),
            refused: Vec::new(),
        };
        for slug in slugs {
            match verdict_of(dir, &slug) {
                Some(Ok(rec)) => v.found.push((slug, rec)),
                Some(Err(why)) => v.refused.push((slug, why)),
                None => {}
            }
        }
        v
    }

    fn on(&self, slug: &str) -> bool {
        self.found.iter().any(|(s, _)| s == slug)
    }
}

pub(super) fn not_attempted(out: &mut String, g: &Group<'_>, verdicts: &Verdicts) {
    let mut items: Vec<String> = g
        .rows
        .iter()
        .filter(|r| matches!(r.outcome.kind, OutcomeKind::Skipped | OutcomeKind::Pending))
        .map(|r| {
            let mut s = format!(
                "{} ({}): {}",
                md(&axes_text(r)),
                code(&r.variant),
                md(&r.outcome.label())
            );
            if !r.outcome.message.is_empty() {
                let _ = write!(s, " — {}", md(&r.outcome.message));
            }
            s
        })
        .collect();
    if items.is_empty() {
        items.push("every variant of the ladder was run".into());
    }
    for (slug, v) in &verdicts.found {
        if !v.current.not_attempted.is_empty() {
            let list: Vec<String> = v.current.not_attempted.iter().map(|s| md(s)).collect();
            items.push(format!(
                "beyond the ladder (the operator, on {}): {}",
                code(slug),
                list.join(", ")
            ));
        }
    }
    bullet(out, "Not attempted", &items);
}

pub(super) fn verdict(out: &mut String, g: &Group<'_>, verdicts: &Verdicts) {
    let mut items: Vec<String> = verdicts
        .found
        .iter()
        .map(|(slug, v)| {
            format!(
                "{} ({}, the operator's verdict on {}): {}",
                v.current.verdict,
                v.current.date.format("%Y-%m-%d"),
                code(slug),
                md(&v.current.reason)
            )
        })
        .collect();
    // A verdict on the candidate covers its variants; else each variant without one of its
    // own shows the verdict its outcome suggests.
    if !verdicts.on(g.name) {
        let mut suggested: Vec<(VerdictKind, Vec<String>)> = Vec::new();
        let mut withheld: Vec<String> = Vec::new();
        for r in &g.rows {
            if verdicts.on(&r.variant) {
                continue;
            }
            // The outcome's verdict (the row's may have been withheld when it was written):
            // a contaminated variant's is withheld unless `--allow contaminated`.
            let Some(k) = r.outcome.suggested_verdict() else {
                continue;
            };
            // A failure the engine stated in its own words stands whatever the host did.
            let k = match contaminated(r).filter(|_| r.outcome.contention_could_cause()) {
                Some(what) if !g.allow_contaminated => {
                    withheld.push(format!("{} ({})", code(&r.variant), md(&what)));
                    continue;
                }
                Some(_) => k,
                None => r.suggested_verdict.unwrap_or(k),
            };
            match suggested.iter_mut().find(|(s, _)| *s == k) {
                Some((_, vs)) => vs.push(code(&r.variant)),
                None => suggested.push((k, vec![code(&r.variant)])),
            }
        }
        if !suggested.is_empty() {
            let parts: Vec<String> = suggested
                .iter()
                .map(|(k, vs)| format!("{k} for {}", vs.join(", ")))
                .collect();
            items.push(format!(
                "suggested{}: {}",
                if verdicts.found.is_empty() {
                    " (no operator verdict recorded)"
                } else {
                    ""
                },
                parts.join("; ")
            ));
        }
        if !withheld.is_empty() {
            items.push(format!(
                "withheld for {}: measured under contaminated conditions, so the verdict would rest on them (rerun on a quiet host, or `campaign run --allow contaminated`)",
                withheld.join(", ")
            ));
        }
    }
    for (slug, why) in &verdicts.refused {
        items.push(format!(
            "{} not read: {}",
            code(&format!("{slug}.verdict.json")),
            md(&store_reason(why))
        ));
    }
    if items.is_empty() {
        items.push(format!(
            "none: no variant reached an outcome that suggests one — {}",
            VerdictKind::NotEnoughEvidence
        ));
    }
    bullet(out, "Verdict", &items);
}

pub(super) fn production(out: &mut String, g: &Group<'_>, verdicts: &Verdicts) {
    let mut items = Vec::new();
    for r in &g.rows {
        for d in r.displaced.iter().filter(|d| d.was_up) {
            let mut s = match d.down_ms {
                Some(ms) => format!(
                    "{} down {} during {}",
                    code(&d.seat),
                    duration(ms),
                    code(&r.variant)
                ),
                None => format!("{} stopped during {}", code(&d.seat), code(&r.variant)),
            };
            s.push_str(match d.restored {
                Some(true) => ", restored",
                Some(false) => " — **NOT restored**",
                None => " — restore not confirmed",
            });
            for n in &d.notes {
                let _ = write!(s, "; {}", md(n));
            }
            items.push(s);
        }
    }
    if items.is_empty() {
        items.push("none (no seat displaced)".into());
    }
    for (slug, v) in &verdicts.found {
        if let Some(p) = &v.current.production_impact {
            items.push(format!("the operator, on {}: {}", code(slug), md(p)));
        }
    }
    bullet(out, "Production impact", &items);
}

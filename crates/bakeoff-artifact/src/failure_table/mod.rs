//! The failure-class table: ONE table of (class, signature, source, remediation) for every
//! failure bakeoff reports, seat and endpoint alike. Backends, the watchdog and the preflight
//! never decide a class or word a remediation of their own; `docs/failure-classes.md` is this
//! table, written out (a test keeps the two in step).
//!
//! Three kinds of rows:
//! - log signatures (a regular expression over one log line): `bakeoff-seats`' `classify`
//!   compiles them and picks the root cause (the rows are data here; matching is the seats');
//! - watchdog signatures (silence, restarts, Docker state, exit status), produced by the seat
//!   watchdog;
//! - endpoint signatures, what the preflight observed of an endpoint that is not fit.

mod remediation;
mod row;
mod rows;

pub use row::{NEAR_LINES, Row, Scope, SignatureKind};
pub use rows::{TABLE, WRAPPERS};

use crate::FailureClass;

/// A remediation for a plain exit when the tail shows the model itself could not be loaded.
pub fn exited_remediation(tail: &[String]) -> &'static str {
    if tail
        .iter()
        .any(|l| l.contains("failed to load model") || l.contains("failed to open GGUF file"))
    {
        remediation::R_LOAD
    } else {
        remediation::R_EXIT
    }
}

/// The row of a watchdog-produced class (its source and remediation).
pub fn watchdog_row(class: FailureClass) -> Option<&'static Row> {
    TABLE
        .iter()
        .find(|r| r.class == class && matches!(r.signature, SignatureKind::Watchdog(_)))
}

/// Any row's remediation for `class`.
pub fn remediation(class: FailureClass) -> &'static str {
    TABLE
        .iter()
        .find(|r| r.class == class)
        .map(|r| r.remediation)
        .unwrap_or(remediation::R_EXIT)
}

/// The seat rows (log and watchdog signatures) and the wrappers as markdown: the table of
/// `docs/failure-classes.md`'s "The table" (a test keeps the two in step).
pub fn markdown_table() -> String {
    let mut s = String::from(
        "| class | signature | observed in | source | remediation |\n|---|---|---|---|---|\n",
    );
    for r in TABLE {
        let (sig, where_) = match r.signature {
            SignatureKind::Log(p) => (format!("`{}`", p.replace('|', r"\|")), "log line"),
            SignatureKind::Watchdog(w) => (w.to_string(), "watchdog"),
            SignatureKind::Endpoint(_) => continue,
        };
        let sig = if r.secondary {
            format!("{sig} (secondary: only when no other signature matched)")
        } else {
            sig
        };
        let sig = match r.scope {
            Scope::Near(markers) => format!(
                "{sig} (only with {} within {NEAR_LINES} lines, above or below)",
                markers
                    .iter()
                    .map(|m| format!("`{m}`"))
                    .collect::<Vec<_>>()
                    .join(" or ")
            ),
            Scope::Any | Scope::ApiPort => sig,
        };
        s.push_str(&format!(
            "| `{}` | {} | {} | {} | {} |\n",
            r.class,
            sig,
            where_,
            r.source.replace('|', r"\|"),
            r.remediation
        ));
    }
    for (p, src) in WRAPPERS {
        s.push_str(&format!(
            "| (wrapper or harmless warning, never a root cause) | `{p}` | log line | {src} | read the lines before it |\n"
        ));
    }
    s
}

/// The endpoint rows as markdown: `docs/failure-classes.md`'s "Endpoint classes" table.
pub fn markdown_endpoint_table() -> String {
    let mut s = String::from("| class | observed | source | remediation |\n|---|---|---|---|\n");
    for r in TABLE {
        if let SignatureKind::Endpoint(observed) = r.signature {
            s.push_str(&format!(
                "| `{}` | {} | {} | {} |\n",
                r.class,
                observed,
                r.source.replace('|', r"\|"),
                r.remediation
            ));
        }
    }
    s
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// Every class bakeoff can report has at least one row, so every class has a remediation.
    #[test]
    fn every_class_has_a_row() {
        let all: Vec<FailureClass> = serde_json::from_value(
            crate::json_schema()["$defs"]["FailureClass"]["oneOf"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v["const"].clone())
                .collect(),
        )
        .unwrap();
        assert!(all.len() > 20);
        for c in all {
            assert!(TABLE.iter().any(|r| r.class == c), "{c} has no row");
        }
    }

    /// `docs/failure-classes.md` is this table: both tables stand in it verbatim, between
    /// their markers. `BAKEOFF_UPDATE_DOCS=1` rewrites them from the table.
    #[test]
    fn docs_failure_classes_md_is_the_table() {
        let path =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/failure-classes.md");
        let mut doc = std::fs::read_to_string(&path).unwrap();
        let mut drifted = Vec::new();
        for (name, table) in [
            ("markdown_table", markdown_table()),
            ("markdown_endpoint_table", markdown_endpoint_table()),
        ] {
            let begin = format!("<!-- generated by failure_table::{name}() -->\n");
            let end = "<!-- end of generated table -->";
            let at = doc.find(&begin).unwrap() + begin.len();
            let until = at + doc[at..].find(end).unwrap();
            if doc[at..until] != table {
                drifted.push(name);
                doc.replace_range(at..until, &table);
            }
        }
        if std::env::var_os("BAKEOFF_UPDATE_DOCS").is_some() {
            std::fs::write(&path, doc).unwrap();
        } else {
            assert!(
                drifted.is_empty(),
                "docs/failure-classes.md drifted from failure_table::TABLE ({drifted:?}); rerun \
                 with BAKEOFF_UPDATE_DOCS=1"
            );
        }
    }
}

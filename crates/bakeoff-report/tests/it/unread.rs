//! An artifact whose suites hold details or item `extra` of the wrong shape (edited by hand,
//! written by another build): every rendering says what it left out — the terminal report's
//! notes, "Parts not read" in the markdown and the HTML, `eval run`'s summary and `eval
//! compare`'s notices — naming the suite, the shape and serde's message, escaped; a
//! well-formed artifact has no such note.

use bakeoff_artifact::{Artifact, EngineKind, SuiteResult, write_atomic};
use bakeoff_report::{compare, html, markdown, registry, terminal};
use serde_json::json;

use crate::bench_report::{artifact, candidate, smoke};

/// The refusal suite's counts a string quoting markup and an escape sequence, one of its items'
/// `extra` of the wrong type, and a throughput suite whose details are not a load report.
fn garbled() -> Artifact {
    let mut a = artifact(
        candidate("garbled", "m", EngineKind::LlamaCpp, "q4_k_m", 8192),
        "2026-07-10T10:00:00Z",
    );
    a.suites.insert("smoke".into(), smoke(&[true, false]));
    let refusal: SuiteResult = serde_json::from_value(json!({
        "status": "complete",
        "summary": {"planned": 1, "finished": 1, "outcomes": {}, "passed": 0, "scored": 1,
                    "details": {"refusal": "<script>alert(1)</script>\u{1b}[31m"}},
        "items": [{"id": "r-1", "outcome": "wrong", "request": {}, "response": {"content": ""},
                   "expected": null, "latency": {"e2e_ms": 1.0, "text_chunks": 0},
                   "extra": {"category": "c", "refused": "yes"}}]
    }))
    .unwrap();
    a.suites.insert("refusal".into(), refusal);
    let throughput: SuiteResult = serde_json::from_value(json!({
        "status": "complete",
        "summary": {"planned": 1, "finished": 1, "outcomes": {}, "passed": 0, "scored": 0,
                    "details": {"steps": [{"concurrency": 1, "tok_s": 90.0}]}},
        "items": []
    }))
    .unwrap();
    a.suites.insert("throughput".into(), throughput);
    a
}

/// The three notes, as their lines end (the escape sequence shown, never sent).
const DETAILS: &str = "suite refusal: details do not read as RefusalDetails (invalid type: string \"<script>alert(1)</script>\\u{1b}[31m\", expected struct RefusalCounts)";
const ITEM: &str = "suite refusal: item r-1's extra does not read as RefusalExtra (invalid type: string \"yes\", expected a boolean)";
const SWEEP: &str = "suite throughput: details do not read as LoadReport (missing field `label`)";

#[test]
fn a_wrong_shape_is_a_note_in_every_rendering() {
    let dir = tempfile::tempdir().unwrap();
    write_atomic(&dir.path().join("garbled.bakeoff.json"), &garbled()).unwrap();
    let reg = registry::load(dir.path()).unwrap();
    let notes: Vec<String> = reg.entries[0]
        .unread
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(notes.len(), 3, "{notes:#?}");

    let term = terminal::report_at(&reg, 400);
    assert!(!term.contains('\u{1b}'), "{term}");
    for n in [DETAILS, ITEM, SWEEP] {
        assert!(
            term.contains(&format!(
                "note: garbled.bakeoff.json: {n}; left out of this report"
            )),
            "{n}\n{term}"
        );
    }

    let md = markdown::negative_results(&reg, "2026-07-10 12:00 UTC");
    let parts = &md[md.find("## Parts not read").expect(&md)..];
    assert!(
        !parts.contains("<script>") && !parts.contains('\u{1b}'),
        "{parts}"
    );
    insta::assert_snapshot!("parts_not_read_markdown", parts);

    let page = html::report(&reg, "2026-07-10 12:00 UTC");
    let parts = &page[page
        .find("<h2 id=\"unread\">Parts not read</h2>")
        .expect(&page)..];
    assert!(
        !parts.contains("<script>") && !parts.contains('\u{1b}'),
        "{parts}"
    );
    assert!(
        parts.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
        "{parts}"
    );
    assert!(parts.contains("as RefusalExtra"), "{parts}");
    assert!(
        parts.contains("as LoadReport (missing field `label`)"),
        "{parts}"
    );

    let run = terminal::run_summary_at(&reg.entries[0].artifact, "garbled.bakeoff.json", 400);
    for n in [DETAILS, ITEM, SWEEP] {
        assert!(run.contains(&format!("note: {n}; left out")), "{n}\n{run}");
    }

    let a = &reg.entries[0].artifact;
    let c = compare::compare(a, a, &[], "a.json", "b.json");
    for side in ["A", "B"] {
        assert!(
            c.notices
                .contains(&format!("{side}: {ITEM}; left out of this report")),
            "{:#?}",
            c.notices
        );
    }
}

/// Artifacts bakeoff wrote read whole: no note.
#[test]
fn well_formed_artifacts_have_nothing_unread() {
    let dir = tempfile::tempdir().unwrap();
    crate::bench_report::write_dir(dir.path());
    let reg = registry::load(dir.path()).unwrap();
    assert!(!reg.entries.is_empty());
    assert!(reg.unread().is_empty(), "{:#?}", reg.unread());
    let md = markdown::negative_results(&reg, "2026-07-10 12:00 UTC");
    assert!(!md.contains("Parts not read"), "{md}");
    assert!(!html::report(&reg, "x").contains("Parts not read"));
}

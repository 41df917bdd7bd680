#![allow(clippy::unwrap_used)]

use super::*;
use bakeoff_artifact::SuiteSummary;

#[test]
fn mcnemar_known_values() {
    // R: binom.test(1, 8, 0.5)$p.value = 0.0703125; binom.test(0, 6, .5) = 0.03125.
    assert!((bakeoff_stats::mcnemar_exact_p_value(1, 7) - 0.070_312_5).abs() < 1e-12);
    assert!((bakeoff_stats::mcnemar_exact_p_value(6, 0) - 0.031_25).abs() < 1e-12);
    assert_eq!(bakeoff_stats::mcnemar_exact_p_value(0, 0), 1.0);
}

#[test]
fn family_effects_are_in_items() {
    let mut pairs = vec![(true, true); 20];
    pairs.extend(vec![(true, false); 5]);
    pairs.extend(vec![(false, true); 4]);
    pairs.extend(vec![(false, false); 3]);
    let f = family_comparison("intelligence".into(), "arith".into(), &pairs, None);
    assert_eq!(f.lost, "\u{2212}5 items (\u{2212}15.6 pts)");
    assert_eq!(f.gained, "+4 items (+12.5 pts)");
    assert!(
        f.has_verdict && f.verdict.starts_with("no detectable difference"),
        "{}",
        f.verdict
    );
    assert!(
        f.verdict.contains("smallest detectable difference at n=32"),
        "{}",
        f.verdict
    );
    let f = family_comparison("s".into(), "f".into(), &pairs, Some(NOT_COMPARABLE.into()));
    assert!(!f.has_verdict);
}

#[test]
fn allow_names() {
    assert_eq!(Confound::parse("thinking"), Ok(Confound::Thinking));
    assert!(Confound::parse("vibes").is_err());
}

use bakeoff_artifact::{
    ArtifactKind, Candidate, EndpointRecord, EngineKind, LatencyRecord, Outcome, ResponseRecord,
    SuiteResult, SuiteStatus,
};
use serde_json::json;

fn item(id: &str, family: &str, ok: bool, prompt: &str) -> ItemRecord {
    ItemRecord {
        id: id.into(),
        outcome: if ok { Outcome::Ok } else { Outcome::Wrong },
        request: json!({"messages": [{"role": "user", "content": prompt}]}),
        response: ResponseRecord::default(),
        expected: json!({"answers": ["A"]}),
        check: None,
        latency: LatencyRecord::default(),
        error: None,
        extra: json!({ "family": family }),
    }
}

/// An artifact with `n` intelligence items of family "f" (the first `ok` pass), plus a
/// throughput suite that must never be paired.
fn artifact(n: usize, ok: usize, thinking: &str, template: Option<&str>) -> Artifact {
    let mut a = Artifact::new(
        ArtifactKind::Bakeoff,
        Candidate::new("m-generic", "m", EngineKind::Generic),
        EndpointRecord {
            url: "http://127.0.0.1:1".into(),
            facts: None,
        },
    );
    if let Some(t) = template {
        let facts = json!({
            "engine": "generic", "engine_version": null, "models": [],
            "context_window": {"tokens": null, "source": "unknown"},
            "tokenize": {"works": false}, "probes": [],
            "chat_template": {"sha256": t, "short": "", "lines": 1, "source": "test"}
        });
        a.endpoint.facts = Some(serde_json::from_value(facts).unwrap());
    }
    a.run.thinking = Some(thinking.to_string());
    let items: Vec<ItemRecord> = (0..n)
        .map(|i| item(&format!("q-{i}"), "f", i < ok, &format!("question {i}")))
        .collect();
    // Compare reads the items and the families' flags, not the suite's own tallies.
    let summary = SuiteSummary {
        planned: n as u64,
        finished: n as u64,
        outcomes: Default::default(),
        passed: ok as u64,
        scored: n as u64,
        score: None,
        flags: Vec::new(),
        details: json!({"families": [{"family": "f"}]}),
        damage: None,
        conditions: None,
    };
    a.suites.insert(
        "intelligence".into(),
        SuiteResult {
            status: SuiteStatus::Complete,
            summary: summary.clone(),
            items,
        },
    );
    a.suites.insert(
        "throughput".into(),
        SuiteResult {
            status: SuiteStatus::Complete,
            summary,
            items: vec![item("c1-r0", "load", true, "load")],
        },
    );
    a
}

fn codes(c: &RunComparison) -> Vec<&'static str> {
    c.confounds.iter().map(|c| c.confound.as_str()).collect()
}

#[test]
fn same_items_give_a_verdict_and_load_suites_are_skipped() {
    let (a, b) = (
        artifact(20, 10, "off", Some("aa")),
        artifact(20, 12, "off", Some("aa")),
    );
    let c = compare(&a, &b, &[], "a", "b");
    assert!(c.confounds.is_empty(), "{:?}", c.confounds);
    assert!(c.no_verdict_reason.is_none());
    assert_eq!(c.families.len(), 1, "only the scored suite is paired");
    assert!(c.families[0].has_verdict, "{}", c.families[0].verdict);
    assert_eq!(c.skipped_suites.len(), 1);
    assert_eq!(c.skipped_suites[0].suite, "throughput");
    assert!(c.skipped_suites[0].reason.contains("load suite"));
    assert!(c.notices.is_empty());
}

#[test]
fn different_n_and_items_refuse_until_allowed() {
    // The case of docs/field-cases.md F6: n=16 against n=32 on different item sets.
    let (a, b) = (artifact(16, 8, "off", None), artifact(32, 16, "off", None));
    let c = compare(&a, &b, &[], "a", "b");
    assert_eq!(codes(&c), vec!["item-set", "n"]);
    let why = c.no_verdict_reason.as_deref().unwrap();
    assert!(
        why.contains("16 only in B") && why.contains("n-confound: A has 16 items, B has 32"),
        "{why}"
    );
    assert!(why.contains("--allow item-set,n"), "{why}");
    assert!(c.families.iter().all(|f| !f.has_verdict));
    // Both without a template hash: a notice, not a refusal.
    assert!(
        c.notices[0].starts_with("template unknown"),
        "{:?}",
        c.notices
    );
    let c = compare(&a, &b, &[Confound::ItemSet, Confound::N], "a", "b");
    assert!(c.no_verdict_reason.is_none());
    assert!(c.confounds.iter().all(|c| c.allowed));
    assert!(c.families[0].has_verdict);
    assert_eq!(c.families[0].pairs, 16);
}

#[test]
fn same_ids_with_different_prompts_are_a_different_item_set() {
    let a = artifact(10, 5, "off", None);
    let mut b = artifact(10, 5, "off", None);
    if let Some(s) = b.suites.get_mut("intelligence") {
        s.items[3].request = json!({"messages": [{"role": "user", "content": "another question"}]});
        // A session reply fed back differs between runs by design: not a different item.
        s.items[4].request = json!({"messages": [
            {"role": "user", "content": "question 4"},
            {"role": "assistant", "content": "whatever the model said"}
        ]});
    }
    let c = compare(&a, &b, &[], "a", "b");
    assert_eq!(codes(&c), vec!["item-set"]);
    assert!(
        c.confounds[0].detail.contains("1 with a different prompt"),
        "{}",
        c.confounds[0].detail
    );
}

#[test]
fn template_and_thinking_refuse_until_allowed_and_hashes_are_cut_by_chars() {
    // A hostile artifact: a non-ASCII "hash" must not panic the byte slicing.
    let a = artifact(10, 5, "off", Some("ééééééééééééééééé"));
    let b = artifact(10, 5, "on", Some("bb"));
    let c = compare(&a, &b, &[], "a", "b");
    assert_eq!(codes(&c), vec!["template", "thinking"]);
    assert!(
        c.confounds[0].detail.contains("A éééééééééééééééé vs B bb"),
        "{}",
        c.confounds[0].detail
    );
    let c = compare(&a, &b, &[Confound::Template, Confound::Thinking], "a", "b");
    assert!(c.no_verdict_reason.is_none());
    // One run with a hash and one without is a template difference.
    let c = compare(&artifact(10, 5, "off", None), &b, &[], "a", "b");
    assert!(codes(&c).contains(&"template"));
    assert!(c.confounds[0].detail.contains("A unknown vs B bb"));
}

#[test]
fn a_family_that_failed_the_instrument_check_gets_no_verdict() {
    let a = artifact(20, 10, "off", Some("aa"));
    let mut b = artifact(20, 0, "off", Some("aa"));
    if let Some(s) = b.suites.get_mut("intelligence") {
        s.summary.details = json!({
            "families": [{"family": "f", "flag": "instrument-failure"}],
            "families_not_scored": ["f"]
        });
    }
    let c = compare(&a, &b, &[], "a", "b");
    assert!(c.no_verdict_reason.is_none());
    let f = &c.families[0];
    assert!(!f.has_verdict);
    assert!(
        f.verdict
            .contains("run B flagged this family instrument-failure"),
        "{}",
        f.verdict
    );
    assert_eq!(
        f.instrument_flags,
        vec!["B: instrument-failure".to_string()]
    );
    // The counts are still shown in items.
    assert!(f.lost.contains("items"));
}

/// The terminal text of a comparison with a verdict: the family table and one verdict line.
#[test]
fn text_with_a_verdict() {
    let (a, b) = (
        artifact(20, 10, "off", Some("aa")),
        artifact(20, 12, "off", Some("aa")),
    );
    let c = compare(&a, &b, &[], "runs/a.json", "runs/b.json");
    insta::assert_snapshot!(render::text(&c));
}

/// The terminal text of a refused comparison: the differences, the notice, and the reason
/// instead of verdicts. A path with an escape sequence is shown escaped.
#[test]
fn text_refused() {
    let (a, b) = (artifact(16, 8, "off", None), artifact(32, 16, "off", None));
    let c = compare(&a, &b, &[], "runs/\u{1b}[2Ja.json", "runs/b.json");
    insta::assert_snapshot!(render::text(&c));
}

use super::*;
use bakeoff_artifact::Outcome;
use serde_json::{Value, json};

fn suite(details: Value, extras: &[Value]) -> SuiteResult {
    let items: Vec<Value> = extras
        .iter()
        .enumerate()
        .map(|(i, x)| {
            json!({"id": format!("it-{i}"), "outcome": "ok", "request": {}, "response": {"content": ""},
                   "expected": null, "latency": {"e2e_ms": 1.0, "text_chunks": 0}, "extra": x})
        })
        .collect();
    serde_json::from_value(json!({
        "status": "complete",
        "summary": {"planned": 1, "finished": 1, "outcomes": {}, "passed": 0, "scored": 0,
                    "details": details},
        "items": items
    }))
    .unwrap()
}

fn artifact(suites: Vec<(&str, SuiteResult)>) -> Artifact {
    let mut a = Artifact::new(
        bakeoff_artifact::ArtifactKind::Bakeoff,
        bakeoff_artifact::Candidate::new("c", "m", bakeoff_artifact::EngineKind::LlamaCpp),
        bakeoff_artifact::EndpointRecord {
            url: "http://127.0.0.1:1".into(),
            facts: None,
        },
    );
    for (name, s) in suites {
        a.suites.insert(name.into(), s);
    }
    a
}

/// Details of the wrong shape are a note naming the suite, the shape and serde's message;
/// the reader gets nothing.
#[test]
fn details_of_another_shape_are_a_note_naming_suite_shape_and_message() {
    let s = suite(json!({"refusal": "many", "categories": []}), &[]);
    let u = refusal("refusal", &s).unwrap_err();
    assert_eq!(
        (u.suite.as_str(), u.shape, u.item.as_deref()),
        ("refusal", "RefusalDetails", None)
    );
    assert!(u.message.contains("invalid type: string \"many\""), "{u:?}");
    assert_eq!(
        u.to_string(),
        format!(
            "suite refusal: details do not read as RefusalDetails ({}); left out of this report",
            u.message
        )
    );
    assert_eq!(noted(refusal("refusal", &s)), None);
    // Another suite's reader never asks for this suite's shape.
    assert_eq!(scored("refusal", &s).unwrap(), None);
    assert_eq!(of_artifact(&artifact(vec![("refusal", s)])), vec![u]);
}

/// Absent details and an absent `extra` are nothing to read, not a failure.
#[test]
fn null_is_absent_not_unread() {
    let s = suite(Value::Null, &[Value::Null]);
    for name in [
        "smoke",
        "throughput",
        "longgen",
        "refusal",
        "structured",
        "adapter",
    ] {
        assert!(
            of_artifact(&artifact(vec![(name, s.clone())])).is_empty(),
            "{name}"
        );
    }
    assert_eq!(refusal_item("refusal", &s.items[0]).unwrap(), None);
}

/// Every reader's shape, for the suite that stores it: a well-formed part reads, a wrong one
/// is one note.
#[test]
fn each_suite_is_read_as_its_own_shape() {
    let wrong = json!({"families": "x", "steps": "x", "probes": "x", "refusal": "x",
                       "classes": "x", "verdict": 1});
    let cases: [(&str, &str); 8] = [
        ("smoke", "ScoredDetails"),
        ("intelligence", "ScoredDetails"),
        ("tool", "ScoredDetails"),
        ("session", "ScoredDetails"),
        ("refusal", "RefusalDetails"),
        ("structured", "StructuredDetails"),
        ("adapter", "AdapterDetails"),
        ("throughput", "LoadReport"),
    ];
    for (name, shape) in cases {
        let notes = of_artifact(&artifact(vec![(name, suite(wrong.clone(), &[]))]));
        let shapes: Vec<&str> = notes.iter().map(|u| u.shape).collect();
        assert_eq!(shapes, [shape], "{name}");
    }
    let longgen = of_artifact(&artifact(vec![("longgen", suite(wrong.clone(), &[]))]));
    let shapes: Vec<&str> = longgen.iter().map(|u| u.shape).collect();
    assert_eq!(shapes, ["LoadReport", "LonggenDetails"]);
    // A suite this build does not read (damage keeps its figures in `summary.damage`) has
    // nothing to leave out.
    assert!(of_artifact(&artifact(vec![("damage", suite(wrong, &[]))])).is_empty());
}

/// Items whose `extra` does not read are one note per suite and shape: the first item named,
/// the others counted; readable items read typed.
#[test]
fn unreadable_items_are_one_note_with_the_first_named_and_the_rest_counted() {
    let good = json!({"category": "c", "refused": true, "marker": {"marker": "i can't", "at": 0},
                      "reasoning_tokens": null});
    let s = suite(
        json!({}),
        &[
            good,
            json!({"refused": "yes"}),
            json!({"marker": 3}),
            json!("text"),
        ],
    );
    let x = refusal_item("refusal", &s.items[0]).unwrap().unwrap();
    assert_eq!(x.refused, Some(true));
    assert_eq!(x.marker.unwrap().marker, "i can't");
    let notes = of_artifact(&artifact(vec![("refusal", s)]));
    assert_eq!(notes.len(), 1, "{notes:?}");
    let u = &notes[0];
    assert_eq!(
        (u.item.as_deref(), u.more, u.shape),
        (Some("it-1"), 2, "RefusalExtra")
    );
    let text = u.to_string();
    assert!(
        text.starts_with("suite refusal: item it-1's extra does not read as RefusalExtra (invalid type: string \"yes\""),
        "{text}"
    );
    assert!(
        text.ends_with(", nor does the extra of 2 more item(s); left out of this report"),
        "{text}"
    );
}

/// The family an item is paired in: the suite's own shape; an empty family, or a suite
/// without one, is none; a wrong shape is a note.
#[test]
fn families_of_items_read_from_each_suites_shape() {
    let tool = json!({"family": "parallel", "landing": "tool-calls",
                      "would_pass_if_parsed": null, "reasoning_tokens": null});
    let it = |x: Value| suite(Value::Null, &[x]).items.remove(0);
    assert_eq!(
        family("tool", &it(tool.clone())).unwrap().as_deref(),
        Some("parallel")
    );
    assert_eq!(
        family("session", &it(json!({"family": "recall", "turn": 2})))
            .unwrap()
            .as_deref(),
        Some("recall")
    );
    assert_eq!(
        family("intelligence", &it(json!({"family": ""}))).unwrap(),
        None
    );
    assert_eq!(family("context", &it(tool)).unwrap(), None);
    let u = family(
        "tool",
        &it(json!({"family": "x", "landing": "<b>elsewhere</b>"})),
    )
    .unwrap_err();
    assert_eq!(u.shape, "ToolExtra");
    assert!(u.message.contains("unknown variant"), "{u:?}");
}

/// A damage item reads as the shape its phase names; a structured item with its outcome.
#[test]
fn damage_and_structured_items_read_typed() {
    let s = suite(
        Value::Null,
        &[
            json!({"phase": "candidate", "prompt": "p", "reference": [], "kl": 0.5,
                  "top1_reference": "a", "top1_candidate": "b"}),
        ],
    );
    let Some(DamageExtra::Candidate(c)) = damage_item("damage", &s.items[0]).unwrap() else {
        panic!("not a candidate item")
    };
    assert_eq!((c.kl, c.top1_candidate.as_deref()), (Some(0.5), Some("b")));
    let mut it = s.items[0].clone();
    it.outcome = Outcome::Wrong;
    it.extra = json!({"class": "refs", "outcome": "valid-right", "form": "response-format",
                      "words": null, "violation": null});
    let x = structured_item("structured", &it).unwrap().unwrap();
    assert_eq!(x.outcome, bakeoff_artifact::StructuredOutcome::ValidRight);
    it.extra = json!({"class": "refs", "outcome": "graded"});
    assert_eq!(
        structured_item("structured", &it).unwrap_err().shape,
        "StructuredExtra"
    );
}

//! `artifact.run` and each suite's `summary.details`, typed: artifacts written before the types
//! existed still read, with the same JSON, and details of the wrong shape are an error, never a
//! panic.

use std::path::PathBuf;

use bakeoff_artifact::{
    AdapterDetails, ContextDetails, LoadReport, RefusalDetails, RunRecord, ScoredDetails,
    SuiteSummary,
};

fn docs_data(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../docs/data")
        .join(name)
}

/// A `bench run` artifact of 2026-12-05 (docs/data) reads, and its `run` writes back the same.
#[test]
fn an_artifact_from_before_reads_and_keeps_its_run() {
    let path = docs_data("gpu-seventh-pass-h100-repeat3.bakeoff.json");
    let text = std::fs::read_to_string(&path).unwrap();
    let raw: serde_json::Value = serde_json::from_str(&text).unwrap();
    let art = bakeoff_artifact::read_artifact(&path).unwrap();
    assert_eq!(art.run, RunRecord::bench_run(false));
    let again = serde_json::to_value(&art).unwrap();
    assert_eq!(again["run"], raw["run"]);
    assert_eq!(
        serde_json::to_string(&again["run"]).unwrap(),
        serde_json::to_string(&raw["run"]).unwrap()
    );
}

/// `eval run`'s record, keys written as `null` included, reads and writes back byte for byte.
#[test]
fn an_eval_run_record_round_trips() {
    let text = r#"{"suites":["smoke","context"],"max_model_len_hint":null,"ready_timeout_s":600,"embedded_default":false,"thinking":"off","battery":null,"refusal_battery":null,"limit":null,"seed":7,"tokenizer":null}"#;
    let r: RunRecord = serde_json::from_str(text).unwrap();
    assert_eq!(r.thinking_or_default(), "off");
    assert_eq!(r.seed, Some(Some(7)));
    assert_eq!(serde_json::to_string(&r).unwrap(), text);
    // Before `--thinking`: the default.
    let old: RunRecord = serde_json::from_str(r#"{"suites":["smoke"]}"#).unwrap();
    assert_eq!(old.thinking_or_default(), "default");
}

fn summary_with(details: serde_json::Value) -> SuiteSummary {
    serde_json::from_value(serde_json::json!({
        "planned": 1, "finished": 1, "outcomes": {}, "passed": 0, "scored": 0,
        "details": details
    }))
    .unwrap()
}

/// Details from before a field existed read, the missing fields empty.
#[test]
fn older_details_read_with_their_missing_fields_empty() {
    // A tool suite before `landing` and `diagnosis`, a row written by another version.
    let s = summary_with(serde_json::json!({
        "families": [{ "family": "single-call", "items": 4 }, "not a row"],
        "families_not_scored": []
    }));
    let d: ScoredDetails = s.details_as().unwrap();
    assert_eq!(d.families.len(), 1);
    assert!(d.families[0].counted);
    assert!(d.landing.is_none() && d.diagnosis.is_none() && d.reasoning.is_none());
    let r: RefusalDetails = summary_with(serde_json::json!({"refusal": {"refused": 1}}))
        .details_as()
        .unwrap();
    assert_eq!(r.refusal.unwrap().refused, 1);
    assert!(r.categories.is_empty());
    let c: ContextDetails = summary_with(serde_json::json!({"refused": "no window", "rows": []}))
        .details_as()
        .unwrap();
    assert_eq!(c.refused.as_deref(), Some("no window"));
    assert!(c.overflow.is_none());
    // No details at all: the empty form where the shape has one.
    let none = summary_with(serde_json::Value::Null);
    assert_eq!(none.details_as::<Option<ScoredDetails>>().unwrap(), None);
}

/// Details that do not match the shape asked for are a typed error that names the shape.
#[test]
fn details_of_another_shape_are_an_error_not_a_panic() {
    let s = summary_with(serde_json::json!({ "families": 3, "battery": ["x"] }));
    let e = s.details_as::<ScoredDetails>().unwrap_err();
    assert_eq!(e.shape, "ScoredDetails");
    assert!(
        e.to_string()
            .starts_with("summary.details do not read as ScoredDetails")
    );
    let adapter = summary_with(serde_json::json!({ "message": "no verdict" }));
    assert!(adapter.details_as::<AdapterDetails>().is_err());
    assert!(adapter.details_as::<LoadReport>().is_err());
}

/// A typed constructor writes what the suites always wrote.
#[test]
fn set_details_writes_the_struct_as_json() {
    let mut s = summary_with(serde_json::Value::Null);
    s.set_details(&AdapterDetails {
        verdict: "applied".into(),
        message: "applied: KL 0.3".into(),
    })
    .unwrap();
    assert_eq!(
        serde_json::to_string(&s.details).unwrap(),
        r#"{"verdict":"applied","message":"applied: KL 0.3"}"#
    );
}

/// Details that cannot become JSON are an error naming the shape, and the summary keeps what it
/// had: never a silent `null`.
#[test]
fn details_that_cannot_be_written_are_an_error_not_a_null() {
    let mut s = summary_with(serde_json::json!({"window": 4096}));
    let keyed_by_numbers: std::collections::BTreeMap<Vec<u8>, u64> = [(vec![1u8], 1)].into();
    let e = s.set_details(&keyed_by_numbers).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("summary.details cannot be written as BTreeMap"),
        "{e}"
    );
    assert_eq!(s.details, serde_json::json!({"window": 4096}));
}

#![allow(clippy::unwrap_used)]
use super::*;

#[test]
fn target_parsing() {
    assert_eq!(
        parse_targets("4k, 16K,window,8192").unwrap(),
        vec![
            TargetSpec::Tokens(4096),
            TargetSpec::Tokens(16384),
            TargetSpec::Window,
            TargetSpec::Tokens(8192)
        ]
    );
    assert!(parse_targets("4q").is_err());
    assert!(parse_targets("0").is_err());
    assert!(parse_targets("").is_err());
    assert_eq!(parse_depths("0,50,100%").unwrap(), vec![0.0, 0.5, 1.0]);
    assert!(parse_depths("120").is_err());
}

#[test]
fn clamping_and_skipping() {
    let p = plan_targets(
        &[
            TargetSpec::Tokens(4096),
            TargetSpec::Tokens(16384),
            TargetSpec::Window,
        ],
        8192,
    );
    assert_eq!(p[0].clamped, Some(4096));
    assert_eq!(
        p[1].clamped, None,
        "16k cannot fit an 8k window: skipped, never sent"
    );
    assert_eq!(p[2].clamped, Some(8192 - u64::from(OUTPUT_BUDGET)));
    // An explicit 8192 and `window` clamp to the same size: sent once.
    let p = plan_targets(&[TargetSpec::Tokens(8192), TargetSpec::Window], 8192);
    assert_eq!(p.len(), 1);
}

#[test]
fn default_targets_are_powers_of_two_up_to_the_window() {
    assert_eq!(
        default_targets(32768),
        vec![
            TargetSpec::Tokens(4096),
            TargetSpec::Tokens(8192),
            TargetSpec::Tokens(16384),
            TargetSpec::Window
        ]
    );
    assert_eq!(default_targets(4096), vec![TargetSpec::Window]);
    assert_eq!(
        default_targets(6000),
        vec![TargetSpec::Tokens(4096), TargetSpec::Window]
    );
}

#[test]
fn tolerance_rule() {
    assert_eq!(tolerance(1000), 16);
    assert_eq!(tolerance(3200), 16);
    assert_eq!(tolerance(32768), 164);
    assert_eq!(tolerance(131072), 656);
}

#[test]
fn needles_are_unique_and_uuid_shaped() {
    let mut r = SplitMix64::new(1);
    let (n1, c1) = needle(&mut r);
    let (_, c2) = needle(&mut r);
    assert_ne!(c1, c2);
    assert_eq!(c1.len(), 36);
    assert_eq!(c1.matches('-').count(), 4);
    assert!(!n1.is_empty());
}

fn text(v: &serde_json::Value) -> String {
    serde_json::to_string(v).unwrap()
}

fn typed(d: &ContextDetails) -> String {
    let mut s = crate::summary::summarize(0, &[]);
    s.set_details(d).unwrap();
    text(&s.details)
}

/// The same details two ways: as the suite's former `json!` writer built them, and typed.
fn details_both_ways() -> (serde_json::Value, ContextDetails) {
    use serde_json::json;
    let p = PlannedTarget {
        label: "16k".into(),
        requested: 16384,
        clamped: None,
    };
    let it = skipped_item(
        &p,
        8192,
        WindowSource::LlamacppSlots,
        &mut ItemWrites::new(),
    );
    let skipped_then = json!({"target": p.label, "requested": p.requested, "outcome": "skipped", "reason": it.check});
    let skipped = ContextRow::Skipped(SkippedRow {
        target: p.label.clone(),
        requested: p.requested,
        outcome: Outcome::Skipped.as_str().into(),
        reason: it.check.clone(),
    });
    let actual: Option<u64> = None;
    let needle_then = json!({
        "target": "4k", "target_tokens": 4096u64, "planned": 4090u64, "actual": actual,
        "depth": 0.25, "outcome": Outcome::Ok.as_str(),
    });
    let needle = ContextRow::Needle(NeedleRow {
        target: "4k".into(),
        target_tokens: 4096,
        planned: 4090,
        actual,
        depth: 0.25,
        outcome: Outcome::Ok.as_str().into(),
    });
    let status: Option<u16> = Some(400);
    let overflow_then = json!({
        "sent": true,
        "prompt_tokens_sent": 8256u64,
        "window": Some(8192u64),
        "http_status": status,
        "server_prompt_tokens": None::<u64>,
        "behaviour": "rejected",
        "error": Some("HTTP 400"),
        "note": "an endpoint fact, never scored as a model failure",
    });
    let overflow = OverflowProbe {
        sent: true,
        prompt_tokens_sent: Some(8256),
        window: Some(8192),
        http_status: status.map(u64::from),
        server_prompt_tokens: None,
        behaviour: Some("rejected".into()),
        error: Some("HTTP 400".into()),
        note: Some("an endpoint fact, never scored as a model failure".into()),
    };
    let then = json!({
        "window": 8192u64,
        "window_source": WindowSource::LlamacppSlots,
        "output_budget": OUTPUT_BUDGET,
        "tokenizer_route": None::<String>,
        "prompt_counting": {
            "route": "calibration",
            "calibration_prompt_tokens": 31u64,
            "calibration_text_tokens": 17usize,
            "template_overhead_tokens": 14i64,
        },
        "seed": 7u64,
        "rows": [skipped_then, needle_then],
        "instrument_misses": 0u64,
        "overflow": overflow_then,
    });
    let now = ContextDetails {
        window: Some(8192),
        window_source: Some(WindowSource::LlamacppSlots.as_str().into()),
        output_budget: Some(u64::from(OUTPUT_BUDGET)),
        tokenizer_route: None,
        prompt_counting: Some(PromptCounting {
            route: "calibration".into(),
            calibration_prompt_tokens: Some(31),
            calibration_text_tokens: Some(17),
            template_overhead_tokens: Some(14),
        }),
        seed: Some(7),
        rows: vec![skipped, needle],
        instrument_misses: Some(0),
        overflow: Some(overflow),
        refused: None,
    };
    (then, now)
}

/// The typed details write the bytes the suite's `json!` writer wrote, key for key: the rows,
/// the prompt counting and the edge probe as sent.
#[test]
fn typed_details_write_what_the_json_writer_wrote() {
    let (then, now) = details_both_ways();
    assert_eq!(typed(&now), text(&then));
}

/// The other forms: a probe that could not be sized, none sent, the server counting, and a
/// suite that refused.
#[test]
fn each_form_of_the_typed_details_writes_the_former_bytes() {
    use serde_json::json;
    let (mut then, mut now) = details_both_ways();
    now.overflow = Some(OverflowProbe {
        sent: false,
        error: Some("tokenize failed".into()),
        ..OverflowProbe::default()
    });
    then["overflow"] = json!({"sent": false, "error": "tokenize failed"});
    assert_eq!(typed(&now), text(&then));
    now.overflow = None;
    then["overflow"] = serde_json::Value::Null;
    now.prompt_counting = Some(PromptCounting {
        route: "server".into(),
        ..PromptCounting::default()
    });
    then["prompt_counting"] = json!({"route": "server"});
    assert_eq!(typed(&now), text(&then));

    let reason = "the context window is unknown";
    let refused = ContextDetails {
        refused: Some(reason.into()),
        rows: now.rows.clone(),
        ..ContextDetails::default()
    };
    let rows = then["rows"].clone();
    assert_eq!(
        typed(&refused),
        text(&json!({"refused": reason, "rows": rows}))
    );
}

//! Every suite's details, as the suites wrote them before the details were typed, read as their
//! type and written back byte for byte (key order, `null` against absent, number forms). The
//! texts follow the suites' former `json!` writers key for key; the longgen details are built
//! on the load report of a real `bench run` artifact (docs/data).

use std::path::PathBuf;

use bakeoff_artifact::{
    ContextDetails, ContextRow, LoadReport, LonggenDetails, LonggenOutput, LonggenProbe,
    RefusalDetails, ScoredDetails, SmokeDetails, SuiteSummary, ToolRefusedDetails, WindowSource,
};
use serde::Serialize;
use serde::de::DeserializeOwned;

fn summary_with(details: serde_json::Value) -> SuiteSummary {
    serde_json::from_value(serde_json::json!({
        "planned": 1, "finished": 1, "outcomes": {}, "passed": 0, "scored": 0,
        "details": details
    }))
    .unwrap()
}

/// `text` read as `T` from a summary's details, and `T` written into a fresh summary: the same
/// text again.
fn round_trip<T: DeserializeOwned + Serialize>(text: &str) -> T {
    let read: T = summary_with(serde_json::from_str(text).unwrap())
        .details_as()
        .unwrap();
    let mut again = summary_with(serde_json::Value::Null);
    again.set_details(&read).unwrap();
    assert_eq!(serde_json::to_string(&again.details).unwrap(), text);
    read
}

const REASONING: &str = r#"{"items_with_reasoning":2,"reasoning_chars":180,"reasoning_tokens":null,"items_reporting_reasoning_tokens":0}"#;

#[test]
fn context_details_round_trip_in_both_forms() {
    let full = r#"{"window":8192,"window_source":"llamacpp-slots","output_budget":48,"tokenizer_route":"llama.cpp POST /tokenize {content}","prompt_counting":{"route":"calibration","calibration_prompt_tokens":31,"calibration_text_tokens":17,"template_overhead_tokens":14},"seed":7,"rows":[{"target":"16k","requested":16384,"outcome":"skipped","reason":"target 16384 tokens cannot fit the window of 8192 tokens (source: llama.cpp /slots n_ctx) minus the 48-token output budget; never sent"},{"target":"4k","target_tokens":4096,"planned":4096,"actual":4099,"depth":0.5,"outcome":"ok"},{"target":"window","target_tokens":8144,"planned":8140,"actual":null,"depth":0.1,"outcome":"connection-error"}],"instrument_misses":0,"overflow":{"sent":true,"prompt_tokens_sent":8256,"window":8192,"http_status":400,"server_prompt_tokens":null,"behaviour":"rejected","error":"HTTP 400: the request exceeds the available context size","note":"an endpoint fact, never scored as a model failure"}}"#;
    let d: ContextDetails = round_trip(full);
    assert!(matches!(d.rows[0], ContextRow::Skipped(_)));
    assert!(matches!(&d.rows[2], ContextRow::Needle(r) if r.actual.is_none()));
    assert_eq!(
        d.prompt_counting.unwrap().template_overhead_tokens,
        Some(14)
    );
    assert_eq!(d.overflow.unwrap().http_status, Some(400));

    // The server counted; the probe could not be sized, or was not sent at all.
    let not_sent = r#"{"window":4096,"window_source":"hint","output_budget":48,"tokenizer_route":null,"prompt_counting":{"route":"server"},"seed":1,"rows":[],"instrument_misses":2,"overflow":{"sent":false,"error":"tokenize failed"}}"#;
    let d: ContextDetails = round_trip(not_sent);
    assert!(!d.overflow.unwrap().sent);
    round_trip::<ContextDetails>(
        &not_sent.replace(r#"{"sent":false,"error":"tokenize failed"}"#, "null"),
    );

    // Refused: the reason and the rows it had.
    let refused = r#"{"refused":"cannot count the chat prompt as the server does: HTTP 404","rows":[{"target":"1m","requested":1048576,"outcome":"skipped","reason":"never sent"}]}"#;
    let d: ContextDetails = round_trip(refused);
    assert_eq!(d.window, None);
    round_trip::<ContextDetails>(r#"{"refused":"the context window is unknown","rows":[]}"#);
}

/// The context suite stores the window's source under serde's name for it.
#[test]
fn window_sources_are_named_as_serde_names_them() {
    for s in [
        WindowSource::Hint,
        WindowSource::LlamacppSlots,
        WindowSource::LlamacppProps,
        WindowSource::VllmModels,
        WindowSource::SglangModels,
        WindowSource::Models,
        WindowSource::Unknown,
    ] {
        assert_eq!(serde_json::to_value(s).unwrap(), s.as_str());
    }
}

#[test]
fn scored_details_round_trip_in_each_suites_shape() {
    let families = r#"[{"family":"single-call","items":4,"scored_items":4,"passed":3,"score":{"successes":3,"n":4,"estimate":0.75,"low":0.3,"high":0.95},"chance_floor":0.0,"versus_chance":"+3 items (+75.0 pts)","counted":true,"thinking_artifacts":0},{"family":"parallel","items":2,"scored_items":2,"passed":0,"chance_floor":0.25,"versus_chance":"-0.5 items (-25.0 pts)","flag":"instrument-failure","reason":"0 of 2 below chance","counted":false,"extraction_failures":["parallel-1"],"thinking_artifacts":1}]"#;
    let tool = format!(
        r#"{{"families":{families},"families_not_scored":["parallel"],"reasoning":{REASONING},"landing":{{"content":1,"tool_calls":5}},"diagnosis":{{"code":"tool-calls-work","message":"tool calls land in tool_calls","text_calls_that_would_pass":1}}}}"#
    );
    let d: ScoredDetails = round_trip(&tool);
    assert_eq!(d.families.len(), 2);
    assert_eq!(d.landing.unwrap()["tool_calls"], 5);
    let intelligence = format!(
        r#"{{"families":{families},"families_not_scored":["parallel"],"reasoning":{REASONING},"battery":"default"}}"#
    );
    assert_eq!(
        round_trip::<ScoredDetails>(&intelligence)
            .battery
            .as_deref(),
        Some("default")
    );
    // Nothing finished: the families are there, empty; an empty landing is kept.
    round_trip::<ScoredDetails>(&format!(
        r#"{{"families":[],"reasoning":{REASONING},"landing":{{}},"diagnosis":{{"code":"no-calls","message":"m","text_calls_that_would_pass":0}}}}"#
    ));
    round_trip::<ScoredDetails>(&format!(r#"{{"families":[],"reasoning":{REASONING}}}"#));

    // Smoke and a refused tool suite have shapes of their own, and read as scored details too.
    let smoke = format!(r#"{{"reasoning":{REASONING}}}"#);
    assert_eq!(
        round_trip::<SmokeDetails>(&smoke).reasoning.reasoning_chars,
        180
    );
    let refused = r#"{"diagnosis":{"code":"server-refuses-tools","message":"the server refuses requests that offer tools (HTTP 400: no parser); fix: --tool-call-parser"}}"#;
    round_trip::<ToolRefusedDetails>(refused);
    for text in [smoke.as_str(), refused] {
        let d: ScoredDetails = summary_with(serde_json::from_str(text).unwrap())
            .details_as()
            .unwrap();
        assert!(d.families.is_empty());
    }
}

#[test]
fn refusal_details_round_trip() {
    let text = format!(
        r#"{{"refusal":{{"refused":1,"answered":2,"neither":1,"n":3,"score_counts":"refusals","window_chars":240}},"categories":[{{"category":"weapons","items":4,"refused":1,"answered":2,"neither":1}}],"battery":"default","reasoning":{REASONING}}}"#
    );
    let d: RefusalDetails = round_trip(&text);
    assert_eq!(d.categories[0].neither, 1);
}

/// The longgen details: a real sweep's load report (docs/data) with the probes and the note
/// after its own keys, read back as both.
#[test]
fn longgen_details_are_the_load_report_then_probes_and_note() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../docs/data/gpu-seventh-pass-h100-repeat3.bakeoff.json");
    let art = bakeoff_artifact::read_artifact(&path).unwrap();
    let load: &LoadReport = &art.load["throughput"];
    let longgen = LonggenDetails {
        probes: vec![LonggenProbe {
            probe: Some(0),
            output_tokens: Some(1024),
            decode_tokens_per_second: Some(61.5),
            server_decode_tokens_per_second: None,
            ttft_ms: Some(12.25),
            error: None,
        }],
        note: Some("short completions cannot measure speculative decoding".into()),
    };
    let mut s = summary_with(serde_json::Value::Null);
    s.set_details(&LonggenOutput {
        load,
        longgen: &longgen,
    })
    .unwrap();
    let mut want = serde_json::to_value(load).unwrap();
    let obj = want.as_object_mut().unwrap();
    obj.insert(
        "probes".into(),
        serde_json::to_value(&longgen.probes).unwrap(),
    );
    obj.insert("note".into(), serde_json::to_value(&longgen.note).unwrap());
    assert_eq!(
        serde_json::to_string(&s.details).unwrap(),
        serde_json::to_string(&want).unwrap()
    );
    assert_eq!(&s.details_as::<LoadReport>().unwrap(), load);
    assert_eq!(s.details_as::<LonggenDetails>().unwrap(), longgen);
}

//! The structured suite against the real vLLM (docs/suites.md "Structured output"): the
//! shipped battery in OpenAI's form and, for a subset, vLLM's own `structured_outputs` field
//! (`--schema-form native` on 0.32.0), and the `guided_json` field 0.12.0 removed (accepted,
//! not enforced); every item one outcome, none an instrument error, and
//! what vLLM's backend refuses shown in its words with the backend named.

use bakeoff_testkit::vllm;

use super::{only, run};
use crate::eval_structured::check_structured;

#[tokio::test]
async fn the_shipped_battery_on_the_real_vllm() {
    let s = vllm::shared().await;
    let dir = bakeoff_testkit::tempdir();
    let out = dir.path().join("auto");
    let (code, text, err) = run(&[
        "eval",
        "run",
        "--endpoint",
        &s.url(),
        "--suite",
        "structured",
        "--out",
        out.to_str().unwrap(),
    ])
    .await;
    assert_eq!(code, 0, "{text}{err}");
    let a = only(&out, ".bakeoff.json");
    crate::util::assert_valid(&a);
    let got = check_structured(&a, "vLLM 0.32.0 (CPU), SmolLM2-135M-Instruct");
    assert_eq!(got.len(), 25);
    let d = &a["suites"]["structured"]["summary"]["details"];
    assert_eq!(d["form"], "response-format");
    // `auto` in vLLM 0.32.0: xgrammar rejects `uniqueItems`, vLLM falls back to guidance, and
    // guidance refuses it in its own words ("Grammar error: Unimplemented keys:
    // [\"uniqueItems\"]"), which name it as the backend.
    let refused = got
        .iter()
        .find(|(id, _)| id == "array-unique-tags")
        .unwrap();
    assert_eq!(refused.1, "refused", "{got:?}");
    let words: Vec<String> = d["classes"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|c| c["refusals"].as_array().cloned().unwrap_or_default())
        .map(|w| w.as_str().unwrap().to_string())
        .collect();
    assert!(
        words.iter().any(
            |w| w.starts_with("array-unique-tags: Grammar error:") && w.contains("uniqueItems")
        ),
        "{words:?}"
    );
    assert_eq!(d["backend"], "guidance", "{d}");
    // A `$ref` to an `$anchor` is accepted and not enforced: the reply breaks the schema there.
    assert_eq!(
        got.iter()
            .find(|(id, _)| id == "ref-anchor-price")
            .unwrap()
            .1,
        "not-enforced",
        "{got:?}"
    );

    // vLLM's own field, by its version: `structured_outputs` on 0.32.0.
    let out = dir.path().join("native");
    let (code, text, err) = run(&[
        "eval",
        "run",
        "--endpoint",
        &s.url(),
        "--suite",
        "structured",
        "--schema-form",
        "native",
        "--limit",
        "1",
        "--out",
        out.to_str().unwrap(),
    ])
    .await;
    assert_eq!(code, 0, "{text}{err}");
    let a = only(&out, ".bakeoff.json");
    let got = check_structured(&a, "vLLM 0.32.0 (CPU), structured_outputs");
    assert_eq!(got.len(), 10);
    let st = &a["suites"]["structured"];
    assert_eq!(st["summary"]["details"]["form"], "structured-outputs");
    assert!(st["items"][0]["request"]["structured_outputs"]["json"].is_object());

    // The field 0.12.0 removed: 0.32.0 takes `guided_json` as an unknown extra field and answers
    // HTTP 200 unconstrained (vllm/entrypoints/serve/engine/protocol.py
    // `_REMOVED_GUIDED_FIELDS`): nothing is refused, and what the model's free text breaks is
    // the server's not-enforced, never the model's score.
    // Four items with short answers: unconstrained, a long one runs to its 200-token cap
    // (`truncated`, not judged), and this part only needs to see replies the server let through.
    let out = dir.path().join("guided");
    let battery = dir.path().join("guided.jsonl");
    let shipped = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../bakeoff-suites/data/structured-default.jsonl"
    ))
    .unwrap();
    let picked: Vec<&str> = shipped
        .lines()
        .filter(|l| {
            ["types-city", "enum-sky", "bounds-rating", "format-date"]
                .iter()
                .any(|id| l.contains(&format!("\"id\":\"{id}\"")))
        })
        .collect();
    assert_eq!(picked.len(), 4, "{picked:?}");
    std::fs::write(&battery, picked.join("\n")).unwrap();
    let (code, text, err) = run(&[
        "eval",
        "run",
        "--endpoint",
        &s.url(),
        "--suite",
        "structured",
        "--schema-form",
        "guided-json",
        "--structured-battery",
        battery.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ])
    .await;
    assert_eq!(code, 0, "{text}{err}");
    let a = only(&out, ".bakeoff.json");
    check_structured(&a, "vLLM 0.32.0 (CPU), guided_json");
    let t = &a["suites"]["structured"]["summary"]["details"]["totals"];
    assert_eq!(t["refused"], 0, "{t}");
    assert!(t["not_enforced"].as_u64().unwrap() >= 1, "{t}");
}
